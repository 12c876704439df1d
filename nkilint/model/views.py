"""Typed views over the kernel graph: ``Tensor``, ``View``, ``Op`` and ``Operand``.

The graph (graph.py) keeps its facts as attributes of networkx nodes; these
wrappers give rules one spelling for each of them (``op.api``,
``tensor.partition_size``, ``operand.buffer``) instead of string keys on
node dicts. A wrapper is a node id with its graph (and, when it came from a
model-wide iteration, its kernel); it copies nothing, so it always shows the
graph as it is.

Beyond the recorded attributes, two questions have one answer here:

* which memory an op's operand is in, as far as a rule may rely on it
  (``Operand.buffer``: a parameter of an ``@nki.jit`` function may be an
  SBUF tile when another kernel calls it, see :func:`kernel_role`);
* whether the model's shape of a tensor or view can be trusted
  (``shape_trusted``: results of calls the model sizes by broadcasting, and
  views whose new shape the code computes, are not), and where a view's
  partitions start (``partition_start``).

Loops have their typed view in loops.py (``Loop``, ``nest_of``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Iterator

from .api_semantics import DMA_ENDPOINT_APIS, TENSOR_OPERAND_PARAMS, ApiInfo, classify
from .dtypes import dtype_name
from .graph import ON_CHIP, Guard, KernelGraph, Site
from .query import tensor_name
from .semantic import partition_size
from .values import Const, DsV, IndexV, SliceV, Value, const_int, int_binop, int_bounds

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel, Kernel

# How the API modules are spelled in messages.
_MODULE_PREFIX = {"nki.isa": "nisa", "nki.language": "nl"}


@dataclass(frozen=True)
class Node:
    """One graph node (any kind)."""

    graph: KernelGraph = field(repr=False)
    id: str
    kernel: "Kernel | None" = field(default=None, repr=False, compare=False)

    @property
    def data(self) -> dict:
        """The node's attribute dict (prefer the typed properties)."""
        return self.graph.attrs(self.id)

    @property
    def kind(self) -> str:
        return str(self.data.get("kind"))

    @property
    def site(self) -> Site | None:
        return self.data.get("site")

    @property
    def loops(self) -> tuple[str, ...]:
        """Ids of the enclosing loops, outermost first."""
        return tuple(self.data.get("loops", ()) or ())

    @property
    def guards(self) -> tuple[Guard, ...]:
        return tuple(self.data.get("guards", ()) or ())

    @property
    def seq(self) -> int:
        return self.graph.seq(self.id)

    @property
    def call(self) -> ast.Call | None:
        call = self.data.get("call")
        return call if isinstance(call, ast.Call) else None


def node(graph: KernelGraph, node_id: str, kernel: "Kernel | None" = None) -> Node:
    """The typed view of a node: ``Tensor``, ``View``, ``Op`` or a plain ``Node``."""
    kind = graph.attrs(node_id).get("kind")
    cls = {"tensor": Tensor, "view": View, "op": Op}.get(kind, Node)
    return cls(graph, node_id, kernel)


# ------------------------------------------------------------------ tensors and views
class TensorLike(Node):
    """What tensors and views have in common."""

    @property
    def name(self) -> str:
        """The name to show in messages (``the result of f(...)`` when unnamed)."""
        return tensor_name(self.data)

    @property
    def has_name(self) -> bool:
        """The code gave the tensor a name (it was assigned to a variable)."""
        return bool(self.data.get("name"))

    @property
    def buffer(self) -> str:
        """The recorded memory: sbuf, psum, hbm, shared_hbm, private_hbm or unknown."""
        return self.data.get("buffer") or "unknown"

    @property
    def on_chip(self) -> bool:
        return self.data.get("buffer") in ON_CHIP

    @property
    def shape(self) -> tuple[Value, ...] | None:
        """Abstract dimensions, or None when the rank is unknown."""
        return self.data.get("shape_v")

    @property
    def partition_axis(self) -> int:
        """The position of the partition dimension (legacy ``par_dim``; 0 otherwise)."""
        return self.data.get("partition_axis") or 0

    @property
    def partition_size(self) -> Value | None:
        return partition_size(self.data)

    @property
    def dtype(self) -> str | None:
        """The dtype name the node records (a view records its tensor's)."""
        return dtype_name(self.data)

    @property
    def base(self) -> "Tensor":
        """The tensor a view (of a view ...) refers to; a tensor itself."""
        return Tensor(self.graph, self.graph.base_tensor(self.id), self.kernel)

    @property
    def label(self) -> str:
        """How the operand is written in messages: ``t`` or ``t[0:64, :]``."""
        return operand_label(self.graph, self.id)

    @property
    def shape_trusted(self) -> bool:
        return shape_trusted(self.graph, self.id)

    @property
    def partition_start(self) -> Value | None:
        return partition_start(self.graph, self.id)


