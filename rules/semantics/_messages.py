"""What the messages and references of the semantics rules share: the
citation of the legacy frontend's error catalogue, and how a message names
a tensor expression and the NKI dialect of the file."""

from __future__ import annotations

import ast

from nkilint.model import query as q
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.semantic import FileModel

# The legacy frontend's error catalogue (36 kinds), which most rules cite.
ERRORS_DOC = "aws-neuron-sdk nki/api/nki.errors.rst @1db4d74e"


def describe(exprs: ExprFacts, fn: ast.AST, expr: ast.AST) -> str:
    """`name` (SBUF (128, 512)) for a tensor expression of ``fn``."""
    text = short_text(expr)
    refs = exprs.tensor_refs(fn, expr)
    if refs:
        data = refs[0].data
        buffer = str(data.get("buffer") or "").upper()
        shape = q.fmt_shape(q.shape_of(data))
        if data.get("shape_v") is None:
            return f"`{text}` ({buffer} tensor)" if buffer and buffer != "UNKNOWN" else f"`{text}` (a tensor)"
        return f"`{text}` ({buffer} {shape})" if buffer and buffer != "UNKNOWN" else f"`{text}` {shape}"
    return f"`{text}`"


def dialect(model: FileModel) -> str:
    """How messages name the file's NKI dialect."""
    return "legacy NKI (neuronxcc.nki)" if model.legacy else f"NKI {model.version}"
