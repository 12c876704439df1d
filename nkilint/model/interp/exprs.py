"""Expressions in the abstract interpreter."""

from __future__ import annotations

import ast
import math
from typing import Any

from ..bindings import Gen, Qual
from .helpers import (
    _BINOP_NAMES,
    _BUILTINS,
    _FIELD,
    _NOPE,
    _class_attr,
    _contains,
    _freeze,
    _has_slice,
    _index_arith,
    _is_none,
    _is_property,
    _py_binop,
    _spread,
)
from .state import (
    BUFFERS,
    Frame,
    MAX_UNROLL,
    NKI_DTYPES,
    NUMPY_DTYPES,
    ParamTensor,
    ShapeV,
    _DictMethod,
    _FloatRange,
    _ListMethod,
    _SeqV,
    _TensorMethod,
    _TensorWithShapeObj,
    _TypeSpec,
)
from ..graph import bytes_per_partition
from ..values import (
    ApiRef,
    BufferV,
    ClassV,
    Const,
    DType,
    DictV,
    FuncV,
    INF,
    IndexV,
    Int,
    ModuleV,
    ObjectV,
    RangeV,
    ScalarV,
    SliceV,
    Sym,
    TensorV,
    TupleV,
    Unknown,
    Value,
    compare,
    const_int,
    int_binop,
    int_bounds,
    join,
    make_int,
    MAX_INT_BITS,
    int_bits,
    truth,
)


from .tracer import GridV


# Operator spellings for messages about device scalars.
_OP_TEXT = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>",
    ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@",
}


def _scalar_result(left: Value, right: Value, comparison: bool = False) -> ScalarV:
    """Arithmetic or a comparison with an NkiScalar: a new device scalar of
    the operand's width."""
    dtype = next((v.dtype for v in (left, right) if isinstance(v, ScalarV) and v.dtype), None)
    return ScalarV(label=None, dtype=dtype, comparison=comparison)



# Integer literals smaller than this in magnitude are far under MAX_INT_BITS.
_SMALL_LITERAL = 1 << 62

# builtins.<name> for each builtin read (Quals are immutable: shared).
_BUILTIN_QUALS: dict[str, Qual] = {}

# The axes of an nl.mgrid grid by attribute: p (partition), then x, y, z.
_GRID_AXES = {"p": 0, "x": 1, "y": 2, "z": 3}

