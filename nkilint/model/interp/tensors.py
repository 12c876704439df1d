"""Tensors in the abstract interpreter: parameters, allocations, views,
ops and legacy returned tiles, as kernel-graph nodes."""

from __future__ import annotations

import ast

from .. import api_semantics as api
from ..graph import bytes_per_partition
from .helpers import _SCALAR_PARAMS, _TENSOR_ONLY_PARAMS, _axes, _broadcast, _buffer_name, _slice_size
from .state import _TensorMethod, ArrayV, Frame, ParamTensor, ShapeV, _Placement, _TensorWithShapeObj
from ..values import (
    ApiRef,
    Const,
    DType,
    DsV,
    IndexV,
    ParDimV,
    SliceV,
    TensorV,
    TupleV,
    Unknown,
    Value,
    const_int,
    int_bounds,
    truth,
)


class TensorsMixin:
    """Tensors: parameters materialised on use, allocations, views, ops and
    the tiles legacy calls return.

    Part of :class:`~nkilint.model.interp.Interpreter`."""

    def materialize(self, param: ParamTensor, node: ast.AST) -> TensorV:
        """Turn a parameter into a tensor node the first time it is used as one."""
        if param.tensor is not None:
            return param.tensor
        shape_obj = ShapeV(param.name)
        shape = param.annotation_shape
        dtype = param.annotation_dtype or Unknown(f"dtype of {param.name}", label=f"{param.name}.dtype")
        node_id = ""
        if self.graph is not None:
            node_id = self.graph.add_node(
                "t", "tensor", self.site(param.node if param.node is not None else node), (), name=param.name, buffer=param.buffer, dtype=None,
                dtype_v=dtype if param.annotation_dtype is not None else Unknown(f"dtype of {param.name}"), shape_v=shape, shape_obj=shape_obj, origin="param",
                api=None, partition_axis=0, address=None, function=self._frame.func if getattr(self, "_frame", None) else "",
                bytes_v=Unknown("parameter"),
            )
        param.tensor = TensorV(node_id, node_id, shape, dtype, param.buffer, label=param.name)
        if shape is None:
            # shape known lazily through ShapeV when unpacked / indexed
            param.tensor = _TensorWithShapeObj(node_id, node_id, None, param.tensor.dtype, param.buffer, label=param.name,
                                               shape_obj=shape_obj)
        return param.tensor

    def _shape_tuple(self, value: Value) -> tuple[tuple[Value, ...] | None, int]:
        """A shape argument as a tuple of dims, and the partition axis (par_dim)."""
        if isinstance(value, TupleV):
            items = list(value.items)
        elif isinstance(value, ShapeV):
            if value.rank is None:
                return None, 0
            items = list(value.fix_rank(value.rank))
        elif int_bounds(value) is not None and not isinstance(value, ParamTensor):
            items = [value]
        else:
            return None, 0
        if isinstance(value, TupleV) and value.inexact:
            return None, 0
        axis = 0
        dims: list[Value] = []
        for i, item in enumerate(items):
            if isinstance(item, ParDimV):
                axis = i
                dims.append(item.size)
            else:
                dims.append(item)
        return tuple(dims), axis

    def _arg(self, info: api.ApiInfo, args, kwargs, name: str, index: int | None = None) -> Value | None:
        """An argument by parameter name (positional index from the API table)."""
        if name in kwargs:
            return kwargs[name]
        pos = self._param_index(info.name, name) if index is None else index
        if pos is not None and pos < len(args):
            return args[pos]
        return None

    def _table(self):
        """The API table that gives this file's call signatures."""
        from ..apitable import api_for, legacy_api
        from ...versions import V0_6

        if self.legacy:
            return legacy_api()
        # A current-namespace file checked against --nki-version 0.1 is still
        # written dst-first: bind its calls with the newest table.
        return api_for(V0_6 if self.version.is_legacy else self.version)

    def _param_index(self, canonical: str, param: str) -> int | None:
        from ..apitable import legacy_api

        table = self._table()
        sig = table.signature(canonical)
        if sig is None and not self.legacy:
            sig = legacy_api().signature(canonical)
        if sig is None or sig.params is None:
            return None
        for i, p in enumerate(sig.positional):
            if p.name == param:
                return i
        return None

    def allocate(self, info: api.ApiInfo, args, kwargs, node: ast.Call, frame: Frame) -> Value:
        style = api.ALLOCATIONS[info.short]
        like: Value | None = None
        dtype: Value | None = None
        # The rank comes from a parameter's use (x.shape unpacked somewhere),
        # not from the code that allocates: not exact.
        rank_inferred = False
        if style == "like":
            like = args[0] if args else kwargs.get("a", kwargs.get("x"))
            if isinstance(like, ParamTensor):
                like = self.materialize(like, node)
            shape = self.shape_of(like) if isinstance(like, TensorV) else None
            axis = like.partition_axis if isinstance(like, TensorV) else 0
            rank_inferred = isinstance(like, _TensorWithShapeObj)
            dtype = self._arg(info, args, kwargs, "dtype")
            if dtype is None or (isinstance(dtype, Const) and dtype.value is None):
                dtype = like.dtype if isinstance(like, TensorV) else self.unknown("dtype")
        elif style == "identity":
            n = args[0] if args else kwargs.get("n", self.unknown("identity size"))
            shape, axis = (n, n), 0
            dtype = kwargs.get("dtype", args[1] if len(args) > 1 else self.unknown("dtype"))
        elif style == "const":
            # shared_constant(array_or_file): an HBM tensor (aws-neuron-sdk stub).
            const = args[0] if args else kwargs.get("constant")
            shape = const.shape if isinstance(const, ArrayV) else None
            axis = 0
            dtype = kwargs.get("dtype", const.dtype if isinstance(const, ArrayV) else self.unknown("dtype"))
        else:
            shape_arg = self._arg(info, args, kwargs, "shape", 0)
            shape, axis = self._shape_tuple(shape_arg) if shape_arg is not None else (None, 0)
            rank_inferred = isinstance(shape_arg, ShapeV)
            dtype = self._arg(info, args, kwargs, "dtype")
            if dtype is None and info.short == "full":
                dtype = self._arg(info, args, kwargs, "dtype", 2)
        if dtype is None:
            dtype = self.unknown("dtype")
        buffer_v = self._arg(info, args, kwargs, "buffer")
        buffer = _buffer_name(buffer_v)
        if buffer_v is None or (isinstance(buffer_v, Const) and buffer_v.value is None):
            # Every allocation API defaults to SBUF (nki.language stubs), except
            # shared_constant, which lives in shared HBM.
            buffer = "shared_hbm" if style == "const" or (style == "identity" and self.legacy) else "sbuf"
        shape_obj = None
        if shape is None and style != "const":
            shape_arg = like.shape_obj if isinstance(like, _TensorWithShapeObj) else (
                self._arg(info, args, kwargs, "shape", 0) if style == "shape" else None)
            if isinstance(shape_arg, ShapeV):
                shape_obj = shape_arg  # rank unknown yet: shares the source's dims
        address = kwargs.get("address")
        if isinstance(buffer_v, _Placement):
            address = buffer_v
        if isinstance(dtype, Const) and isinstance(dtype.value, str):
            dtype = DType(dtype.value)
        node_id = ""
        if self.graph is not None:
            node_id = self.graph.add_node(
                "t", "tensor", self.site(node), tuple(self.loops), name=None, buffer=buffer,
                dtype=dtype.name if isinstance(dtype, DType) else None, dtype_v=dtype, shape_v=shape,
                origin="alloc", api=info.name, partition_axis=axis, address=address, function=frame.func,
                bytes_v=bytes_per_partition(shape, dtype, axis), call=node, shape_obj=shape_obj,
                rank_inferred=rank_inferred or shape_obj is not None,
                fill_v=(self._arg(info, args, kwargs, "fill_value", 1) if info.short == "full"
                        else Const(0) if info.short == "zeros" else Const(1) if info.short == "ones" else None),
            )
        if shape_obj is not None:
            return _TensorWithShapeObj(node_id, node_id, None, dtype, buffer, label=None, shape_obj=shape_obj)
        return TensorV(node_id, node_id, shape, dtype, buffer, label=None, partition_axis=axis)

    def view(self, base: TensorV, index: Value, node: ast.AST, frame: Frame) -> Value:
        items = list(index.items) if isinstance(index, TupleV) and not index.is_list else [index]
        shape = base.shape
        if shape is None and isinstance(base, _TensorWithShapeObj) and base.shape_obj is not None:
            obj = base.shape_obj
            if obj.rank is not None:
                shape = obj.fix_rank(obj.rank)
            elif all(isinstance(x, (SliceV, DsV, IndexV)) for x in items) or (
                len(items) >= 2 and not any(isinstance(x, Const) and x.value is Ellipsis for x in items)
            ):
                # Rank unknown: ranges name the leading dims; a multi-item index
                # is taken to name every dim (a single integer index, `x[i]` on
                # a batch of tiles, leaves the rest unknown).
                shape = tuple(obj.dim(i) for i in range(len(items)))
        new_shape: list[Value] | None = []
        on_chip = base.buffer in ("sbuf", "psum")
        if shape is None:
            new_shape = None
        else:
            ellipsis = next((i for i, x in enumerate(items) if isinstance(x, Const) and x.value is Ellipsis), None)
            if ellipsis is not None:
                fill = len(shape) - (len(items) - 1)
                items = items[:ellipsis] + [SliceV(Const(None), Const(None), Const(None))] * max(fill, 0) + items[ellipsis + 1:]
            axis = 0
            index_shapes: list[tuple[Value, ...]] = []
            for item in items:
                if isinstance(item, Const) and item.value is None:
                    new_shape.append(Const(1))
                    continue
                if axis >= len(shape):
                    new_shape.append(self.unknown("index past the tensor's rank"))
                    axis += 1
                    continue
                dim = shape[axis]
                if isinstance(item, SliceV):
                    new_shape.append(_slice_size(item, dim))
                elif isinstance(item, DsV):
                    new_shape.append(item.size)
                elif isinstance(item, IndexV):
                    index_shapes.append(item.axis_shape)
                    new_shape.append(item.extent)
                elif int_bounds(item) is not None:
                    if on_chip and axis == base.partition_axis:
                        new_shape.append(Const(1))
                    # an integer index drops the dimension
                elif isinstance(item, (TensorV, ParamTensor)):
                    new_shape.append(self.unknown("indirect index"))
                else:
                    new_shape.append(self.unknown("dynamic index", label=self.text(node)))
                axis += 1
            for rest in shape[axis:]:
                new_shape.append(rest)
            scalars = [x for x in items if not isinstance(x, IndexV)]
            if index_shapes and all(int_bounds(x) is not None for x in scalars) and len(index_shapes) + len(scalars) == len(items):
                # Legacy advanced indexing: the broadcast shape of the index
                # tensors (an integer next to them is a 0-d index: NumPy rules).
                rank = max(len(s) for s in index_shapes)
                broadcast: list[Value] = []
                for d in range(rank):
                    dim_v: Value = Const(1)
                    for s in index_shapes:
                        if d < len(s) and const_int(s[d]) != 1:
                            dim_v = s[d]
                    broadcast.append(dim_v)
                new_shape = broadcast + list(shape[axis:])
        view_id = ""
        if self.graph is not None:
            view_id = self.graph.add_node(
                "v", "view", self.site(node), tuple(self.loops), name=base.label, buffer=base.buffer,
                dtype=self.graph.attrs(base.tensor_id).get("dtype"), index=self.text(getattr(node, "slice", node)),
                shape_v=tuple(new_shape) if new_shape is not None else None, function=frame.func, index_v=items,
            )
            self.graph.add_edge(view_id, base.node_id, "view_of")
        return TensorV(view_id, base.tensor_id, tuple(new_shape) if new_shape is not None else None, base.dtype,
                       base.buffer, label=base.label, partition_axis=0 if base.partition_axis and new_shape is not None else base.partition_axis)

    def tensor_method(self, method: "_TensorMethod", args, kwargs, node, frame) -> Value:
        base = method.tensor
        if method.name == "reshape":
            shape_arg = args[0] if len(args) == 1 else TupleV(tuple(args))
            shape, _ = self._shape_tuple(shape_arg)
            return self._derived_view(base, shape, node, frame, "reshape")
        if method.name in ("view", "bitcast", "reinterpret_cast", "with_dtype"):
            dtype = args[0] if args else kwargs.get("dtype", base.dtype)
            out = self._derived_view(base, base.shape, node, frame, method.name)
            if isinstance(out, TensorV):
                out.dtype = dtype
            return out
        if method.name == "ap":
            # .ap(pattern=[[stride, count], ...]): the counts are the view's shape.
            pattern = kwargs.get("pattern", args[0] if args else None)
            shape = None
            if isinstance(pattern, TupleV) and not pattern.inexact and all(
                isinstance(p, TupleV) and len(p.items) == 2 for p in pattern.items
            ):
                shape = tuple(p.items[1] for p in pattern.items)
            out = self._derived_view(base, shape, node, frame, "ap")
            if isinstance(out, TensorV) and "dtype" in kwargs:
                out.dtype = kwargs["dtype"]
            if self.graph is not None and isinstance(out, TensorV) and out.node_id:
                self.graph.attrs(out.node_id)["ap_v"] = {k: v for k, v in kwargs.items()}
                if args:
                    self.graph.attrs(out.node_id)["ap_v"].setdefault("pattern", args[0])
            return out
        return self._derived_view(base, None, node, frame, method.name)

    def _derived_view(self, base: TensorV, shape, node, frame, what: str) -> Value:
        view_id = ""
        if self.graph is not None:
            view_id = self.graph.add_node(
                "v", "view", self.site(node), tuple(self.loops), name=base.label, buffer=base.buffer,
                dtype=self.graph.attrs(base.tensor_id).get("dtype"), index=f".{what}(...)",
                shape_v=tuple(shape) if shape is not None else None, function=frame.func,
            )
            self.graph.add_edge(view_id, base.node_id, "view_of")
        return TensorV(view_id, base.tensor_id, tuple(shape) if shape is not None else None, base.dtype, base.buffer, label=base.label)

    @staticmethod
    def shape_of(t: TensorV) -> tuple[Value, ...] | None:
        """A tensor's shape, including a parameter's once its rank is known."""
        if t.shape is None and isinstance(t, _TensorWithShapeObj) and t.shape_obj is not None and t.shape_obj.rank is not None:
            return t.shape_obj.fix_rank(t.shape_obj.rank)
        return t.shape

    def _elementwise(self, name: str, operands: list[Value], node, frame) -> Value:
        info = api.classify(name) or api.ApiInfo(name, "nki.language", name.rsplit(".", 1)[-1], "compute", api.ENGINE_ANY)
        return self.operation(info, operands, {}, node, frame, operator=True)

    def operation(self, info: api.ApiInfo, args, kwargs, node, frame: Frame, operator: bool = False) -> Value:
        """One op node: reads every tensor argument, writes dst-like ones; a
        legacy call (or an nl.* call without dst) returns a new tile."""
        params = self._bind_call(info, args, kwargs)
        reads: list[tuple[str, Value]] = []
        writes: list[tuple[str, Value]] = []
        for pname, value in params:
            if isinstance(value, ParamTensor):
                if pname in _SCALAR_PARAMS or pname.endswith("_op") or pname.startswith(("op", "is_", "comp_op")):
                    continue  # an op, dtype, flag... never a tensor operand
                if (pname not in _TENSOR_ONLY_PARAMS and value.tensor is None
                        and value.name not in self._tensor_params):
                    continue  # y / scale / operand0 may be a Python scalar
                value = self.materialize(value, node)
            if isinstance(value, TupleV):
                tensors = [v for v in value.items if isinstance(v, (TensorV, ParamTensor))]
                for t in tensors:
                    t = self.materialize(t, node) if isinstance(t, ParamTensor) else t
                    (writes if pname in api.OUTPUT_PARAMS else reads).append((pname, t))
                continue
            if not isinstance(value, TensorV):
                continue
            if pname in api.OUTPUT_PARAMS or (info.short == "store" and pname == "dst"):
                writes.append((pname, value))
                if info.short == "dma_compute" or pname == "dst" and info.short in ("tensor_copy_predicated",):
                    reads.append((pname, value))
            else:
                reads.append((pname, value))
        # A legacy call returns its result tile; so do nl.* calls without dst.
        # Current nki.isa calls write dst and return nothing.
        returns_tile = (
            not writes
            and info.kind in ("compute", "matmul", "transpose", "dma")
            and info.short not in ("store", "dma_copy", "dma_compute", "dma_transpose", "sendrecv")
            and (self.legacy or info.module == "nki.language")
        )
        engine = info.engine
        engine_arg = kwargs.get("engine")
        if isinstance(engine_arg, ApiRef):
            engine_name = engine_arg.qual.name.rsplit(".", 1)[-1]
            if engine_name.endswith("_engine"):
                engine_name = engine_name[: -len("_engine")]
            if engine_name in ("tensor", "vector", "scalar", "gpsimd", "sync", "dma"):
                engine = engine_name
        result: Value = Const(None)
        extra = {"operator": True} if operator else {}
        op_id = self._record_op(info.name, node, frame, reads=reads, writes=writes, engine=engine, extra=extra,
                                params=params)
        if returns_tile:
            result = self._result_tile(info, params, reads, node, frame, engine)
            if self.graph is not None and isinstance(result, TensorV):
                self.graph.add_edge(op_id, result.node_id, "writes", param="result")
                self.graph.attrs(op_id)["legacy_result"] = result.node_id
        return result

    def _bind_call(self, info: api.ApiInfo, args, kwargs) -> list[tuple[str, Value]]:
        from ..apitable import api_for, legacy_api

        table = self._table()
        sig = table.signature(info.name) or (legacy_api().signature(info.name) if not self.legacy else api_for(self.version).signature(info.name))
        out: list[tuple[str, Value]] = []
        positional = sig.positional if sig is not None and sig.params is not None else []
        for i, value in enumerate(args):
            name = positional[i].name if i < len(positional) else f"arg{i}"
            out.append((name, value))
        out.extend(kwargs.items())
        return out

    def _record_op(self, api_name: str, node, frame: Frame, reads, writes, engine: str, extra=None, params=None) -> str:
        if self.graph is None:
            return ""
        op_id = self.graph.add_node(
            "o", "op", self.site(node), tuple(self.loops), api=api_name, engine=engine, function=frame.func,
            params_v=dict(params or []), call=node, **(extra or {}),
        )
        for pname, value in reads:
            if isinstance(value, TensorV) and value.node_id:
                self.graph.add_edge(value.node_id, op_id, "reads", param=pname)
        for pname, value in writes:
            if isinstance(value, TensorV) and value.node_id:
                self.graph.add_edge(op_id, value.node_id, "writes", param=pname)
        return op_id

    def _result_tile(self, info: api.ApiInfo, params, reads, node, frame, engine) -> Value:
        """The tile a legacy call returns: shape and buffer by the op's kind."""
        named = dict(params)
        tensors = [v for _, v in reads if isinstance(v, TensorV)]
        shape: tuple[Value, ...] | None = None
        dtype: Value = named.get("dtype") if isinstance(named.get("dtype"), DType) else (tensors[0].dtype if tensors else self.unknown("dtype"))
        buffer = api.legacy_result_buffer(info, engine)
        tensors_shapes = [self.shape_of(t) for t in tensors]
        if info.short in ("load", "load_transpose2d"):
            src = named.get("src") or (tensors[0] if tensors else None)
            src_shape = self.shape_of(src) if isinstance(src, TensorV) else None
            if src_shape is not None:
                shape = src_shape if info.short == "load" else tuple(reversed(src_shape)) if len(src_shape) == 2 else src_shape
            buffer = "sbuf"
            if isinstance(src, TensorV):
                dtype = named.get("dtype") if isinstance(named.get("dtype"), DType) else src.dtype
        elif info.kind == "matmul":
            if info.short == "matmul":
                x, y = named.get("x"), named.get("y")
                transpose_x = truth(named.get("transpose_x", Const(False)))
                if isinstance(x, TensorV) and isinstance(y, TensorV) and x.shape and y.shape and len(x.shape) >= 2 and len(y.shape) >= 2:
                    m = x.shape[1] if transpose_x else x.shape[0]
                    shape = (m, y.shape[-1])
            else:
                st, mv = named.get("stationary"), named.get("moving")
                if isinstance(st, TensorV) and isinstance(mv, TensorV) and st.shape and mv.shape and len(st.shape) >= 2 and len(mv.shape) >= 2:
                    shape = (st.shape[-1], mv.shape[-1])
            dtype = DType("float32")
        elif info.kind == "transpose":
            src = named.get("data") or named.get("x") or (tensors[0] if tensors else None)
            if isinstance(src, TensorV) and src.shape is not None and len(src.shape) == 2:
                shape = (src.shape[1], src.shape[0])
        elif info.short in api.LANGUAGE_REDUCTIONS or info.short in ("tensor_reduce",):
            src = named.get("x") or named.get("data") or (tensors[0] if tensors else None)
            axis = named.get("axis")
            keep = truth(named.get("keepdims", Const(False)))
            if isinstance(src, TensorV) and src.shape is not None:
                axes = _axes(axis, len(src.shape))
                if axes is not None:
                    shape = tuple(
                        (Const(1) if keep else None) if i in axes else d for i, d in enumerate(src.shape)
                    )
                    shape = tuple(d for d in shape if d is not None)
                    if len(shape) == 1:
                        shape = shape + (Const(1),)
        elif info.short == "memset" and named.get("shape") is not None:
            shape, _ = self._shape_tuple(named["shape"])  # legacy nisa.memset(shape, value, dtype)
        elif info.short == "iota" and isinstance(named.get("expr"), IndexV):
            shape = named["expr"].axis_shape  # legacy nisa.iota(expr, dtype)
        elif info.short == "broadcast_to":
            target = named.get("shape")
            shape, _ = self._shape_tuple(target) if target is not None else (None, 0)
        elif tensors:
            shape = _broadcast(tensors_shapes)
        explicit = named.get("dtype")
        if explicit is not None and not (isinstance(explicit, Const) and explicit.value is None):
            dtype = explicit  # dtype= given: the result has it, known or not
        node_id = ""
        if self.graph is not None:
            node_id = self.graph.add_node(
                "t", "tensor", self.site(node), tuple(self.loops), name=None, buffer=buffer,
                dtype=dtype.name if isinstance(dtype, DType) else None, dtype_v=dtype, shape_v=shape, origin="result",
                api=info.name, partition_axis=0, address=None, function=frame.func,
                bytes_v=bytes_per_partition(shape, dtype, 0), call=node,
            )
        return TensorV(node_id, node_id, shape, dtype, buffer)
