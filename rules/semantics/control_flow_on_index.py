"""NKI703 control-flow-on-index: legacy: a condition depends on an nl.arange / nl.mgrid index expression."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC


class ControlFlowOnIndex(Rule):
    id = "NKI703"
    name = "control-flow-on-index"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "Legacy: a condition depends on an nl.arange / nl.mgrid index expression"
    explanation = f"""
Finds, in legacy kernels, `if`, `while` and conditional-expression
conditions that depend on an `nl.arange` / `nl.mgrid` index expression, and
index conditions combined with `and` / `or` / `not`.

**Why on Trainium:** in legacy NKI, `nl.arange` and `nl.mgrid` build
*index expressions*: symbolic ranges the compiler turns into access
patterns. They have no single value, so a condition on them cannot be
decided; the frontend raises
`err_control_flow_condition_depending_on_arange` ("Control-flow depending
on `nl.arange` or `nl.mgrid` is not supported", {ERRORS_DOC}). Combining
index conditions with `and` / `or` / `not` has the same problem (legacy
known issue: "We do not support using `and` for masks",
`general/nki/nki_known_issues.rst` @0521004c); that case is a warning,
because Python evaluates it without the frontend noticing (an SDK test,
`nki/test/test_nki_isa_nc_match_replace8.py`, passes such a mask) and the
mask silently becomes one of the operands.

**Fix:** express the condition as a mask on the instruction
(`nl.add(x[0, j], y[0, j], mask=j > 2048)`); combine masks with `&`, `|`
and `~`.
"""
    references = (
        f"{ERRORS_DOC} (err_control_flow_condition_depending_on_arange)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (mask conjunction)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def shifted_add(x):
                out = nl.ndarray((1, 4096), dtype=x.dtype, buffer=nl.shared_hbm)
                for j0 in nl.affine_range(8):
                    i1 = nl.arange(512)[None, :]
                    j = j0 * 512 + i1
                    if j > 2048:
                        y = nl.add(nl.load(x[0, j]), nl.load(x[0, j - 2048]))
                        nl.store(out[0, j], value=y)
                return out
            """,
            lines=[10],
            title="branching on an arange-derived index",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def corner(a, n):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                t = nl.load(a[i_p, i_f], mask=(i_p < 64) and (i_f < 256))
                nl.store(out[i_p, i_f], value=t)
                return out
            """,
            lines=[8],
            title="`and` between mgrid masks (a warning: the mask silently becomes one operand)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def shifted_add(x):
                out = nl.ndarray((1, 4096), dtype=x.dtype, buffer=nl.shared_hbm)
                for j0 in nl.affine_range(8):
                    i1 = nl.arange(512)[None, :]
                    j = j0 * 512 + i1
                    if j0 > 3:
                        y = nl.load(x[0, j], mask=(j > 2048) & (j < 4096))
                        nl.store(out[0, j], value=y, mask=j > 2048)
                return out
            """,
            title="a mask on the instruction; branching on the loop variable is fine",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            for node in scopes.own_nodes(fn):
                tests: list[tuple[ast.AST, str]] = []
                if isinstance(node, (ast.If, ast.While)):
                    tests.append((node.test, "while" if isinstance(node, ast.While) else "if"))
                elif isinstance(node, ast.IfExp):
                    tests.append((node.test, "conditional expression"))
                for test, what in tests:
                    if isinstance(test, ast.BoolOp) or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                        continue
                    if exprs.is_index(fn, test):
                        reporter.at(
                            test,
                            f"`{what}` condition `{short_text(test)}` depends on an nl.arange / nl.mgrid index, which "
                            f"has no single value (err_control_flow_condition_depending_on_arange)",
                            hint="pass the condition as mask= to the instructions instead",
                        )
                operands: list[tuple[ast.AST, str]] = []
                if isinstance(node, ast.BoolOp):
                    word = "and" if isinstance(node.op, ast.And) else "or"
                    operands = [(v, word) for v in scopes.file.truth_tested(node)]
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                    operands = [(node.operand, "not")]
                for operand, word in operands:
                    if exprs.is_index(fn, operand):
                        replacement = {"and": "&", "or": "|", "not": "~"}[word]
                        reporter.at(
                            operand,
                            f"`{word}` takes the truth value of index expression `{short_text(operand)}` "
                            f"(nl.arange / nl.mgrid), which has no single value: it does not combine the conditions "
                            f"element-wise (legacy known issue: `and` is not supported for masks)",
                            level=Level.WARNING,
                            hint=f"combine index conditions with `{replacement}`",
                        )

