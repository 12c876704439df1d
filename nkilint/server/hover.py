"""Hover: a finding's rule explained, and what the model knows about a tensor.

On a tensor's name inside a kernel the hover shows the facts the rules
reason from: the shape with its symbols and bounds, the dtype, the
buffer, the partition size, the bytes each partition holds, and where the
tensor was allocated (through the helper calls that led there).
"""

from __future__ import annotations

import asyncio
import re
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from ..findings import Finding, Span
from ..source import SourceFile
from ..suppression import parse_noqa
from .convert import range_to_span, span_to_range

if TYPE_CHECKING:  # pragma: no cover
    from ..model.semantic import FileModel
    from ..rule import RuleSet
    from .app import NkilintServer
    from .session import Checked

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def register(server: "NkilintServer") -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: "NkilintServer", params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        checked = await ls.lint(uri)
        session = ls.ensure_session()
        codec = ls.workspace.position_codec
        lines = checked.text.splitlines(keepends=True) or [""]
        at = range_to_span(types.Range(params.position, params.position), lines, codec)
        line, col = at.start_line, at.start_col
        parts = [finding_markdown(f, session.ruleset) for f in checked.result.findings
                 if not f.suppressed and _contains(f.span, line, col)]
        word = word_at(checked.text, line, col)
        if word is not None:
            name, span = word
            noqa = parse_noqa(SourceFile("<buffer>", checked.text)).get(line)
            rule = session.ruleset.get(name) if noqa is not None and _contains(noqa.span, line, col) else None
            if rule is not None:
                parts.append(rule_markdown(rule))
            else:
                loop = asyncio.get_running_loop()
                model = await loop.run_in_executor(ls._worker, session.model, checked)
                facts = tensor_markdown(model, name, line, checked) if model is not None else None
                if facts:
                    parts.insert(0, facts)
        if not parts:
            return None
        return types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts)),
                           range=span_to_range(span, lines, codec) if word is not None else None)


def _contains(span: Span, line: int, col: int) -> bool:
    return (span.start_line, span.start_col) <= (line, col) <= (span.end_line, span.end_col)


def word_at(text: str, line: int, col: int) -> tuple[str, Span] | None:
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    for match in _WORD.finditer(lines[line - 1]):
        if match.start() + 1 <= col <= match.end() + 1:
            return match.group(), Span(line, match.start() + 1, line, match.end() + 1)
    return None


def finding_markdown(finding: Finding, ruleset: "RuleSet") -> str:
    rule = ruleset.rules.get(finding.rule_id)
    head = f"**{finding.rule_id}** `{rule.name}` ({finding.level.label})" if rule else f"**{finding.rule_id}**"
    body = [head, "", finding.message]
    if finding.hint:
        body += ["", f"*Fix:* {finding.hint}"]
    if rule is not None:
        body += ["", _explanation(rule), "", f"[{finding.rule_id} in the rule docs]({rule.help_uri()})"]
    return "\n".join(body)


def rule_markdown(rule) -> str:
    return "\n".join([f"**{rule.id}** `{rule.name}`: {rule.summary}", "", _explanation(rule), "",
                      f"[{rule.id} in the rule docs]({rule.help_uri()})"])


def _explanation(rule) -> str:
    return textwrap.dedent(rule.explanation).strip()


# -- tensors -----------------------------------------------------------------------
def tensor_markdown(model: "FileModel", name: str, line: int, checked: "Checked") -> str | None:
    """What the model knows about the tensor ``name`` visible at ``line``."""
    from ..model import views

    best = None
    for kernel in model.kernels:
        inside = kernel.node.lineno <= line <= (kernel.node.end_lineno or kernel.node.lineno)
        for tensor in views.tensors_of(kernel):
            if tensor.data.get("name") != name:
                continue
            node = model.report_node(tensor.site)
            at = getattr(node, "lineno", None)
            if at is None:
                continue
            # The allocation nearest above the cursor, in the kernel the cursor is in.
            rank = (inside, at <= line, at if at <= line else -at)
            if best is None or rank > best[0]:
                best = (rank, kernel, tensor, node)
    if best is None:
        return None
    _, kernel, tensor, node = best
    return _describe_tensor(model, kernel, tensor, node)


def _dim(v) -> str:
    from ..model.values import const_int, describe, int_bounds

    c = const_int(v)
    if c is not None:
        return str(c)
    text = describe(v)
    bounds = int_bounds(v)
    if bounds is not None and "[" not in text and ">=" not in text and "<=" not in text:
        lo, hi = bounds
        if lo != float("-inf") and hi != float("inf"):
            text += f" (in [{int(lo)}, {int(hi)}])"
    return text


def _describe_tensor(model: "FileModel", kernel, tensor, node) -> str:
    from ..model.memory import analyze, fmt_bytes
    from ..model.values import const_int

    shape = tensor.shape
    rows = [f"**{tensor.name}**: {tensor.buffer.upper() if tensor.on_chip else tensor.buffer} tensor "
            f"in kernel `{kernel.name}` (what nkilint's model knows)", ""]
    rows.append(f"- shape: {'unknown rank' if shape is None else '(' + ', '.join(_dim(d) for d in shape) + ')'}")
    rows.append(f"- dtype: {tensor.dtype or 'unknown'}")
    rows.append(f"- buffer: {tensor.buffer}")
    size = tensor.partition_size
    if size is not None:
        rows.append(f"- partition size: {_dim(size)} (axis {tensor.partition_axis})")
    if tensor.on_chip:
        memory = analyze(kernel, model.target)
        mem = memory.tensors.get(tensor.id)
        if mem is not None:
            exact = const_int(mem.bytes_v)
            text = f"{exact} B ({fmt_bytes(exact)})" if exact is not None else _dim(mem.bytes_v)
            rows.append(f"- bytes per partition: {text}")
            if mem.copies > 1:
                rows.append(f"- copies live together: {mem.copies}")
    site = tensor.site
    where = f"line {node.lineno}"
    if site is not None and not model.in_this_file(site):
        where += f" (allocated in {Path(site.file).name}:{site.line}, reached through this call)"
    elif tensor.api:
        where += f" (`{tensor.api}`)"
    if tensor.data.get("origin") == "param":
        where = f"kernel parameter, line {node.lineno}"
    rows.append(f"- allocated: {where}")
    if kernel.error:
        rows.append(f"- note: the model stopped early in this kernel ({kernel.error})")
    return "\n".join(rows)
