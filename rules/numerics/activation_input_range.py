"""NKI506 activation-input-range."""

from __future__ import annotations

import ast
import math
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.graph import KernelGraph, Site
from nkilint.model.scopes import Scopes
from nkilint.model.values import Const, TensorV
from nkilint.rule import invalid, valid

from ._spots import ACT_DOC, NumericsRule, Spot, activation_func, tile_name


class ActivationInputRange(NumericsRule):
    id = "NKI506"
    name = "activation-input-range"
    family = "numerics"
    level = Level.WARNING
    summary = "A ScalarE activation (sin, log, rsqrt, reciprocal) gets inputs outside its valid range"
    fix_hint = "range-reduce (nl.sin) or add an eps (bias=eps) before the activation"
    explanation = """
`nisa.activation(op=nl.sin / nl.arctan)` on data that was not range-reduced
(no modulo or pi-offset upstream); `log` of probabilities (exp, softmax or
division output) with no eps; `rsqrt` / `reciprocal` of a variance (nl.var,
bn_aggr, a mean of squares) with no eps. An eps is a positive constant or a
value passed in (`eps` parameter) added on the op (`bias=`) or by an add
between the variance or exp and the call (`nisa.tensor_scalar(op0=nl.add,
operand0=eps)`, `nl.add(x, eps)`), or a clamp (`maximum`). The log of a
softmax denominator (a sum of `exp(x - max)`, also kept as an online
running sum) is at least 1 by construction and is not reported.

**Why on Trainium:** ScalarE evaluates activations with piecewise
polynomials that are valid only on limited input ranges: sin `[-pi, pi]`
(no range reduction: `sin(9.0)` returns about 27.65), arctan
`[-pi/2, pi/2]`, log `[2^-64, 2^64]`, rsqrt `[2^-87, 2^97]`, reciprocal
`+-[2^-42, 2^42]`. Outside them the result is garbage, not inf/NaN. CUDA's
libm handles the full range, so the GPU reference passes (RoPE angles of
thousands of radians, probabilities that underflow to 0, a zero variance).

**Fix:** Call `nl.sin` (which range-reduces) or reduce `x mod 2*pi` first;
add an eps (`bias=eps`, or an add before the call) for log, rsqrt and
reciprocal.
"""
    references = (ACT_DOC,)
    requires = (Scopes,)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def rope_sin(pos, inv_freq):
                out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ang = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
                f = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=ang, src=pos)
                nisa.dma_copy(dst=f, src=inv_freq)
                nisa.tensor_scalar(dst=ang, data=ang, op0=nl.multiply, operand0=f)
                nisa.activation(dst=ang, op=nl.sin, data=ang)
                nisa.dma_copy(dst=out, src=ang)
                return out
            """,
            lines=[13],
            title="current API: RoPE angles straight into ScalarE sin",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def rms_norm(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                sq = nl.multiply(t, t)
                ms = nl.sum(sq, axis=1, dtype=nl.float32)
                r = nl.rsqrt(ms)
                nl.store(out, value=t * r)
                return out
            """,
            lines=[10],
            title="legacy API: rsqrt of a mean of squares without eps",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def log_softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                m = nl.max(t, axis=1)
                e = nl.exp(t - m)
                s = nl.sum(e, axis=1)
                p = nl.divide(e, s)
                nl.store(out, value=nl.log(p))
                return out
            """,
            lines=[12],
            title="legacy API: log of softmax probabilities (they underflow to 0)",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def log_softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                m = nl.max(t, axis=1)
                e = nl.exp(t - m)
                s = nl.sum(e, axis=1)
                nl.store(out, value=t - m - nl.log(s))
                return out
            """,
            title="legacy API: log of a softmax denominator (max subtracted: the sum is at least 1)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def attention_lse(scores, n_tiles):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                run_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                run_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=run_max, value=-30000.0)
                nisa.memset(dst=run_sum, value=0.0)
                for i in nl.sequential_range(n_tiles):
                    s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=s, src=scores[0:128, i * 512:(i + 1) * 512])
                    new_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_reduce(dst=new_max, data=s, op=nl.maximum, axis=1)
                    nisa.tensor_tensor(dst=new_max, data1=new_max, data2=run_max, op=nl.maximum)
                    neg = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_scalar(dst=neg, data=new_max, op0=nl.multiply, operand0=-1.0)
                    corr = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.activation(dst=corr, op=nl.exp, data=run_max, bias=neg)
                    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    tile_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.activation(dst=p, op=nl.exp, data=s, bias=neg, reduce_op=nl.add, reduce_res=tile_sum)
                    nisa.tensor_tensor(dst=run_sum, data1=run_sum, data2=corr, op=nl.multiply)
                    nisa.tensor_tensor(dst=run_sum, data1=run_sum, data2=tile_sum, op=nl.add)
                    nisa.tensor_copy(dst=run_max, src=new_max)
                lse = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=lse, op=nl.log, data=run_sum)
                nisa.dma_copy(dst=out, src=lse)
                return out
            """,
            title="current API: log of an online-softmax running sum (at least 1 by construction)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa


            @nki.jit
            def rms(x, eps=1e-6):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=sq, data1=t, data2=t, op=nl.multiply)
                ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=ss, data=sq, op=nl.add, axis=1)
                var = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=var, data=ss, op0=nl.multiply, operand0=1.0 / 512)
                ve = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=ve, data=var, op0=nl.add, operand0=eps)
                inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=inv, op=nl.rsqrt, data=ve)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: eps passed in as a parameter and added by a separate tensor_scalar",
        ),
        valid(
            """
            import math
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def rope_sin(pos):
                out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ang = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=ang, src=pos)
                nisa.tensor_scalar(dst=ang, data=ang, op0=nl.add, operand0=math.pi, op1=nl.mod, operand1=2 * math.pi)
                nisa.tensor_scalar(dst=ang, data=ang, op0=nl.add, operand0=-math.pi)
                nisa.activation(dst=ang, op=nl.sin, data=ang)
                nisa.dma_copy(dst=out, src=ang)
                return out
            """,
            title="angles reduced to [-pi, pi] first",
        ),
    )

    def spots(self, ctx: RuleContext):
        return activation_ranges(ctx)


_RANGED = {"sin": "[-pi, pi]", "arctan": "[-pi/2, pi/2]", "log": "[2^-64, 2^64]", "rsqrt": "[2^-87, 2^97]",
           "reciprocal": "+-[2^-42, 2^42]", "sqrt": "[2^-116, 2^118]"}


_PI_MULTIPLES = [math.pi * k for k in (0.5, 1.0, 1.5, 2.0)]


def _range_reduced(graph: KernelGraph, src: str) -> bool:
    for p in df.producers(graph, src, depth=8):
        pdata = graph.attrs(p)
        s = df.short(pdata.get("api"))
        funcs = set(df.func_params(pdata).values())
        if s in ("mod", "fmod", "remainder") or funcs & {"mod", "fmod", "remainder"}:
            return True
        for value in (pdata.get("params_v") or {}).values():
            v = df.const_number(value)
            if v is not None and any(abs(abs(v) - m) < 1e-3 for m in _PI_MULTIPLES):
                return True
    return False


def _has_positive_offset(graph: KernelGraph, op: str, src: str, origins: set[str]) -> bool:
    """An eps: a bias on the op itself, or an add of a positive constant / a
    maximum (clamp) between the ops that formed the value (``origins``: the
    exp, the variance) and ``op``."""
    data = graph.attrs(op)
    bias = df.param(data, "bias")
    if isinstance(bias, TensorV) or (df.const_number(bias) or 0) > 0:
        return True
    if any(_may_be_eps(v) for v in df.added_scalars(graph, op)):
        return True
    after: set[str] = set()
    for o in origins:
        after |= df.consumers(graph, o, depth=6)
    for p in df.producers(graph, src, depth=4) & after:
        pdata = graph.attrs(p)
        funcs = {v for k, v in df.func_params(pdata).items() if k in ("op", "op0", "op1")}
        s = df.short(pdata.get("api"))
        if "maximum" in funcs or s == "maximum":
            return True
        if "add" in funcs or s == "add" or (s in ("activation",) and funcs <= {"copy", "identity"}):
            params = pdata.get("params_v") or {}
            for key in ("operand0", "operand1", "y", "x", "bias", "imm"):
                v = df.const_number(params.get(key))
                if v is not None and v > 0:
                    return True
            if s == "activation" and isinstance(params.get("bias"), TensorV):
                return True
        if any(_may_be_eps(v) for v in df.added_scalars(graph, p)):
            return True
    return False


def _may_be_eps(value) -> bool:
    """A scalar added on purpose: a positive constant, or a value the model
    does not know (an ``eps`` passed in as a parameter)."""
    number = df.const_number(value)
    if number is not None:
        return number > 0
    return not isinstance(value, Const)


_REDUCTION_NAMES = frozenset({"pi", "mod", "fmod", "remainder"})


def _reduction_syntax(node: ast.AST) -> bool:
    """pi (``math.pi``, ``np.pi``, ``from math import pi``), a modulo
    (``x % n``, ``nl.mod``, ``fmod``, ``remainder``); ``"%d" % x`` is string
    formatting, not a modulo."""
    if isinstance(node, ast.Name):
        return node.id in _REDUCTION_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in _REDUCTION_NAMES
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Mod):
        left = node.left if isinstance(node, ast.BinOp) else node.target
        return not (isinstance(left, (ast.Constant, ast.JoinedStr)) and not isinstance(
            getattr(left, "value", None), (int, float)))
    return False


def _mentions_pi(scopes: Scopes, site: Site | None) -> bool:
    """The function around the call (or around a call that led to it)
    mentions pi or a modulo up to the call's line, directly or through a
    module-level name bound to such an expression (``TWO_PI = 2 * math.pi``):
    a range reduction the graph may not show, e.g. through a helper the
    model could not follow."""
    if site is None:
        return False
    for path, node in ((site.file, site.node), *site.chain):
        index = scopes.index_for(path)
        fn = index.enclosing_function(node) if index is not None else None
        if fn is None:
            continue
        line = getattr(node, "end_lineno", None) or getattr(node, "lineno", 0)
        for sub in index.subtree(fn):
            if getattr(sub, "lineno", line) > line:
                continue
            if _reduction_syntax(sub):
                return True
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and any(
                    _reduction_syntax(n) for v in index.assigned_values(sub.id, index.tree)
                    if index.enclosing_function(v) is None for n in ast.walk(v)):
                return True
    return False


def _probability_source(graph: KernelGraph, src: str) -> set[str]:
    """The ops (exp, softmax, sigmoid, division) that made src a probability."""
    out = set()
    for p in df.producers(graph, src, depth=3):
        pdata = graph.attrs(p)
        if df.is_exp(pdata) or df.short(pdata.get("api")) in ("softmax", "sigmoid") or \
                df.func_params(pdata).get("op") in ("sigmoid",) or df.is_division(pdata):
            out.add(p)
    return out


def _squares(graph: KernelGraph, op: str) -> bool:
    data = graph.attrs(op)
    s = df.short(data.get("api"))
    if df.func_params(data).get("op") == "square" or s == "square":
        return True
    if s == "multiply" or df.func_params(data).get("op") == "multiply":
        ins = [df.base(graph, n) for _, n in df.reads(graph, op)]
        return len(ins) >= 2 and ins[0] == ins[1]
    return False


def _variance_source(graph: KernelGraph, src: str) -> set[str]:
    """The ops that made src a variance or a mean of squares."""
    out = set()
    for p in df.producers(graph, src, depth=8):
        pdata = graph.attrs(p)
        if df.short(pdata.get("api")) in ("var", "bn_aggr", "bn_stats"):
            out.add(p)
        elif df.is_sum_reduction(pdata):
            if _squares(graph, p):
                out.add(p)
            for _, n in df.reads(graph, p):
                if any(_squares(graph, q) for q in df.writers(graph, n)):
                    out.add(p)
    return out


def activation_ranges(ctx: RuleContext) -> Iterator[Spot]:
    scopes = ctx.analysis(Scopes)
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            func = activation_func(data)
            s = df.short(data.get("api"))
            if func is None and s in ("log", "rsqrt") and (data.get("api") or "").startswith("nki.language"):
                func = s
            if func not in _RANGED:
                continue
            src = [n for p, n in df.reads(graph, op) if p in ("data", "x")]
            if not src:
                continue
            src0 = src[0]
            why = None
            if func in ("sin", "arctan") and func == activation_func(data):
                writers = df.writers(graph, src0)
                base = graph.attrs(df.base(graph, src0))
                if base.get("origin") == "alloc" and not writers:
                    continue  # the model saw nothing write the angles: unknown provenance
                if not _range_reduced(graph, src0) and not _mentions_pi(scopes, data.get("site")):
                    why = (f"nisa.activation(op=nl.{func}) has no range reduction: ScalarE evaluates its polynomial only "
                           f"on {_RANGED[func]} (sin(9.0) returns about 27.65); reduce the argument (x mod 2*pi) first "
                           f"or call nl.{func}, which range-reduces")
            elif func == "log" and (origins := _probability_source(graph, src0)) and \
                    not _has_positive_offset(graph, op, src0, origins) and \
                    not df.sum_of_max_subtracted_exps(graph, src0):
                why = ("log of probabilities (exp / softmax / division output) with no eps: values that underflow to 0 "
                       f"fall outside ScalarE's log input range {_RANGED['log']}; add an eps (bias=eps) or clamp first")
            elif func in ("rsqrt", "reciprocal") and (origins := _variance_source(graph, src0)) and \
                    not _has_positive_offset(graph, op, src0, origins):
                why = (f"{func} of a variance with no eps: a zero or tiny variance falls outside ScalarE's {func} input "
                       f"range {_RANGED[func]} and returns garbage instead of inf; add eps (bias=eps) before {func}")
            if why is None:
                continue
            yield Spot(data.get("site"), f"{why} ({tile_name(graph, src0)})", kernel=kernel.name)