class Tensor(TensorLike):
    """An allocation, a kernel parameter or a tile a legacy call returned."""

    @property
    def origin(self) -> str | None:
        """``param``, ``alloc`` or ``result``."""
        return self.data.get("origin")

    @property
    def api(self) -> str:
        """The allocating API (canonical name), or the call that returned the tile."""
        return str(self.data.get("api") or "")

    @property
    def address(self):
        """An explicit placement (``address=`` value or a legacy placement object), or None."""
        return self.data.get("address")


class View(TensorLike):
    """An indexed, sliced or reshaped tensor (or view)."""

    @property
    def index(self) -> str:
        """The index as written (``[0:128, :]``) or ``.reshape(...)`` for derived views."""
        return str(self.data.get("index") or "")

    @property
    def index_v(self) -> tuple | None:
        """Abstract index items (None for reshaped, ``.ap()`` or bitcast views)."""
        return self.data.get("index_v")


# ------------------------------------------------------------------ ops
class Op(Node):
    """One call of an NKI API (or a legacy ``t[...] = v`` / operator on tiles)."""

    @property
    def api(self) -> str:
        """The canonical API name (``nki.isa.nc_matmul``)."""
        return str(self.data.get("api") or "")

    @property
    def module(self) -> str:
        return self.api.rpartition(".")[0]

    @property
    def short(self) -> str:
        return self.api.rpartition(".")[2]

    @property
    def label(self) -> str:
        """How the call is spelled in messages: ``nisa.nc_matmul``, ``nl.matmul``."""
        module, short = self.module, self.short
        prefix = _MODULE_PREFIX.get(module, module)
        return f"{prefix}.{short}" if prefix else short

    @property
    def info(self) -> ApiInfo | None:
        return classify(self.api)

    @property
    def engine(self) -> str | None:
        """The engine the model assigns (tensor, vector, scalar, gpsimd, dma, any, none)."""
        return self.data.get("engine")

    @property
    def params(self) -> dict[str, Value]:
        """Abstract values passed, by parameter name (positional ones named from the API table)."""
        return self.data.get("params_v") or {}

    def param(self, name: str) -> Value | None:
        return self.params.get(name)

    @property
    def assignment(self) -> bool:
        """Legacy ``t[...] = value``."""
        return bool(self.data.get("assignment"))

    @property
    def augmented(self) -> bool:
        """Legacy ``t[...] += value``."""
        return bool(self.data.get("augmented"))

    @property
    def operator(self) -> bool:
        """An operator on tiles (``a + b``)."""
        return bool(self.data.get("operator"))

    def operands(self, role: str = "top") -> list["Operand"]:
        """Every tensor operand: reads first, then writes, in argument order
        (see :func:`operands`)."""
        return operands(self.graph, self.id, role)