class ExpressionsMixin:
    """Expressions: names, attributes, subscripts, operators, comprehensions.

    Part of :class:`~nkilint.model.interp.Interpreter`."""

    def eval(self, node: ast.AST | None, frame: Frame) -> Value:
        if node is None:
            return Const(None)
        # Hot path: the step budget inline, dispatch through a per-class table.
        self.budget -= 1
        if self.budget <= 0:
            self._step()
        method = _EVAL_DISPATCH.get(type(node))
        if method is None:
            method = _EVAL_DISPATCH[type(node)] = getattr(type(self), f"_ev_{type(node).__name__}", _ev_unsupported)
        return method(self, node, frame)

    def _ev_Constant(self, node: ast.Constant, frame: Frame) -> Value:
        value = node.value
        # A literal under 2**62 needs no bit count (hot: every literal).
        if isinstance(value, int) and not -_SMALL_LITERAL < value < _SMALL_LITERAL and int_bits(value) > MAX_INT_BITS:
            return Int(sym=Sym("value"), reason=f"an integer literal over {MAX_INT_BITS} bits (not folded)")
        return Const(value, label=None)

    def _ev_Name(self, node: ast.Name, frame: Frame) -> Value:
        # Hot path, lookup's first loop inline: a name bound in a frame.
        name = node.id
        f: Frame | None = frame
        while f is not None:
            if name in f.vars:
                if self._rec and f.func == "<defaults>":
                    break  # lookup records the read
                return f.vars[name]
            f = f.parent
        return self.lookup(name, frame)

    def lookup(self, name: str, frame: Frame) -> Value:
        f: Frame | None = frame
        while f is not None:
            if name in f.vars:
                if self._rec and f.func == "<defaults>":  # a default value read from the module
                    self._read_global(f.module, name, f.vars[name])
                return f.vars[name]
            f = f.parent
        env = self.module_env(frame.module) if frame.func != "<module>" else frame.vars
        if name in env:
            value = env[name]
            if self._rec:
                self._read_global(frame.module, name, value)
            if isinstance(value, TensorV) and self.graph is not None and not self.graph.g.has_node(value.node_id):
                return self._module_tensor(name, value)
            return value
        qual = frame.module.bindings.names.get(name)
        if qual is not None:
            return self._api_value(qual)
        if name in _BUILTINS:
            qual = _BUILTIN_QUALS.get(name)
            if qual is None:
                qual = _BUILTIN_QUALS[name] = Qual(f"builtins.{name}", Gen.OTHER)
            return ApiRef(qual, label=name)
        for star in frame.module.bindings.star_modules:
            if self._rec:
                self._log.append(("x",))  # star imports: not recorded as reads
            if star.is_nki:
                from ..apitable import api_for, legacy_api

                table = legacy_api() if star.gen is Gen.LEGACY else api_for(self.version)
                if name in table.member_names(star.name):
                    return self._api_value(star.child(name))
        return self.unknown(f"name '{name}' is not known statically", label=name)

    def _module_tensor(self, name: str, value: TensorV) -> TensorV:
        """A tensor made by module-level code (evaluated once, outside any
        kernel graph) read in a kernel: a tensor node of this graph with its
        shape, dtype and buffer, one per module value."""
        adopted = self.__dict__.setdefault("_module_tensors", {})
        hit = adopted.get(id(value))
        if hit is not None:
            return hit
        dtype = value.dtype
        node_id = self.graph.add_node(
            "t", "tensor", None, (), name=name, buffer=value.buffer,
            dtype=dtype.name if isinstance(dtype, DType) else None, dtype_v=dtype, shape_v=value.shape,
            origin="module", partition_axis=value.partition_axis, function="<module>",
            bytes_v=bytes_per_partition(value.shape, dtype, value.partition_axis),
        )
        hit = adopted[id(value)] = TensorV(node_id, node_id, value.shape, dtype, value.buffer, label=name,
                                           partition_axis=value.partition_axis)
        return hit

    def _api_value(self, qual: Qual) -> Value:
        """Constants of the NKI API as concrete values (dtypes, buffers, tile sizes)."""
        name = qual.name
        if qual.is_nki:
            module, _, short = name.rpartition(".")
            if module == "nki.language":
                if short in NKI_DTYPES:
                    return DType(short, label=f"nl.{short}")
                if short in BUFFERS:
                    return BufferV(short, label=f"nl.{short}")
            if module == "nki.language.tile_size":
                value = self._tile_size(short)
                if value is not None:
                    return Const(value, label=f"nl.tile_size.{short}")
        elif qual.gen is Gen.OTHER:
            module, _, short = name.rpartition(".")
            if module in ("numpy", "np", "ml_dtypes", "jax.numpy", "torch") and short in NUMPY_DTYPES | {"bfloat16"}:
                return DType(short, label=name)
            if name in ("math.pi", "numpy.pi"):
                return Const(math.pi)
        return ApiRef(qual, label=name)

    def _tile_size(self, short: str) -> int | None:
        t = self.target
        return {
            "pmax": t.partitions,
            "psum_fmax": t.psum_bank_fp32,
            "psum_bank_fmax": t.psum_bank_fp32,
            "psum_bank_fmax_bytes": t.psum_bank_bytes,
            "psum_num_banks": t.psum_banks,
            "gemm_stationary_fmax": t.gemm_stationary_fmax,
            "gemm_moving_fmax": 512,
            "bn_stats_fmax": t.bn_stats_fmax,
            "sbuf_fmax_bytes": t.sbuf_usable_bytes_per_partition,
            "total_available_sbuf_size": t.sbuf_usable_bytes_per_partition,
            "sbuf_fmax": t.sbuf_usable_bytes_per_partition // 4,
            "sbuf_size_bytes": t.sbuf_usable_bytes_per_partition * t.partitions,
        }.get(short)

    def _ev_Attribute(self, node: ast.Attribute, frame: Frame) -> Value:
        base = self.eval(node.value, frame)
        return self.attribute(base, node.attr, node, frame)

    def opaque(self, parent: Value, key: str, name: str) -> "ParamTensor":
        """A stable unknown for ``parent.key`` (an attribute or constant index
        of an unknown value): asserts on it narrow every later use."""
        # Per interpreter (one kernel): the entry keeps the parent alive, so
        # its id cannot be reused while the kernel is analysed.
        memo = self.opaque_attrs.setdefault(id(parent), (parent, {}))[1]
        if key not in memo:
            self._opaque_made += 1
            memo[key] = ParamTensor(sym=Sym(name), label=name, reason=f"{name} is not known statically", name=name,
                                    node=None, buffer="unknown")
        return memo[key]

    def attribute(self, base: Value, attr: str, node: ast.AST, frame: Frame) -> Value:
        if isinstance(base, GridV):
            return self.grid_attribute(base, attr, node, frame)
        if isinstance(base, ParamTensor):
            if base.tensor is not None or attr in ("shape", "dtype", "buffer", "reshape", "ap", "view", "ndim", "T", "__getitem__"):
                base = self.materialize(base, node)
            else:
                return self.opaque(base, attr, f"{base.name}.{attr}")
        if isinstance(base, Unknown) and not attr.startswith("__"):
            return self.opaque(base, attr, f"{base.label or 'value'}.{attr}")
        if isinstance(base, ApiRef):
            return self._api_value(base.qual.child(attr))
        if isinstance(base, TensorV):
            if attr == "shape":
                if base.shape is None:
                    if isinstance(base, _TensorWithShapeObj) and base.shape_obj is not None:
                        return base.shape_obj
                    return self.unknown("shape of unknown rank", label=f"{base.label}.shape")
                return TupleV(base.shape, label=f"{base.label or 'tensor'}.shape")
            if attr == "dtype":
                return base.dtype
            if attr == "buffer":
                return BufferV(base.buffer) if base.buffer != "unknown" else self.unknown("buffer")
            if attr == "ndim":
                return Const(len(base.shape)) if base.shape is not None else self.unknown("rank")
            if attr in ("reshape", "ap", "view", "bitcast", "reinterpret_cast", "indirect", "broadcast_to", "T", "with_dtype"):
                return _TensorMethod(base, attr)
            return self.unknown(f"tensor attribute {attr}")
        if isinstance(base, ObjectV):
            if attr in base.attrs:
                value = base.attrs[attr]
                if isinstance(value, Unknown) and value is not _FIELD:
                    # Stable from now on, so asserts on obj.attr stick.
                    value = base.attrs[attr] = self.opaque(base, attr, f"{base.label or 'obj'}.{attr}")
                return value
            cls_attr = _class_attr(base.cls, attr)
            if isinstance(cls_attr, FuncV):
                if _is_property(cls_attr.node):
                    return self.call_function(FuncV(cls_attr.node, cls_attr.module, bound_self=base, qualname=cls_attr.qualname), [], {}, node)
                return FuncV(cls_attr.node, cls_attr.module, bound_self=base, qualname=cls_attr.qualname)
            if cls_attr is not None:
                return cls_attr
            return self.unknown(f"attribute {attr} of an object", label=self.text(node))
        if isinstance(base, ClassV):
            value = _class_attr(base, attr)
            return value if value is not None else self.unknown(f"class attribute {attr}")
        if isinstance(base, ModuleV):
            env = self.module_env(base.module)
            if attr in env:
                if self._rec:
                    self._read_global(base.module, attr, env[attr])
                return env[attr]
            sub = base.module.project.find_module(base.module, 1, attr) if base.module.path.name == "__init__.py" else None
            if sub is not None:
                return ModuleV(sub, label=attr)
            return self.unknown(f"{attr} not found in module", label=self.text(node))
        if isinstance(base, ShapeV):
            return self.unknown("shape attribute")
        if isinstance(base, TupleV) and attr in _GRID_AXES and _GRID_AXES[attr] < len(base.items) and all(
                isinstance(i, IndexV) for i in base.items):
            # grid = nl.mgrid[0:128, 0:2, 0:512]; grid.p / grid.x / grid.y: the axes in order
            return base.items[_GRID_AXES[attr]]
        if isinstance(base, TupleV) and base.is_list and attr in ("append", "extend", "insert", "pop", "copy", "index"):
            return _ListMethod(base, attr)
        if isinstance(base, DictV) and attr in ("get", "items", "keys", "values"):
            return _DictMethod(base, attr)
        if isinstance(base, DType) and attr == "itemsize":
            from ..graph import DTYPE_BYTES

            size = DTYPE_BYTES.get(base.name)
            return Const(size) if size else self.unknown("dtype size")
        if isinstance(base, RangeV) and attr in ("start", "stop"):
            return base.start if attr == "start" else base.stop
        return self.unknown(f"attribute {attr}", label=self.text(node))

    def _ev_Subscript(self, node: ast.Subscript, frame: Frame) -> Value:
        base = self.eval(node.value, frame)
        index = self.eval(node.slice, frame)
        if isinstance(base, ParamTensor):
            if base.tensor is not None or _has_slice(index) or base.name in self._tensor_params or const_int(index) is None:
                base = self.materialize(base, node)
            else:
                # p[0] on a parameter with no sign of being a tensor: a tuple
                # or config entry as likely as a tensor row.
                key = const_int(index)
                if key is not None:
                    return self.opaque(base, f"[{key}]", f"{base.name}[{key}]")
                return self.unknown(f"subscript of parameter {base.name}")
        return self.subscript(base, index, node, frame)

    def subscript(self, base: Value, index: Value, node: ast.AST, frame: Frame) -> Value:
        if isinstance(base, TensorV):
            return self.view(base, index, node, frame)
        if isinstance(base, GridV):
            return self.grid_subscript(base, index, node, frame)
        if isinstance(base, TupleV) and base.inexact and base.items:
            out = base.items[0]
            for x in base.items[1:]:
                out = join(out, x)
            return out if not isinstance(index, SliceV) else TupleV(base.items, is_list=base.is_list, inexact=True)
        if isinstance(base, TupleV):
            i = const_int(index)
            if i is not None:
                if -len(base.items) <= i < len(base.items):
                    return base.items[i]
                return self.unknown("index out of range")
            if base.items and not isinstance(index, SliceV) and all(isinstance(x, TensorV) for x in base.items):
                out = base.items[0]
                for x in base.items[1:]:
                    out = self.merge(out, x, getattr(node, "value", None) and self.text(node.value) or "tiles")
                return out
            if isinstance(index, SliceV):
                try:
                    start = None if _is_none(index.start) else const_int(index.start)
                    stop = None if _is_none(index.stop) else const_int(index.stop)
                    step = None if _is_none(index.step) else const_int(index.step)
                    if (start is None and not _is_none(index.start)) or (stop is None and not _is_none(index.stop)):
                        raise ValueError
                    return TupleV(base.items[start:stop:step], is_list=base.is_list)
                except (ValueError, TypeError):
                    return self.unknown("slice of a sequence")
            if base.items:
                out = base.items[0]
                for x in base.items[1:]:
                    out = join(out, x)
                return out
            return self.unknown("index into empty sequence")
        if isinstance(base, ShapeV):
            i = const_int(index)
            if i is not None:
                return base.dim(i)
            if isinstance(index, SliceV):
                return self.unknown("slice of a shape of unknown rank")
            return self.unknown("dynamic shape index")
        if isinstance(base, DictV):
            if isinstance(index, Const):
                try:
                    if index.value in base.items:
                        return base.items[index.value]
                except TypeError:
                    pass
            return self.unknown("dict lookup")
        if isinstance(base, ApiRef):
            name = base.qual.name
            if name in ("nki.language.mgrid",):
                return self._mgrid(index)
            if name.startswith("nki.typing"):
                return _TypeSpec(index)
            return self.unknown("subscript of an API object")
        if isinstance(base, IndexV):
            # nl.arange(n)[:, None], [None, :], [None, :, None], ...: the slice
            # position is the axis the index varies along.
            items = index.items if isinstance(index, TupleV) else (index,)
            if len(items) >= 2 and sum(1 for x in items if isinstance(x, SliceV)) == 1 and all(
                isinstance(x, SliceV) or (isinstance(x, Const) and x.value is None) for x in items
            ):
                shape = tuple(base.extent if isinstance(x, SliceV) else Const(1) for x in items)
                return IndexV(base.extent, shape, base.offset, label=base.label, stride=base.stride)
            return base
        if isinstance(base, FuncV):
            # kernel[grid](...) SPMD launch: same function.
            return base
        if isinstance(base, (Unknown, ParamTensor)) and isinstance(index, Const) and isinstance(index.value, (int, str)):
            return self.opaque(base, f"[{index.value!r}]", f"{getattr(base, 'label', None) or 'value'}[{index.value!r}]")
        return self.unknown("subscript of an unknown value", label=self.text(node))

    def _mgrid(self, index: Value) -> Value:
        items = index.items if isinstance(index, TupleV) else (index,)
        out = []
        n = len(items)
        for axis, item in enumerate(items):
            if isinstance(item, SliceV):
                extent = int_binop(ast.Sub, item.stop, item.start if not _is_none(item.start) else Const(0))
                shape = tuple(extent if a == axis else Const(1) for a in range(n))
                out.append(IndexV(extent, shape, item.start if not _is_none(item.start) else Const(0)))
            else:
                out.append(self.unknown("mgrid index"))
        return TupleV(tuple(out))

    def _ev_Slice(self, node: ast.Slice, frame: Frame) -> Value:
        return SliceV(
            self.eval(node.lower, frame) if node.lower else Const(None),
            self.eval(node.upper, frame) if node.upper else Const(None),
            self.eval(node.step, frame) if node.step else Const(None),
            label=self.text(node),
        )

    def _ev_Tuple(self, node: ast.Tuple, frame: Frame) -> Value:
        return TupleV(self._elements(node.elts, frame), label=self.text(node))

    def _ev_List(self, node: ast.List, frame: Frame) -> Value:
        return TupleV(self._elements(node.elts, frame), label=self.text(node), is_list=True)

    def _ev_Set(self, node: ast.Set, frame: Frame) -> Value:
        return TupleV(self._elements(node.elts, frame))

    def _elements(self, elts: list[ast.expr], frame: Frame) -> tuple[Value, ...]:
        out: list[Value] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                items = _spread(self.eval(e.value, frame))
                if items is None:
                    return tuple(out) + (self.unknown("starred element"),)
                out.extend(items)
            else:
                out.append(self.eval(e, frame))
        return tuple(out)

    def _ev_Dict(self, node: ast.Dict, frame: Frame) -> Value:
        items: dict[Any, Value] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                other = self.eval(v, frame)
                if isinstance(other, DictV):
                    items.update(other.items)
                continue
            key = self.eval(k, frame)
            if isinstance(key, Const):
                try:
                    items[key.value] = self.eval(v, frame)
                except TypeError:
                    pass
        return DictV(items)

    def _ev_JoinedStr(self, node, frame) -> Value:
        return self.unknown("f-string")

    def _ev_Lambda(self, node: ast.Lambda, frame: Frame) -> Value:
        return FuncV(node, frame.module, closure=dict(frame.vars), qualname="<lambda>")

    def _ev_NamedExpr(self, node: ast.NamedExpr, frame: Frame) -> Value:
        value = self.eval(node.value, frame)
        self.assign(node.target, value, frame, node)
        return value

    def _ev_IfExp(self, node: ast.IfExp, frame: Frame) -> Value:
        value = self.eval(node.test, frame)
        self.scalar_condition(value, node.test)
        test = truth(value)
        if test is True:
            return self.eval(node.body, frame)
        if test is False:
            return self.eval(node.orelse, frame)
        results = []
        if self.graph is not None:
            self.graph.conditional_depth += 1
        try:
            for branch, polarity in ((node.body, True), (node.orelse, False)):
                mark = len(self.trail)
                saved = dict(frame.vars)
                guarded = self.push_guard(node.test, value, polarity)
                try:
                    self.learn(node.test, frame, polarity)
                    results.append(_freeze(self.eval(branch, frame)))
                finally:
                    if guarded:
                        self.graph.guard_stack.pop()
                frame.vars = saved
                self._undo(mark)
        finally:
            if self.graph is not None:
                self.graph.conditional_depth -= 1
        return self.merge(results[0], results[1], self.text(node))

    def _ev_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Value:
        values = [self.eval(v, frame) for v in node.values]
        for value, operand in zip(values[:-1], node.values):  # the last one is returned, not tested
            self.scalar_condition(value, operand)
        truths = [truth(v) for v in values]
        if isinstance(node.op, ast.And):
            for v, t in zip(values, truths):
                if t is False:
                    return v
                if t is None:
                    return self.unknown("boolean expression")
            return values[-1]
        for v, t in zip(values, truths):
            if t is True:
                return v
            if t is None:
                return self.unknown("boolean expression")
        return values[-1]

    def _ev_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Value:
        v = self.eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            self.scalar_condition(v, node.operand)
            t = truth(v)
            return Const(not t) if t is not None else self.unknown("not of unknown")
        if isinstance(node.op, ast.USub):
            if isinstance(v, Const) and isinstance(v.value, (int, float)):
                return Const(-v.value)
            b = int_bounds(v)
            if b is not None:
                return make_int(-b[1], -b[0])
            if isinstance(v, TensorV):
                return self._elementwise("nki.language.negative", [v], node, frame)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert) and isinstance(v, Const) and isinstance(v.value, int):
            return Const(~v.value)
        return self.unknown("unary operator")

    def _ev_Compare(self, node: ast.Compare, frame: Frame) -> Value:
        left = self.eval(node.left, frame)
        result: bool | None = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, frame)
            if isinstance(op, (ast.In, ast.NotIn)):
                r = _contains(right, left)
                r = None if r is None else (r if isinstance(op, ast.In) else not r)
            else:
                r = compare(type(op), left, right)
            if isinstance(left, ScalarV) or isinstance(right, ScalarV):
                self.scalar_int64_use("int64-compare", (left, right), node, _OP_TEXT.get(type(op), "comparison"))
                return _scalar_result(left, right, comparison=True)  # traced on the device
            if r is False:
                return Const(False)
            if r is None:
                result = None
            left = right
        # An undecided comparison is still 0 or 1 in arithmetic (n + (r > 0)).
        return Const(True) if result else Int(0, 1, label=self.text(node), reason="comparison")

    def _ev_BinOp(self, node: ast.BinOp, frame: Frame) -> Value:
        left = self.eval(node.left, frame)
        right = self.eval(node.right, frame)
        return self.binop(node.op, left, right, node, frame)

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST, frame: Frame) -> Value:
        # A parameter next to a tensor is a tensor; next to a number, a number.
        if isinstance(left, ParamTensor) and (isinstance(right, TensorV) or left.tensor is not None):
            left = self.materialize(left, node)
        if isinstance(right, ParamTensor) and (isinstance(left, TensorV) or right.tensor is not None):
            right = self.materialize(right, node)
        if isinstance(left, TensorV) or isinstance(right, TensorV):
            name = _BINOP_NAMES.get(type(op), "add")
            return self._elementwise(f"nki.language.{name}", [left, right], node, frame)
        if isinstance(left, IndexV) or isinstance(right, IndexV):
            return _index_arith(op, left, right)
        if isinstance(left, Const) and isinstance(right, Const):
            out = _py_binop(op, left.value, right.value)
            if out is not _NOPE:
                return Const(out)
        if isinstance(left, TupleV) and isinstance(right, TupleV) and isinstance(op, ast.Add):
            return TupleV(left.items + right.items, is_list=left.is_list)
        if isinstance(left, TupleV) and isinstance(op, ast.Mult):
            n = const_int(right)
            if n is not None and 0 <= n * len(left.items) <= 4096:
                return TupleV(left.items * n, is_list=left.is_list)
        if isinstance(left, ScalarV) or isinstance(right, ScalarV):
            if not isinstance(op, (ast.Add, ast.Sub, ast.Mult)):
                self.scalar_int64_use("int64-op", (left, right), node, _OP_TEXT.get(type(op), "this operation"))
            return _scalar_result(left, right)  # NkiScalar arithmetic is traced, not evaluated
        if isinstance(op, ast.Div):
            lb, rb = int_bounds(left), int_bounds(right)
            if lb is not None and rb is not None and rb[0] > 0 and lb[0] >= 0:
                d = const_int(right)
                quotient = (left, d) if d is not None and d > 0 and isinstance(left, (Int, Const)) else None
                return _FloatRange(lb[0] / rb[1] if rb[1] != INF else 0.0, lb[1] / rb[0] if lb[1] != INF else INF,
                                   quotient=quotient)
            return self.unknown("division")
        return int_binop(type(op), left, right, label=self.text(node))

    def _ev_ListComp(self, node: ast.ListComp, frame: Frame) -> Value:
        return self._comprehension(node, frame, is_list=True)

    def _ev_GeneratorExp(self, node, frame) -> Value:
        return self._comprehension(node, frame, is_list=True)

    def _ev_SetComp(self, node, frame) -> Value:
        return self._comprehension(node, frame, is_list=False)

    def _ev_DictComp(self, node, frame) -> Value:
        return self.unknown("dict comprehension")

    def _comprehension(self, node, frame: Frame, is_list: bool) -> Value:
        if len(node.generators) != 1 or node.generators[0].ifs:
            return self.unknown("complex comprehension")
        gen = node.generators[0]
        iterable = self.eval(gen.iter, frame)
        if isinstance(iterable, TupleV) and len(iterable.items) <= MAX_UNROLL and self.graph is None:
            inner = Frame(dict(frame.vars), frame.module, frame.func, frame.parent)
            out = []
            for item in iterable.items:
                self.assign(gen.target, item, inner, node)
                out.append(self.eval(node.elt, inner))
            return TupleV(tuple(out), is_list=is_list)
        kind, trip, element = self._iteration(iterable, gen.iter, frame)
        loop_id = None
        if self.graph is not None:
            loop_id = self.graph.add_node(
                "l", "loop", self.site(node), tuple(self.loops), loop_kind="comprehension", trip_v=trip,
                iterator=self.text(gen.target), function=frame.func, parent=self.loops[-1] if self.loops else None,
            )
            self.loops.append(loop_id)
        inner = Frame(dict(frame.vars), frame.module, frame.func, frame.parent)
        try:
            self.assign(gen.target, element, inner, node)
            if loop_id is not None and isinstance(element, Int) and element.sym is not None:
                self.graph.attrs(loop_id)["index_sym"] = element.sym
            elt = self.eval(node.elt, inner)
        finally:
            if loop_id is not None:
                self.loops.pop()
        n = const_int(trip)
        if n is not None and 0 <= n <= 256:
            return TupleV((elt,) * n, is_list=is_list)
        return _SeqV(elt, trip)

    def _ev_Starred(self, node, frame) -> Value:
        return self.eval(node.value, frame)

    def _ev_Await(self, node, frame) -> Value:
        return self.eval(node.value, frame)


def _ev_unsupported(self: ExpressionsMixin, node: ast.AST, frame: Frame) -> Value:
    return self.unknown(f"{type(node).__name__} expression", label=self.text(node))


# Method of the interpreter for each expression node type (filled on first use).
_EVAL_DISPATCH: dict[type, object] = {}
