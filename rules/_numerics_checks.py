"""Detectors behind rules/numerics.py: where Trainium numerics differ from the GPU's.

Facts (../shared/CUDA-IDIOMS.md section 2 and the aws-neuron-sdk docs each
rule cites): TensorE accumulates in fp32 and PSUM holds fp32 on NeuronCore
v2/v3 (trn1/trn2); NeuronCore-v4 (trn3) can accumulate into bf16 PSUM,
rounding after every add; VectorE/ScalarE compute in fp32 and round on
output; ScalarE activations are valid on limited input ranges; Neuron's
float8_e4m3 tops out at 240 where OCP e4m3fn reaches 448.
"""

from __future__ import annotations

import ast
import linecache
import math
import re
from dataclasses import dataclass
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.model.graph import KernelGraph, Site
from nkilint.model.values import DType, TensorV

from . import _flow as fl
from ._cuda_structure import nki_name, other_name
from ._device_scan import FileScan, chain_text


@dataclass
class Spot:
    where: ast.AST | Span | Site | None
    message: str
    level: Level | None = None
    kernel: str | None = None
    hint: str | None = None


def _name(graph: KernelGraph, node_id: str) -> str:
    data = graph.attrs(node_id)
    name = data.get("name") or graph.attrs(fl.base(graph, node_id)).get("name")
    return str(name) if name else "the tile"


def _loop_text(graph: KernelGraph, loop: str) -> str:
    data = graph.attrs(loop)
    trip = fl.loop_trip_exact(graph, loop)
    it = data.get("iterator") or "the loop"
    return f"the {it} loop ({trip} iterations)" if trip is not None else f"the {it} loop"


def _is_matmul(data: dict) -> bool:
    return fl.short(data.get("api")) in ("nc_matmul", "nc_matmul_mx", "matmul") and not (
        fl.const_param(data, "is_transpose") is True)


def _low(dtype: str | None) -> bool:
    return dtype in fl.LOW_PRECISION


# ------------------------------------------------------------------ NKI501 low-precision PSUM accumulation
def psum_low_precision_accumulation(ctx: RuleContext) -> Iterator[Spot]:
    trn3 = ctx.target.name == "trn3"
    for kernel, graph in ctx.model.graphs():
        by_dst: dict[str, list[tuple[str, str]]] = {}
        for op, data in graph.ops():
            # nc_matmul_mx (MX quantised, trn3) documents bf16 PSUM as a supported destination: not reported.
            if _is_matmul(data) and fl.short(data.get("api")) == "nc_matmul":
                for param, dst in fl.writes(graph, op):
                    if param == "dst":
                        by_dst.setdefault(fl.base(graph, dst), []).append((op, dst))
        for base, pairs in by_dst.items():
            bdata = graph.attrs(base)
            dtype = fl.dtype_of(graph, base)
            if bdata.get("buffer") != "psum" or not _low(dtype):
                continue
            ops = [op for op, _ in pairs]
            loops = [fl.accumulation_loop(graph, op, base, dst) for op, dst in pairs]
            loop = next((lp for lp in loops if lp is not None), None)
            explicit = any(fl.const_param(graph.attrs(op), "accumulate") is True for op in ops)
            same_place = len({graph.attrs(dst).get("index") for _, dst in pairs}) < len(pairs)
            if loop is None and not same_place and not explicit:
                continue
            first = min(ops, key=fl.op_order)
            how = f"across {_loop_text(graph, loop)}" if loop else "over several matmuls"
            extra = (
                "trn3 rounds the running sum back to bf16 after every accumulation"
                if trn3 else f"on {ctx.target.name} the matmul destination must be fp32 anyway (NeuronCore-v2/v3)"
            )
            yield Spot(graph.attrs(first).get("site"), (
                f"nc_matmul accumulates into PSUM tile {_name(graph, base)} of dtype {dtype} {how}: {extra}, while "
                f"the GPU original (tl.dot / WMMA) accumulated in fp32; accumulate in an fp32 PSUM tile and cast once "
                f"when evicting to SBUF"
            ), kernel=kernel.name)
        # Legacy: acc += nl.matmul(...) into a low-precision PSUM tile.
        for op, data in graph.ops():
            if fl.short(data.get("api")) not in ("add",) or not (data.get("operator") or data.get("augmented")):
                continue
            reads = fl.reads(graph, op)
            acc = [n for _, n in reads if graph.attrs(fl.base(graph, n)).get("buffer") == "psum"
                   and graph.attrs(fl.base(graph, n)).get("origin") == "alloc" and _low(fl.dtype_of(graph, n))]
            mm = [n for _, n in reads if any(_is_matmul(graph.attrs(w)) for w in fl.writers(graph, n))]
            if not acc or not mm:
                continue
            base = fl.base(graph, acc[0])
            loop = fl.repeats(graph, op, base)
            how = f"across {_loop_text(graph, loop)}" if loop else "with +="
            yield Spot(data.get("site"), (
                f"matmul results are accumulated into PSUM tile {_name(graph, base)} of dtype "
                f"{fl.dtype_of(graph, base)} {how}: each addition rounds to {fl.dtype_of(graph, base)}, while the "
                f"GPU original accumulated in fp32; declare the PSUM accumulator nl.float32 and cast once when storing"
            ), kernel=kernel.name)


