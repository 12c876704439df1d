"""Data flow over a kernel graph: who produced a tensor, who consumes it,
and what an op computes.

The kernel graph (docs/model.md) has tensor, view, op and loop nodes; an op
reads tensors/views and writes tensors/views (a legacy call writes the tile
it returns, ``param="result"``). These functions answer: which ops produced
a tensor (through any view of it), which ops consume it, what an op
computes (exp, a max or sum reduction, a division), whether an op adds into
the same location across a loop, and small value helpers.
"""

from __future__ import annotations

import ast
import re
from typing import Iterable, Iterator

from .dtypes import dtype_of
from .graph import KernelGraph
from .values import ApiRef, Const, DsV, Int, SliceV, TensorV, Value, const_int, int_bounds

# Parameters through which an op names the ALU / activation function it applies.
_FUNC_PARAMS = ("op", "op0", "op1", "reduce_op", "func", "fn")


def short(api: str | None) -> str:
    return (api or "").rsplit(".", 1)[-1]


def base(graph: KernelGraph, node_id: str) -> str:
    return graph.base_tensor(node_id)


def reads(graph: KernelGraph, op: str) -> list[tuple[str, str]]:
    """(param, tensor-or-view id) the op reads."""
    return [(d.get("param") or "?", src) for src, d in graph.reads(op)]


def writes(graph: KernelGraph, op: str) -> list[tuple[str, str]]:
    return [(d.get("param") or "?", dst) for dst, d in graph.writes(op)]


def writers(graph: KernelGraph, node_id: str) -> list[str]:
    """Ops that write the tensor behind node_id, through any view of it."""
    return graph.ops_writing(base(graph, node_id))


def readers(graph: KernelGraph, node_id: str) -> list[str]:
    return graph.ops_reading(base(graph, node_id))


def stores(graph: KernelGraph, tensor_id: str) -> list[str]:
    """Ops that store into a tensor through any view of it, not counting a
    legacy call that wrote it only as the tile it returned (its producer)."""
    out = []
    for op_id in graph.ops_writing(tensor_id):
        params = [d.get("param") for _, target, d in graph.edges_of(op_id, "writes")
                  if graph.base_tensor(target) == tensor_id]
        if params and all(p == "result" for p in params):
            continue
        out.append(op_id)
    return out


def op_order(op: str) -> int:
    digits = "".join(ch for ch in op if ch.isdigit())
    return int(digits) if digits else 0


def func_params(data: dict) -> dict[str, str]:
    """The NKI functions an op is parameterised with: {"op": "exp", ...}."""
    out: dict[str, str] = {}
    params = data.get("params_v") or {}
    for key in _FUNC_PARAMS:
        value = params.get(key)
        if isinstance(value, ApiRef):
            out[key] = short(value.qual.name)
    return out


def param(data: dict, name: str) -> Value | None:
    return (data.get("params_v") or {}).get(name)


def const_param(data: dict, name: str) -> object | None:
    value = param(data, name)
    if isinstance(value, Const):
        return value.value
    return None


def is_exp(data: dict) -> bool:
    s = short(data.get("api"))
    if s in ("exp", "exponential"):
        return True
    if s in ("activation", "activation_reduce", "activate2"):
        return func_params(data).get("op") == "exp"
    return False


_MAX_NAMES = {"max", "maximum", "max8", "reduce_max", "amax"}
_SUM_NAMES = {"sum", "mean", "add", "reduce_sum"}
_DIV_NAMES = {"divide", "reciprocal", "true_divide", "rsqrt", "floor_divide"}


def is_max_reduction(data: dict) -> bool:
    s = short(data.get("api"))
    if s in _MAX_NAMES or s in ("softmax", "logsumexp"):
        return True
    funcs = func_params(data)
    if s in ("tensor_reduce", "activation_reduce", "tensor_scalar_reduce", "tensor_tensor", "tensor_scalar",
             "tensor_partition_reduce", "select_reduce", "scalar_tensor_tensor", "activation"):
        return any(f in _MAX_NAMES for f in funcs.values())
    return False


def is_sum_reduction(data: dict) -> bool:
    s = short(data.get("api"))
    if s in ("sum", "mean", "var", "bn_stats", "bn_aggr", "tensor_partition_reduce"):
        return True
    funcs = func_params(data)
    if s == "tensor_reduce":
        return funcs.get("op") == "add"
    if s in ("activation", "activation_reduce", "tensor_scalar_reduce", "exponential"):
        return funcs.get("reduce_op") == "add" or param(data, "reduce_res") is not None
    return False


