"""Pure helpers of the abstract interpreter: node-keyed caches, index and
slice arithmetic, loop trip counts, widening, broadcasting, constant
folding, and the tables they use."""

from __future__ import annotations

import ast
from typing import Any

from ... import astwalk
from .state import BUFFERS, Frame, ParamTensor, ShapeV, _Placement
from ..values import (
    ApiRef,
    BufferV,
    ClassV,
    Const,
    DictV,
    DsV,
    FuncV,
    INF,
    IndexV,
    Int,
    ObjectV,
    RangeV,
    RegisterV,
    SliceV,
    TensorV,
    TupleV,
    Unknown,
    Value,
    const_int,
    int_binop,
    int_bounds,
    join,
    make_int,
    too_big_to_fold,
)


# Parameters of NKI calls that never take a tensor.
_SCALAR_PARAMS = {
    "op", "op0", "op1", "axis", "dtype", "engine", "mask", "name", "keepdims", "negate", "reduce_cmd", "perf_mode",
    "dge_mode", "oob_mode", "tile_position", "tile_size", "channel_multiplier", "cmp_op", "on_false_value",
    "fill_value", "pattern", "offset", "priority", "accumulate", "reduce_op", "shape", "transpose_x", "num_channels",
    "replica_groups", "dma_engine", "cores", "indirect_dim", "reverse0", "reverse1", "imm", "src_rank", "dst_rank",
}


# Parameters of NKI calls that only take tensors.
_TENSOR_ONLY_PARAMS = {
    "dst", "src", "data", "data0", "data1", "data2", "stationary", "moving", "in_", "srcs", "x", "reduce_res",
    "dst_scale", "indices", "initial", "on_true_tile", "on_true", "on_false",
}


_NOPE = object()


_LOGGING_NAMES = {"log", "debug", "info", "warning", "warn", "error", "trace", "print", "log_info", "log_debug", "dump"}


_PURITY: dict[tuple, bool] = {}


# Caches keyed by node id; each entry keeps its node alive so ids stay unique.
def register_bound(iterable: Value) -> bool:
    """Whether a loop range is bounded by a runtime register (a dynamic
    loop): its start, stop or step is one."""
    return isinstance(iterable, RangeV) and any(
        isinstance(v, RegisterV) for v in (iterable.start, iterable.stop, iterable.step)
    )


def _spread(v: Value) -> tuple[Value, ...] | None:
    """The items ``*v`` unpacks to, when the model knows them (a tuple, or
    a shape of known rank), else None."""
    if isinstance(v, TupleV):
        return v.items
    if isinstance(v, ShapeV) and v.rank is not None:
        return tuple(v.fix_rank(v.rank))
    return None


# Labels are cut to 80 characters; unparsing a node whose source is much
# longer would cost time for nothing (and every level of a deeply nested
# expression would unparse everything below it: quadratic).
_MAX_LABEL_SOURCE = 1000


