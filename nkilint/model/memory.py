"""The on-chip memory model of one kernel: SBUF and PSUM footprints, live
ranges and live sets, and the per-kernel memory summary.

A pure function of a ``Kernel`` (its graph) and a ``Target``. The memory
rules (``rules/memory/``, NKI2xx) read :func:`analyze`; ``nkilint graph
--format json`` shows :func:`summarize` under ``"memory"``.

Every number is a *lower bound*, so that an overflow the model finds is an
overflow for every value the code allows. The assumptions, and why:

1. Program order is the order in which the interpreter created the graph's
   nodes: it evaluates each kernel once, in source order, loop bodies once.
2. A tensor is live from its allocation to its last use. A use inside a loop
   the tensor was allocated outside of keeps it live for the whole loop (every
   iteration reads it). Tensors no op reads or writes are not counted (the
   compiler removes them).
3. A tensor allocated inside a loop counts once (the loop's iterations reuse
   the buffer) unless it is stored in a container (``list.append``, a list
   comprehension, ``lst[i] = t``) and used after the loop: then one copy per
   iteration is live. The compiler may give loop-local tiles more buffers to
   pipeline iterations, but only when there is room: nki-library asks for
   it explicitly (``ncc.multi_buffer(...)``, aws-neuron-sdk
   ``nki/library/specs/design-rmsnorm-quant.rst``) and the legacy allocation
   guide says the allocator "decides how many physical tiles are allocated"
   (``general/nki/nki_direct_allocation_guide.rst`` at 0521004c). So the
   count never includes multi-buffering.
4. Legacy block dimensions (``(B, par_dim(P), F)``) are logical: the
   allocator backs them with at least one ``(P, F)`` tile (same guide), so
   one block is counted.
5. A PSUM tensor starts on a bank boundary (migration guide 0.1 -> 0.2,
   "must start at the beginning of each bank"; legacy ``psum.mod_alloc``:
   "only one physical tile can live in a PSUM bank at a time"), so it takes
   ``ceil(bytes / bank)`` banks, at least one.
6. A tile a legacy call returns that is only copied or accumulated into
   another tensor (``t[...] = nl.load(...)``, ``ps[...] += nl.matmul(...)``)
   is written in place by the compiler and takes no space of its own.
7. A tensor inside a loop that may run zero times may never exist: at an
   allocation, it counts only if that loop encloses the allocation too (then
   the allocation itself runs only when the loop does) or surely runs.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from .. import astwalk
from ..targets import Target
from .graph import DTYPE_BYTES, ON_CHIP, KernelGraph, Site, dim_json
from .values import Const, DType, TupleV, Unknown, Value, const_int, describe, int_binop, lower, upper

INF = math.inf


def position(node_id: str) -> int:
    """A node's place in program order, from its id (ids are numbered in
    creation order). Kept for callers outside a graph; the memory model
    itself reads ``KernelGraph.seq``, the same number."""
    digits = "".join(ch for ch in node_id if ch.isdigit())
    return int(digits) if digits else 0


def _prod(values: Iterable[Value]) -> Value:
    total: Value = Const(1)
    for v in values:
        total = int_binop(ast.Mult, total, v)
    return total


def fmt_bytes(n: float | int) -> str:
    """``2048 B`` below 1 KiB or when not a whole number of KiB, else ``16 KiB``."""
    n = int(n)
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} B"


@dataclass
class TensorMem:
    """What one on-chip tensor occupies, and when."""

    node_id: str
    name: str
    buffer: str  # sbuf or psum
    data: dict  # the graph node's attributes
    line: int | None
    shape_v: tuple[Value, ...] | None
    dtype: str | None
    bytes_v: Value  # bytes per partition of the whole tensor
    tile_bytes_v: Value  # bytes per partition of one physical tile (one legacy block)
    blocks_v: Value | None  # legacy logical blocks, None when there is no block dimension
    start: int
    end: int
    loops: tuple[str, ...]
    used: bool
    fused: bool  # a legacy result tile written in place into another tensor
    copies: int = 1  # physical copies live together (container escapes)
    copies_loop: str | None = None  # the loop whose iterations give the copies
    explicit: bool = False  # placed with address= / ncc.*.alloc / mod_alloc

    min_elements: int = 0  # lower bound of the free elements of one tile (for an unknown dtype)

    @property
    def tile_lo(self) -> int:
        lo = lower(self.tile_bytes_v)
        if lo is not None and lo != -INF and lo > 0:
            return int(lo)
        return self.min_elements  # at least one byte per element

    @property
    def tile_hi(self) -> float:
        hi = upper(self.tile_bytes_v)
        return INF if hi is None else hi

    @property
    def exact(self) -> bool:
        return const_int(self.tile_bytes_v) is not None

    @property
    def counted(self) -> bool:
        return self.used and not self.fused

    @property
    def site(self) -> Site | None:
        """Where the tensor is allocated (or returned, for a legacy result tile)."""
        return self.data.get("site")

    @property
    def partition_axis(self) -> int:
        """The position of the partition dimension (legacy ``par_dim``; 0 otherwise)."""
        return self.data.get("partition_axis") or 0

    def banks(self, bank_bytes: int) -> int:
        """PSUM banks one copy takes (lower bound, at least one)."""
        return max(1, -(-self.tile_lo // bank_bytes))

    def footprint(self, bank_bytes: int) -> int:
        """Lower bound of what the tensor occupies: bytes (SBUF) or banks (PSUM)."""
        if not self.counted:
            return 0
        unit = self.banks(bank_bytes) if self.buffer == "psum" else self.tile_lo
        return unit * self.copies

    def shape_text(self) -> str:
        if self.shape_v is None:
            return "(unknown shape)"
        return "(" + ", ".join(_dim(d) for d in self.shape_v) + ("," if len(self.shape_v) == 1 else "") + ")"

    def describe(self, bank_bytes: int) -> str:
        """``acc (128, 512) float32, 1 bank`` / ``x (128, 2048) bfloat16, 4 KiB``."""
        dtype = self.dtype or "?"
        if self.buffer == "psum":
            n = self.banks(bank_bytes)
            size = f"{n} bank{'s' if n != 1 else ''}"
            if not self.exact:
                size = f"at least {size}"
        else:
            size = fmt_bytes(self.tile_lo) if self.exact else f"at least {fmt_bytes(self.tile_lo)}"
        copies = f" x{self.copies}" if self.copies > 1 else ""
        block = " per block" if self.blocks_v is not None else ""
        return f"{self.name}{copies} {self.shape_text()} {dtype}, {size}{block}"


def _dim(v: Value) -> str:
    c = const_int(v)
    return str(c) if c is not None else describe(v)


@dataclass
class Overflow:
    """The allocation at which the live set first exceeds the capacity."""

    buffer: str
    at: TensorMem
    live: list[TensorMem]
    total: int  # bytes (SBUF) or banks (PSUM), lower bound
    capacity: int


@dataclass
class KernelMemory:
    graph: KernelGraph
    target: Target
    tensors: dict[str, TensorMem] = field(default_factory=dict)
    loop_spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    _sweeps: dict[str, tuple[list[Overflow], int, list[TensorMem], dict[str, int]]] = field(default_factory=dict)

    @property
    def bank_bytes(self) -> int:
        return self.target.psum_bank_bytes

    def capacity(self, buffer: str) -> int:
        """Usable banks (PSUM) or usable bytes per partition (SBUF)."""
        if buffer == "psum":
            return self.target.psum_banks
        return self.target.sbuf_usable_bytes_per_partition

    def of(self, buffer: str) -> list[TensorMem]:
        return [t for t in self.tensors.values() if t.buffer == buffer]

    def exists_at(self, u: TensorMem, t: TensorMem) -> bool:
        """Whether ``u`` surely exists when ``t``'s allocation runs: every
        loop of ``u`` that does not enclose ``t`` runs at least once."""
        for loop_id in u.loops:
            if loop_id in t.loops:
                continue
            lo = lower(self.graph.attrs(loop_id).get("trip_v"))
            if lo is None or lo < 1:
                return False
        return True

    def live_at(self, buffer: str, pos: int) -> list[TensorMem]:
        return [t for t in self.of(buffer) if t.counted and t.start <= pos <= t.end]

    def _sweep(self, buffer: str) -> tuple[list[Overflow], int, list[TensorMem], dict[str, int]]:
        """Overflows, peak, the live set at the peak, and the live total at
        each allocation (by tensor id)."""
        if buffer in self._sweeps:
            return self._sweeps[buffer]
        cap = self.capacity(buffer)
        bank = self.bank_bytes
        order = sorted((t for t in self.of(buffer) if t.footprint(bank) > 0), key=lambda t: t.start)
        active: list[TensorMem] = []
        overflows: list[Overflow] = []
        peak, peak_set = 0, []
        totals: dict[str, int] = {}
        for t in order:
            active = [u for u in active if u.end >= t.start]
            live = [u for u in active if self.exists_at(u, t)]
            before = self.total(buffer, live)
            active.append(t)
            live.append(t)
            total = self.total(buffer, live)
            totals[t.node_id] = total
            if total > peak:
                peak, peak_set = total, live
            if total > cap and before <= cap:
                overflows.append(Overflow(buffer, t, live, total, cap))
        result = (overflows, peak, peak_set, totals)
        self._sweeps[buffer] = result
        return result

    def total(self, buffer: str, live: list[TensorMem]) -> int:
        """Lower bound of what a set of live tensors occupies (banks or bytes).

        Compiler-allocated tensors add up. Explicitly placed tensors occupy
        what their addresses say, and authors alias them on purpose (the
        same bank for tensors whose lifetimes they know to be disjoint,
        ``(i % 2) * BANK`` rotations): they count as the union of their exact
        placements, or, when no placement is exact, as the largest of them."""
        bank = self.bank_bytes
        auto = sum(u.footprint(bank) for u in live if not u.explicit)
        placed = [u for u in live if u.explicit and u.counted]
        if not placed:
            return auto
        exact: list[tuple[int, int]] = []
        largest = 0
        for u in placed:
            p = placement(u, self.target)
            if p is None:
                largest = max(largest, u.banks(bank) if buffer == "psum" else u.tile_lo)
                continue
            if buffer == "psum":
                exact.append((p.b0 // bank, -(-p.b1 // bank)))
            else:
                exact.append((p.b0, p.b1))
        covered, last = 0, None
        for lo, hi in sorted(exact):
            if last is None or lo >= last:
                covered += hi - lo
                last = hi
            elif hi > last:
                covered += hi - last
                last = hi
        return auto + max(covered, largest)

    def overflows(self, buffer: str) -> list[Overflow]:
        return self._sweep(buffer)[0]

    def peak(self, buffer: str) -> tuple[int, list[TensorMem]]:
        _, peak, peak_set, _ = self._sweep(buffer)
        return peak, peak_set

    def loop_line(self, loop_id: str | None) -> int | None:
        if loop_id is None:
            return None
        site = self.graph.attrs(loop_id).get("site")
        return site.line if site is not None else None


# ----------------------------------------------------------------- analysis


def analyze(kernel_or_graph: Any, target: Target) -> KernelMemory:
    """The memory model of a kernel (cached per graph and target)."""
    graph: KernelGraph = getattr(kernel_or_graph, "graph", kernel_or_graph)
    key = (target.name, target.psum_banks, target.psum_bank_bytes, target.sbuf_usable_bytes_per_partition)
    # Kept with the graph (dropped with it), one per target.
    per_graph: dict[tuple, KernelMemory] = graph.memo.setdefault("memory.analyze", {})
    if key not in per_graph:
        per_graph[key] = _analyze(graph, target)
    return per_graph[key]


def _analyze(graph: KernelGraph, target: Target) -> KernelMemory:
    mem = KernelMemory(graph, target)
    spans: dict[str, list[int]] = {}
    for node_id, data in graph.g.nodes(data=True):
        pos = graph.seq(node_id)
        if data.get("kind") == "loop":
            spans.setdefault(node_id, [pos, pos])
        for loop_id in data.get("loops", ()) or ():
            span = spans.setdefault(loop_id, [graph.seq(loop_id), graph.seq(loop_id)])
            span[1] = max(span[1], pos)
    mem.loop_spans = {k: (v[0], v[1]) for k, v in spans.items()}
    assignment_stmts = {
        id(d["site"].node) for _, d in graph.ops() if d.get("assignment") and d.get("site") is not None
    }
    for node_id, data in graph.tensors():
        if data.get("buffer") not in ON_CHIP or data.get("origin") not in ("alloc", "result"):
            continue
        mem.tensors[node_id] = _tensor_mem(graph, mem, node_id, data, assignment_stmts)
    return mem


def _tensor_mem(graph: KernelGraph, mem: KernelMemory, node_id: str, data: dict, assignment_stmts: set[int]) -> TensorMem:
    shape = data.get("shape_v")
    dtype_v = data.get("dtype_v")
    dtype = dtype_v.name if isinstance(dtype_v, DType) else data.get("dtype")
    axis = data.get("partition_axis") or 0
    bytes_v = data.get("bytes_v")
    if bytes_v is None:
        bytes_v = Unknown("bytes per partition")
    if data.get("origin") == "result" and _unknown_dtype_argument(graph, node_id):
        # The model falls back to the input's dtype when ``dtype=`` is not
        # known statically; the real tile may be narrower.
        dtype, bytes_v = None, Unknown("dtype argument not known statically")
    blocks_v: Value | None = None
    tile_bytes_v: Value = bytes_v
    if shape is not None and axis > 0 and axis < len(shape):
        blocks_v = _prod(shape[:axis])
        size = DTYPE_BYTES.get(dtype or "")
        tile_bytes_v = _prod([Const(size), *shape[axis + 1:]]) if size else Unknown("dtype unknown")
    loops = tuple(data.get("loops", ()) or ())
    start = graph.seq(node_id)
    uses = sorted(set(graph.ops_reading(node_id)) | set(graph.ops_writing(node_id)), key=graph.seq)
    readers = set(graph.ops_reading(node_id))
    site: Site | None = data.get("site")
    end = start
    common_min = len(loops)
    for op_id in uses:
        op_loops = tuple(graph.attrs(op_id).get("loops", ()) or ())
        common = 0
        while common < len(loops) and common < len(op_loops) and loops[common] == op_loops[common]:
            common += 1
        if op_id in readers:
            common_min = min(common_min, common)
        if len(op_loops) > common:
            # Used inside a loop the tensor is not in: live for the whole loop.
            end = max(end, mem.loop_spans.get(op_loops[common], (0, graph.seq(op_id)))[1])
        else:
            end = max(end, graph.seq(op_id))
    origin = data.get("origin")
    if origin == "result":
        used = bool(readers)
    else:
        used = bool(uses)
    fused = origin == "result" and bool(readers) and all(_copies_in_place(graph, op_id, node_id) for op_id in readers)
    address = data.get("address")
    explicit = address is not None and not (isinstance(address, Const) and address.value is None)
    t = TensorMem(
        node_id=node_id, name=_name(data), buffer=data.get("buffer"), data=data,
        line=site.line if site is not None else None, shape_v=shape, dtype=dtype, bytes_v=bytes_v,
        tile_bytes_v=tile_bytes_v, blocks_v=blocks_v, start=start, end=end, loops=loops, used=used,
        fused=fused, explicit=explicit, min_elements=_min_elements(shape, axis),
    )
    escaped = loops[common_min:]
    if escaped and used:
        copies, loop_id = _container_copies(graph, t, escaped, site, assignment_stmts)
        t.copies, t.copies_loop = copies, loop_id
    return t


def _unknown_dtype_argument(graph: KernelGraph, node_id: str) -> bool:
    for op_id in graph.ops_writing(node_id):
        params = graph.attrs(op_id).get("params_v") or {}
        if "dtype" in params and not isinstance(params["dtype"], DType):
            v = params["dtype"]
            if not (isinstance(v, Const) and v.value is None):
                return True
    return False


def _min_elements(shape: tuple[Value, ...] | None, axis: int) -> int:
    if shape is None:
        return 0
    total = 1
    for i, d in enumerate(shape):
        if i <= axis:
            continue  # block dims and the partition dim
        lo = lower(d)
        if lo is None or lo < 1 or lo == INF:
            return 0
        total *= int(lo)
    return total


def _name(data: dict) -> str:
    name = data.get("name")
    if name:
        return str(name)
    call = data.get("call")
    if isinstance(call, ast.Call):
        func = call.func
        short = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "call")
        api = str(data.get("api") or "")
        prefix = "nisa." if api.startswith("nki.isa.") else "nl." if api.startswith("nki.language.") else ""
        line = getattr(call, "lineno", None)
        return f"{prefix}{short}(...)" + (f" at line {line}" if line else "")
    return "tensor"


def _copies_in_place(graph: KernelGraph, op_id: str, tensor_id: str) -> bool:
    """The op copies/accumulates the tensor into another one (legacy
    ``t[...] = value`` / ``t[...] += value``)."""
    data = graph.attrs(op_id)
    if not (data.get("assignment") or data.get("augmented")):
        return False
    for src, edge in graph.reads(op_id):
        if graph.base_tensor(src) == tensor_id and edge.get("param") != "value":
            return False
    return True


def _container_copies(graph: KernelGraph, t: TensorMem, escaped: tuple[str, ...], site: Site | None,
                      assignment_stmts: set[int]) -> tuple[int, str | None]:
    """Copies live after the escaped loops: the product of the trip counts of
    the innermost escaped loops that store the tensor in a container."""
    copies = 1
    outermost: str | None = None
    receiver: str | None = None
    for loop_id in reversed(escaped):
        ldata = graph.attrs(loop_id)
        trip_lo = lower(ldata.get("trip_v"))
        if trip_lo is None or trip_lo < 1 or trip_lo == INF:
            break
        lsite: Site | None = ldata.get("site")
        node = lsite.node if lsite is not None else None
        if ldata.get("loop_kind") == "comprehension":
            stored = True
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            found = _stored_in(node, t, site, assignment_stmts)
            if found is None:
                break
            if receiver is not None and _assigns(node, receiver):
                break  # the container is created afresh in each iteration of this loop
            receiver = receiver or found
            stored = True
        else:
            stored = False
        if not stored:
            break
        copies *= int(trip_lo)
        outermost = loop_id
    return copies, outermost


_STORE_METHODS = ("append", "insert", "extend", "add")


def _stored_in(loop: ast.AST, t: TensorMem, site: Site | None, assignment_stmts: set[int]) -> str | None:
    """The container (source text) into which the loop stores the tensor, if any."""
    targets: set[int] = set()
    call = t.data.get("call")
    if call is not None:
        targets.add(id(call))
    if site is not None:
        targets.add(id(site.node))
        targets.update(id(c) for _, c in site.chain)
    name = t.data.get("name")

    def is_tensor(expr: ast.AST) -> bool:
        if id(expr) in targets:
            return True
        if isinstance(expr, ast.Name) and name and expr.id == name:
            return True
        if isinstance(expr, (ast.List, ast.Tuple)):
            return any(is_tensor(e) for e in expr.elts)
        return False

    for node in astwalk.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _STORE_METHODS:
            if any(is_tensor(a) for a in node.args):
                return ast.unparse(node.func.value)
        if isinstance(node, ast.Assign) and id(node) not in assignment_stmts and is_tensor(node.value):
            for target in node.targets:
                if isinstance(target, ast.Subscript):
                    return ast.unparse(target.value)
    return None


def _assigns(loop: ast.AST, text: str) -> bool:
    for node in astwalk.walk(loop):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(ast.unparse(x) == text for x in targets):
                return True
    return False


# ------------------------------------------------------------ placement
@dataclass(frozen=True)
class Placement:
    """An explicit placement with exact numbers: partitions
    [p0, p0 + partitions) and bytes [b0, b1) of each partition (PSUM: of the
    16 KiB partition, i.e. bank * bank_bytes + offset)."""

    p0: int
    b0: int
    b1: int
    how: str  # address, alloc, mod_alloc
    text: str  # the source of the placement, for messages


def placement(t: TensorMem, target: Target) -> Placement | None:
    """The exact placement of an explicitly placed tensor, or None when any
    number is not known exactly (or comes from values the model cannot
    trust, see :func:`trusted_expression`)."""
    address = t.data.get("address")
    call = t.data.get("call")
    if address is None or not isinstance(call, ast.Call):
        return None
    size = t.tile_lo if t.exact else None
    if size is None:
        return None
    bank = target.psum_bank_bytes
    if isinstance(address, TupleV):
        expr = next((k.value for k in call.keywords if k.arg == "address"), None)
        if expr is None or not trusted_expression(expr) or len(address.items) != 2:
            return None
        p0, off = const_int(address.items[0]), const_int(address.items[1])
        if p0 is None or off is None:
            return None
        return Placement(p0, off, off + size, "address", ast.unparse(expr))
    how = getattr(address, "how", None)
    kwargs = getattr(address, "kwargs", None)
    if how is None or kwargs is None:
        return None
    expr = next((k.value for k in call.keywords if k.arg == "buffer"), None)
    if expr is None or not trusted_expression(expr):
        return None
    text = ast.unparse(expr)
    if how != "mod_alloc":
        return None  # alloc(func): the placement is a function, not evaluated
    if t.buffer == "sbuf":
        base = _kw_int(kwargs, "base_addr", None)
        p0 = _kw_int(kwargs, "base_partition", 0)
        n = _tile_count(kwargs.get("num_free_tiles"))
        if base is None or p0 is None or n is None:
            return None
        return Placement(p0, base, base + n * size, "mod_alloc", text)
    base_bank = _kw_int(kwargs, "base_bank", None)
    base = _kw_int(kwargs, "base_addr", 0)
    p0 = _kw_int(kwargs, "base_partition", 0)
    n = _tile_count(kwargs.get("num_bank_tiles"))
    if base_bank is None or base is None or p0 is None or n is None:
        return None
    start = base_bank * bank + base
    # Each physical tile takes its own bank (psum.mod_alloc).
    return Placement(p0, start, start + (n - 1) * bank + size, "mod_alloc", text)


def _kw_int(kwargs: dict, key: str, default: int | None) -> int | None:
    if key not in kwargs:
        return default
    return const_int(kwargs[key])


def _tile_count(v: Value | None) -> int | None:
    if v is None:
        return 1
    if isinstance(v, TupleV):
        total = 1
        for item in v.items:
            c = const_int(item)
            if c is None:
                return None
            total *= c
        return total
    return const_int(v)


def trusted_expression(expr: ast.AST) -> bool:
    """Whether the model's value for an expression can be trusted to be exact.

    The interpreter runs loop bodies once and widens the local variables a
    loop assigns, but not attributes of objects mutated inside a loop (an
    allocator object's ``self.addr += size``): such values would look exact
    and be wrong. Trusted: literals, names, arithmetic, tuples, and dotted
    names of module constants (upper case) or of the NKI API."""
    for node in astwalk.walk(expr):
        if isinstance(node, (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.List, ast.Load,
                             ast.operator, ast.unaryop, ast.keyword)):
            continue
        if isinstance(node, ast.Attribute):
            text = ast.unparse(node)
            root = text.split(".", 1)[0]
            if node.attr.isupper() or root in ("nl", "nki", "ncc", "nisa", "language"):
                continue
            return False
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if func.endswith(("mod_alloc", "alloc")) or func in ("min", "max", "int"):
                continue
            return False
        return False
    return True


# ------------------------------------------------------------- summary
def summarize(kernel: Any, target: Target) -> dict:
    """The memory summary of a kernel: a JSON-able dict.

    ``summarize(kernel, target)`` is what ``nkilint graph --format json``
    shows under each kernel's ``"memory"`` key::

        {
          "assumptions": "lower bounds: ...",        # one sentence
          "sbuf": {
            "capacity_bytes": 212728,                # usable bytes per partition
            "peak_bytes": 139264,                    # most bytes live at once (lower bound)
            "peak_line": 31,                         # the allocation where the peak is reached
            "peak_tensors": ["x", "w"],              # tensors live at the peak
            "exact": true,                           # every on-chip size is exact: the true peak
            "tensors": [TENSOR, ...],                # every on-chip tensor, in program order
            "loops": [LOOP, ...],                    # per loop: bytes allocated in it, peak inside it
            "by_depth": [{"depth": 0, "tensors": 3, "bytes": 4096}, ...]  # per loop nesting level
          },
          "psum": { same keys, plus
            "banks": 8, "bank_bytes": 2048,
            "peak_banks": 3                          # banks live at the peak ("peak_bytes" = banks x bank_bytes)
          }
        }

    TENSOR: ``{"id", "name", "line", "shape" (dims as in the graph JSON),
    "dtype", "bytes_per_partition" (int, or {"expr", "min", "max"}),
    "tile_bytes" (one legacy block, when there are blocks; else equal),
    "min_bytes" (lower bound of one tile), "banks" (PSUM only), "copies",
    "counted" (false: unused, a legacy tile written in place, or in a loop
    that may not run), "live": {"from_line", "to_line"}, "loops" (ids,
    outermost first), "explicit" (placed with address= or ncc.*alloc)}``.

    LOOP: ``{"id", "line", "kind", "trip_count", "depth", "bytes"
    (allocated directly in the loop, lower bound; PSUM: banks x bank_bytes),
    "peak_bytes" (most live while the loop runs)}``.
    """
    mem = analyze(kernel, target)
    return {
        "assumptions": (
            "lower bounds: a loop-local tensor counts once, a tensor stored in a list in a loop once per "
            "iteration; legacy block dimensions count one block; a PSUM tensor takes whole banks; an unknown "
            "dtype counts one byte per element; explicitly placed tensors count by address"
        ),
        "sbuf": _buffer_summary(mem, "sbuf"),
        "psum": _buffer_summary(mem, "psum"),
    }


def _buffer_summary(mem: KernelMemory, buffer: str) -> dict:
    bank = mem.bank_bytes
    unit = bank if buffer == "psum" else 1
    _, peak, peak_set, totals = mem._sweep(buffer)
    tensors = sorted(mem.of(buffer), key=lambda t: t.start)
    peak_at = max(peak_set, key=lambda t: t.start) if peak_set else None
    out: dict[str, Any] = {}
    if buffer == "psum":
        out.update(
            capacity_bytes=mem.capacity("psum") * bank, banks=mem.capacity("psum"), bank_bytes=bank, peak_banks=peak,
        )
    else:
        out["capacity_bytes"] = mem.capacity("sbuf")
    out.update(
        peak_bytes=peak * unit,
        peak_line=peak_at.line if peak_at else None,
        peak_tensors=[t.name for t in peak_set],
        exact=_peak_exact(mem, tensors, peak_set),
        tensors=[_tensor_json(mem, t) for t in tensors],
        loops=_loops_json(mem, buffer, totals),
        by_depth=_depth_json(mem, tensors),
    )
    return out


def _peak_exact(mem: KernelMemory, tensors: list[TensorMem], peak_set: list[TensorMem]) -> bool:
    """Whether the peak is the true peak, not only a lower bound: every
    counted tensor of the buffer has an exact size (and an explicitly placed
    one an exact placement). A tensor of unknown size counts as its lower
    bound (often 0) and is left out of the sweep, so it can be live at, or
    make, a higher peak than the one computed: never exact then."""
    for t in tensors:
        if not t.counted:
            continue
        if not t.exact or (t.explicit and placement(t, mem.target) is None):
            return False
    return all(t.exact for t in peak_set)


def _line_at(mem: KernelMemory, pos: int) -> int | None:
    # One index per graph (kept with it): a scan per tensor was quadratic.
    index = mem.graph.memo.get("memory.at_seq")
    if index is None:
        index = mem.graph.memo["memory.at_seq"] = {mem.graph.seq(n): n for n in mem.graph.g.nodes}
    node_id = index.get(pos)
    if node_id is None:
        return None
    site = mem.graph.attrs(node_id).get("site")
    if site is None:
        return None
    return getattr(site.node, "end_lineno", None) or site.line


def _tensor_json(mem: KernelMemory, t: TensorMem) -> dict:
    out: dict[str, Any] = {
        "id": t.node_id,
        "name": t.name,
        "line": t.line,
        "shape": None if t.shape_v is None else [dim_json(d) for d in t.shape_v],
        "dtype": t.dtype,
        "bytes_per_partition": dim_json(t.bytes_v),
        "tile_bytes": dim_json(t.tile_bytes_v),
        "min_bytes": t.tile_lo,
        "copies": t.copies,
        "counted": t.counted,
        "live": {"from_line": t.line, "to_line": _line_at(mem, t.end)},
        "loops": list(t.loops),
        "explicit": t.explicit,
    }
    if t.buffer == "psum":
        out["banks"] = t.banks(mem.bank_bytes)
    return out


def _loops_json(mem: KernelMemory, buffer: str, totals: dict[str, int]) -> list[dict]:
    unit = mem.bank_bytes if buffer == "psum" else 1
    out = []
    for loop_id, data in sorted(mem.graph.loops(), key=lambda x: mem.graph.seq(x[0])):
        lo, hi = mem.loop_spans.get(loop_id, (mem.graph.seq(loop_id), mem.graph.seq(loop_id)))
        own = sum(t.footprint(mem.bank_bytes) for t in mem.of(buffer) if t.loops and t.loops[-1] == loop_id)
        inside = [totals[t.node_id] for t in mem.of(buffer) if t.node_id in totals and lo <= t.start <= hi]
        # Tensors live across the loop but allocated before it count too.
        live_before = sum(t.footprint(mem.bank_bytes) for t in mem.of(buffer)
                          if t.counted and t.start < lo and t.end >= lo)
        site = data.get("site")
        out.append({
            "id": loop_id,
            "line": site.line if site is not None else None,
            "kind": data.get("loop_kind"),
            "trip_count": dim_json(data.get("trip_v")),
            "depth": len(data.get("loops", ()) or ()),
            "bytes": own * unit,
            "peak_bytes": max(inside + [live_before]) * unit,
        })
    return out


def _depth_json(mem: KernelMemory, tensors: list[TensorMem]) -> list[dict]:
    unit = mem.bank_bytes if tensors and tensors[0].buffer == "psum" else 1
    depths: dict[int, list[TensorMem]] = {}
    for t in tensors:
        depths.setdefault(len(t.loops), []).append(t)
    return [
        {"depth": d, "tensors": len(ts), "bytes": sum(t.footprint(mem.bank_bytes) for t in ts) * unit}
        for d, ts in sorted(depths.items())
    ]


__all__ = [
    "KernelMemory", "TensorMem", "Overflow", "Placement", "analyze", "summarize", "placement", "position",
    "trusted_expression", "fmt_bytes",
]
