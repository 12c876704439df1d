"""Shape facts the partition rules (rules/partition.py) share.

Everything here reads the semantic model; nothing guesses. A dimension is
an abstract value: exact, a range, or unknown. The helpers answer three
questions the rules ask again and again: is a size over a limit for every
value the code allows (an error), is it over the limit for a value the code
really allows (a warning), and do two sizes provably differ.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from nkilint.model import query as q
from nkilint.model.graph import ON_CHIP, KernelGraph
from nkilint.model.values import (
    ApiRef, Const, DsV, DType, IndexV, SliceV, TupleV, Value, const_int, int_binop, int_bounds, linear,
)


# ---------------------------------------------------------------- bounds
def over_always(v: Value | None, limit: float) -> bool:
    """Every value the code allows exceeds ``limit`` (sound: interval lower bounds)."""
    lo = q.lower(v)
    return lo is not None and lo > limit


def over_maybe(v: Value | None, limit: float) -> float | None:
    """A reachable value above ``limit`` (the attainable upper bound), if any."""
    hi = q.attainable_upper(v)
    return hi if hi is not None and hi > limit else None


def provably_different(a: Value | None, b: Value | None) -> bool:
    """Two integer sizes differ for every value the code allows."""
    if a is None or b is None:
        return False
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None:
        terms = dict(la[0])
        for sym, coeff in lb[0].items():
            terms[sym] = terms.get(sym, 0) - coeff
        if all(c == 0 for c in terms.values()):
            return la[1] != lb[1]
    ba, bb = int_bounds(a), int_bounds(b)
    if ba is None or bb is None:
        return False
    return ba[1] < bb[0] or bb[1] < ba[0]


def provably_equal(a: Value | None, b: Value | None) -> bool:
    if a is None or b is None:
        return False
    if a is b:
        return True
    ca, cb = const_int(a), const_int(b)
    if ca is not None and cb is not None:
        return ca == cb
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None:
        return la[1] == lb[1] and {s: c for s, c in la[0].items() if c} == {s: c for s, c in lb[0].items() if c}
    return False


def fmt(v: Value | None) -> str:
    return "?" if v is None else q.fmt_dim(v)


# ---------------------------------------------------------------- shapes
def shape(data: dict) -> tuple[Value, ...] | None:
    return data.get("shape_v")


def partition_dim(data: dict) -> Value | None:
    return q.partition_size(data)


def free_dims(data: dict) -> tuple[Value, ...] | None:
    s = shape(data)
    if s is None:
        return None
    axis = data.get("partition_axis") or 0
    return tuple(d for i, d in enumerate(s) if i != axis)


def product(dims: tuple[Value, ...] | None) -> Value | None:
    """Product of integer dims (None if any is not an integer value)."""
    if dims is None:
        return None
    total: Value = Const(1)
    for d in dims:
        if int_bounds(d) is None:
            return None
        total = int_binop(ast.Mult, total, d)
    return total


def free_size(data: dict) -> Value | None:
    """Elements per partition (free dims flattened, as the engines see them)."""
    dims = free_dims(data)
    if dims is None:
        return None
    if len(dims) == 1:
        return dims[0]
    return product(dims)


def on_chip(data: dict) -> bool:
    return data.get("buffer") in ON_CHIP


def dtype_name(data: dict) -> str | None:
    return q.dtype_name(data)


# ---------------------------------------------------------------- operands
@dataclass(frozen=True)
class Operand:
    param: str
    node_id: str
    data: dict


def operands(ref: q.NodeRef, names: tuple[str, ...] | None = None, include_result: bool = False) -> list[Operand]:
    """Tensor operands of an op, in parameter order, optionally restricted to ``names``."""
    out: list[Operand] = []
    seen: set[tuple[str, str]] = set()
    g = ref.graph
    edges = [(src, d) for src, d in g.reads(ref.node_id)] + [(dst, d) for dst, d in g.writes(ref.node_id)]
    for node_id, edge in edges:
        param = edge.get("param") or "?"
        if param == "result" and not include_result:
            continue
        if names is not None and param not in names:
            continue
        key = (param, node_id)
        if key in seen:
            continue
        seen.add(key)
        out.append(Operand(param, node_id, g.attrs(node_id)))
    return out


def short_api(ref: q.NodeRef) -> str:
    return str(ref.data.get("api", "")).rsplit(".", 1)[-1]


def api_module(ref: q.NodeRef) -> str:
    return str(ref.data.get("api", "")).rpartition(".")[0]


def call_label(ref: q.NodeRef) -> str:
    """How the call is spelled for messages: nisa.nc_matmul, nl.matmul."""
    module = api_module(ref)
    prefix = {"nki.isa": "nisa", "nki.language": "nl"}.get(module, module)
    return f"{prefix}.{short_api(ref)}"


def ops_named(model, module: str, names: tuple[str, ...] | set[str]) -> Iterator[q.NodeRef]:
    for ref in q.ops(model, module + "."):
        if short_api(ref) in names and api_module(ref) == module:
            yield ref


def param(ref: q.NodeRef, name: str) -> Value | None:
    return q.param_value(ref, name)


def api_leaf(v: Value | None) -> str | None:
    """The last component of an API constant (``nisa.engine.vector`` -> ``vector``)."""
    if isinstance(v, ApiRef):
        return v.qual.name.rsplit(".", 1)[-1]
    return None


def const_tuple(v: Value | None) -> tuple[int, ...] | None:
    """A tuple/list of exact ints, if the value is one."""
    if isinstance(v, TupleV):
        items = [const_int(x) for x in v.items]
        if all(i is not None for i in items):
            return tuple(items)  # type: ignore[arg-type]
    return None


def is_true(v: Value | None) -> bool | None:
    if v is None:
        return None
    if isinstance(v, Const):
        if v.value is None:
            return False
        if isinstance(v.value, (bool, int)):
            return bool(v.value)
    return None


def dtype_of(data: dict) -> str | None:
    d = data.get("dtype_v")
    return d.name if isinstance(d, DType) else data.get("dtype")


# ---------------------------------------------------------------- partition start
def partition_start(graph: KernelGraph, node_id: str) -> Value | None:
    """First partition a tensor or view occupies, relative to partition 0.

    Known for views (slices, ``nl.ds``, integer indices) of tensors the
    compiler places (allocations without ``address=``, legacy result
    tiles). None when anything on the way is unknown: legacy arange
    indices (the model does not keep their stride), reshaped or ``.ap()``
    views, explicitly placed tensors, block-dimension tensors."""
    chain: list[dict] = []
    cur = node_id
    for _ in range(64):
        data = graph.attrs(cur)
        if data.get("kind") != "view":
            break
        chain.append(data)
        nxt = [v for _, v, d in graph.g.out_edges(cur, data=True) if d.get("kind") == "view_of"]
        if not nxt:
            return None
        cur = nxt[0]
    else:
        return None
    base = graph.attrs(cur)
    if base.get("kind") != "tensor" or base.get("origin") not in ("alloc", "result"):
        return None
    if base.get("address") is not None or (base.get("partition_axis") or 0) != 0:
        return None
    start: Value = Const(0)
    for view in reversed(chain):
        items = view.get("index_v")
        if items is None:
            return None  # reshape / ap / bitcast: not tracked
        if not items:
            return None
        first = items[0]
        if isinstance(first, Const) and first.value is Ellipsis:
            continue  # the whole partition range
        if isinstance(first, Const) and first.value is None:
            return None  # a new axis in front: not a partition view
        if isinstance(first, SliceV):
            if isinstance(first.start, Const) and first.start.value is None:
                offset: Value = Const(0)
            else:
                offset = first.start
            step = first.step
            if not (isinstance(step, Const) and step.value in (None, 1)):
                return None
        elif isinstance(first, DsV):
            offset = first.start
        elif isinstance(first, IndexV):
            return None
        elif int_bounds(first) is not None:
            offset = first
        else:
            return None
        if int_bounds(offset) is None:
            return None
        c = const_int(offset)
        if c is not None and c < 0:
            return None  # negative index from the end: not tracked
        start = int_binop(ast.Add, start, offset)
    return start


def operand_name(graph: KernelGraph, node_id: str) -> str:
    """A tensor's name, or ``base[index]`` for a view."""
    data = graph.attrs(node_id)
    if data.get("kind") != "view":
        return q.tensor_name(data)
    base = graph.attrs(graph.base_tensor(node_id))
    index = str(data.get("index") or "")
    if index.startswith("(") and index.endswith(")") and not index.startswith("(("):
        index = index[1:-1]
    name = q.tensor_name(base) if base.get("name") else (data.get("name") or "tensor")
    if index.startswith("."):
        return f"{name}{index}"
    return f"{name}[{index}]"


