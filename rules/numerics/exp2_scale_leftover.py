"""NKI505 exp2-scale-leftover."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._spots import ACT_DOC, NumericsRule, Spot, chain_text, number, other_name


class Exp2ScaleLeftover(NumericsRule):
    id = "NKI505"
    name = "exp2-scale-leftover"
    family = "numerics"
    level = Level.WARNING
    summary = "A log2(e) factor from Triton's exp2-based softmax survives in a kernel that uses natural exp"
    fix_hint = "scale by sm_scale only (natural exp), or emulate exp2 as exp(x * ln 2) consistently"
    explanation = """
The constant log2(e) = 1.4426950... (as a literal, `LOG2E`/`RCP_LN2`
names, `math.log2(math.e)` or `1 / math.log(2)`) in a kernel that computes
natural `exp` (`nl.exp`, `activation(op=nl.exp)`) and never uses ln 2.

**Why on Trainium:** Triton flash attention computes `exp2(x * sm_scale *
log2(e))` because `exp2` is the fast GPU instruction. Trainium's ScalarE
evaluates natural `exp`; porting `exp2` to `exp` while keeping the log2(e)
factor multiplies every logit by 1.4427, silently sharpening the softmax
(and breaking the log-sum-exp bookkeeping) — the result still looks like a
softmax.

**Fix:** Use `nisa.activation(op=nl.exp, scale=sm_scale, ...)` with the
natural-log LSE, or, if the base-2 form is wanted, compute `exp(x * ln 2)`
and keep both factors together.
"""
    references = (ACT_DOC,)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def attn_probs(s, sm_scale):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=s)
                qk_scale = sm_scale * 1.4426950408889634
                nisa.activation(dst=t, op=nl.exp, data=t, scale=qk_scale)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            LOG2E = 1.44269504

            @nki.jit
            def attn_probs(s):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(s[0:128, 0:512])
                nl.store(out, value=nl.exp(t * LOG2E))
                return out
            """,
            lines=[10],
            title="legacy API: a named constant",
        ),
        valid(
            """
            import math
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp2_kernel(s):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=s)
                nisa.activation(dst=t, op=nl.exp, data=t, scale=1.4426950408889634 * math.log(2))
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="the log2(e) factor paired with ln 2",
        ),
    )

    def spots(self, ctx: RuleContext):
        return exp2_leftovers(ctx, ctx.analysis(DeviceCode))


LOG2E = 1.4426950408889634


LN2 = 0.6931471805599453


_LOG2E_NAMES = re.compile(r"^(M_)?LOG2_?E$|^log2_?e$|^RCP_LN2$|^rcp_ln2$|^INV_LN2$|^inv_ln2$", re.I)


_LN2_NAMES = re.compile(r"^LN_?2$|^ln_?2$|^LOG_?2$", re.I)


def _is_log2e_expr(node: ast.AST, ctx: RuleContext) -> bool:
    v = number(node)
    if v is not None:
        return abs(v - LOG2E) < 1e-4
    if isinstance(node, ast.Name) and _LOG2E_NAMES.match(node.id):
        return True
    if isinstance(node, ast.Call) and node.args:
        name = other_name(ctx, node.func) or chain_text(node.func)
        arg = node.args[0]
        if name.endswith("log2") and chain_text(arg).endswith(".e"):
            return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and number(node.left) == 1.0:
        right = node.right
        if isinstance(right, ast.Call) and right.args and (other_name(ctx, right.func) or chain_text(right.func)).endswith(".log") \
                and number(right.args[0]) == 2.0:
            return True
    return False


def _is_ln2_expr(node: ast.AST, ctx: RuleContext) -> bool:
    v = number(node)
    if v is not None:
        return abs(v - LN2) < 1e-4
    if isinstance(node, ast.Name) and _LN2_NAMES.match(node.id):
        return True
    if isinstance(node, ast.Call) and node.args and (other_name(ctx, node.func) or chain_text(node.func)).endswith(".log") \
            and number(node.args[0]) == 2.0:
        return True
    return False


def exp2_leftovers(ctx: RuleContext, s: DeviceCode) -> Iterator[Spot]:
    exp_functions = set()
    for _, graph in ctx.model.graphs():
        for _, data in graph.ops():
            if df.is_exp(data):
                exp_functions.add(str(data.get("function")))
    if not exp_functions:
        return
    for fn in s.outermost:
        if not any(str(f) in exp_functions for f in _names_in(fn)):
            continue
        nodes = s.nodes(fn)
        if any(_is_ln2_expr(n, ctx) for n in nodes):
            continue
        parents = s.index.parents
        for node in nodes:
            if not _is_log2e_expr(node, ctx):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, (ast.UnaryOp, ast.BinOp)) and _is_log2e_expr(parent, ctx):
                continue
            if isinstance(parent, ast.Call) and parent.func is node:
                continue
            owner = s.owner(node) or fn
            yield Spot(node, (
                f"{ast.unparse(node)} is log2(e), the scale of Triton's exp2-based softmax, in a kernel that computes "
                f"natural exp on Trainium: exp(x * log2(e)) changes the softmax temperature by 1.4427x (and the "
                f"log-sum-exp bookkeeping); use scale=sm_scale with nl.exp, or emulate exp2 as exp(x * ln 2) "
                f"consistently"
            ), Level.WARNING, owner.name)
            break


def _names_in(fn: ast.FunctionDef) -> set[str]:
    out = {fn.name}
    for n in astwalk.walk(fn):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name)
    return out