@dataclass(frozen=True)
class Operand:
    """One tensor argument of an op: the node passed (tensor or view), the
    parameter it is passed as, and whether the op writes it.

    ``role`` is the role of the kernel the op is in (:func:`kernel_role`);
    it decides how far ``buffer`` may be relied on."""

    graph: KernelGraph = field(repr=False)
    op_id: str
    param: str
    node_id: str
    written: bool
    role: str = "top"

    @property
    def node(self) -> TensorLike:
        """The tensor or view passed."""
        return node(self.graph, self.node_id)  # type: ignore[return-value]

    @property
    def data(self) -> dict:
        """Attributes of the node passed."""
        return self.graph.attrs(self.node_id)

    @cached_property
    def base_id(self) -> str:
        return self.graph.base_tensor(self.node_id)

    @property
    def base(self) -> Tensor:
        return Tensor(self.graph, self.base_id)

    @property
    def name(self) -> str:
        """The base tensor's name, for messages."""
        return self.base.name

    @cached_property
    def buffer(self) -> str:
        """The memory of the base tensor as far as a rule may rely on it:
        ``unknown`` for parameters of sub-kernels and probable device code
        (the caller decides), for parameters that nothing shows to be
        tensors (kernels also take scalars, enums and functions), and for
        ``shared_identity_matrix`` (shared HBM in the legacy API, SBUF in
        the current stub)."""
        base = self.graph.attrs(self.base_id)
        buffer = base.get("buffer") or "unknown"
        is_param = base.get("origin") == "param"
        if is_param and self.role in ("sub", "probable"):
            return "unknown"
        if str(base.get("api") or "").endswith("shared_identity_matrix"):
            return "unknown"
        if is_param and buffer != "unknown" and not _tensor_evidence(self.graph, self.base_id, self.param, self.op_id):
            return "unknown"
        return buffer

    @property
    def assumed(self) -> bool:
        """``buffer`` holds only if the kernel is launched as a top-level kernel
        (a parameter of an ``@nki.jit`` function of the current API)."""
        return self.role == "maybe" and self.graph.attrs(self.base_id).get("origin") == "param"


def operands(graph: KernelGraph, op_id: str, role: str = "top") -> list[Operand]:
    """Every tensor operand of an op, reads first, in argument order; a
    legacy call's returned tile is written as parameter ``result``. A node
    passed twice as the same parameter in the same direction counts once.
    ``role``: see :func:`kernel_role`."""
    out: list[Operand] = []
    seen: set[tuple[str, str, bool]] = set()
    for written, edges in ((False, graph.reads(op_id)), (True, graph.writes(op_id))):
        for node_id, edge in edges:
            param = edge.get("param") or "?"
            key = (node_id, param, written)
            if key in seen:
                continue
            seen.add(key)
            out.append(Operand(graph, op_id, param, node_id, written, role))
    return out


def _tensor_evidence(graph: KernelGraph, base_id: str, param: str, op_id: str) -> bool:
    """A kernel parameter passed to an op is surely a tensor (kernels also
    take scalars, enums and ops as parameters)."""
    op = graph.attrs(op_id)
    api = str(op.get("api") or "")
    if param in TENSOR_OPERAND_PARAMS or (param == "value" and api == "nki.language.store"):
        return True
    if param == "x" and "y" not in (op.get("params_v") or {}) and api.startswith("nki.language."):
        return True  # a unary nl.* call takes a tile
    # Used as a DMA endpoint somewhere. (Views are no evidence: the model
    # also makes views of tuple parameters that the kernel subscripts.)
    for other in graph.ops_reading(base_id) + graph.ops_writing(base_id):
        if str(graph.attrs(other).get("api") or "") in DMA_ENDPOINT_APIS:
            return True
    return False


def kernel_role(model: "FileModel", kernel: "Kernel") -> str:
    """How a kernel's parameters may be relied on.

    ``top``: launched as a top-level kernel, so its parameters are HBM
    tensors; ``maybe``: an ``@nki.jit`` function of the current API, which
    nki-library also calls as a sub-kernel with SBUF arguments; ``sub``: a
    sub-kernel (called by another kernel of the file, or legacy
    ``mode="trace"``); ``probable``: device code analysed on its own."""
    if kernel.kind != "root":
        return "probable"
    if kernel.subkernel:
        return "sub"
    deco = kernel.decorator
    if isinstance(deco, ast.Call):
        for kw in deco.keywords:
            if kw.arg == "mode" and isinstance(kw.value, ast.Constant) and kw.value.value == "trace":
                return "sub"
    if model.legacy or not str(kernel.how).startswith("@"):
        return "top"
    return "maybe"