def is_division(data: dict) -> bool:
    s = short(data.get("api"))
    if s in _DIV_NAMES:
        return True
    funcs = func_params(data)
    return any(f in ("divide", "reciprocal", "rsqrt") for f in funcs.values())


def is_subtract(data: dict) -> bool:
    s = short(data.get("api"))
    if s in ("subtract", "negative"):
        return True
    return any(f == "subtract" for f in func_params(data).values())


def _ops_through_tensors(graph: KernelGraph, frontier: list[str], depth: int, ops_of, next_tensors,
                         exclude: str | None = None) -> set[str]:
    """Walk tensor -> op -> tensor up to ``depth`` steps: ``ops_of(graph,
    base)`` gives the ops reached from a tensor, ``next_tensors(graph, op)``
    the tensors those ops lead to. Each base tensor is expanded once."""
    out: set[str] = set()
    seen_tensors: set[str] = set()
    for _ in range(depth):
        nxt: list[str] = []
        for nid in frontier:
            b = base(graph, nid)
            if b in seen_tensors:
                continue
            seen_tensors.add(b)
            for op in ops_of(graph, b):
                if op in out or op == exclude:
                    continue
                out.add(op)
                nxt.extend(next_tensors(graph, op))
        frontier = nxt
        if not frontier:
            break
    return out


def producers(graph: KernelGraph, node_id: str, depth: int = 6) -> set[str]:
    """Ops that (transitively, up to depth steps) produced the data of node_id."""
    return _ops_through_tensors(graph, [node_id], depth, writers, lambda g, op: [src for _, src in reads(g, op)])


def consumers(graph: KernelGraph, op: str, depth: int = 4) -> set[str]:
    """Ops that (transitively, up to depth steps) use what op wrote."""
    def written(g: KernelGraph, o: str) -> list[str]:
        return [dst for _, dst in writes(g, o)]

    return _ops_through_tensors(graph, written(graph, op), depth, readers, written, exclude=op)


def loop_trip_upper(graph: KernelGraph, loop: str) -> float | None:
    trip = graph.attrs(loop).get("trip_v")
    b = int_bounds(trip) if trip is not None else None
    return None if b is None else b[1]


def loop_trip_exact(graph: KernelGraph, loop: str) -> int | None:
    trip = graph.attrs(loop).get("trip_v")
    return const_int(trip) if trip is not None else None


def repeats(graph: KernelGraph, op: str, tensor: str) -> str | None:
    """The loop (id) that runs op more than once while ``tensor`` stays the
    same allocation: a loop enclosing op but not the tensor's allocation."""
    op_loops = graph.attrs(op).get("loops", ())
    t_loops = graph.attrs(base(graph, tensor)).get("loops", ())
    for loop in op_loops:
        if loop in t_loops:
            continue
        upper = loop_trip_upper(graph, loop)
        if upper is None or upper > 1:
            return loop
    return None


def _loop_sym_name(graph: KernelGraph, loop: str) -> str | None:
    """The name the interpreter gives a loop's index symbol ("index of range(n)")."""
    site = graph.attrs(loop).get("site")
    node = getattr(site, "node", None)
    it = getattr(node, "iter", None)
    if it is None:
        return None
    try:
        text = ast.unparse(it)
    except Exception:  # pragma: no cover - unparse of odd nodes
        return None
    if len(text) > 80:
        text = text[:77] + "..."
    return f"index of {text}"


def _index_values(items) -> Iterator[Value]:
    for it in items or ():
        if isinstance(it, SliceV):
            yield from (it.start, it.stop)
        elif isinstance(it, DsV):
            yield from (it.start, it.size)
        else:
            yield it


def index_may_depend_on(graph: KernelGraph, node_id: str, loop: str) -> bool:
    """Whether the location a view selects may change with the loop's index.
    Opaque integers (no symbol, not constant) count as "may"."""
    data = graph.attrs(node_id)
    if data.get("kind") != "view":
        return False
    iterator = graph.attrs(loop).get("iterator") or ""
    index = data.get("index") or ""
    if iterator and re.search(rf"(?<![\w.]){re.escape(iterator)}(?!\w)", index):
        return True
    sym_name = _loop_sym_name(graph, loop)
    for v in _index_values(data.get("index_v")):
        if isinstance(v, Const) or v is None:
            continue
        if isinstance(v, Int):
            syms = [v.sym] if v.sym is not None else []
            syms += [s for s, _ in (v.terms or ())]
            if not syms and v.exact is None:
                return True
            if any(s.name == sym_name for s in syms):
                return True
            continue
        return True  # unknown, tensors (indirect), index vectors
    return graph.attrs(graph.base_tensor(node_id)).get("kind") == "view" and index_may_depend_on(
        graph, graph.base_tensor(node_id), loop)


