"""NKI722 annotation-shape-mismatch: legacy: `t: nt.tensor[...] = value` annotates a shape the value does not have."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from .._semantics_checks import _const_dim, _trusted_shape
from .._semantics_facts import facts
from ._messages import ERRORS_DOC


class AnnotationShapeMismatch(Rule):
    id = "NKI722"
    name = "annotation-shape-mismatch"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: `t: nt.tensor[...] = value` annotates a shape the value does not have"
    explanation = f"""
Legacy NKI checks `target: nt.tensor[d0, d1, ...] = value` annotations:
when the value's shape differs from the annotated one the frontend raises
`err_annotation_shape_mismatch` ("Tensor shape and the annotated shape
mismatch", {ERRORS_DOC}). Dimensions are compared where both are known
constants.

**Fix:** correct the annotation, or the shape of the value (often a
transposed or un-tiled allocation).
"""
    references = (f"{ERRORS_DOC} (err_annotation_shape_mismatch)",)
    examples = (
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def annotated():
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data: nt.tensor[128, 512] = nl.zeros((par_dim(128), 128), dtype=np.float32)
                nl.store(out[:, 0:128], value=data)
                return out
            """,
            lines=[10],
        ),
        valid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def annotated(x):
                n, m = x.shape
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data: nt.tensor[128, 512] = nl.zeros((par_dim(128), 512), dtype=np.float32)
                tile: nt.tensor[n, m] = nl.load(x)
                nl.store(out, value=nl.add(data, tile))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        from nkilint.model.values import const_int

        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        env = f.model.module.env or {}
        for fn in f.device_functions():
            for node in f.own_nodes(fn):
                if not isinstance(node, ast.AnnAssign) or node.value is None:
                    continue
                ann = node.annotation
                if not isinstance(ann, ast.Subscript):
                    continue
                qual = f.bindings.resolve_nki(ann.value)
                if qual is None or qual.name not in ("nki.typing.tensor", "nki.typing.mutable_tensor"):
                    continue
                dims_ast = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
                expected = [_const_dim(d, env) for d in dims_ast]
                for ref in f.produced_by(node.value):
                    data = ref.data
                    if not _trusted_shape(ref):
                        continue
                    shape = data.get("shape_v")
                    if shape is None:
                        continue
                    actual = [const_int(d) for d in shape]
                    mismatch = len(actual) != len(expected) and all(x is not None for x in actual + expected)
                    mismatch = mismatch or (len(actual) == len(expected) and any(
                        a is not None and e is not None and a != e for a, e in zip(actual, expected)))
                    if not mismatch:
                        continue
                    target = f.span_text(node.target)
                    reporter.at(
                        node,
                        f"`{target}` is annotated nt.tensor[{', '.join(f.span_text(d) for d in dims_ast)}] but the value "
                        f"has shape {q.fmt_shape(shape)} (err_annotation_shape_mismatch)",
                        hint="fix the annotation or the shape of the value",
                    )
                    break