def _node_text(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    line, end_line = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if line is not None and end_line is not None:
        width = (getattr(node, "end_col_offset", 0) or 0) - (getattr(node, "col_offset", 0) or 0)
        if end_line - line > 200 or (end_line == line and width > _MAX_LABEL_SOURCE):
            return f"<{type(node).__name__} of {end_line - line + 1} line(s)>"
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover
        return "?"
    return text if len(text) <= 80 else text[:77] + "..."


class NodeCache:
    """Results computed from an ast node, keyed by the node's identity.

    Each entry keeps its node alive, so an id cannot be reused by another
    node while the entry exists; the cache empties itself past ``limit``.
    """

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self.entries: dict[int, tuple[ast.AST, object]] = {}

    def get(self, node: ast.AST, compute):
        hit = self.entries.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        value = compute(node)
        if len(self.entries) >= self.limit:
            self.entries.clear()
        self.entries[id(node)] = (node, value)
        return value


_TEXT_CACHE = NodeCache(200_000)


_ASSIGNED_CACHE = NodeCache()


_ATTRS_CACHE = NodeCache()


_EVIDENCE_CACHE = NodeCache()



def _memo_key(func: FuncV, args, kwargs) -> tuple | None:
    if func.bound_self is not None or func.closure or func.partial_args or func.partial_kwargs:
        return None
    values = list(args) + list(kwargs.values())
    if not all(isinstance(v, Const) and isinstance(v.value, (int, float, str, bool, type(None))) for v in values):
        return None
    node = func.node
    try:
        return (str(func.module.path), getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
                tuple(v.value for v in args), tuple(sorted((k, v.value) for k, v in kwargs.items())))
    except TypeError:
        return None


def _is_pure(node: ast.AST) -> bool:
    """No stores outside locals, no global/nonlocal: safe to memoise on constants."""
    key = (id(node), getattr(node, "lineno", 0), getattr(node, "end_col_offset", 0), type(node).__name__)
    if key not in _PURITY:
        pure = True
        for sub in astwalk.walk(node):
            if isinstance(sub, (ast.Global, ast.Nonlocal)):
                pure = False
                break
            if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(getattr(sub, "ctx", None), ast.Store):
                pure = False
                break
        _PURITY[key] = pure
    return _PURITY[key]


_FIELD = Unknown("dataclass field")


_BINOP_NAMES = {
    ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide", ast.FloorDiv: "divide",
    ast.Mod: "mod", ast.Pow: "power", ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
    ast.LShift: "left_shift", ast.RShift: "right_shift", ast.MatMult: "matmul",
}


_BUILTINS = {
    "range", "min", "max", "len", "abs", "int", "float", "round", "tuple", "list", "enumerate", "zip", "sum",
    "isinstance", "print", "setattr", "hasattr", "getattr", "callable", "id", "type", "str", "repr", "sorted",
    "reversed", "all", "any", "bool", "dict", "set", "divmod", "iter", "next", "map", "filter", "super", "object",
    "vars", "frozenset", "format", "hash", "ord", "chr",
}


def _cached_evidence(node: ast.AST) -> set[str]:
    return _EVIDENCE_CACHE.get(node, tensor_evidence)


def _has_slice(index: Value) -> bool:
    items = index.items if isinstance(index, TupleV) and not index.is_list else (index,)
    return any(isinstance(x, (SliceV, DsV, IndexV)) or (isinstance(x, Const) and x.value is Ellipsis) for x in items)


_TENSOR_ATTRS = {"shape", "dtype", "buffer", "reshape", "ap", "view", "T", "ndim", "bitcast", "reinterpret_cast"}


def tensor_evidence(fn: ast.AST) -> set[str]:
    """Parameter names the function body treats as tensors (x.shape,
    x[a:b], x.reshape(...))."""
    params = {a.arg for a in getattr(fn, "args", ast.arguments([], [], None, [], [], None, [])).args}
    out: set[str] = set()
    for node in astwalk.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in params:
            if node.attr in _TENSOR_ATTRS:
                out.add(node.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in params:
            sl = node.slice
            items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            if any(isinstance(x, ast.Slice) for x in items) or len(items) > 1:
                out.add(node.value.id)
        elif isinstance(node, ast.Call):
            # nl.load(x[0]) / dma_copy(src=x[0]): an element of a tensor.
            for arg in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id in params:
                    if isinstance(node.func, ast.Attribute):
                        out.add(arg.value.id)
    return out


def _index_arith(op: ast.operator, left: Value, right: Value) -> Value:
    """Arithmetic on legacy index expressions.

    Two index expressions combine by broadcasting their axis shapes (as
    numpy does: ``i_f1 * 8 + i_f2`` spans both axes); an index and a number
    shift or scale the index's offset.
    """
    if isinstance(left, IndexV) and isinstance(right, IndexV):
        shape = _broadcast([left.axis_shape, right.axis_shape]) or left.axis_shape
        extent = int_binop(ast.Mult, left.extent, right.extent)
        offset = int_binop(type(op), left.offset, right.offset) if isinstance(op, (ast.Add, ast.Sub)) else Unknown("index offset")
        # Two combined indices step by different amounts along their axes.
        return IndexV(extent, shape, offset, stride=None)
    idx = left if isinstance(left, IndexV) else right
    other = right if idx is left else left
    if isinstance(op, ast.Add):
        return IndexV(idx.extent, idx.axis_shape, int_binop(ast.Add, idx.offset, other), stride=idx.stride)
    if isinstance(op, ast.Sub) and idx is left:
        return IndexV(idx.extent, idx.axis_shape, int_binop(ast.Sub, idx.offset, other), stride=idx.stride)
    if isinstance(op, ast.Mult):
        # Scaling an index scales the distance between its values too.
        stride = int_binop(ast.Mult, idx.stride, other) if idx.stride is not None else None
        return IndexV(idx.extent, idx.axis_shape, int_binop(ast.Mult, idx.offset, other), stride=stride)
    return IndexV(idx.extent, idx.axis_shape, Unknown("index offset"), stride=None)


def _visible_lists(frame: Frame) -> list[TupleV]:
    """Lists reachable from the frame's variables (and object attributes)."""
    out: dict[int, TupleV] = {}
    f: Frame | None = frame
    while f is not None:
        for value in f.vars.values():
            if isinstance(value, TupleV) and value.is_list:
                out[id(value)] = value
            elif isinstance(value, ObjectV):
                for attr in value.attrs.values():
                    if isinstance(attr, TupleV) and attr.is_list:
                        out[id(attr)] = attr
        f = f.parent
    return list(out.values())


def _freeze(value: Value) -> Value:
    """A copy of an integer whose current bounds (facts of the current
    branch) stay attached after the branch's facts are undone."""
    if isinstance(value, ParamTensor):
        return value
    if isinstance(value, Int) and (value.sym is not None or value.terms is not None):
        lo, hi = value.bounds
        if lo == hi and lo not in (INF, -INF):
            return Const(int(lo), label=value.label)
        return Int(lo, hi, value.sym, value.label, value.reason, value.terms, value.offset, value.meta)
    if isinstance(value, TupleV) and not value.is_list:
        items = tuple(_freeze(v) for v in value.items)
        if any(a is not b for a, b in zip(items, value.items)):
            return TupleV(items, label=value.label)
    return value


def _join_all(values: list[Value]) -> Value:
    out = values[0]
    for v in values[1:]:
        out = join(out, v)
    return out


def _trip_count(r: RangeV) -> Value:
    step = const_int(r.step)
    if step is None or step == 0:
        return Unknown("loop step unknown")
    if step > 0:
        span = int_binop(ast.Sub, r.stop, r.start)
        trip = int_binop(ast.FloorDiv, int_binop(ast.Add, span, Const(step - 1)), Const(step))
    else:
        span = int_binop(ast.Sub, r.start, r.stop)
        trip = int_binop(ast.FloorDiv, int_binop(ast.Add, span, Const(-step - 1)), Const(-step))
    b = int_bounds(trip)
    if b is not None and b[0] < 0:
        trip = make_int(0, max(b[1], 0))
    if (step == 1 and const_int(r.start) == 0 and isinstance(trip, Int) and isinstance(r.stop, Int)
            and r.stop.meta and r.stop.meta[0] in ("ceildiv", "floordiv")):
        # range(n) runs n times: keep how n was computed (a ceiling division
        # tells rules that the last iteration is a partial tile).
        trip.meta = r.stop.meta
    return trip


def _hi_minus_one(trip: Value) -> float:
    b = int_bounds(trip)
    return INF if b is None else b[1] - 1


def _assigned_names(body: list[ast.stmt]) -> set[str]:
    """Names stored anywhere in a block (cached by the block's first statement)."""
    if not body:
        return set()
    return _ASSIGNED_CACHE.get(body[0], lambda _first: _compute_assigned(body))


def _assigned_attrs(body: list[ast.stmt]) -> set[tuple[str, str]]:
    """(name, attr) of every ``name.attr = ...`` / ``name.attr += ...`` in a block."""
    if not body:
        return set()
    return _ATTRS_CACHE.get(body[0], lambda _first: _compute_assigned_attrs(body))


def _compute_assigned_attrs(body: list[ast.stmt]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for stmt in body:
        for node in astwalk.walk(stmt):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
                out.add((node.value.id, node.attr))
    return out


def _compute_assigned(body: list[ast.stmt]) -> set[str]:
    out: set[str] = set()
    for stmt in body:
        for node in astwalk.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
    return out


def _widen(value: Value, name: str) -> Value:
    """A loop-carried variable's value on an arbitrary iteration."""
    if isinstance(value, Const) and isinstance(value.value, bool):
        return Unknown(f"{name} changes across iterations", label=name)
    if int_bounds(value) is not None:
        return Int(label=name, reason=f"{name} changes across iterations")
    if isinstance(value, (TensorV, TupleV, ObjectV, DictV, FuncV)):
        return value
    if isinstance(value, Const) and value.value is None:
        return value
    return Unknown(f"{name} changes across iterations", label=name)


def _slice_size(item: SliceV, dim: Value) -> Value:
    start = Const(0) if _is_none(item.start) else item.start
    stop = dim if _is_none(item.stop) else item.stop
    step = 1 if _is_none(item.step) else const_int(item.step)
    if step is None:
        return Unknown("slice step unknown")
    cs, ce, cd = const_int(start), const_int(stop), const_int(dim)
    if cs is not None and cs < 0 and cd is not None:
        start = Const(cd + cs)
    if ce is not None and ce < 0 and cd is not None:
        stop = Const(cd + ce)
    # Python clamps the stop to the dimension.
    if cd is not None and ce is not None and ce > cd:
        stop = dim
    size = int_binop(ast.Sub, stop, start)
    if step != 1 and step > 0:
        size = int_binop(ast.FloorDiv, int_binop(ast.Add, size, Const(step - 1)), Const(step))
    b = int_bounds(size)
    if b is not None and b[0] < 0:
        size = make_int(0, max(b[1], 0))
    if isinstance(size, Int) and size.label is None:
        size.label = f"{_describe_v(start)}:{_describe_v(stop)}"
    return size


def _describe_v(v: Value) -> str:
    c = const_int(v)
    return str(c) if c is not None else (v.label or "?")


def _is_none(v: Value) -> bool:
    return isinstance(v, Const) and v.value is None


def _buffer_name(v: Value | None) -> str:
    if isinstance(v, _Placement):
        return v.buffer
    if isinstance(v, BufferV):
        return v.name
    if isinstance(v, Const) and isinstance(v.value, str) and v.value in BUFFERS:
        return v.value
    if isinstance(v, ApiRef):
        short = v.qual.name.rsplit(".", 1)[-1]
        if short in BUFFERS:
            return short
        if v.qual.name.startswith("nki.compiler"):
            # legacy nki.compiler.sbuf.mod_alloc(...) / psum.alloc(...)
            return "psum" if ".psum" in v.qual.name else "sbuf"
    return "unknown" if v is not None else "sbuf"


def _broadcast(shapes: list[tuple[Value, ...] | None]) -> tuple[Value, ...] | None:
    known = [s for s in shapes if s is not None]
    if not known:
        return None
    rank = max(len(s) for s in known)
    out: list[Value] = []
    for i in range(rank):
        dim: Value = Const(1)
        for s in known:
            j = i - (rank - len(s))
            if j >= 0 and const_int(s[j]) != 1:
                dim = s[j]
        out.append(dim)
    return tuple(out)


def _axes(axis: Value | None, rank: int) -> set[int] | None:
    if axis is None:
        return None
    if isinstance(axis, TupleV):
        out = set()
        for a in axis.items:
            c = const_int(a)
            if c is None:
                return None
            out.add(c % rank if rank else c)
        return out
    c = const_int(axis)
    if c is None:
        return None
    return {c % rank if rank else c}


def _contains(container: Value, item: Value) -> bool | None:
    if isinstance(container, TupleV) and isinstance(item, Const):
        values = []
        for x in container.items:
            if not isinstance(x, Const):
                return None
            values.append(x.value)
        try:
            return item.value in values
        except TypeError:
            return None
    if isinstance(container, DictV) and isinstance(item, Const):
        try:
            return item.value in container.items
        except TypeError:
            return None
    return None


def _py_binop(op: ast.operator, a: Any, b: Any) -> Any:
    if not all(isinstance(x, (int, float, str, bool)) or x is None for x in (a, b)):
        return _NOPE
    if not isinstance(a, str) and not isinstance(b, str) and too_big_to_fold(type(op), a, b):
        return _NOPE  # int_binop makes it an unknown integer
    try:
        if isinstance(op, ast.Add):
            if isinstance(a, str) and isinstance(b, str) and len(a) + len(b) > 4096:
                return _NOPE
            return a + b
        if isinstance(op, ast.Sub):
            return a - b
        if isinstance(op, ast.Mult):
            if isinstance(a, str) or isinstance(b, str):
                return _NOPE
            return a * b
        if isinstance(op, ast.Div):
            return a / b
        if isinstance(op, ast.FloorDiv):
            return a // b
        if isinstance(op, ast.Mod):
            if isinstance(a, str):
                return _NOPE
            return a % b
        if isinstance(op, ast.Pow):
            if isinstance(b, (int, float)) and abs(b) > 256:
                return _NOPE
            return a ** b
        if isinstance(op, ast.LShift):
            return a << b if 0 <= b < 64 else _NOPE
        if isinstance(op, ast.RShift):
            return a >> b
        if isinstance(op, ast.BitAnd):
            return a & b
        if isinstance(op, ast.BitOr):
            return a | b
        if isinstance(op, ast.BitXor):
            return a ^ b
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return _NOPE
    return _NOPE


def _maybe_project(dotted: str) -> bool:
    """Whether an absolute import could be a module of the project itself."""
    top = dotted.split(".")[0]
    return top not in _EXTERNAL_TOPS


_EXTERNAL_TOPS = {
    "nki", "neuronxcc", "torch_neuronx", "jax_neuronx", "numpy", "np", "torch", "jax", "triton", "math", "os", "sys",
    "functools", "itertools", "typing", "dataclasses", "enum", "collections", "abc", "logging", "re", "json", "time",
    "random", "warnings", "pytest", "unittest", "ml_dtypes", "cupy", "numba", "pycuda", "scipy", "operator", "copy",
    "contextlib", "inspect", "pathlib", "argparse", "subprocess", "shutil", "tempfile", "textwrap", "string", "types",
    "torch_xla", "transformers", "neuronx_distributed", "neuronx_distributed_inference", "__future__",
}


def _class_attr(cls: ClassV | None, attr: str, depth: int = 0) -> Value | None:
    if cls is None or depth > 8:
        return None
    if attr in cls.attrs:
        return cls.attrs[attr]
    for base in cls.bases:
        if isinstance(base, ClassV):
            found = _class_attr(base, attr, depth + 1)
            if found is not None:
                return found
    return None


def _is_property(node: ast.AST) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
        or (isinstance(d, ast.Attribute) and d.attr in ("property", "cached_property"))
        for d in getattr(node, "decorator_list", [])
    )
