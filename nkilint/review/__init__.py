"""``nkilint review``: a reviewer's report on a kernel ported from CUDA or
Triton, computed from the semantic model (``nkilint.model``) and one check
run. One module per section (card, memory picture, loop nest table, cost
estimate, findings by rubric); renderers turn the report into JSON,
Markdown or self-contained HTML.
"""
