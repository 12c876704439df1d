"""NKI702 tensor-truth-value: `and`, `or`, `not` or `bool()` applied to a tensor."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, Holds
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC, describe


class AmbiguousTensorTruth(Rule):
    id = "NKI702"
    name = "tensor-truth-value"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "`and`, `or`, `not` or `bool()` applied to a tensor"
    explanation = f"""
Finds `and`, `or`, `not` and `bool()` applied to a tensor (`not (t > 0)`,
`ta and tb`), where Python takes the tensor's truth value.

**Why on Trainium:** these operators need one truth value, but a tensor
holds many values, and none of them is known while the kernel is compiled.
The legacy frontend raises `err_ambiguous_tensor_truth_value` ("Cannot
evaluate truth value of a multi-element tensor/array", {ERRORS_DOC});
legacy masks must be combined with `&`, never `and`
(`general/nki/nki_known_issues.rst` @0521004c).

Levels follow NKI701: an error in legacy kernels, a warning in `nki.*`
kernels (where the truth value is at best constant).

**Fix:** use the element-wise operators: `~t` (or `nl.logical_not`)
instead of `not t`, `a & b` / `a | b` (or `nl.logical_and` /
`nl.logical_or`) instead of `and` / `or`; test optional tensors with
`is not None` (`!= None` from NKI 0.3).
"""
    references = (
        f"{ERRORS_DOC} (err_ambiguous_tensor_truth_value)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (mask conjunction)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def positive_mask(a):
                out = nl.ndarray(a.shape, dtype=nl.uint8, buffer=nl.shared_hbm)
                t = nl.load(a)
                neg = not (t > 0)
                nl.store(out, value=neg)
                return out
            """,
            lines=[8],
            title="legacy: `not` of a comparison tile",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def both(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                ta = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
                tb = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=a)
                nisa.dma_copy(dst=tb, src=b)
                pick = ta and tb
                nisa.dma_copy(dst=out, src=pick)
                return out
            """,
            lines=[12],
            title="current API: `and` between two tiles (a warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def positive_mask(a, b=None):
                out = nl.ndarray(a.shape, dtype=nl.uint8, buffer=nl.shared_hbm)
                t = nl.load(a)
                neg = ~(t > 0)
                if b is not None and a.shape[0] == 128:
                    neg = nl.logical_and(neg, nl.load(b))
                nl.store(out, value=neg)
                return out
            """,
            title="element-wise negation; `and` between specialization-time conditions",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        legacy = ctx.model.legacy
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            for node in scopes.own_nodes(fn):
                operands: list[tuple[ast.AST, str]] = []
                if isinstance(node, ast.BoolOp):
                    word = "and" if isinstance(node.op, ast.And) else "or"
                    operands = [(v, word) for v in scopes.file.truth_tested(node)]
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                    operands = [(node.operand, "not")]
                elif (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool"
                    and len(node.args) == 1
                ):
                    operands = [(node.args[0], "bool()")]
                for operand, word in operands:
                    held = exprs.holds(fn, operand)
                    if held is None or (held is Holds.PARAM and not legacy):
                        continue
                    desc = describe(exprs, fn, operand)
                    replacement = {"and": "&", "or": "|", "not": "~"}.get(word, "an explicit comparison")
                    if held is Holds.PARAM:
                        reporter.at(
                            operand,
                            f"`{word}` takes the truth value of kernel parameter {desc}, which the kernel uses as a "
                            f"tensor: ambiguous whenever the caller passes a tensor (err_ambiguous_tensor_truth_value)",
                            level=Level.WARNING,
                            hint="test `is not None` (`!= None` from NKI 0.3)",
                        )
                        continue
                    reporter.at(
                        operand,
                        f"`{word}` takes the truth value of tensor {desc}; a tensor has many values and none is known "
                        f"when the kernel is compiled"
                        + (" (err_ambiguous_tensor_truth_value)" if legacy else ": the result does not depend "
                           "on the data"),
                        level=Level.ERROR if legacy else Level.WARNING,
                        hint=f"use the element-wise operator `{replacement}` (nl.logical_and / logical_or / logical_not)"
                        if word != "bool()" else "compare explicitly or use a specialization-time value",
                    )