# ------------------------------------------------------------------ model-wide iteration
def ops(model: "FileModel", apis: Iterable[str] | None = None, prefix: str | tuple[str, ...] | None = None) -> Iterator[Op]:
    """Op nodes of every kernel, in kernel and creation order; optionally
    only the given canonical APIs, or APIs starting with ``prefix``."""
    wanted = set(apis) if apis is not None else None
    for kernel in model.kernels:
        graph = kernel.graph
        for node_id, data in graph.ops():
            api = str(data.get("api") or "")
            if wanted is not None and api not in wanted:
                continue
            if prefix is not None and not api.startswith(prefix):
                continue
            yield Op(graph, node_id, kernel)


def ops_of(kernel: "Kernel") -> Iterator[Op]:
    """Op nodes of one kernel, in creation order."""
    for node_id, _ in kernel.graph.ops():
        yield Op(kernel.graph, node_id, kernel)


def tensors_of(kernel: "Kernel") -> Iterator[Tensor]:
    """Tensor nodes of one kernel, in creation order."""
    for node_id, _ in kernel.graph.tensors():
        yield Tensor(kernel.graph, node_id, kernel)


def tensors(model: "FileModel", buffers: Iterable[str] | None = None,
            origins: Iterable[str] | None = None) -> Iterator[Tensor]:
    """Tensor nodes of every kernel, filtered by buffer and origin."""
    buffers = tuple(buffers) if buffers is not None else None
    origins = tuple(origins) if origins is not None else None
    for kernel in model.kernels:
        graph = kernel.graph
        for node_id, data in graph.tensors():
            if buffers is not None and data.get("buffer") not in buffers:
                continue
            if origins is not None and data.get("origin") not in origins:
                continue
            yield Tensor(graph, node_id, kernel)


def views(model: "FileModel") -> Iterator[View]:
    """View nodes of every kernel."""
    for kernel in model.kernels:
        for node_id, _ in kernel.graph.views():
            yield View(kernel.graph, node_id, kernel)


# ------------------------------------------------------------------ messages
def operand_label(graph: KernelGraph, node_id: str) -> str:
    """A tensor's name, or ``base[index]`` for a view."""
    data = graph.attrs(node_id)
    if data.get("kind") != "view":
        return tensor_name(data)
    base = graph.attrs(graph.base_tensor(node_id))
    index = str(data.get("index") or "")
    if index.startswith("(") and index.endswith(")") and not index.startswith("(("):
        index = index[1:-1]
    name = tensor_name(base) if base.get("name") else (data.get("name") or "tensor")
    if index.startswith("."):
        return f"{name}{index}"
    return f"{name}[{index}]"


# ------------------------------------------------------------------ where a view's partitions start
def _viewed(graph: KernelGraph, view_id: str) -> str | None:
    nxt = [v for _, v, _d in graph.edges_of(view_id, "view_of")]
    return nxt[0] if nxt else None


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
        nxt = _viewed(graph, cur)
        if nxt is None:
            return None
        cur = nxt
    else:
        return None
    base = graph.attrs(cur)
    if base.get("kind") != "tensor" or base.get("origin") not in ("alloc", "result"):
        return None
    if base.get("address") is not None or (base.get("partition_axis") or 0) != 0:
        return None
    start: Value = Const(0)
    for view in reversed(chain):
        offset = _first_offset(view.get("index_v"))
        if offset is None:
            return None
        if offset is _WHOLE:
            continue
        start = int_binop(ast.Add, start, offset)
    return start


_WHOLE = Const(Ellipsis)  # the index keeps the whole partition range


