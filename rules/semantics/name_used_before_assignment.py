"""NKI734 name-used-before-assignment: device code reads a local name on a path that has not bound it."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.assignment import UNDEF, DefiniteAssignment
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, Holds
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._blocks import LegacyBlockScopes
from ._messages import ERRORS_DOC


class NameUsedBeforeAssignment(Rule):
    id = "NKI734"
    name = "name-used-before-assignment"
    family = "semantics"
    level = Level.ERROR
    summary = "Device code reads a local name (a tile, a size) on a path that has not bound it yet"
    explanation = f"""
Finds, in a kernel or a helper it reaches, a read of a name the function
binds somewhere (so Python makes it local) on a path where no binding has
run yet: the name is bound later, only under an `if` whose condition the
syntax decides to be false (`if False:`, `DEBUG = False` ... `if DEBUG:`),
or in only one branch of an `if` (nested `if`s too) and read after it.

**Why on Trainium:** the legacy tracer runs the kernel body as Python and
the NKI 0.2+ frontend resolves a function's names with Python's rules, so
the read raises `UnboundLocalError` (a `NameError`, {ERRORS_DOC} has no code
of its own for it) and the kernel never compiles — on every call when no
path binds the name first (an error), and on the calls whose flags or
shapes take the branch that skips the binding when only some paths do (a
warning: the condition is not decided statically).

A name a loop body binds counts as bound after the loop (kernels loop over
tile counts) and a read in the body of a value from an earlier iteration
(`if i > 0: use(prev)`) is not reported; neither is a maybe-unbound read
that is itself under a condition (usually the same flag that bound it), nor
one whose bindings hold no tile data (a size bound under a flag: the
caller's checks usually decide that flag); tile data is an allocation, an
NKI result, or what a project helper returns when every run the model
inlined returned a tile or a list of tiles. A
legacy tile bound inside an `if`/`for` block that depends on a loop index is
NKI709's (block scoping), not reported again here. Functions with a `match`
statement or `exec`/`locals()` are not checked.

**Fix:** bind the name on every path before the read: allocate the tile
before the `if` (`t = nl.ndarray(shape, dtype=..., buffer=nl.sbuf)`) and fill
it in each branch (`t[...] = ...`), add the missing `else`, or move the
read under the same condition.
"""
    references = (
        f"{ERRORS_DOC} (errors raised while tracing the kernel's Python body)",
        "https://docs.python.org/3/reference/executionmodel.html#resolution-of-names",
    )
    requires = (DeviceCode, Scopes, ExprFacts, DefiniteAssignment)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_bias(x, bias, use_bias: bool):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                if use_bias:
                    b = nl.load(bias)
                y = nl.add(t, b)
                nl.store(out, value=y)
                return out
            """,
            lines=[10],
            title="legacy: a tile bound in one branch of an if and read after it",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            DEBUG = False

            @nki.jit
            def copy(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if DEBUG:
                    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[12],
            title="current: a tile bound only under a constant-false condition",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=t, src=x)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8],
            title="current: a tile read before the line that allocates it",
            level=Level.ERROR,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_bias(x, bias, use_bias: bool, n: int):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                if use_bias:
                    b = nl.load(bias)
                else:
                    b = nl.zeros(t.shape, dtype=t.dtype)
                y = nl.add(t, b)
                if use_bias:
                    y = nl.add(y, b)
                for i in range(n):
                    if i > 0:
                        y = nl.add(y, prev)
                    prev = nl.multiply(y, 2.0)
                nl.store(out, value=nl.add(y, prev))
                return out
            """,
            title="bound on both branches, a read under the same flag, values carried by a loop",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        facts = ctx.analysis(DefiniteAssignment)
        exprs = ctx.analysis(ExprFacts)
        index = ctx.analysis(Scopes).file
        reporter = Reporter(ctx)
        nki709: set[int] = set()
        if ctx.model.legacy:
            for _fn, report in ctx.analysis(LegacyBlockScopes).reports:
                nki709.update(id(item.load) for item in report.out_of_scope)
        for fn in ctx.analysis(DeviceCode).functions:
            for use in facts.unbound_uses(fn):
                if id(use.node) in nki709:
                    continue
                conditional = any(True for _ in index.conditions_between(use.node, fn))
                if use.status != UNDEF and (conditional or not _binds_tile(exprs, fn, use.bindings)):
                    continue  # guarded by the flag that bound it, or a size whose input domain the caller checks
                lines = ", ".join(str(getattr(b, "lineno", "?")) for b in use.bindings)
                where = f"line{'s' if len(use.bindings) > 1 else ''} {lines}" if lines else "this function"
                if use.status == UNDEF:
                    reason = (f"no path from the start of `{fn.name}` to this read binds it (it is bound at {where}), "
                              f"so this line raises UnboundLocalError" + (" when it runs" if conditional else ""))
                else:
                    reason = (f"it is bound at {where} only on some paths (a branch that is not taken for every "
                              f"input skips it), so this line raises UnboundLocalError when the kernel is traced "
                              f"down such a path")
                reporter.at(
                    use.node,
                    f"`{use.name}` is read before it is assigned: {reason}",
                    level=Level.ERROR if use.status == UNDEF and not conditional else Level.WARNING,
                    hint=f"bind `{use.name}` on every path before this read (allocate it before the `if` and fill "
                    f"it in each branch, or add the missing `else`)",
                    kernel=getattr(fn, "name", None),
                )


def _binds_tile(exprs: ExprFacts, fn, bindings) -> bool:
    """Some ``name = value`` binding of the name holds tensor data (a tile,
    or a helper's list of tiles: data, not a size the caller checks)."""
    for stmt in bindings:
        value = getattr(stmt, "value", None)
        targets = getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]
        if value is not None and any(isinstance(t, ast.Name) for t in targets) and \
                (exprs.holds(fn, value) is Holds.TENSOR or exprs.helper_return(value) is not None):
            return True
    return False
