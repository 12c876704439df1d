"""NKI704 while-loop-entry-condition: legacy: a while loop tests a runtime value before its first iteration."""

from __future__ import annotations

import ast

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.scopes import Scope, Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC


class WhileLoopEntryCondition(Rule):
    id = "NKI704"
    name = "while-loop-entry-condition"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "Legacy: a while loop tests a runtime value before its first iteration (only do-while is supported)"
    explanation = f"""
Finds, in legacy kernels, a `while` loop whose condition is a runtime value
already before its first iteration: `while a_scalar < 10:` where
`a_scalar` was computed from a loaded tile.

**Why on Trainium:** the legacy NKI compiler lowers a `while` loop on a
runtime value to a device loop that always runs its first iteration and
tests the condition at the end of each iteration (do-while). A loop that
needs the condition before the first iteration is rejected with
`err_while_loop_requires_unconditional_entry` ("Traditional while loops
are not supported - use do-while pattern instead", {ERRORS_DOC}).

**Fix:** enter the loop unconditionally and compute the condition at the
end of the body:

```python
cond = scalar(True)
while cond:
    ...
    cond = a_scalar < 10
```

(In NKI 0.6, `nl.while_loop(reg, body)` is a true while loop on a
register.)
"""
    references = (f"{ERRORS_DOC} (err_while_loop_requires_unconditional_entry)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def count_up(a):
                out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
                a_tile = nl.load(a[0:1, 0:1])
                a_scalar = nt.scalar(a_tile)
                while a_scalar < 10:
                    a_tile = nl.add(a_tile, 1)
                    a_scalar = nt.scalar(a_tile)
                nl.store(out, value=a_tile)
                return out
            """,
            lines=[10],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def count_up(a):
                out = nl.ndarray((1, 1), dtype=a.dtype, buffer=nl.shared_hbm)
                a_tile = nl.load(a[0:1, 0:1])
                cond = nt.scalar(True)
                while cond:
                    a_tile = nl.add(a_tile, 1)
                    a_scalar = nt.scalar(a_tile)
                    cond = a_scalar < 10
                nl.store(out, value=a_tile)
                return out
            """,
            title="do-while: the first iteration is unconditional",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            scope = scopes.of(fn)
            for node in scopes.own_nodes(fn):
                if not isinstance(node, ast.While) or exprs.holds(fn, node.test):
                    continue  # a tensor condition is NKI701's
                culprit = self._runtime_at_entry(scopes, exprs, fn, scope, node)
                if culprit is None:
                    continue
                reporter.at(
                    node.test,
                    f"`while {short_text(node.test)}` tests a runtime value before the first iteration ({culprit}); "
                    f"legacy NKI only supports do-while loops (err_while_loop_requires_unconditional_entry)",
                    hint="enter the loop unconditionally (`cond = scalar(True)`) and update the condition at the "
                    "end of the body",
                )

    @staticmethod
    def _runtime_at_entry(scopes: Scopes, exprs: ExprFacts, fn: ast.AST, scope: Scope, loop: ast.While) -> str | None:
        """What makes the condition a runtime value on entry: the test reads
        tensor data, or a name it tests was last bound before the loop to an
        expression that does."""
        if exprs.reads_tensor(fn, loop.test):
            return f"`{short_text(loop.test)}` reads tensor data"
        for name in {n.id for n in astwalk.walk(loop.test) if isinstance(n, ast.Name)}:
            binds = [
                b for b in scope.bindings.get(name, [])
                if getattr(b.node, "lineno", 0) < loop.lineno and not scopes.file.is_inside(b.node, loop)
            ]
            if not binds:
                continue
            last = max(binds, key=lambda b: (b.node.lineno, b.node.col_offset))
            if last.value is not None and exprs.reads_tensor(fn, last.value):
                return f"`{name}` = `{short_text(last.value)}` on line {last.node.lineno}"
        return None