# ------------------------------------------------------------------ NKI502 low-precision accumulators in loops
_ACC_FUNCS = {"add", "subtract"}
LONG_ACCUMULATION = 8  # roundings after which a low-precision running sum is a warning


def _accumulates(data: dict) -> bool:
    s = fl.short(data.get("api"))
    if s in _ACC_FUNCS:
        return True
    funcs = fl.func_params(data)
    if s in ("tensor_tensor",) and funcs.get("op") in _ACC_FUNCS:
        return True
    if s == "scalar_tensor_tensor" and funcs.get("op1") in _ACC_FUNCS:
        return True
    return False


def low_precision_accumulators(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        seen: set[str] = set()
        for op, data in graph.ops():
            if not _accumulates(data) or not data.get("loops"):
                continue
            reads = fl.reads(graph, op)
            writes = fl.writes(graph, op)
            read_bases = {fl.base(graph, n): n for _, n in reads}
            for param, dst in writes:
                dbase = fl.base(graph, dst)
                ddata = graph.attrs(dbase)
                target = None
                if dbase in read_bases:
                    target = dbase  # dst=acc, data1=acc
                elif param == "result" and ddata.get("name"):
                    # legacy rebinding: acc = acc + x
                    target = next((b for b in read_bases if graph.attrs(b).get("name") == ddata.get("name")
                                   and graph.attrs(b).get("origin") in ("alloc", "result")), None)
                if target is None or target in seen:
                    continue
                tdata = graph.attrs(target)
                dtype = fl.dtype_of(graph, target)
                if tdata.get("buffer") not in ("sbuf", "psum"):
                    continue
                if not _low(dtype):
                    spot = _cast_down_partial(graph, op, data, target, reads, dst)
                    if spot is not None:
                        seen.add(target)
                        spot.kernel = kernel.name
                        yield spot
                    continue
                # PSUM matmul accumulation is NKI501's.
                if any(_is_matmul(graph.attrs(w)) for _, n in reads for w in fl.writers(graph, n)) and tdata.get("buffer") == "psum":
                    continue
                loop = fl.accumulation_loop(graph, op, target, dst)
                if loop is None:
                    continue
                seen.add(target)
                level = _accumulation_level(graph, loop)
                yield Spot(data.get("site"), (
                    f"{_name(graph, target)} ({dtype}) accumulates across {_loop_text(graph, loop)} with "
                    f"{fl.short(data.get('api'))}: every iteration rounds the running sum to {dtype} "
                    f"({_mantissa(dtype)} significant bits), while the GPU original kept the accumulator in fp32 "
                    f"registers; accumulate in an nl.float32 tile (or in fp32 PSUM) and cast once at the end"
                ), level, kernel.name)


def _accumulation_level(graph: KernelGraph, loop: str) -> Level:
    """Rounding error grows with the number of roundings: a warning only when
    the loop runs at least LONG_ACCUMULATION times for every value the code
    allows, else a note."""
    trip = graph.attrs(loop).get("trip_v")
    bounds = fl.int_bounds(trip) if trip is not None else None
    return Level.WARNING if bounds is not None and bounds[0] >= LONG_ACCUMULATION else Level.NOTE


_COPIES = {"tensor_copy", "copy", "activation", "tensor_scalar"}


def _cast_down_partial(graph: KernelGraph, op: str, data: dict, target: str, reads, dst: str) -> Spot | None:
    """An fp32 accumulator fed by matmul partials that were evicted from PSUM to
    a low-precision tile inside the same loop (split-K partials rounded)."""
    loop = fl.accumulation_loop(graph, op, target, dst)
    if loop is None:
        return None
    for _, n in reads:
        if fl.base(graph, n) == target:
            continue
        part_dtype = fl.dtype_of(graph, n)
        if not _low(part_dtype):
            continue
        for w in fl.writers(graph, n):
            wdata = graph.attrs(w)
            if fl.short(wdata.get("api")) not in _COPIES or loop not in wdata.get("loops", ()):
                continue
            srcs = [m for _, m in fl.reads(graph, w)]
            psum = [m for m in srcs if graph.attrs(fl.base(graph, m)).get("buffer") == "psum"
                    and any(_is_matmul(graph.attrs(x)) for x in fl.writers(graph, m))]
            if not psum:
                continue
            level = _accumulation_level(graph, loop)
            return Spot(data.get("site"), (
                f"matmul partials are cast down to {part_dtype} ({_name(graph, n)}, evicted from PSUM tile "
                f"{_name(graph, psum[0])} at line {getattr(wdata.get('site'), 'line', '?')}) inside "
                f"{_loop_text(graph, loop)} and then added into {_name(graph, target)}: every partial is rounded to "
                f"{part_dtype} before the sum, where a GPU kernel keeps partial sums in fp32 registers; accumulate "
                f"in one fp32 PSUM tile (or evict to an fp32 tile) and cast once at the end"
            ), level)
    return None


def _mantissa(dtype: str | None) -> int:
    return {"bfloat16": 8, "float16": 11, "float8_e4m3": 4, "float8_e4m3fn": 4, "float8_e5m2": 3}.get(dtype or "", 8)


# ------------------------------------------------------------------ NKI503 low-precision reduction results
_ARITH_CONSUMERS = {"divide", "multiply", "subtract", "add", "reciprocal", "rsqrt", "sqrt", "log", "exp",
                    "tensor_tensor", "tensor_scalar", "activation", "scalar_tensor_tensor", "power"}


def low_precision_reductions(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if not fl.is_sum_reduction(data) or fl.short(data.get("api")) in ("bn_stats", "bn_aggr", "tensor_partition_reduce"):
                continue
            outs = [n for p, n in fl.writes(graph, op) if p in ("result", "dst", "reduce_res")]
            if fl.short(data.get("api")) in ("activation", "activation_reduce", "exponential", "tensor_scalar_reduce"):
                outs = [n for p, n in fl.writes(graph, op) if p == "reduce_res"]
            for out in outs:
                dtype = fl.dtype_of(graph, out)
                if not _low(dtype):
                    continue
                users = [u for u in fl.readers(graph, out) if u != op and graph.attrs(u).get("engine") != "dma"
                         and fl.short(graph.attrs(u).get("api")) in _ARITH_CONSUMERS]
                if not users:
                    continue
                user = graph.attrs(users[0])
                explicit = isinstance(fl.param(data, "dtype"), DType)
                how = f"dtype={dtype}" if explicit else f"a {dtype} result"
                yield Spot(data.get("site"), (
                    f"{fl.short(data.get('api'))} produces the reduction {_name(graph, out)} as {how} and "
                    f"{fl.short(user.get('api'))} (line {getattr(user.get('site'), 'line', '?')}) computes with it: the "
                    f"sum is rounded to {dtype} before it normalises the data, while tl.sum / torch reductions keep "
                    f"fp32; reduce into an nl.float32 tile and cast only the final output"
                ), kernel=kernel.name)
                break


# ------------------------------------------------------------------ NKI504 softmax without max subtraction
def _exp_input(graph: KernelGraph, op: str) -> list[str]:
    ins = [n for p, n in fl.reads(graph, op) if p in ("data", "x", "src", "arg0", "data1")]
    return ins or [n for _, n in fl.reads(graph, op)][:1]


def _stabilised(graph: KernelGraph, op: str) -> bool:
    data = graph.attrs(op)
    params = data.get("params_v") or {}
    if isinstance(params.get("bias"), TensorV) or isinstance(params.get("max_value"), TensorV):
        return True
    if fl.const_number(params.get("max_value")) is not None:
        return True
    for src in _exp_input(graph, op):
        for p in fl.producers(graph, src, depth=6):
            pdata = graph.attrs(p)
            if fl.is_max_reduction(pdata):
                return True
            if fl.short(pdata.get("api")) in ("softmax", "log_softmax", "logsumexp"):
                return True
    return False


def softmax_without_max(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if not fl.is_exp(data):
                continue
            after = fl.consumers(graph, op, depth=4)
            sums = [c for c in after if fl.is_sum_reduction(graph.attrs(c))]
            fused_sum = fl.is_sum_reduction(data)
            if not sums and not fused_sum:
                continue
            divides = [c for c in after if fl.is_division(graph.attrs(c))]
            if not divides:
                continue
            if _stabilised(graph, op):
                continue
            src = _exp_input(graph, op)
            dtype = fl.dtype_of(graph, src[0]) if src else None
            limit = "11.1 in fp16" if dtype == "float16" else "88.7 in fp32/bf16"
            yield Spot(data.get("site"), (
                f"exp of {_name(graph, src[0]) if src else 'the logits'} feeds a sum and a division (a softmax) "
                f"without subtracting the row maximum first: exp overflows to inf above {limit} and the normalisation "
                f"gives NaN, where the GPU reference (tl.softmax / torch.softmax) subtracts the max; compute "
                f"nisa.tensor_reduce(op=nl.maximum, negate=True) and pass it as bias= to activation(op=nl.exp, "
                f"reduce_op=nl.add, reduce_res=...)"
            ), kernel=kernel.name)


# ------------------------------------------------------------------ NKI505 exp2 scale leftovers
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
_LOG2E_NAMES = re.compile(r"^(M_)?LOG2_?E$|^log2_?e$|^RCP_LN2$|^rcp_ln2$|^INV_LN2$|^inv_ln2$", re.I)
_LN2_NAMES = re.compile(r"^LN_?2$|^ln_?2$|^LOG_?2$", re.I)


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _number(node.operand)
        return -v if v is not None else None
    return None


def _is_log2e_expr(node: ast.AST, ctx: RuleContext) -> bool:
    v = _number(node)
    if v is not None:
        return abs(v - LOG2E) < 1e-4
    if isinstance(node, ast.Name) and _LOG2E_NAMES.match(node.id):
        return True
    if isinstance(node, ast.Call) and node.args:
        name = other_name(ctx, node.func) or chain_text(node.func)
        arg = node.args[0]
        if name.endswith("log2") and chain_text(arg).endswith(".e"):
            return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _number(node.left) == 1.0:
        right = node.right
        if isinstance(right, ast.Call) and right.args and (other_name(ctx, right.func) or chain_text(right.func)).endswith(".log") \
                and _number(right.args[0]) == 2.0:
            return True
    return False


def _is_ln2_expr(node: ast.AST, ctx: RuleContext) -> bool:
    v = _number(node)
    if v is not None:
        return abs(v - LN2) < 1e-4
    if isinstance(node, ast.Name) and _LN2_NAMES.match(node.id):
        return True
    if isinstance(node, ast.Call) and node.args and (other_name(ctx, node.func) or chain_text(node.func)).endswith(".log") \
            and _number(node.args[0]) == 2.0:
        return True
    return False


def exp2_leftovers(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    exp_functions = set()
    for _, graph in ctx.model.graphs():
        for _, data in graph.ops():
            if fl.is_exp(data):
                exp_functions.add(str(data.get("function")))
    if not exp_functions:
        return
    for fn in s.device_functions:
        if not any(str(f) in exp_functions for f in _names_in(fn)):
            continue
        nodes = s.nodes(fn)
        if any(_is_ln2_expr(n, ctx) for n in nodes):
            continue
        parents = s.parents
        for node in nodes:
            if not _is_log2e_expr(node, ctx):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, (ast.UnaryOp, ast.BinOp)) and _is_log2e_expr(parent, ctx):
                continue
            if isinstance(parent, ast.Call) and parent.func is node:
                continue
            owner = s.function_of(node) or fn
            yield Spot(node, (
                f"{ast.unparse(node)} is log2(e), the scale of Triton's exp2-based softmax, in a kernel that computes "
                f"natural exp on Trainium: exp(x * log2(e)) changes the softmax temperature by 1.4427x (and the "
                f"log-sum-exp bookkeeping); use scale=sm_scale with nl.exp, or emulate exp2 as exp(x * ln 2) "
                f"consistently"
            ), Level.WARNING, owner.name)
            break


def _names_in(fn: ast.FunctionDef) -> set[str]:
    out = {fn.name}
    for n in ast.walk(fn):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.add(n.name)
    return out


# ------------------------------------------------------------------ NKI506 activation input ranges
_RANGED = {"sin": "[-pi, pi]", "arctan": "[-pi/2, pi/2]", "log": "[2^-64, 2^64]", "rsqrt": "[2^-87, 2^97]",
           "reciprocal": "+-[2^-42, 2^42]", "sqrt": "[2^-116, 2^118]"}
_PI_MULTIPLES = [math.pi * k for k in (0.5, 1.0, 1.5, 2.0)]


def _activation_func(data: dict) -> str | None:
    s = fl.short(data.get("api"))
    if s in ("activation", "activation_reduce", "activate2"):
        return fl.func_params(data).get("op")
    return None


def _range_reduced(graph: KernelGraph, src: str) -> bool:
    for p in fl.producers(graph, src, depth=8):
        pdata = graph.attrs(p)
        s = fl.short(pdata.get("api"))
        funcs = set(fl.func_params(pdata).values())
        if s in ("mod", "fmod", "remainder") or funcs & {"mod", "fmod", "remainder"}:
            return True
        for value in (pdata.get("params_v") or {}).values():
            v = fl.const_number(value)
            if v is not None and any(abs(abs(v) - m) < 1e-3 for m in _PI_MULTIPLES):
                return True
    return False


def _has_positive_offset(graph: KernelGraph, op: str, src: str, origins: set[str]) -> bool:
    """An eps: a bias on the op itself, or an add of a positive constant / a
    maximum (clamp) between the ops that formed the value (``origins``: the
    exp, the variance) and ``op``."""
    data = graph.attrs(op)
    bias = fl.param(data, "bias")
    if isinstance(bias, TensorV) or (fl.const_number(bias) or 0) > 0:
        return True
    after: set[str] = set()
    for o in origins:
        after |= fl.consumers(graph, o, depth=6)
    for p in fl.producers(graph, src, depth=4) & after:
        pdata = graph.attrs(p)
        funcs = {v for k, v in fl.func_params(pdata).items() if k in ("op", "op0", "op1")}
        s = fl.short(pdata.get("api"))
        if "maximum" in funcs or s == "maximum":
            return True
        if "add" in funcs or s == "add" or (s in ("activation",) and funcs <= {"copy", "identity"}):
            params = pdata.get("params_v") or {}
            for key in ("operand0", "operand1", "y", "x", "bias", "imm"):
                v = fl.const_number(params.get(key))
                if v is not None and v > 0:
                    return True
            if s == "activation" and isinstance(params.get("bias"), TensorV):
                return True
    return False


def _mentions_pi(site) -> bool:
    """The function around the call mentions pi or a modulo (a range reduction
    the graph may not show, e.g. through a helper the model could not follow)."""
    try:
        path = getattr(site, "file", "")
        line = getattr(site, "line", 0)
        lines = linecache.getlines(path)
        start = max(0, line - 60)
        text = "".join(lines[start:line])
    except Exception:  # pragma: no cover - best effort only
        return False
    return bool(re.search(r"\bpi\b|\.pi\b|%|\bmod\b|fmod|remainder", text))


def _probability_source(graph: KernelGraph, src: str) -> set[str]:
    """The ops (exp, softmax, sigmoid, division) that made src a probability."""
    out = set()
    for p in fl.producers(graph, src, depth=3):
        pdata = graph.attrs(p)
        if fl.is_exp(pdata) or fl.short(pdata.get("api")) in ("softmax", "sigmoid") or \
                fl.func_params(pdata).get("op") in ("sigmoid",) or fl.is_division(pdata):
            out.add(p)
    return out


def _squares(graph: KernelGraph, op: str) -> bool:
    data = graph.attrs(op)
    s = fl.short(data.get("api"))
    if fl.func_params(data).get("op") == "square" or s == "square":
        return True
    if s == "multiply" or fl.func_params(data).get("op") == "multiply":
        ins = [fl.base(graph, n) for _, n in fl.reads(graph, op)]
        return len(ins) >= 2 and ins[0] == ins[1]
    return False


def _variance_source(graph: KernelGraph, src: str) -> set[str]:
    """The ops that made src a variance or a mean of squares."""
    out = set()
    for p in fl.producers(graph, src, depth=8):
        pdata = graph.attrs(p)
        if fl.short(pdata.get("api")) in ("var", "bn_aggr", "bn_stats"):
            out.add(p)
        elif fl.is_sum_reduction(pdata):
            if _squares(graph, p):
                out.add(p)
            for _, n in fl.reads(graph, p):
                if any(_squares(graph, q) for q in fl.writers(graph, n)):
                    out.add(p)
    return out


def activation_ranges(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            func = _activation_func(data)
            s = fl.short(data.get("api"))
            if func is None and s in ("log", "rsqrt") and (data.get("api") or "").startswith("nki.language"):
                func = s
            if func not in _RANGED:
                continue
            src = [n for p, n in fl.reads(graph, op) if p in ("data", "x")]
            if not src:
                continue
            src0 = src[0]
            why = None
            if func in ("sin", "arctan") and func == _activation_func(data):
                writers = fl.writers(graph, src0)
                base = graph.attrs(fl.base(graph, src0))
                if base.get("origin") == "alloc" and not writers:
                    continue  # the model saw nothing write the angles: unknown provenance
                if not _range_reduced(graph, src0) and not _mentions_pi(data.get("site")):
                    why = (f"nisa.activation(op=nl.{func}) has no range reduction: ScalarE evaluates its polynomial only "
                           f"on {_RANGED[func]} (sin(9.0) returns about 27.65); reduce the argument (x mod 2*pi) first "
                           f"or call nl.{func}, which range-reduces")
            elif func == "log" and (origins := _probability_source(graph, src0)) and \
                    not _has_positive_offset(graph, op, src0, origins):
                why = ("log of probabilities (exp / softmax / division output) with no eps: values that underflow to 0 "
                       f"fall outside ScalarE's log input range {_RANGED['log']}; add an eps (bias=eps) or clamp first")
            elif func in ("rsqrt", "reciprocal") and (origins := _variance_source(graph, src0)) and \
                    not _has_positive_offset(graph, op, src0, origins):
                why = (f"{func} of a variance with no eps: a zero or tiny variance falls outside ScalarE's {func} input "
                       f"range {_RANGED[func]} and returns garbage instead of inf; add eps (bias=eps) before {func}")
            if why is None:
                continue
            yield Spot(data.get("site"), f"{why} ({_name(graph, src0)})", kernel=kernel.name)


# ------------------------------------------------------------------ NKI507 fp8 e4m3 range
def _is_448(node: ast.AST, ctx: RuleContext) -> bool:
    v = _number(node)
    if v is not None:
        return v == 448.0
    if isinstance(node, ast.Attribute) and node.attr == "max" and isinstance(node.value, ast.Call):
        call = node.value
        if (other_name(ctx, call.func) or chain_text(call.func)).endswith("finfo") and call.args and \
                chain_text(call.args[0]).endswith("float8_e4m3fn"):
            return True
    return False


def fp8_e4m3_range(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    if ctx.target.name not in ("trn1", "trn2"):
        return
    text = ctx.source.text
    if re.search(r"get_nc_version|nc_version|\b240(\.0*)?\b", text):
        return
    for fn in s.device_functions:
        nodes = s.nodes(fn)
        uses_e4m3 = any(
            isinstance(n, (ast.Attribute, ast.Name)) and (nki_name(ctx, n) or "") == "nki.language.float8_e4m3"
            for n in nodes
        )
        uses_fn = any(
            isinstance(n, (ast.Attribute, ast.Name)) and (nki_name(ctx, n) or "").endswith("float8_e4m3fn")
            for n in nodes
        )
        if not uses_e4m3 or uses_fn:
            continue
        for node in nodes:
            if _is_448(node, ctx) and not isinstance(s.parent(node), ast.UnaryOp):
                owner = s.function_of(node) or fn
                yield Spot(node, (
                    f"{ast.unparse(node)} is the OCP E4M3 (float8_e4m3fn) maximum used by GPU FP8 recipes, but this "
                    f"kernel casts to nl.float8_e4m3, whose largest finite value on {ctx.target.name} is 240: values "
                    f"scaled into (240, 448] overflow; scale with 240 on trn1/trn2 (448 only with nl.float8_e4m3fn on "
                    f"trn3)"
                ), Level.WARNING, owner.name)
                break


# ------------------------------------------------------------------ NKI508 PSUM accumulate initialisation
def psum_accumulate_init(ctx: RuleContext) -> Iterator[Spot]:
    if ctx.model.legacy:
        return
    v4 = ctx.target.name == "trn3"
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if fl.short(data.get("api")) not in ("nc_matmul", "nc_matmul_mx"):
                continue
            if fl.const_param(data, "accumulate") is not True:
                continue
            dst = next((n for p, n in fl.writes(graph, op) if p == "dst"), None)
            if dst is None:
                continue
            base = fl.base(graph, dst)
            bdata = graph.attrs(base)
            if bdata.get("buffer") != "psum":
                continue
            where = graph.attrs(dst).get("index") if dst != base else None
            earlier = [w for w in fl.writers(graph, base) if fl.op_order(w) < fl.op_order(op)
                       and _same_location(graph, w, base, where)]
            matmul_before = [w for w in earlier if fl.short(graph.attrs(w).get("api")) in ("nc_matmul", "nc_matmul_mx")]
            value_init = [w for w in earlier if w not in matmul_before]
            zeros_alloc = fl.short(bdata.get("api")) in ("zeros", "full", "ones", "zeros_like", "ones_like", "full_like")
            name = _name(graph, base)
            if (value_init or zeros_alloc) and not v4:
                how = (f"{fl.short(graph.attrs(value_init[0]).get('api'))} (line {getattr(graph.attrs(value_init[0]).get('site'), 'line', '?')})"
                       if value_init else f"nl.{fl.short(bdata.get('api'))}")
                yield Spot(data.get("site"), (
                    f"nc_matmul(accumulate=True) adds onto PSUM tile {name}, which was initialised by {how}: on "
                    f"NeuronCore-v2/v3 ({ctx.target.name}) accumulating onto a value-initialised PSUM location is "
                    f"undefined behaviour (the Triton 'acc = zeros(); acc += dot()' idiom does not carry over); allocate "
                    f"with nl.ndarray and pass accumulate=(k > 0), or omit it"
                ), kernel=kernel.name)
            elif not earlier and not zeros_alloc:
                yield Spot(data.get("site"), (
                    f"nc_matmul(accumulate=True) is the first write to PSUM tile {name}: accumulating onto an "
                    f"uninitialised PSUM location is undefined behaviour on all targets; let the first matmul overwrite "
                    f"(accumulate=(k > 0), or omit accumulate)"
                ), kernel=kernel.name)


def _same_location(graph: KernelGraph, writer: str, base: str, where: str | None) -> bool:
    """The writer writes the whole tensor, or the same view text as the matmul
    (a write to another region of a shared PSUM tile is another location)."""
    for _, node in fl.writes(graph, writer):
        if fl.base(graph, node) != base:
            continue
        if node == base or where is None or graph.attrs(node).get("index") == where:
            return True
    return False


# ------------------------------------------------------------------ NKI509 shape-dependent reduction tiles
def _conditional_constants(fn: ast.FunctionDef) -> dict[str, ast.AST]:
    """Names assigned different int constants depending on a condition."""
    out: dict[str, ast.AST] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.IfExp):
                a, b = _number(v.body), _number(v.orelse)
                if a is not None and b is not None and a != b:
                    out[node.targets[0].id] = node
        if isinstance(node, ast.If) and node.orelse:
            first = _const_assigns(node.body)
            second = _const_assigns(node.orelse)
            for name, value in first.items():
                if name in second and second[name] != value:
                    out.setdefault(name, node)
    return out


def _const_assigns(body: list[ast.stmt]) -> dict[str, float]:
    out: dict[str, float] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            v = _number(stmt.value)
            if v is not None:
                out[stmt.targets[0].id] = v
        if isinstance(stmt, ast.If):
            out.update({k: v for k, v in _const_assigns(stmt.body).items() if k not in out})
    return out


def _reduces(ctx: RuleContext, body: list[ast.stmt]) -> bool:
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call):
                name = nki_name(ctx, n.func) or ""
                short = name.rsplit(".", 1)[-1]
                if short in ("nc_matmul", "matmul", "tensor_reduce", "sum", "mean"):
                    return True
                if short in ("activation", "activation_reduce") and any(k.arg in ("reduce_op", "reduce_res") for k in n.keywords):
                    return True
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add):
                return True
    return False


def shape_dependent_reduction_tiles(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    for fn in s.device_functions:
        candidates = _conditional_constants(fn)
        if not candidates:
            continue
        reported: set[str] = set()
        for node in s.nodes(fn):
            if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)):
                continue
            used = {n.id for a in node.iter.args for n in ast.walk(a) if isinstance(n, ast.Name)} & set(candidates)
            sliced = {n.id for st in node.body for sub in ast.walk(st) if isinstance(sub, ast.Subscript)
                      for n in ast.walk(sub.slice) if isinstance(n, ast.Name)} & set(candidates)
            for name in sorted((used | sliced) - reported):
                if not _reduces(ctx, node.body):
                    continue
                reported.add(name)
                where = candidates[name]
                owner = s.function_of(where) or fn
                yield Spot(where, (
                    f"the tile size {name} depends on a condition ({ast.unparse(where.test if isinstance(where, ast.If) else where.value.test)}) "
                    f"and tiles a loop that accumulates (matmul / reduction): if it tiles the reduction axis, the "
                    f"summation order (and the rounding) changes with the input shape, so the same row can give "
                    f"different results for different batch sizes; fix the reduction tile size (e.g. 128) if "
                    f"batch-invariant results are required"
                ), Level.NOTE, owner.name)


# ------------------------------------------------------------------ NKI510 integers through fp32
_ARITH = {"add", "subtract", "multiply", "divide", "power", "mod", "fmod"}
_INT32 = {"int32", "uint32"}


def integers_through_fp32(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for nid, data in graph.tensors():
            if data.get("origin") == "alloc" and data.get("buffer") in ("sbuf", "psum") and fl.dtype_of(graph, nid) in ("int64", "uint64"):
                yield Spot(data.get("site"), (
                    f"on-chip tile {_name(graph, nid)} is {fl.dtype_of(graph, nid)}: Trainium has no native 64-bit "
                    f"integers (trn1 downcasts to int32; trn2 only with --native-int64), and engine arithmetic goes "
                    f"through fp32; keep index math at compile time (Python ints) or in int32 below 2^24"
                ), kernel=kernel.name)
        for op, data in graph.ops():
            s = fl.short(data.get("api"))
            funcs = set(fl.func_params(data).values())
            arith = (s in _ARITH) or (funcs & _ARITH and s in ("tensor_tensor", "tensor_scalar", "scalar_tensor_tensor"))
            if not arith:
                continue
            reads = [n for _, n in fl.reads(graph, op)]
            ints = [n for n in reads if fl.dtype_of(graph, n) in _INT32]
            if not ints:
                continue
            params = data.get("params_v") or {}
            big = None
            for key in ("operand0", "operand1", "y", "x", "scalar"):
                v = fl.const_number(params.get(key))
                if v is None:
                    continue
                is_mul = (s == "multiply") or ("multiply" in funcs)
                if abs(v) >= 2 ** 24 or (is_mul and abs(v) >= 2 ** 12):
                    big = v
            dtypes = {fl.dtype_of(graph, n) for n in reads}
            mixed = {"int32", "uint32"} <= dtypes and ctx.model.legacy
            if big is None and not mixed:
                continue
            why = (f"the constant {big:g} makes values reach 2^24 = 16,777,216 easily" if big is not None
                   else "mixing int32 and uint32 promotes to fp32 in legacy NKI")
            yield Spot(data.get("site"), (
                f"integer arithmetic ({s if s in _ARITH else '/'.join(sorted(funcs & _ARITH))}) on int32 tile "
                f"{_name(graph, ints[0])} runs through fp32 on Vector/Scalar engines and is exact only below 2^24; {why}, "
                f"where CUDA/Triton int32 math is exact; keep index math at compile time, use bit operations, or split "
                f"the value"
            ), kernel=kernel.name)


# ------------------------------------------------------------------ NKI511 engine precision choice
def engine_precision(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            func = _activation_func(data)
            if func not in ("reciprocal", "rsqrt"):
                continue
            better = "nisa.reciprocal (VectorE)" if func == "reciprocal" else "nl.rsqrt (GpSimd, NKI 0.5+)"
            yield Spot(data.get("site"), (
                f"nisa.activation(op=nl.{func}) runs on ScalarE's polynomial approximation, less precise than "
                f"{better}; a normalisation ported from rsqrtf / 1.0f / x in fp32 may drift from the GPU result; the "
                f"docs suggest VectorE when the tile has fewer than 64 elements per partition (comparable speed)"
            ), Level.NOTE, kernel.name)


# ------------------------------------------------------------------ NKI512 fill values out of range
def _fill_value(ctx: RuleContext, node: ast.AST | None) -> float | None:
    if node is None:
        return None
    v = _number(node)
    if v is not None:
        return v
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _fill_value(ctx, node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and node.args and \
            isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        try:
            return float(node.args[0].value)
        except ValueError:
            return None
    text = other_name(ctx, node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if text in ("numpy.inf", "math.inf", "numpy.Inf", "numpy.infty"):
        return math.inf
    return None


def fill_overflow(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for nid, data in graph.tensors():
            if data.get("origin") != "alloc" or fl.short(data.get("api")) not in ("full", "full_like"):
                continue
            call = data.get("call")
            if not isinstance(call, ast.Call):
                continue
            value_node = next((k.value for k in call.keywords if k.arg in ("fill_value", "value")), None)
            if value_node is None and len(call.args) >= 2:
                value_node = call.args[1]
            yield from _check_fill(ctx, graph, nid, _fill_value(ctx, value_node), data.get("site"), kernel.name, "nl.full")
        for op, data in graph.ops():
            s = fl.short(data.get("api"))
            if s not in ("memset", "affine_select", "range_select"):
                continue
            key = "value" if s == "memset" else "on_false_value"
            value = fl.const_number(fl.param(data, key))
            dst = next((n for p, n in fl.writes(graph, op) if p == "dst"), None)
            if dst is None:
                continue
            yield from _check_fill(ctx, graph, dst, value, data.get("site"), kernel.name, f"nisa.{s}")


def _check_fill(ctx, graph: KernelGraph, nid: str, value: float | None, site, kernel: str, api: str) -> Iterator[Spot]:
    if value is None:
        return
    dtype = fl.dtype_of(graph, nid)
    limit = fl.FINITE_MAX.get(dtype or "")
    overflow = fl.ROUNDS_TO_INF.get(dtype or "")
    if dtype == "float8_e4m3" and ctx.target.name == "trn3":
        limit = None
    if limit is None or overflow is None:
        return
    if math.isinf(value):
        transposed = _tensor_engine_transposed(graph, nid)
        if ctx.target.name == "trn1" and transposed:
            yield Spot(site, (
                f"{api} fills {_name(graph, nid)} with {value:g} and the tile is transposed on TensorE "
                f"({transposed}): on trn1 (NeuronCore-v2) the matmul-based transpose is not bit-exact for inf/NaN "
                f"(inf x 0 gives NaN across the row); fill with a large finite value valid in {dtype} instead"
            ), kernel=kernel)
        return
    if abs(value) >= overflow:
        yield Spot(site, (
            f"{api} fills {_name(graph, nid)} ({dtype}) with {value:g}, beyond the largest finite {dtype} value "
            f"{limit:g}: it becomes {'-' if value < 0 else ''}inf, and a later max-subtraction turns fully masked "
            f"rows into NaN (inf - inf); use a finite sentinel within {dtype} range (e.g. {-limit if value < 0 else limit:g})"
        ), kernel=kernel)


def _tensor_engine_transposed(graph: KernelGraph, nid: str) -> str | None:
    for c in fl.readers(graph, nid):
        cdata = graph.attrs(c)
        s = fl.short(cdata.get("api"))
        if s in ("transpose",) or (s == "nc_transpose" and cdata.get("engine") in ("tensor", "any")) or (
                s == "nc_matmul" and fl.const_param(cdata, "is_transpose") is True):
            return f"{s} at line {getattr(cdata.get('site'), 'line', '?')}"
    return None


# ------------------------------------------------------------------ NKI513 legacy type promotion
def legacy_promotion(ctx: RuleContext) -> Iterator[Spot]:
    if not ctx.model.legacy:
        return
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            api = data.get("api") or ""
            if not api.startswith("nki.language.") or data.get("engine") == "dma" or fl.param(data, "dtype") is not None:
                continue
            if fl.short(api) not in _ARITH | {"maximum", "minimum"}:
                continue
            dtypes = {fl.dtype_of(graph, n) for _, n in fl.reads(graph, op)}
            if {"float16", "bfloat16"} <= dtypes:
                why = ("float16 with bfloat16 promotes to float32 in legacy NKI (Triton gives float16), doubling the "
                       "result's SBUF bytes and changing its rounding and DMA sizes")
            elif {"int32", "uint32"} <= dtypes:
                why = ("int32 with uint32 promotes to float32 in legacy NKI (Triton gives uint32), so values above "
                       "2^24 lose exactness")
            else:
                continue
            yield Spot(data.get("site"), (
                f"{fl.short(api)} mixes {' and '.join(sorted(d for d in dtypes if d))}: {why}; pass dtype= explicitly "
                f"or cast one operand first"
            ), kernel=kernel.name)