def accumulation_loop(graph: KernelGraph, op: str, tensor: str, dst: str | None) -> str | None:
    """The loop across which op adds into the same location of ``tensor``: it
    encloses op but not the allocation, runs more than once, and the written
    location does not move with its index."""
    op_loops = graph.attrs(op).get("loops", ())
    t_loops = graph.attrs(base(graph, tensor)).get("loops", ())
    for loop in op_loops:
        if loop in t_loops:
            continue
        upper = loop_trip_upper(graph, loop)
        if upper is not None and upper <= 1:
            continue
        if dst is not None and index_may_depend_on(graph, dst, loop):
            continue
        return loop
    return None


def element_count(shape: tuple | None) -> int | None:
    """Number of elements of an exactly known shape."""
    if shape is None:
        return None
    total = 1
    for d in shape:
        c = const_int(d)
        if c is None:
            return None
        total *= c
    return total


def tensors_of(values: Iterable[Value]) -> Iterator[TensorV]:
    for v in values:
        if isinstance(v, TensorV):
            yield v


def const_number(value: Value | None) -> float | None:
    if isinstance(value, Const) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
        return float(value.value)
    return None


# -- guards a numerics rule looks for ---------------------------------------------------
def exp_input(graph: KernelGraph, op: str) -> list[str]:
    """The data operand(s) of an exp (the first read when no data parameter is named)."""
    ins = [n for p, n in reads(graph, op) if p in ("data", "x", "src", "arg0", "data1")]
    return ins or [n for _, n in reads(graph, op)][:1]


def max_subtracted(graph: KernelGraph, exp_op: str) -> bool:
    """An exp whose input has its maximum subtracted: a tensor bias (``bias=-max``)
    or an explicit ``max_value``, or a max reduction (or a softmax) among the
    producers of its input. Every term is then at most 1, and the maximum's
    own term is exp(0) = 1."""
    params = graph.attrs(exp_op).get("params_v") or {}
    if isinstance(params.get("bias"), TensorV) or isinstance(params.get("max_value"), TensorV):
        return True
    if const_number(params.get("max_value")) is not None:
        return True
    for src in exp_input(graph, exp_op):
        for p in producers(graph, src, depth=6):
            pdata = graph.attrs(p)
            if is_max_reduction(pdata) or short(pdata.get("api")) in ("softmax", "log_softmax", "logsumexp"):
                return True
    return False


def sum_of_max_subtracted_exps(graph: KernelGraph, node_id: str, depth: int = 4) -> bool:
    """The value is a sum of exp(x - max(x)) terms, so at least 1 by
    construction (the maximum's own term is exp(0) = 1): a softmax
    denominator, also when kept as an online running sum (rescaled by
    exp(m_old - m_new) and accumulated tile by tile). A division or
    reciprocal among its producers (a probability, not a sum) says no."""
    found = False
    for p in producers(graph, node_id, depth=depth):
        pdata = graph.attrs(p)
        if is_division(pdata):
            return False
        if not is_sum_reduction(pdata) or found:
            continue
        if is_exp(pdata) and max_subtracted(graph, p):
            found = True  # a fused exp with a sum (reduce_res)
            continue
        for _, n in reads(graph, p):
            if any(is_exp(graph.attrs(w)) and max_subtracted(graph, w) for w in writers(graph, n)):
                found = True
                break
    return found


def added_scalars(graph: KernelGraph, op: str) -> list[Value]:
    """The scalar (non-tensor) values an op adds to its data: the operand of
    an ALU stage whose function is ``add`` (``tensor_scalar(op0=nl.add,
    operand0=eps)``), an activation's scalar ``bias``, the scalar argument of
    ``nl.add``. Values the model does not know (a kernel parameter such as
    ``eps``) are returned as they are; the caller decides what they mean."""
    data = graph.attrs(op)
    params = data.get("params_v") or {}
    funcs = func_params(data)
    out: list[Value] = []
    for stage, operand in (("op0", "operand0"), ("op1", "operand1")):
        value = params.get(operand)
        if funcs.get(stage) == "add" and value is not None and not isinstance(value, TensorV):
            out.append(value)
    s = short(data.get("api"))
    bias = params.get("bias")
    if s in ("activation", "activation_reduce", "exponential") and bias is not None and not isinstance(bias, TensorV) \
            and not (isinstance(bias, Const) and bias.value is None):
        out.append(bias)
    if s == "add" and (data.get("api") or "").startswith("nki.language."):
        for key in ("x", "y"):
            value = params.get(key)
            if value is not None and not isinstance(value, TensorV):
                out.append(value)
    return out


