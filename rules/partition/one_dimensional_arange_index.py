"""NKI110 one-dimensional-arange-index: a legacy index uses a 1-D nl.arange."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.scopes import Scopes
from nkilint.model.values import IndexV
from nkilint.model.views import views
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._shapes import LEGACY_ERRORS


class OneDimensionalArangeIndex(Rule):
    id = "NKI110"
    name = "one-dimensional-arange-index"
    family = "partition"
    level = Level.ERROR
    summary = "A legacy tensor index uses a 1-D nl.arange (it needs [:, None] or [None, :])"
    explanation = """
Finds legacy tensor indices that use a plain 1-D `nl.arange(n)` (the call
itself, or a name every assignment of which in the function binds one).

**Why on Trainium:** legacy NKI index tiles must be at least
two-dimensional to match the partition x free layout of SBUF and PSUM.
Indexing a tensor with a 1-D `nl.arange` is rejected ("Indexing a NKI tensor
with 1D arange is not supported", legacy `err_1d_arange_not_supported`): the
compiler cannot tell whether the index runs over partitions or over the
free dimension.

**Fix:** add the missing axis: `nl.arange(n)[:, None]` for a partition
index, `nl.arange(n)[None, :]` for a free index, use `nl.mgrid`, or use a
plain slice such as `t[0:64, 0]`.
"""
    requires = (Scopes,)
    references = (f"{LEGACY_ERRORS} (err_1d_arange_not_supported)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                tmp = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                i = nl.arange(64)
                c = nl.exp(tmp[i, 0])
                return out
            """,
            lines=[9],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                tmp = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                i = nl.arange(64)[:, None]
                c = nl.exp(tmp[i, 0])
                nl.store(out, value=c)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        model = ctx.model
        scopes = ctx.analysis(Scopes)

        def arange_call(node: ast.AST) -> bool:
            if not isinstance(node, ast.Call):
                return False
            qual = model.bindings.resolve(node.func)
            return qual is not None and qual.name == "nki.language.arange"

        for v in views(model):
            items = v.index_v or ()
            if not any(isinstance(x, IndexV) and len(x.axis_shape) == 1 for x in items):
                continue
            site = v.site
            if site is None or not model.in_this_file(site) or not isinstance(site.node, ast.Subscript):
                continue
            # The model keeps some 2-D index expressions 1-D (arange(n)[:, None, None],
            # i_p * F + i_f): only an index that is syntactically a bare nl.arange counts
            # (the call itself, or a name every definition of which is one).
            fn = scopes.enclosing_function(site.node)
            elts = site.node.slice.elts if isinstance(site.node.slice, ast.Tuple) else [site.node.slice]
            bare = [e for e in elts if arange_call(e) or _bound_to(scopes, fn, e, arange_call)]
            if not bare:
                continue
            reporter.at_site(
                site,
                f"{v.label} is indexed with a 1-D nl.arange "
                f"({ast.unparse(bare[0])}); index tiles must be 2-D to say which axis they run over",
                hint="use nl.arange(n)[:, None] for a partition index or nl.arange(n)[None, :] for a free index",
                kernel=v.kernel.name,
            )


def _bound_to(scopes: Scopes, fn: ast.AST | None, expr: ast.AST, pred) -> bool:
    """``expr`` is a name of ``fn`` that every binding in ``fn``'s own scope
    assigns directly (``i = ...``, not unpacked, annotated or augmented) to
    a value satisfying ``pred``. One level only: ``j = i`` does not count."""
    if fn is None or not isinstance(expr, ast.Name):
        return False
    defs = scopes.of(fn).bindings.get(expr.id, [])
    return bool(defs) and all(
        d.kind == "assign" and d.value is getattr(d.node, "value", None) and pred(d.value) for d in defs
    )