# Legacy / nl calls whose returned tile the model sizes by broadcasting its
# inputs although the call states its own shape (nl.broadcast_to(x, shape))
# or reshapes: their result shapes are not trusted.
_UNTRUSTED_RESULTS = {
    "broadcast_to", "expand_dims", "reshape", "squeeze", "gather_flattened", "shared_constant", "where", "select",
    "full_like", "shuffle", "nc_stream_shuffle", "nc_n_gather", "local_gather", "iota", "affine_select",
    "tensor_partition_reduce", "max8", "nc_find_index8", "bn_stats", "bn_aggr", "quantize_mx",
}


def trusted_shape(graph: KernelGraph, node_id: str) -> bool:
    """Whether the model's shape of a tensor/view can be relied on.

    Not trusted: results of calls the model sizes by broadcasting
    (``_UNTRUSTED_RESULTS``), and views derived by ``.ap(pattern)`` /
    ``.reshape(shape)`` unless the pattern or shape is written as a literal
    at the call: a list the code builds in a loop (nki-library's
    ``TensorView.get_view``) has an unknown length that the model reads as
    one iteration's worth."""
    data = graph.attrs(node_id)
    if data.get("shape_v") is None:
        return False
    return _trusted(graph, node_id, 0)


def _trusted(graph: KernelGraph, node_id: str, depth: int) -> bool:
    cur = node_id
    for _ in range(64):
        d = graph.attrs(cur)
        if d.get("kind") != "view":
            break
        if str(d.get("index") or "").startswith(".") and not _literal_derived(d):
            return False
        if not _reliable_index(d.get("index_v")):
            return False
        nxt = [v for _, v, e in graph.g.out_edges(cur, data=True) if e.get("kind") == "view_of"]
        if not nxt:
            break
        cur = nxt[0]
    base = graph.attrs(cur)
    if base.get("origin") == "result":
        short = str(base.get("api") or "").rsplit(".", 1)[-1]
        if short in _UNTRUSTED_RESULTS:
            return False
        if depth < 8:
            # A result is sized from its inputs (nl.load from the HBM view's shape).
            for op_id, _, e in graph.g.in_edges(cur, data=True):
                if e.get("kind") != "writes":
                    continue
                for src, _ in graph.reads(op_id):
                    if graph.attrs(src).get("shape_v") is not None and not _trusted(graph, src, depth + 1):
                        return False
    return True