# -- variances and their inverse ---------------------------------------------------------
def squares(graph: KernelGraph, op: str) -> bool:
    """The op squares its data: ``nl.square``, an activation or ALU stage
    ``square``, or a multiply of a tensor by itself."""
    data = graph.attrs(op)
    s = short(data.get("api"))
    if func_params(data).get("op") == "square" or s == "square":
        return True
    if s == "multiply" or func_params(data).get("op") == "multiply":
        ins = [base(graph, n) for _, n in reads(graph, op)]
        return len(ins) >= 2 and ins[0] == ins[1]
    return False


def _positive(value: Value | None) -> bool:
    number = const_number(value)
    return number is not None and number > 0


def uniform_positive(graph: KernelGraph, node_id: str) -> bool:
    """The tensor behind node_id holds only positive constants (ones, or
    1/N for a mean): allocated by ``nl.ones`` / ``nl.full(..., c)`` and
    never written, or written only by ``memset(value=c)``, with c > 0."""
    b = base(graph, node_id)
    ws = writers(graph, b)
    if not ws:
        return _positive(graph.attrs(b).get("fill_v"))
    return all(short(graph.attrs(w).get("api")) == "memset" and _positive(param(graph.attrs(w), "value")) for w in ws)


_MATMUL_OPERANDS = {"nc_matmul": ("stationary", "moving"), "matmul": ("x", "y")}


def ones_matmul_of_squares(graph: KernelGraph, op: str) -> bool:
    """The op is a matmul with an all-ones (or all-1/N) operand over a
    squared tile: a sum (mean) of squares across the partitions, every
    output row holding the column sums; the TensorE way of reducing
    ``x * x`` over the partition axis."""
    names = _MATMUL_OPERANDS.get(short(graph.attrs(op).get("api")))
    if names is None:
        return False
    ins = dict(reads(graph, op))
    a, b = ins.get(names[0]), ins.get(names[1])
    if a is None or b is None:
        return False
    return any(uniform_positive(graph, one) and any(squares(graph, w) for w in writers(graph, other))
               for one, other in ((a, b), (b, a)))


def computes_variance(graph: KernelGraph, op: str) -> bool:
    """The op produces a variance or a mean (sum) of squares: ``nl.var``,
    ``bn_aggr``, a sum reduction that squares its data or reads a squared
    tile, or a matmul of an all-ones tile with a squared tile."""
    data = graph.attrs(op)
    if short(data.get("api")) in ("var", "bn_aggr"):
        return True
    if ones_matmul_of_squares(graph, op):
        return True
    if not is_sum_reduction(data) or short(data.get("api")) in ("bn_stats", "tensor_partition_reduce"):
        return False
    if squares(graph, op):
        return True
    return any(squares(graph, w) for _, n in reads(graph, op) for w in writers(graph, n))


def _scalar_operand(value: Value | None) -> bool:
    return value is not None and not isinstance(value, TensorV)


