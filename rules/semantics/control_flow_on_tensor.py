"""NKI701 control-flow-on-tensor: an if/while condition is tensor data, unknown when the kernel is compiled."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, Holds
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC, describe, dialect


class ControlFlowOnTensor(Rule):
    id = "NKI701"
    name = "control-flow-on-tensor"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "An if/while condition is a tensor: tensor data is not known when the kernel is compiled"
    explanation = f"""
Finds `if`, `while`, conditional-expression and comprehension-filter
conditions whose value is tensor data (`if tile:`,
`if nl.load(flag)[0, 0] > 0:`).

**Why on Trainium:** NKI resolves every condition while it *specializes*
the kernel, before anything runs on the device. At that time a tensor has a
shape, a dtype and a buffer but no values, so the condition cannot be
decided. The legacy frontend rejects it with
`err_dynamic_control_flow_not_supported` ("Dynamic control-flow depending
on tensor value is currently not supported by NKI", {ERRORS_DOC}); the
current compiler evaluates conditions at specialization time as well
(`nki/get-started/nki-language-guide.rst`, "Tensor Values" note and
"Control Flow").

Levels: an error in legacy kernels (the documented frontend error). In a
legacy kernel, a condition on a parameter that the kernel also uses as a
tensor (`if bias:` with `nl.load(bias)` below) is a warning: it fails
whenever the caller passes a tensor. In `nki.*` kernels (NKI 0.2+) the
finding is a warning: the docs do not say what the new compiler does with a
tensor in a condition (`NkiTensor` defines no truth value), so the branch is
either rejected or constant — in both cases it does not test the data. An
optional parameter tested with `if t:` is not reported there, since it only
checks that a tensor was passed.

**Fix:** branch on specialization-time values (shapes, dtypes, Python
flags, `x is not None` — `x != None` from NKI 0.3, which has no `is`). For a
decision that depends on data, compute both sides and select with
`nl.where`/`nisa.select`/masks, or (NKI 0.2+) load the value into a
register with `nisa.register_load` and use a dynamic loop
(`nl.while_loop` in NKI 0.6, `while reg:` before).
"""
    references = (
        f"{ERRORS_DOC} (err_dynamic_control_flow_not_supported)",
        "aws-neuron-sdk nki/get-started/nki-language-guide.rst (Control Flow, Dynamic Control Flow)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def guarded_copy(a, flag):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                cnd = nl.load(flag[0:1, 0:1])
                tile = nl.load(a)
                if cnd:
                    nl.store(out, value=tile)
                return out
            """,
            lines=[9],
            title="legacy: branching on a loaded [1, 1] tile",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def guarded_copy(a, flag):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                f = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=f, src=flag)
                t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                if f[0, 0] > 0:
                    nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[12],
            title="current API: comparing an SBUF element in an if (a warning)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_bias(a, bias=None):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a)
                if bias:
                    t = nl.add(t, nl.load(bias))
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="an optional tensor parameter tested for truth: fails whenever a tensor is passed",
            level=Level.WARNING,
        ),
        invalid(
            """
            from typing import Optional
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            from neuronxcc.nki.typing import tensor

            @nki.jit
            def copy_rows(a, b: Optional[tensor] = None):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a)
                if b:
                    pass
                nl.store(out, value=t)
                return out
            """,
            lines=[10],
            title="legacy: `if` on a parameter annotated Optional[tensor] (a warning: fine when None is passed)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def scale_rows(a, use_scale=True, bias=None):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a)
                if use_scale:
                    t = nl.multiply(t, 2.0)
                if bias is not None:
                    t = nl.add(t, nl.load(bias))
                nl.store(out, value=t)
                return out
            """,
            title="`if` on a flag parameter, `is not None` on an optional tensor",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_bias(a, bias=None):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a)
                if bias is not None:
                    t = nl.add(t, nl.load(bias))
                if a.shape[0] > 64:
                    t = nl.multiply(t, 2.0)
                nl.store(out, value=t)
                return out
            """,
            title="conditions on None checks and shapes are specialization-time values",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def guarded_copy(a, flag):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                f = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=f, src=flag)
                reg = nisa.register_alloc(0)
                nisa.register_load(reg, f)
                t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)

                def body(i):
                    nisa.dma_copy(dst=out, src=t)

                nl.fori_loop(0, reg, body)
                return out
            """,
            title="current API: the data-dependent decision is a register-driven loop",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        legacy = ctx.model.legacy
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            for node in scopes.own_nodes(fn):
                tests: list[tuple[ast.AST, str]] = []
                if isinstance(node, (ast.If, ast.While)):
                    tests.append((node.test, "while" if isinstance(node, ast.While) else "if"))
                elif isinstance(node, ast.IfExp):
                    tests.append((node.test, "conditional expression"))
                elif isinstance(node, ast.comprehension):
                    tests.extend((t, "comprehension filter") for t in node.ifs)
                for test, what in tests:
                    # `not t` / `a and t` are NKI702's; report the plain condition here.
                    if isinstance(test, (ast.BoolOp,)) or (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
                        continue
                    held = exprs.holds(fn, test)
                    how = "uses as a tensor"
                    if held is Holds.PARAM and isinstance(test, ast.Name) and not exprs.param_used_as_tensor(fn, test.id):
                        how = "declares a tensor"  # `b: Optional[nt.tensor]`, not used as one (yet)
                    if held is None or (held is Holds.PARAM and not legacy):
                        continue
                    desc = describe(exprs, fn, test)
                    if held is Holds.PARAM:
                        reporter.at(
                            test,
                            f"`{what}` tests kernel parameter {desc}, which the kernel {how}: when the caller "
                            f"passes a tensor its truth value is data, unknown when the kernel is compiled "
                            f"(err_dynamic_control_flow_not_supported / err_ambiguous_tensor_truth_value)",
                            level=Level.WARNING,
                            hint="test `is not None` (`!= None` from NKI 0.3) or pass a Python flag",
                        )
                        continue
                    if legacy:
                        message = (f"`{what}` condition {desc} is tensor data, which is not known when the kernel is "
                                   f"compiled; legacy NKI cannot branch on it (err_dynamic_control_flow_not_supported)")
                    else:
                        message = (f"`{what}` condition {desc} is tensor data, which is not known when "
                                   f"{dialect(ctx.model)} specializes the kernel: the condition cannot test the data "
                                   f"(it is rejected or constant)")
                    reporter.at(
                        test,
                        message,
                        level=Level.ERROR if legacy else Level.WARNING,
                        hint="branch on shapes or Python values; select data with nl.where / masks, or drive a "
                        "register loop (nisa.register_load + nl.while_loop)",
                    )