def _reliable_index(items) -> bool:
    """Legacy index tiles the model shapes correctly: every nl.arange/mgrid
    index carries a full-rank axis shape of one common rank. The model keeps
    ``nl.arange(n)[:, None, None]`` 1-D and a sum of two index tiles shaped
    like its left operand."""
    if not items:
        return True
    ranks = {len(x.axis_shape) for x in items if isinstance(x, IndexV)}
    if not ranks:
        return True
    return len(ranks) == 1 and min(ranks) >= 2 and min(ranks) == sum(isinstance(x, IndexV) for x in items)


def _literal_derived(view: dict) -> bool:
    """A derived view whose new shape is spelled out at the call."""
    index = str(view.get("index") or "")
    if not index.startswith((".ap", ".reshape")):
        return True  # .view(dtype) / bitcast keep the base's shape
    site = view.get("site")
    call = getattr(site, "node", None)
    if not isinstance(call, ast.Call):
        return False
    if index.startswith(".ap"):
        arg = next((k.value for k in call.keywords if k.arg == "pattern"), call.args[0] if call.args else None)
        return isinstance(arg, (ast.List, ast.Tuple)) and all(isinstance(e, (ast.List, ast.Tuple)) for e in arg.elts)
    if len(call.args) > 1:
        return not any(isinstance(a, ast.Starred) for a in call.args)
    arg = next((k.value for k in call.keywords if k.arg == "shape"), call.args[0] if call.args else None)
    return isinstance(arg, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in arg.elts)