def _first_offset(items) -> Value | None:
    """Where the first index item starts the partitions (``_WHOLE`` for
    ``...``), or None when that is not tracked."""
    if not items:
        return None  # reshape / ap / bitcast (None), or no index at all
    first = items[0]
    if isinstance(first, Const) and first.value is Ellipsis:
        return _WHOLE
    if isinstance(first, Const) and first.value is None:
        return None  # a new axis in front: not a partition view
    if isinstance(first, SliceV):
        offset: Value = Const(0) if isinstance(first.start, Const) and first.start.value is None else first.start
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
    return offset


# ------------------------------------------------------------------ whether a shape can be trusted
# Legacy / nl calls whose returned tile the model sizes by broadcasting its
# inputs although the call states its own shape (nl.broadcast_to(x, shape))
# or reshapes: their result shapes are not trusted.
UNTRUSTED_RESULTS = frozenset({
    "broadcast_to", "expand_dims", "reshape", "squeeze", "gather_flattened", "shared_constant", "where", "select",
    "full_like", "shuffle", "nc_stream_shuffle", "nc_n_gather", "local_gather", "iota", "affine_select",
    "tensor_partition_reduce", "max8", "nc_find_index8", "bn_stats", "bn_aggr", "quantize_mx",
})
# How many results deep the walk from a result to the inputs it was sized
# from goes.
_TRUST_DEPTH = 8


def shape_trusted(graph: KernelGraph, node_id: str) -> bool:
    """Whether the model's shape of a tensor/view can be relied on.

    Not trusted: results of calls the model sizes by broadcasting
    (``UNTRUSTED_RESULTS``), and views derived by ``.ap(pattern)`` /
    ``.reshape(shape)`` unless the pattern or shape is written as a literal
    at the call: a list the code builds in a loop (nki-library's
    ``TensorView.get_view``) has an unknown length that the model reads as
    one iteration's worth. A result is sized from its inputs (``nl.load``
    from the HBM view's shape), so it is trusted only when they are."""
    if graph.attrs(node_id).get("shape_v") is None:
        return False
    # Memoized per graph: a tile updated in place (dst=t, data1=t) is its own
    # writer's input, and the walk would otherwise revisit it once per path:
    # exponential in the number of updates.
    memo: dict[tuple[str, int], bool] = graph.memo.setdefault("views.shape_trusted", {})
    return _trusted(graph, node_id, 0, memo)


def _trusted(graph: KernelGraph, node_id: str, depth: int, memo: dict[tuple[str, int], bool]) -> bool:
    key = (node_id, depth)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = _trusted_walk(graph, node_id, depth, memo)
    return hit


def _trusted_walk(graph: KernelGraph, node_id: str, depth: int, memo: dict[tuple[str, int], bool]) -> bool:
    cur = node_id
    for _ in range(64):
        d = graph.attrs(cur)
        if d.get("kind") != "view":
            break
        if str(d.get("index") or "").startswith(".") and not _literal_derived(d):
            return False
        if not _reliable_index(d.get("index_v")):
            return False
        nxt = _viewed(graph, cur)
        if nxt is None:
            break
        cur = nxt
    base = graph.attrs(cur)
    if base.get("origin") == "result":
        short = str(base.get("api") or "").rsplit(".", 1)[-1]
        if short in UNTRUSTED_RESULTS:
            return False
        if depth < _TRUST_DEPTH:
            for op_id, _, _e in graph.edges_of(cur, "writes", out=False):
                for src, _ in graph.reads(op_id):
                    if graph.attrs(src).get("shape_v") is not None and not _trusted(graph, src, depth + 1, memo):
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


__all__ = [
    "Node", "Op", "Operand", "Tensor", "TensorLike", "UNTRUSTED_RESULTS", "View", "kernel_role", "node",
    "operand_label", "operands", "ops", "ops_of", "partition_start", "shape_trusted", "tensors", "tensors_of", "views",
]
