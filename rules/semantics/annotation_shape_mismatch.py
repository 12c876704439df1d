"""NKI722 annotation-shape-mismatch: legacy: `t: nt.tensor[...] = value` annotates a shape the value does not have."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.scopes import Scopes
from nkilint.model.values import const_int
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._graph import trusted_shape
from ._messages import ERRORS_DOC


class AnnotationShapeMismatch(Rule):
    id = "NKI722"
    name = "annotation-shape-mismatch"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "Legacy: `t: nt.tensor[...] = value` annotates a shape the value does not have"
    explanation = f"""
Finds, in legacy kernels, `target: nt.tensor[d0, d1, ...] = value`
annotations whose shape differs from the value's. Dimensions are compared
where both are known constants.

**Why on Trainium:** legacy NKI checks these annotations: when the value's
shape differs from the annotated one the frontend raises
`err_annotation_shape_mismatch` ("Tensor shape and the annotated shape
mismatch", {ERRORS_DOC}).

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
        model = ctx.model
        if not model.legacy:
            return
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        env = model.module.env or {}
        for fn in ctx.analysis(DeviceCode).functions:
            for node in scopes.own_nodes(fn):
                if not isinstance(node, ast.AnnAssign) or node.value is None:
                    continue
                ann = node.annotation
                if not isinstance(ann, ast.Subscript):
                    continue
                qual = model.bindings.resolve_nki(ann.value)
                if qual is None or qual.name not in ("nki.typing.tensor", "nki.typing.mutable_tensor"):
                    continue
                dims_ast = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
                expected = [_const_dim(d, env) for d in dims_ast]
                for ref in exprs.refs(node.value):
                    if not trusted_shape(ref):
                        continue
                    shape = ref.data.get("shape_v")
                    if shape is None:
                        continue
                    actual = [const_int(d) for d in shape]
                    mismatch = len(actual) != len(expected) and all(x is not None for x in actual + expected)
                    mismatch = mismatch or (len(actual) == len(expected) and any(
                        a is not None and e is not None and a != e for a, e in zip(actual, expected)))
                    if not mismatch:
                        continue
                    annotated = ", ".join(short_text(d) for d in dims_ast)
                    reporter.at(
                        node,
                        f"`{short_text(node.target)}` is annotated nt.tensor[{annotated}] but the value has shape "
                        f"{q.fmt_shape(shape)} (err_annotation_shape_mismatch)",
                        hint="fix the annotation or the shape of the value",
                    )
                    break


def _const_dim(node: ast.AST, env: dict) -> int | None:
    """An annotated dimension: a literal, or a module constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return const_int(env[node.id])
    return None