def inverted_operand(graph: KernelGraph, op: str) -> tuple[str, str] | None:
    """``(how, node)``: the tile an op takes the reciprocal or the reciprocal
    square root of, and how (``rsqrt``, ``reciprocal``, ``divide`` for the
    divisor of a division, ``power`` for a negative constant exponent);
    None when the op inverts nothing. ``tensor_scalar`` computes ``data
    op operand`` per stage (``reverse0/1`` swap the two)."""
    data = graph.attrs(op)
    s = short(data.get("api"))
    funcs = func_params(data)
    ins = dict(reads(graph, op))
    params = data.get("params_v") or {}
    if s in ("rsqrt", "reciprocal"):
        node = ins.get("x") or ins.get("data")
        return (s, node) if node else None
    if s in ("divide", "true_divide") and "y" in ins:
        return ("divide", ins["y"])
    if s == "power" and "x" in ins and (const_number(params.get("y")) or 0) < 0:
        return ("power", ins["x"])
    if s in ("activation", "activation_reduce") and funcs.get("op") in ("rsqrt", "reciprocal") and "data" in ins:
        return (funcs["op"], ins["data"])
    if s == "tensor_tensor" and funcs.get("op") == "divide" and "data2" in ins:
        return ("divide", ins["data2"])
    if s in ("tensor_scalar", "tensor_scalar_reduce") and "data" in ins:
        for stage, operand, reverse in (("op0", "operand0", "reverse0"), ("op1", "operand1", "reverse1")):
            f = funcs.get(stage)
            value = params.get(operand)
            reversed_ = const_param(data, reverse) is True
            if f in ("rsqrt", "reciprocal"):
                return (f, ins["data"])
            if f == "power" and not reversed_ and (const_number(value) or 0) < 0:
                return ("power", ins["data"])
            if f == "divide" and stage == "op0":
                if reversed_ and _scalar_operand(value):
                    return ("divide", ins["data"])
                if not reversed_ and operand in ins:
                    return ("divide", ins[operand])
    return None


# Ops a variance passes through unchanged in kind (scaled, copied, square-rooted): zero stays zero.
_SCALING = {"multiply", "divide"}
_COPIES = {"tensor_copy", "copy", "dma_copy", "sqrt"}


def _passes_through(graph: KernelGraph, op: str) -> str | None:
    """The single tile an op rescales, copies or takes the square root of,
    when it adds nothing; None for anything else (an add, a clamp, a
    subtraction, two tensor inputs that are not a scaling)."""
    data = graph.attrs(op)
    s = short(data.get("api"))
    funcs = func_params(data)
    ins = [(p, n) for p, n in reads(graph, op)]
    params = data.get("params_v") or {}
    if added_scalars(graph, op):
        return None
    if s in ("activation", "activation_reduce"):
        if funcs.get("op") not in ("sqrt", "copy", "identity") or isinstance(params.get("bias"), TensorV):
            return None
        datas = [n for p, n in ins if p == "data"]
        return datas[0] if len(datas) == 1 else None
    if s in _COPIES:
        srcs = [n for p, n in ins if p in ("src", "x", "data")]
        return srcs[0] if len(srcs) == 1 and len(ins) == 1 else None
    if s in ("tensor_scalar",):
        stages = [funcs[k] for k in ("op0", "op1") if k in funcs]
        if not stages or any(f not in _SCALING for f in stages) or const_param(data, "reverse0") is True \
                or const_param(data, "reverse1") is True:
            return None
        datas = [n for p, n in ins if p == "data"]
        return datas[0] if len(datas) == 1 else None
    if s in _SCALING and (data.get("api") or "").startswith("nki.language."):
        tensors = [n for p, n in ins if p in ("x", "y")]
        if len(tensors) == 1 and (s == "multiply" or dict(ins).get("x") == tensors[0]):
            return tensors[0]
    return None


def eps_free_variance(graph: KernelGraph, node_id: str, depth: int = 6) -> tuple[str, bool] | None:
    """``(variance op, through_sqrt)`` when the tile ``node_id`` is a
    variance (``computes_variance``) that reached it only through ops that
    rescale, copy or take its square root, none adding anything: no eps, no
    clamp anywhere on the way. A tile written by more than one op, or by
    anything else, gives None (the model cannot say the eps is missing)."""
    through_sqrt = False
    node = node_id
    for _ in range(depth):
        ws = writers(graph, node)
        if len(ws) != 1:
            return None
        w = ws[0]
        if computes_variance(graph, w):
            return (w, through_sqrt)
        nxt = _passes_through(graph, w)
        if nxt is None:
            return None
        wdata = graph.attrs(w)
        if short(wdata.get("api")) == "sqrt" or func_params(wdata).get("op") == "sqrt":
            through_sqrt = True
        node = nxt
    return None


__all__ = [
    "accumulation_loop", "added_scalars", "base", "computes_variance", "const_number", "const_param", "consumers",
    "dtype_of", "element_count", "eps_free_variance", "exp_input", "func_params", "index_may_depend_on",
    "inverted_operand", "is_division", "is_exp", "is_max_reduction", "is_subtract", "is_sum_reduction",
    "loop_trip_exact", "loop_trip_upper", "max_subtracted", "ones_matmul_of_squares", "op_order", "param",
    "producers", "readers", "reads", "repeats", "short", "squares", "sum_of_max_subtracted_exps", "tensors_of",
    "uniform_positive", "writers", "writes"
]
