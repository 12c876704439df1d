"""The NKI 0.7 / 0.8 APIs in the abstract interpreter: device scalars, tile
and block grids, ``nl.if_else`` and the split prepare/trigger collectives.

* ``nisa.scalar_load(src)`` reads ``src`` and gives a ``ScalarV`` (a device
  value, like a register); ``nisa.scalar_store(dst, value)`` writes ``dst``.
* ``nl.tiles`` / ``nl.blocks`` view a tensor (or a grid selection) in tile
  or block coordinates; ``nl.alloc_tiles`` / ``alloc_blocks`` allocate one
  backing tensor (the logical extent in HBM; in SBUF/PSUM a rank-two layout
  of the tile's partition extent by every tile's free elements, as the API
  pages describe). Indexing a grid gives a grid; ``.data`` is the tensor
  operand of the selection (a view), exact when the selection is, unknown
  where the docs' layout cannot be followed statically.
* ``nl.if_else(cond, then_fn, else_fn)``: a Python condition picks its
  callback at compile time; a device condition runs both (in order).
* ``*_prepare`` reads only its metadata tensor and returns the instruction;
  ``*_trigger(prepare)`` is the collective itself, with the prepare's
  arguments.

Sources: the ``/en/latest/nki/api/generated/`` pages of nki.isa.scalar_load,
nki.language.tiles, alloc_tiles, NkiTileGrid, if_else and
nki.collectives.all_to_all_v_prepare (https://awsdocs-neuron.readthedocs-hosted.com).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import api_semantics as api
from ..bindings import Qual
from ..graph import GridAllocIssue, PreparedCollective, ScalarMisuse, SplitCollectiveIssue
from ..values import (
    BufferV,
    Const,
    DType,
    FuncV,
    ScalarV,
    SliceV,
    TensorV,
    TupleV,
    Unknown,
    Value,
    const_int,
    int_binop,
    truth,
)
from .state import Frame, ParamTensor, _TensorWithShapeObj


@dataclass(eq=False)
class GridDim:
    offset: Value  # first selected element of the source dimension
    extent: Value  # selected elements
    step: Value  # elements per grid coordinate (a tile, a block, or 1 for untiled dims)
    consumed: bool = False  # an integer index took this coordinate


@dataclass(eq=False)
class GridV(Value):
    """An ``NkiTileGrid`` / ``NkiBlockGrid``: a selection of ``tensor`` in
    tile (or block) coordinates. ``layout`` is ``view`` (over an existing
    tensor or an HBM allocation: the selection is a plain slice) or
    ``onchip`` (an SBUF/PSUM allocation in the rank-two tile layout)."""

    kind: str  # tiles, blocks
    tensor: Value
    tile_shape: tuple[Value, ...]
    block_shape: tuple[Value, ...] | None
    dims: tuple[GridDim, ...] | None  # None: a tensor of unknown rank (every selection is unknown)
    layout: str
    label: str | None = None

    def __repr__(self) -> str:
        return f"GridV({self.kind})"


@dataclass(eq=False)
class InstructionV(Unknown):
    """The ``NkiInstruction`` a ``*_prepare`` collective returns."""

    reason: str = "collective instruction"
    api: str = ""
    params: tuple[tuple[str, Value], ...] = ()  # the prepare's arguments, by parameter name
    record: PreparedCollective | None = None  # the graph's record of the prepare (None outside a kernel graph)


def _shape_items(value: Value | None) -> tuple[Value, ...] | None:
    if isinstance(value, TupleV) and not value.inexact:
        return tuple(value.items)
    return None


def _known_shape(tensor: TensorV) -> tuple[Value, ...] | None:
    """The shape, or the dims of a parameter whose rank an assert or an
    unpacking fixed (``assert x.shape == (512, 1024)``)."""
    if tensor.shape is not None:
        return tensor.shape
    obj = tensor.shape_obj if isinstance(tensor, _TensorWithShapeObj) else None
    if obj is not None and obj.rank is not None:
        return obj.fix_rank(obj.rank)
    return None


def _ceil_div(a: Value, b: Value) -> Value:
    ca, cb = const_int(a), const_int(b)
    if ca is not None and cb:
        return Const(-(-ca // cb))
    return Unknown("tile count")


class TracerApisMixin:
    """NKI 0.7/0.8 calls, grid attributes and grid indexing.

    Part of :class:`~nkilint.model.interp.Interpreter`."""


    # -- device scalars used as NKI rejects ---------------------------------
    # Sources: https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.scalar_alu.html
    # (a comparison's result "cannot be used as a Python if or while
    # condition"; nl.int64 "supports only add, subtract and multiply"),
    # .../nki.isa.NkiScalar.html (int64 comparisons "rejected at compile
    # time") and .../nki.language.fori_loop.html ("A bound must be 32-bit").
    def scalar_condition(self, value: Value, node: ast.AST) -> None:
        """``value`` decides a Python branch (if, while, a ternary, and/or,
        not, bool())."""
        # Only a comparison's result: the docs say it is no Python condition;
        # of a plain scalar's truth they say nothing.
        if isinstance(value, ScalarV) and value.comparison and self.graph is not None:
            self.graph.scalar_misuses.append(ScalarMisuse("condition", self.site(node), value.dtype,
                                                          conditional=self.graph.conditional_depth > 0))

    def scalar_int64_use(self, kind: str, values: tuple[Value, ...], node: ast.AST, detail: str = "") -> None:
        """A comparison, an operation other than +, - and *, or a fori_loop
        bound on a 64-bit scalar."""
        if self.graph is None:
            return
        for value in values:
            if isinstance(value, ScalarV) and value.dtype == "int64":
                self.graph.scalar_misuses.append(ScalarMisuse(kind, self.site(node), "int64", detail,
                                                              self.graph.conditional_depth > 0))
                return

    def tracer_call(self, qual: Qual, args, kwargs, node: ast.Call, frame: Frame) -> Value | None:
        """The value of an NKI 0.7/0.8 call, or None when it is not one."""
        module, _, short = qual.name.rpartition(".")
        if module == "nki.language":
            if short == "if_else":
                return self._if_else(args, kwargs, node)
            if short in api.GRID_VIEWS:
                return self._grid_view(short, args, kwargs, node, frame)
            if short in api.GRID_ALLOCATIONS:
                return self._grid_alloc(short, kwargs, node, frame)
        if module == "nki.isa" and short in api.SCALAR_OPS:
            info = api.classify(qual.name)
            self.operation(info, args, kwargs, node, frame)
            if short == "scalar_store":
                return Const(None)
            src = args[0] if args else kwargs.get("src")
            dtype = src.dtype.name if isinstance(src, TensorV) and isinstance(src.dtype, DType) else None
            return ScalarV(label=self.text(node), dtype=dtype)
        if module == "nki.collectives" and short.endswith(("_prepare", "_trigger")):
            return self._split_collective(qual.name, short, args, kwargs, node, frame)
        return None

    # -- if_else ----------------------------------------------------------
    def _if_else(self, args, kwargs, node) -> Value:
        cond = args[0] if args else kwargs.get("cond")
        then_fn = args[1] if len(args) > 1 else kwargs.get("then_fn")
        else_fn = args[2] if len(args) > 2 else kwargs.get("else_fn")
        decided = None if isinstance(cond, (ScalarV, Unknown)) or cond is None else truth(cond)
        # A device condition runs one callback of the two; the split
        # collectives do not pair calls across them (they may be exclusive).
        exclusive = decided is None and self.graph is not None
        if exclusive:
            self.graph.device_branch_depth += 1
        try:
            for fn, taken in ((then_fn, decided is not False), (else_fn, decided is not True)):
                if taken and isinstance(fn, FuncV):
                    self.call_function(fn, [], {}, node)
        finally:
            if exclusive:
                self.graph.device_branch_depth -= 1
        return Const(None)

    # -- grids --------------------------------------------------------------
    def _grid_view(self, short: str, args, kwargs, node, frame: Frame) -> Value:
        source = args[0] if args else kwargs.get("source")
        if isinstance(source, ParamTensor):
            source = self.materialize(source, node)
        tile_shape = _shape_items(kwargs.get("tile_shape"))
        block_shape = _shape_items(kwargs.get("block_shape")) if short == "blocks" else None
        if isinstance(source, GridV) and source.dims is None:
            return GridV(short, source.tensor, tile_shape or source.tile_shape, block_shape, None, source.layout,
                         label=self.text(node))
        if isinstance(source, GridV):
            tensor, layout = source.tensor, source.layout
            dims = [GridDim(d.offset, d.extent, Const(1)) for d in source.dims]
            tile_shape = tile_shape or source.tile_shape
        elif isinstance(source, TensorV) and _known_shape(source) is not None:
            tensor, layout = source, "view"
            dims = [GridDim(Const(0), extent, Const(1)) for extent in _known_shape(source)]
        elif isinstance(source, TensorV):
            # Rank unknown (a kernel parameter): selections are views of unknown shape.
            return GridV("tiles" if short == "tiles" else "blocks", source, tile_shape or (), block_shape, None, "view",
                         label=self.text(node))
        else:
            return self.unknown(f"nl.{short} of an unknown tensor")
        if tile_shape is None:
            tile_shape = tuple(d.extent for d in dims[-2:])
        return self._make_grid(short, tensor, tile_shape, block_shape, dims, layout, node)

    def _grid_alloc(self, short: str, kwargs, node, frame: Frame) -> Value:
        tile_shape = _shape_items(kwargs.get("tile_shape"))
        element_shape = _shape_items(kwargs.get("element_shape"))
        block_shape = _shape_items(kwargs.get("block_shape")) if short == "alloc_blocks" else None
        self._check_grid_alloc(short, kwargs, tile_shape, element_shape, block_shape, node)
        buffer_v = kwargs.get("buffer")
        on_chip = isinstance(buffer_v, BufferV) and buffer_v.name in ("sbuf", "psum")
        if element_shape is None or tile_shape is None or not 2 <= len(tile_shape) <= len(element_shape):
            backing_shape: Value = self.unknown("grid allocation shape")
        elif on_chip:
            # Rank two: a tile's partition extent by every tile's free elements.
            tiled = element_shape[-len(tile_shape):]
            count: Value = Const(1)
            for extent, tile in zip(tiled, tile_shape):
                count = int_binop(ast.Mult, count, _ceil_div(extent, tile))
            free: Value = Const(1)
            for tile in tile_shape[1:]:
                free = int_binop(ast.Mult, free, tile)
            for extent in element_shape[: -len(tile_shape)]:
                free = int_binop(ast.Mult, free, extent)
            backing_shape = TupleV((tile_shape[0], int_binop(ast.Mult, count, free)))
        else:
            backing_shape = TupleV(element_shape)
        alloc_kwargs = {k: v for k, v in kwargs.items() if k in ("dtype", "buffer", "address", "name")}
        tensor = self.allocate(api.classify("nki.language.ndarray"), [backing_shape], alloc_kwargs, node, frame)
        if element_shape is None or tile_shape is None:
            return self.unknown(f"nl.{short} of unknown shape")
        dims = [GridDim(Const(0), extent, Const(1)) for extent in element_shape]
        return self._make_grid("tiles" if short == "alloc_tiles" else "blocks", tensor, tile_shape, block_shape, dims,
                               "onchip" if on_chip else "view", node)

    # Sources: the /en/latest/nki/api/generated/ pages of nki.language.alloc_tiles
    # (TypeError "if a shape is not a tuple of exact Python integers";
    # ValueError "if a shape entry is nonpositive, tile_shape has fewer than
    # two dimensions or greater rank than element_shape") and alloc_blocks
    # (tile_shape "must have at least two dimensions"; block_shape "Its rank
    # must equal tile_shape"; positive entries).
    def _loop_pairing(self, name: str, record: PreparedCollective, site, conditional: bool) -> None:
        """A prepare and its trigger in different loops: the loop the
        interpreter ran once repeats one of the two on every iteration."""
        graph = self.graph
        here = tuple(self.loops)
        for kind, loops, where in (("loop-prepare", [x for x in record.loops if x not in here], record.site),
                                   ("loop-trigger", [x for x in here if x not in record.loops], site)):
            trips = [const_int(graph.attrs(x).get("trip_v")) for x in loops]
            if not trips or any(t is not None and t <= 1 for t in trips):
                continue  # no loop between them, or one that runs at most once
            always = all(t is not None for t in trips) and not (conditional or record.conditional)
            graph.split_collective_issues.append(SplitCollectiveIssue(kind, where, name, "", record, always))

    def _check_grid_alloc(self, short: str, kwargs, tile_shape, element_shape, block_shape, node) -> None:
        graph = self.graph
        if graph is None:
            return
        found: list[tuple[str, str]] = []
        shapes = {"tile_shape": tile_shape, "element_shape": element_shape, "block_shape": block_shape}
        for param, items in shapes.items():
            raw = kwargs.get(param)
            # Only alloc_tiles's page says a list raises; alloc_blocks's is silent.
            if short == "alloc_tiles" and isinstance(raw, TupleV) and raw.is_list:
                found.append(("not-a-tuple", param))
            for i, item in enumerate(items or ()):
                value = const_int(item)
                if value is not None and value <= 0:
                    found.append(("nonpositive", f"{param}[{i}] = {value}"))
        if tile_shape is not None and len(tile_shape) < 2:
            found.append(("tile-rank", str(len(tile_shape))))
        elif tile_shape is not None and element_shape is not None and len(tile_shape) > len(element_shape):
            found.append(("tile-over-element", f"{len(tile_shape)} > {len(element_shape)}"))
        if block_shape is not None and tile_shape is not None and len(block_shape) != len(tile_shape):
            found.append(("block-rank", f"{len(block_shape)} != {len(tile_shape)}"))
        for kind, detail in found:
            graph.grid_alloc_issues.append(GridAllocIssue(kind, self.site(node), f"nki.language.{short}", detail,
                                                          graph.conditional_depth > 0))

    def _make_grid(self, kind, tensor, tile_shape, block_shape, dims, layout, node) -> GridV:
        tiled = len(tile_shape)
        for i, dim in enumerate(dims[-tiled:] if tiled <= len(dims) else ()):
            step = tile_shape[i]
            if block_shape is not None and i < len(block_shape):
                step = int_binop(ast.Mult, step, block_shape[i])
            dim.step = step
        return GridV(kind, tensor, tuple(tile_shape), tuple(block_shape) if block_shape else None, tuple(dims), layout,
                     label=self.text(node))

    def grid_attribute(self, grid: GridV, attr: str, node, frame: Frame) -> Value:
        if attr == "data":
            return self._grid_data(grid, node, frame)
        if attr == "tile_shape" and grid.tile_shape:
            return TupleV(grid.tile_shape)
        if grid.dims is None:
            if attr in ("dtype", "buffer") and isinstance(grid.tensor, TensorV):
                return grid.tensor.dtype if attr == "dtype" else BufferV(grid.tensor.buffer)
            return self.unknown(f"grid attribute {attr} of a tensor of unknown rank", label=f"{grid.label}.{attr}")
        live = [d for d in grid.dims if not d.consumed]
        if attr == "shape":
            return TupleV(tuple(_ceil_div(d.extent, d.step) for d in live), label=f"{grid.label}.shape")
        if attr == "element_shape":
            return TupleV(tuple(d.extent for d in grid.dims), label=f"{grid.label}.element_shape")
        if attr == "tile_shape":
            return TupleV(grid.tile_shape)
        if attr == "block_shape" and grid.block_shape is not None:
            return TupleV(grid.block_shape)
        if attr == "dtype" and isinstance(grid.tensor, TensorV):
            return grid.tensor.dtype
        if attr == "buffer" and isinstance(grid.tensor, TensorV) and grid.tensor.buffer != "unknown":
            return BufferV(grid.tensor.buffer)
        return self.unknown(f"grid attribute {attr}", label=f"{grid.label}.{attr}")

    def grid_subscript(self, grid: GridV, index: Value, node, frame: Frame) -> Value:
        if grid.dims is None:
            return grid
        items = list(index.items) if isinstance(index, TupleV) and not index.is_list else [index]
        dims = [GridDim(d.offset, d.extent, d.step, d.consumed) for d in grid.dims]
        live = [d for d in dims if not d.consumed]
        if len(items) > len(live):
            return self.unknown("grid index past its rank")
        for item, dim in zip(items, live):
            if isinstance(item, SliceV):
                start = Const(0) if isinstance(item.start, Const) and item.start.value is None else item.start
                stop = item.stop
                if not (isinstance(item.step, Const) and item.step.value in (None, 1)):
                    return self.unknown("strided grid slice")
                dim.offset = int_binop(ast.Add, dim.offset, int_binop(ast.Mult, start, dim.step))
                if isinstance(stop, Const) and stop.value is None:
                    dim.extent = int_binop(ast.Sub, dim.extent, int_binop(ast.Mult, start, dim.step))
                else:
                    dim.extent = self._clamped(int_binop(ast.Mult, int_binop(ast.Sub, stop, start), dim.step),
                                               dim, start)
            else:
                dim.consumed = True
                dim.extent = self._clamped(dim.step, dim, item)
                dim.offset = int_binop(ast.Add, dim.offset, int_binop(ast.Mult, item, dim.step))
        return GridV(grid.kind, grid.tensor, grid.tile_shape, grid.block_shape, tuple(dims), grid.layout,
                     label=self.text(node))

    @staticmethod
    def _clamped(size: Value, dim: GridDim, start: Value) -> Value:
        """``size`` elements from coordinate ``start``, clamped to the dim:
        exact only when the clamp is decided (a remainder tile is shorter)."""
        total, begin, n = const_int(dim.extent), const_int(start), const_int(size)
        step = const_int(dim.step)
        if None not in (total, begin, n, step):
            return Const(max(0, min(n, total - begin * step)))
        if total is not None and step and total % step == 0:
            return size  # no remainder: every tile is full
        return Unknown("size of a grid selection that may be a remainder tile")

    def _grid_data(self, grid: GridV, node, frame: Frame) -> Value:
        tensor = grid.tensor
        if not isinstance(tensor, TensorV):
            return self.unknown("data of a grid over an unknown tensor")
        if grid.dims is None:
            return self._derived_view(tensor, None, node, frame, "data")
        whole = all(const_int(d.offset) == 0 and d.extent is s for d, s in zip(grid.dims, tensor.shape or ()))
        if grid.layout == "view":
            if whole and tensor.shape is not None and len(grid.dims) == len(tensor.shape):
                return tensor
            slices = TupleV(tuple(SliceV(d.offset, int_binop(ast.Add, d.offset, d.extent), Const(None))
                                  for d in grid.dims))
            return self.view(tensor, slices, node, frame)
        # On-chip grid allocation: the whole grid is the backing tensor; one
        # tile is a (tile) shaped operand; other selections' layout is not
        # followed.
        if all(const_int(d.offset) == 0 for d in grid.dims) and not any(d.consumed for d in grid.dims):
            return tensor
        one_tile = all(d.consumed for d in grid.dims[-len(grid.tile_shape):]) and grid.block_shape is None
        shape = tuple(d.extent for d in grid.dims[-len(grid.tile_shape):]) if one_tile else None
        return self._derived_view(tensor, shape, node, frame, "data")

    # -- split collectives ----------------------------------------------------
    # Source: the /en/latest/nki/api/generated/ pages of
    # nki.collectives.all_to_all_v_prepare / _trigger and all_gather_v_prepare
    # / _trigger: "Each prepare must be followed by exactly one ..._trigger(),
    # with no other prepare in between. Prepares share a single slot, so an
    # intervening prepare of any kind is rejected"; the trigger takes "the
    # instruction returned by the paired ..._prepare()".
    def _split_collective(self, name: str, short: str, args, kwargs, node, frame: Frame) -> Value:
        info = api.classify(name)
        graph = self.graph
        conditional = graph is not None and (graph.conditional_depth > 0 or graph.device_branch_depth > 0)
        if short.endswith("_prepare"):
            params = tuple(self._bind_call(info, args, kwargs))
            meta = {k: v for k, v in params if k == "metadata_tensor"}
            self.operation(info, [], meta, node, frame)
            record = None
            if graph is not None:
                record = PreparedCollective(name, self.site(node), conditional, loops=tuple(self.loops))
                waiting = graph.pending_prepare
                # Both in undecided branches: they may be exclusive (if/else).
                if waiting is not None and not (waiting.conditional and conditional):
                    graph.split_collective_issues.append(SplitCollectiveIssue(
                        "intervening-prepare", self.site(node), name, waiting.api, waiting,
                        not (waiting.conditional or conditional)))
                graph.prepared_collectives.append(record)
                graph.pending_prepare = record
            return InstructionV(label=self.text(node), api=name, params=params, record=record)
        prepare = args[0] if args else kwargs.get("prepare_instr")
        if isinstance(prepare, InstructionV):
            self._pair_trigger(name, prepare, node, conditional)
            # The collective runs here, with the operands of its prepare.
            self.operation(info, [], dict(prepare.params), node, frame)
            return Const(None)
        if graph is not None:
            what = _not_an_instruction(prepare)
            if what is not None:
                graph.split_collective_issues.append(SplitCollectiveIssue(
                    "not-a-prepare", self.site(node), name, what, None, not conditional))
            # An unknown value may be the waiting instruction.
            graph.pending_prepare = None
        self.operation(info, args, kwargs, node, frame)
        return Const(None)

    def _pair_trigger(self, name: str, prepare: InstructionV, node, conditional: bool) -> None:
        graph, record = self.graph, prepare.record
        if graph is None:
            return
        site = self.site(node)
        expected = name[: -len("_trigger")] + "_prepare"
        if prepare.api != expected:
            always = not (conditional or (record is not None and record.conditional))
            graph.split_collective_issues.append(SplitCollectiveIssue(
                "other-collective", site, name, prepare.api, record, always))
        elif record is not None and record.triggers:
            # Two triggers both in undecided branches may be exclusive.
            if not conditional or record.unconditional_triggers:
                always = not conditional and record.unconditional_triggers > 0
                graph.split_collective_issues.append(SplitCollectiveIssue(
                    "second-trigger", site, name, "", record, always))
        if record is not None and prepare.api == expected:
            self._loop_pairing(name, record, site, conditional)
        if record is not None:
            record.triggers += 1
            record.unconditional_triggers += 0 if conditional else 1
            if graph.pending_prepare is record:
                graph.pending_prepare = None


def _not_an_instruction(value: Value | None) -> str | None:
    """What ``value`` is when it certainly is no ``NkiInstruction``: a
    tensor, a tile grid, a device scalar or a constant; None when it may be
    one (unknown, a parameter of a function analysed on its own)."""
    if value is None or isinstance(value, ParamTensor):
        return None
    if isinstance(value, ScalarV):
        return "a device scalar"
    if isinstance(value, GridV):
        return "a tile grid"
    if isinstance(value, TensorV):
        return "a tensor"
    if isinstance(value, Const):
        return f"the constant {value.value!r}"
    return None
