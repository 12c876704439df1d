"""GPU-shaped structure in NKI kernels: the detectors behind rules/cuda.py.

Each detector yields ``Site``-like tuples for one rule. Syntactic patterns
(launch grids, grid-stride loops, log-step trees, pointer arithmetic, GPU
runtime calls, CUDA source strings, residue) read the syntax tree of device
code (``_device_scan``); shape patterns (per-element loops, one-element
DMAs, warp-sized or padded tiles, one tile per program) read the kernel
graphs of the semantic model.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.model.bindings import Gen
from nkilint.model.graph import KernelGraph, Site
from nkilint.model.values import Const, DsV, Int, SliceV, Unknown, const_int, int_binop

from . import _flow as fl
from . import _gpu_names as gn
from ._device_scan import FileScan, chain_text, classify_chain


@dataclass
class Spot:
    """A candidate finding: where, what, and at which level."""

    where: ast.AST | Span | Site
    message: str
    level: Level | None = None
    kernel: str | None = None
    hint: str | None = None


# ------------------------------------------------------------------ helpers
def nki_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    qual = ctx.model.bindings.resolve_nki(expr)
    return qual.name if qual is not None else None


def other_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    qual = ctx.model.bindings.resolve(expr)
    return qual.name if qual is not None and qual.gen is Gen.OTHER else None


def header_span(ctx: RuleContext, stmt: ast.AST, upto: ast.AST | None = None) -> Span:
    """A one-line span from the start of stmt to the end of ``upto`` (or of the line)."""
    line = stmt.lineno
    start = ctx.source.byte_col_to_char(line, stmt.col_offset) + 1
    if upto is not None and getattr(upto, "end_lineno", None) == line:
        end = ctx.source.byte_col_to_char(line, upto.end_col_offset) + 1
    else:
        end = len(ctx.source.line_text(line)) + 1
    return Span(line, start, line, max(end, start + 1))


def def_span(ctx: RuleContext, fn: ast.FunctionDef) -> Span:
    """The ``def name`` of a function (not its whole body)."""
    line = fn.lineno
    text = ctx.source.line_text(line)
    col = text.find("def ")
    start = col + 1 if col >= 0 else 1
    end = start + 4 + len(fn.name) if col >= 0 else len(text) + 1
    return Span(line, start, line, end)


def loop_header(ctx: RuleContext, site: Site | None) -> ast.AST | Span | Site | None:
    """Where to report a loop node: its header line in this file, else the site."""
    if site is None:
        return None
    node = site.node
    if ctx.model.in_this_file(site) and isinstance(node, (ast.For, ast.While)):
        return header_span(ctx, node, node.iter if isinstance(node, ast.For) else node.test)
    return site


def word_in(name: str | None, text: str | None) -> bool:
    if not name or not text:
        return False
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def kernel_fn_names(ctx: RuleContext, roots_only: bool = False) -> set[str]:
    return {k.node.name for k in ctx.model.kernels if not roots_only or k.kind == "root"}


def _assigned_values(scope: ast.AST, name: str) -> list[ast.AST]:
    out = []
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    out.append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name and node.value:
            out.append(node.value)
    return out


def _contains(node: ast.AST, pred) -> bool:
    return any(pred(n) for n in ast.walk(node))


# ------------------------------------------------------------------ NKI406 warp-size constants
WARP_NAMES = {"WARP_SIZE", "warp_size", "WARPSIZE", "kWarpSize", "THREADS_PER_WARP", "threads_per_warp"}


def warp_size_constants(ctx: RuleContext, s: FileScan) -> Iterator[tuple[ast.FunctionDef, ast.AST, str]]:
    seen: set[int] = set()
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in WARP_NAMES:
                owner = s.function_of(node) or fn
                if id(owner) in seen:
                    continue
                values = _assigned_values(ctx.tree, node.id)
                consts = [v.value for v in values if isinstance(v, ast.Constant)]
                if consts and not any(c in (32, 64) for c in consts):
                    continue
                seen.add(id(owner))
                yield owner, node, node.id


# ------------------------------------------------------------------ NKI407 foreign JIT decorators
def foreign_jit_decorators(ctx: RuleContext, s: FileScan) -> Iterator[tuple[ast.FunctionDef, ast.AST, str]]:
    model = ctx.model
    for fn in s.all_nodes:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not model.is_device_function(fn):
            continue
        for deco in fn.decorator_list:
            chain = deco.func if isinstance(deco, ast.Call) else deco
            gpu, _ = classify_chain(chain, model.bindings, s.bound)
            if gpu is not None and gpu.category == gn.JIT:
                yield fn, deco, "@" + chain_text(chain)


# ------------------------------------------------------------------ NKI414 launch options
def launch_option_sites(ctx: RuleContext, s: FileScan) -> Iterator[tuple[ast.AST, str, str | None]]:
    kernels = kernel_fn_names(ctx)
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                for a in args.posonlyargs + args.args + args.kwonlyargs:
                    if a.arg in gn.LAUNCH_KEYWORDS:
                        yield a, (
                            f"parameter {a.arg} of {node.name} is a GPU launch option: warps, pipeline stages and "
                            f"CTAs do not exist on Trainium; tile sizes come from nl.tile_size (pmax 128, "
                            f"gemm_moving_fmax 512)"
                        ), node.name
    for node in s.all_nodes:
        if not isinstance(node, ast.Call):
            continue
        in_device = s.in_device(node)
        kws = [k.arg for k in node.keywords if k.arg in gn.LAUNCH_KEYWORDS | gn.HINT_KEYWORDS]
        if not kws:
            continue
        callee = node.func.value if isinstance(node.func, ast.Subscript) else node.func
        is_launch = isinstance(callee, ast.Name) and callee.id in kernels
        if in_device:
            # Triton calls are reported by the Triton rules; only NKI calls and kernel calls here.
            if other_name(ctx, node.func) is not None:
                continue
        elif not is_launch:
            continue
        fn = s.function_of(node)
        target = callee.id if isinstance(callee, ast.Name) else chain_text(callee) or "the call"
        yield node, (
            f"{', '.join(k + '=' for k in kws)} passed to {target}: GPU launch/cache options have no meaning on "
            f"Trainium (no warps, stages or caches); remove them and size tiles from nl.tile_size"
        ), fn.name if fn is not None else None


# ------------------------------------------------------------------ NKI415 launch grids
_THREADY = re.compile(r"(?i)thread|warp|block_?dim|tpb")


def _lambda_bound(scope: ast.AST | None, name: str) -> bool:
    if scope is None:
        return False
    return any(isinstance(v, ast.Lambda) for v in _assigned_values(scope, name))


def launch_grids(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    kernels = kernel_fn_names(ctx, roots_only=True)
    legacy = ctx.model.legacy
    for node in s.all_nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            continue
        sub = node.func
        if not (isinstance(sub.value, ast.Name) and sub.value.id in kernels):
            continue
        kname = sub.value.id
        grid = sub.slice
        scope = _enclosing_function(s, node, ctx.tree)
        meaning = (
            "legacy SPMD grids run their instances one after another on one NeuronCore"
            if legacy else "the bracket holds the logical-NeuronCore degree (1 or 2), not a grid"
        )
        if isinstance(grid, ast.Lambda) or (isinstance(grid, ast.Name) and (
                _lambda_bound(scope, grid.id) or _lambda_bound(ctx.tree, grid.id))):
            yield Spot(grid, (
                f"{kname}[{chain_text(grid) or 'lambda'}] launches an NKI kernel with a Triton grid lambda: {meaning}; "
                f"call {kname}(...) (or {kname}[2](...) for LNC=2) and loop over 128-row tiles inside the kernel"
            ), Level.ERROR, kname)
            continue
        if _contains(grid, lambda n: isinstance(n, ast.Call) and (
                chain_text(n.func).endswith("cdiv") or (other_name(ctx, n.func) or "").startswith("triton."))):
            yield Spot(grid, (
                f"{kname}[...] sizes the launch grid from the data (triton.cdiv): {meaning}; loop over tiles "
                f"inside the kernel instead"
            ), Level.WARNING, kname)
            continue
        items = grid.elts if isinstance(grid, ast.Tuple) else [grid]
        thready = [chain_text(e) for e in items if isinstance(e, (ast.Name, ast.Attribute)) and _THREADY.search(chain_text(e))]
        if thready:
            yield Spot(grid, (
                f"{kname}[...] passes {thready[0]} (threads per block) as a launch dimension: there are no threads on "
                f"Trainium and {meaning}; one instruction processes a whole 128-partition tile"
            ), Level.WARNING, kname)


def _enclosing_function(s: FileScan, node: ast.AST, tree: ast.Module) -> ast.AST | None:
    p = s.parent(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
        p = s.parent(p)
    return p


# ------------------------------------------------------------------ NKI416 grid-stride loops
_ID_CATEGORIES = (gn.THREAD, gn.BLOCK, gn.PROGRAM_ID)


_SIZE_RX = re.compile(r"blockDim|gridDim|gridsize|num_programs")


def _id_sources(s: FileScan, fn: ast.FunctionDef) -> tuple[set[int], set[str], set[int], set[str]]:
    """GPU id nodes in fn and names derived from them; grid-size nodes and names."""
    inside = {id(n) for n in s.nodes(fn)}
    id_nodes = {id(h.node) for h in s.of(*_ID_CATEGORIES) if id(h.node) in inside}
    size_nodes = {
        id(h.node) for h in s.of(gn.BLOCK, gn.PROGRAM_ID) if id(h.node) in inside and _SIZE_RX.search(chain_text(h.node))
    }
    id_names: set[str] = set()
    size_names: set[str] = set()
    assigns = [n for n in s.nodes(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)]
    for _ in range(3):
        for node in assigns:
            target = node.targets[0].id
            if _mentions(node.value, id_nodes, id_names):
                id_names.add(target)
            if _mentions(node.value, size_nodes, size_names):
                size_names.add(target)
    return id_nodes, id_names, size_nodes, size_names


def _mentions(expr: ast.AST, nodes: set[int], names: set[str]) -> bool:
    for n in ast.walk(expr):
        if id(n) in nodes:
            return True
        if isinstance(n, ast.Name) and n.id in names:
            return True
    return False


def grid_stride_loops(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    if not any(True for _ in s.of(*_ID_CATEGORIES)):
        return
    for fn in s.device_functions:
        id_nodes, id_names, size_nodes, size_names = _id_sources(s, fn)
        if not id_nodes:
            continue
        for node in s.nodes(fn):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and len(node.iter.args) >= 3:
                start, step = node.iter.args[0], node.iter.args[2]
                if _mentions(start, id_nodes, id_names) and _mentions(step, size_nodes, size_names):
                    yield Spot(header_span(ctx, node, node.iter), (
                        f"grid-stride loop over {chain_text(node.target) or 'the index'} (starts at the thread/program "
                        f"id, steps by the grid size): the NKI kernel sees the whole tensor; loop over 128-row tiles "
                        f"with for t in range((n + 127) // 128) and a min()-bounded last tile"
                    ), kernel=(s.function_of(node) or fn).name)
            elif isinstance(node, ast.While):
                test_names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
                for sub in ast.walk(node):
                    if (isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.Add) and isinstance(sub.target, ast.Name)
                            and sub.target.id in test_names and _mentions(sub.value, size_nodes, size_names)):
                        yield Spot(header_span(ctx, node, node.test), (
                            f"grid-stride while loop ({sub.target.id} += grid size): the NKI kernel sees the whole "
                            f"tensor; loop over 128-row tiles with a min()-bounded last tile instead"
                        ), kernel=(s.function_of(node) or fn).name)
                        break


# ------------------------------------------------------------------ NKI417 one tile per program
def one_tile_per_program(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    model = ctx.model
    for kernel in model.kernels:
        if kernel.kind != "root":
            continue
        graph = kernel.graph
        if any(True for _ in graph.loops()) or graph.truncated:
            continue
        fn = kernel.node
        pid_calls = [
            n for n in s.nodes(fn)
            if isinstance(n, ast.Call) and nki_name(ctx, n.func) == "nki.language.program_id"
        ]
        if not pid_calls:
            continue
        pid_names: set[str] = set()
        assigns = [n for n in s.nodes(fn) if isinstance(n, ast.Assign)]
        for _ in range(3):
            for node in assigns:
                if any(c in pid_calls or (isinstance(c, ast.Name) and c.id in pid_names) for c in ast.walk(node.value)):
                    pid_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if any(isinstance(n, ast.Assert) and "num_programs" in ast.unparse(n) for n in s.nodes(fn)):
            continue
        tiled = None
        for node in s.nodes(fn):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                if any(c in pid_calls for c in ast.walk(node)) or any(
                        isinstance(n, ast.Name) and n.id in pid_names for n in ast.walk(node)):
                    tiled = node
                    break
        if tiled is None:
            continue
        used = any(
            data.get("buffer") in ("hbm", "shared_hbm", "private_hbm") and any(
                word_in(name, data.get("index")) for name in pid_names | {"program_id"})
            for _, data in graph.views()
        )
        if not used:
            continue
        if model.legacy:
            msg = (
                f"{kernel.name} computes one tile per program ({ast.unparse(tiled)}) with no loop over tiles: legacy "
                f"SPMD programs run one after another on one NeuronCore, so the grid buys nothing; a 128-row tile "
                f"loop inside the kernel is the portable form"
            )
            level = Level.NOTE
        else:
            msg = (
                f"{kernel.name} computes one tile per program ({ast.unparse(tiled)}) with no loop over tiles: a "
                f"launch has at most {max(ctx.target.lnc_max, 1)} programs (the LNC degree), so only that many "
                f"tiles are ever processed; loop over 128-row tiles and split the loop with nl.program_id(0)"
            )
            level = Level.WARNING
        yield Spot(tiled, msg, level, kernel.name)


# ------------------------------------------------------------------ NKI418/419 per-element work
def _is_arange_loop(ctx: RuleContext, site: Site | None) -> bool:
    node = site.node if site is not None else None
    return isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and (
        nki_name(ctx, node.iter.func) == "nki.language.arange")


def _single_element(graph: KernelGraph, node_id: str, arange_iters: set[str], depth: int = 3) -> bool:
    """One element of a larger tensor: a view selecting a single element of a
    tensor whose buffer the model knows, or a legacy result tile of one
    element. Whole allocations, lists of tiles and helper parameters of
    unknown buffer never count."""
    data = graph.attrs(node_id)
    if data.get("kind") == "tensor":
        return _single_result(graph, node_id, arange_iters, depth)
    base = graph.attrs(graph.base_tensor(node_id))
    if base.get("buffer") in (None, "unknown"):
        return False
    base_shape = base.get("shape_v")
    if base_shape is not None and (len(base_shape) == 0 or fl.element_count(base_shape) == 1):
        return False  # a one-element tensor is not "one element of many"
    items = data.get("index_v") or []
    index = data.get("index") or ""
    if base_shape is None and len(items) < 2:
        return False  # rank unknown: x[i] may well be a whole row or tile
    if base_shape is not None and len(items) < len(base_shape):
        return False
    shape = data.get("shape_v")
    if shape is not None and (len(shape) == 0 or fl.element_count(shape) == 1):
        return True
    return bool(items) and all(_scalar_item(it, index, arange_iters) for it in items)


def _single_result(graph: KernelGraph, node_id: str, arange_iters: set[str], depth: int) -> bool:
    """A legacy result tile of one element whose inputs were single elements
    (the model's shape for a tile loaded from x[i] of unknown rank is not
    trusted on its own)."""
    data = graph.attrs(node_id)
    shape = data.get("shape_v")
    if data.get("origin") != "result" or shape is None or not (len(shape) == 0 or fl.element_count(shape) == 1):
        return False
    if depth <= 0:
        return False
    writers = graph.ops_writing(node_id)
    if not writers:
        return False
    for op in writers:
        inputs = [n for _, n in fl.reads(graph, op) if graph.attrs(n).get("kind") in ("tensor", "view")
                  and not _opaque_param(graph.attrs(n))]
        if not inputs or not all(_single_element(graph, n, arange_iters, depth - 1) for n in inputs):
            return False
    return True


def _scalar_item(item, index: str, arange_iters: set[str]) -> bool:
    """An index item that selects one element along its axis."""
    if isinstance(item, SliceV):
        start = item.start if not (isinstance(item.start, Const) and item.start.value is None) else Const(0)
        if isinstance(item.stop, Const) and item.stop.value is None:
            return False
        return const_int(int_binop(ast.Sub, item.stop, start)) == 1
    if isinstance(item, DsV):
        return const_int(item.size) == 1
    if isinstance(item, Unknown):
        return item.reason == "loop element" and any(word_in(it, index) for it in arange_iters)
    return isinstance(item, (Const, Int)) and (not isinstance(item, Const) or isinstance(item.value, int))


def _loop_iters(graph: KernelGraph, loops: tuple[str, ...]) -> dict[str, str]:
    return {lp: graph.attrs(lp).get("iterator") or "" for lp in loops}


def _operands(graph: KernelGraph, op: str) -> list[str]:
    return [n for _, n in fl.reads(graph, op)] + [n for _, n in fl.writes(graph, op)]


def _hbm(data: dict) -> bool:
    return data.get("buffer") in ("hbm", "shared_hbm", "private_hbm")


def per_element_loops(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        arange_loops = {lp for lp, d in graph.loops() if _is_arange_loop(ctx, d.get("site"))}
        arange_iters = {graph.attrs(lp).get("iterator") or "" for lp in arange_loops}
        found: dict[str, list[str]] = {}
        for op, data in graph.ops():
            if data.get("engine") == "dma" or data.get("assignment"):
                continue
            loops = data.get("loops", ())
            if not loops:
                continue
            operands = _operands(graph, op)
            # A whole kernel parameter of unknown shape next to a tile may be a scalar
            # (nl.multiply(x, a) with a float a): it neither qualifies nor disqualifies.
            tensors = [n for n in operands if graph.attrs(n).get("kind") in ("tensor", "view")
                       and not _opaque_param(graph.attrs(n))]
            if not tensors or not all(_single_element(graph, n, arange_iters) for n in tensors):
                continue
            iters = _loop_iters(graph, loops)
            indexed = [
                lp for lp in loops
                if any(word_in(iters[lp], graph.attrs(n).get("index")) for n in tensors)
                or any(word_in(iters[lp], graph.attrs(v).get("index")) for n in tensors for v in _views_behind(graph, n))
            ]
            if not indexed:
                continue
            outer = indexed[0]
            upper = fl.loop_trip_upper(graph, outer)
            if upper is not None and upper <= 1:
                continue
            found.setdefault(outer, []).append(op)
        for loop, op_ids in found.items():
            ldata = graph.attrs(loop)
            trip = ldata.get("trip_v")
            trip_text = str(const_int(trip)) if trip is not None and const_int(trip) is not None else "shape-dependent"
            apis = sorted({fl.short(graph.attrs(o).get("api")) for o in op_ids})
            where = loop_header(ctx, ldata.get("site"))
            if where is None:
                continue
            yield Spot(where, (
                f"loop over {ldata.get('iterator') or 'elements'} ({trip_text} iterations) computes one element per "
                f"iteration ({', '.join(apis)} on single-element tiles), one thread's work per instruction: every "
                f"instruction has a fixed issue cost and current NKI unrolls the loop; compute whole [128, F] tiles "
                f"(nisa.tensor_tensor / nl.* on 128-partition tiles, nisa.nc_matmul for products)"
            ), kernel=kernel.name)


def _opaque_param(data: dict) -> bool:
    return data.get("kind") == "tensor" and data.get("origin") == "param" and data.get("shape_v") is None


def _views_behind(graph: KernelGraph, node_id: str) -> list[str]:
    """The views a legacy result tile was loaded from (for index text)."""
    out = []
    for op in graph.ops_writing(node_id):
        odata = graph.attrs(op)
        if fl.short(odata.get("api")) in ("load", "load_transpose2d"):
            out.extend(n for _, n in fl.reads(graph, op) if graph.attrs(n).get("kind") == "view")
    return out


def one_element_dmas(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        arange_loops = {lp for lp, d in graph.loops() if _is_arange_loop(ctx, d.get("site"))}
        arange_iters = {graph.attrs(lp).get("iterator") or "" for lp in arange_loops}
        for op, data in graph.ops():
            if data.get("engine") != "dma":
                continue
            loops = data.get("loops", ())
            if not loops:
                continue
            iters = _loop_iters(graph, loops)
            for n in _operands(graph, op):
                nd = graph.attrs(n)
                if nd.get("kind") != "view" or not _hbm(nd):
                    continue
                if not _single_element(graph, n, arange_iters):
                    continue
                hit = [lp for lp in loops if word_in(iters[lp], nd.get("index"))]
                if not hit:
                    continue
                upper = fl.loop_trip_upper(graph, hit[0])
                if upper is not None and upper <= 1:
                    continue
                name = nd.get("name") or graph.attrs(graph.base_tensor(n)).get("name") or "the tensor"
                yield Spot(data.get("site"), (
                    f"{fl.short(data.get('api'))} moves one element of {name}[{str(nd.get('index')).strip('()')}] per iteration of the "
                    f"loop over {iters[hit[0]]}: one DMA per element is overhead-bound (the DMA guide wants >= 2 KiB "
                    f"per partition); move a [128, F] tile per DMA (nisa.dma_copy / nl.load of a 128-row slice)"
                ), kernel=kernel.name)
                break


# ------------------------------------------------------------------ NKI420 warp-sized tiles
_BLOCKY = re.compile(r"(?i)^(block|tile|warp|thread|wmma|mma)|^(b|t)[mnk]$|_(m|n|k)$|block_?size|warp")
_QUADRANT_APIS = {"nc_stream_shuffle", "nc_transpose", "local_gather", "nc_n_gather", "tensor_partition_reduce"}


def _shape_arg(call: ast.Call) -> ast.AST | None:
    if call.args:
        return call.args[0]
    for kw in call.keywords:
        if kw.arg == "shape":
            return kw.value
    return None


def warp_sized_tiles(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        quadrant_aware = any(
            fl.short(d.get("api")) in _QUADRANT_APIS or "tile_position" in (d.get("params_v") or {})
            for _, d in graph.ops()
        )
        if quadrant_aware:
            continue
        for nid, data in graph.tensors():
            if data.get("origin") != "alloc" or data.get("buffer") not in ("sbuf", "psum"):
                continue
            shape = data.get("shape_v")
            if not shape or len(shape) < 2:
                continue
            p = const_int(shape[0])
            if p not in (16, 32):
                continue
            call = data.get("call")
            arg = _shape_arg(call) if isinstance(call, ast.Call) else None
            if not isinstance(arg, (ast.Tuple, ast.List)) or not arg.elts:
                continue
            first = arg.elts[0]
            text = chain_text(first) if isinstance(first, (ast.Name, ast.Attribute)) else ""
            square16 = (p == 16 and len(shape) == 2 and const_int(shape[1]) == 16 and isinstance(first, ast.Constant))
            if not (square16 or (text and _BLOCKY.search(text.split(".")[-1]))):
                continue
            why = f"{text} = {p}" if text else "a 16x16 WMMA fragment"
            yield Spot(data.get("site"), (
                f"{data.get('buffer', '').upper()} tile {data.get('name') or 'tile'} has {p} partitions ({why}), a "
                f"warp-sized GPU tile: engines process {ctx.target.partitions} partitions per instruction, so it uses "
                f"{100 * p // ctx.target.partitions}% of the VectorE/ScalarE lanes and {p} of TensorE's "
                f"{ctx.target.partitions} rows; use nl.tile_size.pmax ({ctx.target.partitions}) rows per tile"
            ), kernel=kernel.name)


# ------------------------------------------------------------------ NKI421 log-step trees
def _halves(stmt: ast.AST, var: str) -> bool:
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == var:
        c = stmt.value
        return (isinstance(stmt.op, ast.FloorDiv) and isinstance(c, ast.Constant) and c.value == 2) or (
            isinstance(stmt.op, ast.RShift) and isinstance(c, ast.Constant) and c.value == 1)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == var:
        v = stmt.value
        return isinstance(v, ast.BinOp) and isinstance(v.left, ast.Name) and v.left.id == var and isinstance(v.right, ast.Constant) and (
            (isinstance(v.op, ast.FloorDiv) and v.right.value == 2) or (isinstance(v.op, ast.RShift) and v.right.value == 1))
    return False


def _tile_work(ctx: RuleContext, body: list[ast.stmt], var: str) -> bool:
    """The loop body computes on tiles sliced by var (a pairwise combine)."""
    calls_nki = False
    sliced = False
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and nki_name(ctx, n.func):
                calls_nki = True
            if isinstance(n, ast.Subscript) and any(isinstance(x, ast.Name) and x.id == var for x in ast.walk(n.slice)):
                sliced = True
    return calls_nki and sliced


def log_step_trees(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if isinstance(node, ast.While):
                names = [n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)]
                for var in names:
                    if any(_halves(st, var) for st in ast.walk(node)) and _tile_work(ctx, node.body, var):
                        yield Spot(header_span(ctx, node, node.test), _tree_message(var), kernel=(s.function_of(node) or fn).name)
                        break
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                var = node.target.id
                it = node.iter
                values = None
                if isinstance(it, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in it.elts):
                    values = [e.value for e in it.elts]
                if values and len(values) >= 3 and all(v > 0 and v & (v - 1) == 0 for v in values) and all(
                        a == 2 * b for a, b in zip(values, values[1:])) and _tile_work(ctx, node.body, var):
                    yield Spot(header_span(ctx, node, node.iter), _tree_message(var), kernel=(s.function_of(node) or fn).name)


def _tree_message(var: str) -> str:
    return (
        f"log-step tree reduction (halving {var} each step): a GPU pattern for combining thread pairs; on Trainium one "
        f"nisa.tensor_reduce(dst, op=nl.add, data=t, axis=1) reduces a whole row in one instruction (fp32 "
        f"internally), while the tree costs log2(n) instructions on shrinking tiles and changes the summation order"
    )


# ------------------------------------------------------------------ NKI422 bank-conflict padding
_PAD = re.compile(r"(?i)pad|skew")


def padded_tiles(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for nid, data in graph.tensors():
            if data.get("origin") != "alloc" or data.get("buffer") not in ("sbuf", "psum"):
                continue
            call = data.get("call")
            arg = _shape_arg(call) if isinstance(call, ast.Call) else None
            if not isinstance(arg, (ast.Tuple, ast.List)) or len(arg.elts) < 2:
                continue
            shape = data.get("shape_v") or ()
            p = const_int(shape[0]) if shape else None
            f = const_int(shape[-1]) if shape else None
            last = arg.elts[-1]
            plus_one = isinstance(last, ast.BinOp) and isinstance(last.op, ast.Add) and isinstance(last.right, ast.Constant) and last.right.value == 1 and ast.unparse(last.left) == ast.unparse(arg.elts[0])
            literal = p is not None and f == p + 1 and p in (16, 32, 64, 128) and isinstance(last, ast.Constant)
            if not (plus_one or literal):
                continue
            yield Spot(data.get("site"), (
                f"{data.get('buffer', '').upper()} tile {data.get('name') or 'tile'} is padded ({ast.unparse(arg)}) "
                f"against shared-memory bank conflicts: SBUF has no banks to conflict on, the padding wastes bytes per "
                f"partition and breaks the square shape nisa.nc_transpose / matmul expect; drop the padding"
            ), kernel=kernel.name)


# ------------------------------------------------------------------ NKI423 pointer arithmetic
_LOADERS = {"nki.language.load", "nki.language.store", "nki.isa.dma_copy", "nki.language.load_transpose2d",
            "nki.isa.dma_transpose", "nki.language.atomic_rmw"}


def _param_names(fn: ast.FunctionDef) -> list[ast.arg]:
    args = fn.args
    return args.posonlyargs + args.args + args.kwonlyargs


def pointer_arithmetic(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    model = ctx.model
    tensor_params: dict[str, set[str]] = {}
    for _, graph in model.graphs():
        for _, data in graph.tensors():
            if data.get("origin") == "param" and data.get("name"):
                tensor_params.setdefault(str(data.get("function")), set()).add(str(data["name"]))
    for fn in s.device_functions:
        for node in s.nodes(fn):
            owner = s.function_of(node) or fn
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "data_ptr":
                yield Spot(node, (
                    f"{ast.unparse(node)} takes a raw device pointer in NKI kernel code ({owner.name}): NKI tensors are "
                    f"shaped views with no pointers; address data with slices, nl.ds or .ap() access patterns"
                ), Level.ERROR, owner.name)
                continue
            if isinstance(node, ast.Call):
                callee = nki_name(ctx, node.func) or other_name(ctx, node.func) or ""
                if callee not in _LOADERS and callee not in ("triton.language.load", "triton.language.store"):
                    continue
                params = {a.arg for a in _param_names(owner)}
                pointers = tensor_params.get(owner.name, set()) | {p for p in params if p.endswith(("_ptr", "_ptrs"))}
                for arg in list(node.args) + [k.value for k in node.keywords]:
                    # Only the argument itself (a chain of + / -), never index
                    # arithmetic inside a subscript or a nested call.
                    for sub in _binop_chain(arg):
                        if isinstance(sub.op, (ast.Add, ast.Sub)):
                            sides = [sub.left, sub.right]
                            ptr = [x.id for x in sides if isinstance(x, ast.Name) and x.id in pointers and x.id in params]
                            others = [x for x in sides if not (isinstance(x, ast.Name) and x.id in ptr)]
                            # tensor + tensor is elementwise arithmetic on HBM, not an address.
                            if ptr and not any(isinstance(x, ast.Name) and x.id in pointers for x in others):
                                yield Spot(sub, (
                                    f"{ast.unparse(sub)} adds offsets to the kernel argument {ptr[0]} as if it were a "
                                    f"pointer: NKI tensors are shaped views, so this is at best elementwise arithmetic "
                                    f"on HBM data; use slices ({ptr[0]}[r0:r1, c0:c1]), nl.ds or .ap() access patterns"
                                ), Level.ERROR, owner.name)
                                break
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)) and isinstance(node.target, ast.Name):
                name = node.target.id
                params = {a.arg for a in _param_names(owner)}
                if name in params and (name in tensor_params.get(owner.name, set()) or name.endswith(("_ptr", "_ptrs"))):
                    yield Spot(node, (
                        f"{ast.unparse(node)} advances the kernel argument {name} like a pointer: NKI tensors have no "
                        f"pointers; index the next tile with a slice ({name}[k0:k0 + 128, :]) instead"
                    ), Level.ERROR, owner.name)


def _binop_chain(node: ast.AST) -> Iterator[ast.BinOp]:
    while isinstance(node, ast.BinOp):
        yield node
        node = node.left


# ------------------------------------------------------------------ NKI424 flat index math
_STRIDE = re.compile(r"(?i)^stride|stride_|_stride$|^s[xyz]?_?[mnk]$")


def flat_index_math(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if not isinstance(node, ast.Subscript):
                continue
            strides = [
                n for n in ast.walk(node.slice)
                if (isinstance(n, ast.Name) and re.search(r"(?i)^stride|stride_|_stride$", n.id))
                or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "stride")
            ]
            if not strides or not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) for n in ast.walk(node.slice)):
                continue
            owner = s.function_of(node) or fn
            yield Spot(node, (
                f"{ast.unparse(node)[:80]} computes a flat row-major offset with {ast.unparse(strides[0])}: Trainium "
                f"tiles are 2-D (partition x free) and HBM is read by strided DMA over views; keep the tensor "
                f"multi-dimensional (reshape the HBM view to [P, F]) and slice it"
            ), kernel=owner.name)


# ------------------------------------------------------------------ NKI425 masked loads
def masked_loads(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if isinstance(node, ast.Call) and nki_name(ctx, node.func):
                other = next((k for k in node.keywords if k.arg == "other"), None)
                if other is not None:
                    owner = s.function_of(node) or fn
                    yield Spot(other.value, (
                        f"other={ast.unparse(other.value)} is Triton's fill value for masked lanes: NKI has no fill "
                        f"value ({'masked-off elements are simply not written' if ctx.model.legacy else 'current NKI has no masks at all'}); "
                        f"bound the tile with min() and nisa.memset the tail if a reduction needs neutral values"
                    ), Level.ERROR, owner.name)
    if not ctx.model.legacy:
        return
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if fl.short(data.get("api")) != "load" or "mask" not in (data.get("params_v") or {}):
                continue
            reducers = [c for c in fl.consumers(graph, op, depth=2)
                        if (fl.is_sum_reduction(graph.attrs(c)) or fl.is_max_reduction(graph.attrs(c)))
                        and "mask" not in (graph.attrs(c).get("params_v") or {})]
            if not reducers:
                continue
            red = graph.attrs(reducers[0])
            yield Spot(data.get("site"), (
                f"masked nl.load feeds a reduction ({fl.short(red.get('api'))} at line {getattr(red.get('site'), 'line', '?')}): "
                f"legacy masks leave masked-off lanes unwritten (no Triton other= fill), so the reduction may read "
                f"garbage in the tail; reduce only the valid slice, or nl.full/memset the tile with the neutral value first"
            ), Level.WARNING, kernel.name)


# ------------------------------------------------------------------ NKI426 GPU runtime in device and host code
def _cuda_string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip().lower().startswith("cuda")


def _guarded(s: FileScan, node: ast.AST) -> bool:
    p = s.parent(node)
    while p is not None:
        if isinstance(p, (ast.If, ast.IfExp)) and re.search(r"cuda|is_available|HAS_|gpu|triton", ast.unparse(p.test), re.I):
            return True
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.search(r"(?i)cuda|gpu|triton", p.name):
            return True
        p = s.parent(p)
    return False


def runtime_api(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    has_kernels = bool(ctx.model.kernels)
    host_sync = [h for h in s.host_of(gn.BARRIER) if h.gpu.origin == "torch.cuda"]
    for hit in list(s.of(gn.RUNTIME)) + list(s.host_of(gn.RUNTIME)) + host_sync:
        if hit.call is not None and (other_name(ctx, hit.node) or "") in gn.RUNTIME_COMPILERS:
            continue  # live CUDA source: reported by NKI431
        device = s.in_device(hit.node)
        if not device and (not has_kernels or _guarded(s, hit.node)):
            continue
        yield _runtime_spot(hit.node, chain_text(hit.node), device, s)
    for node in s.all_nodes:
        if not isinstance(node, ast.Call):
            continue
        text = None
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" and not other_name(ctx, node.func):
            text = ".cuda()"
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "to" and node.args and _cuda_string(node.args[0]):
            text = f".to({ast.unparse(node.args[0])})"
        elif (other_name(ctx, node.func) or "") == "torch.device" and node.args and _cuda_string(node.args[0]):
            text = ast.unparse(node)
        else:
            kw = next((k for k in node.keywords if k.arg == "device" and _cuda_string(k.value)), None)
            if kw is not None:
                text = f"device={ast.unparse(kw.value)}"
        if text is None:
            continue
        device = s.in_device(node)
        if not device and (not has_kernels or _guarded(s, node)):
            continue
        yield _runtime_spot(node, text, device, s)


def _runtime_spot(node: ast.AST, text: str, device: bool, s: FileScan) -> Spot:
    fn = s.function_of(node)
    if device:
        return Spot(node, (
            f"{text} is a GPU runtime call inside NKI kernel code ({fn.name if fn else '?'}): there is no CUDA device "
            f"on Trainium and the kernel body is compiled, not run on the host; {gn.REPLACE_RUNTIME}"
        ), Level.ERROR, fn.name if fn else None)
    return Spot(node, (
        f"{text} in host code of a module that defines NKI kernels: a Trainium host has no CUDA device; pass "
        f"torch-xla / JAX / numpy arrays to the nki.jit kernel (or guard the GPU path with a backend check)"
    ), Level.WARNING, None)


# ------------------------------------------------------------------ NKI427 host libraries on tiles
_HOST_LIBS = ("numpy", "math", "torch", "scipy", "jax.numpy", "cupy")
_SHAPE_FUNCS = {"prod", "ceil", "floor", "finfo", "iinfo", "dtype", "isclose", "log2", "sqrt", "dtype", "result_type"}
_HOST_METHODS = {"numpy", "cpu", "tolist", "item", "detach"}


def host_library_on_tiles(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    names_by_fn: dict[str, set[str]] = {}
    for _, graph in ctx.model.graphs():
        for _, data in graph.tensors():
            # A parameter of unknown shape may be a Python scalar the model saw next
            # to a tile (operand0=scale); only allocations, results and parameters
            # with a known shape are certainly tensors.
            if data.get("name") and data.get("function") and not _opaque_param(data):
                names_by_fn.setdefault(str(data["function"]), set()).add(str(data["name"]))
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if not isinstance(node, ast.Call):
                continue
            owner = s.function_of(node) or fn
            tiles = names_by_fn.get(owner.name, set())
            if isinstance(node.func, ast.Attribute) and node.func.attr in _HOST_METHODS and not node.args and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id in tiles and not other_name(ctx, node.func):
                yield Spot(node, (
                    f"{ast.unparse(node)} treats the NKI tensor {node.func.value.id} as a host tensor: the kernel body is "
                    f"compiled, tile values do not exist in Python; return the tile as an extra output or use "
                    f"nl.device_print to inspect it"
                ), Level.ERROR, owner.name)
                continue
            qual = other_name(ctx, node.func)
            if qual is None or not any(qual == r or qual.startswith(r + ".") for r in _HOST_LIBS):
                continue
            if qual.rsplit(".", 1)[-1] in _SHAPE_FUNCS and qual.startswith(("numpy", "math")):
                continue
            args = list(node.args) + [k.value for k in node.keywords]
            tile_args = [a.id for a in args if isinstance(a, ast.Name) and a.id in tiles]
            if qual.startswith("torch.") and not tile_args:
                if qual.split(".")[1] in ("finfo", "iinfo", "float32", "bfloat16", "float16", "dtype", "Size"):
                    continue
                yield Spot(node, (
                    f"{qual}(...) in NKI kernel code ({owner.name}) builds a host (torch) tensor at compile time, not a "
                    f"device buffer; allocate with nl.ndarray(shape, dtype, buffer=nl.sbuf) and compute with "
                    f"nki.language / nki.isa"
                ), Level.ERROR, owner.name)
                continue
            if not tile_args:
                continue
            yield Spot(node, (
                f"{ast.unparse(node.func)}({', '.join(tile_args)}) applies a host library to the NKI tensor {tile_args[0]}: the kernel is "
                f"compiled, so {qual.split('.')[0]} never sees device data (the CPU simulator may run it, the compiler "
                f"will not); use the nki.language / nki.isa equivalent (nl.exp / nisa.activation, nisa.nc_matmul, ...)"
            ), Level.ERROR, owner.name)


# ------------------------------------------------------------------ NKI428 dtype objects
def gpu_dtypes(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    for hit in s.of(gn.DTYPE):
        parent = s.parent(hit.node)
        ok = hit.role == "dtype"
        if hit.role == "argument" and isinstance(parent, ast.Call):
            callee = nki_name(ctx, parent.func)
            method = parent.func.attr if isinstance(parent.func, ast.Attribute) else ""
            ok = callee is not None or method in ("to", "astype", "view")
        if not ok and isinstance(parent, ast.keyword) and parent.arg in ("dtype", "out_dtype", "acc_dtype"):
            ok = True
        if not ok:
            continue
        yield Spot(hit.node, _dtype_message(hit.gpu.shown, s.function_of(hit.node)), Level.ERROR,
                   (s.function_of(hit.node) or hit.function).name if (s.function_of(hit.node) or hit.function) else None)
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if isinstance(node, ast.keyword) and node.arg == "dtype" and isinstance(node.value, ast.Name) and \
                    node.value.id in ("float", "complex") and node.value.id not in s.bound:
                owner = s.function_of(node) or fn
                yield Spot(node.value, _dtype_message(f"dtype={node.value.id} (numpy float64/complex128)", owner),
                           Level.ERROR, owner.name)


def _dtype_message(shown: str, fn: ast.FunctionDef | None) -> str:
    wide = any(w in shown for w in ("64", "double", "complex", "fnuz", "=float"))
    why = (
        "Trainium has no 64-bit float, complex or fnuz FP8 types" if wide else
        "NKI APIs take nki.language dtypes, not GPU framework dtype objects"
    )
    return f"{shown} is used as a dtype in NKI kernel code ({fn.name if fn else '?'}): {why}; {gn.REPLACE_DTYPE}"


# ------------------------------------------------------------------ NKI430 power-of-two padding
def _is_log2_ceil(node: ast.AST, ctx: RuleContext) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            name = other_name(ctx, n.func) or chain_text(n.func)
            if name.endswith("log2") or (isinstance(n.func, ast.Attribute) and n.func.attr == "bit_length"):
                return True
    return False


def pow2_padding(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    for hit in s.of(gn.POW2):
        fn = s.function_of(hit.node) or hit.function
        yield Spot(hit.call or hit.node, _pow2_message(chain_text(hit.node), fn), kernel=fn.name if fn else None)
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if isinstance(node, ast.BinOp) and (
                (isinstance(node.op, ast.LShift) and isinstance(node.left, ast.Constant) and node.left.value == 1)
                or (isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant) and node.left.value == 2)
            ) and _is_log2_ceil(node.right, ctx):
                owner = s.function_of(node) or fn
                yield Spot(node, _pow2_message(ast.unparse(node), owner), kernel=owner.name)


def _pow2_message(text: str, fn: ast.FunctionDef | None) -> str:
    return (
        f"{text} rounds a block size up to a power of two in NKI kernel code ({fn.name if fn else '?'}): Triton needs "
        f"power-of-two arange extents, NKI does not; the padding wastes SBUF and, without masks, reads or writes past "
        f"the data; use the exact extent and a min()-bounded last tile"
    )


# ------------------------------------------------------------------ NKI431 CUDA source in strings
def _string_value(ctx: RuleContext, node: ast.AST, scope: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.Name):
        for where in (scope, ctx.tree):
            if where is None:
                continue
            for value in _assigned_values(where, node.id):
                text = _string_value(ctx, value, None)
                if text is not None:
                    return text
    if isinstance(node, (ast.List, ast.Tuple)):
        parts = [_string_value(ctx, e, scope) for e in node.elts]
        return "\n".join(p for p in parts if p)
    return None


def gpu_source_strings(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    if not ctx.model.kernels:
        return  # a pure GPU module is not an NKI port
    for node in s.all_nodes:
        if not isinstance(node, ast.Call):
            continue
        qual = other_name(ctx, node.func)
        if qual is None or not any(qual == c or qual.endswith("." + c.split(".")[-1]) and qual.split(".")[0] == c.split(".")[0]
                                   for c in gn.RUNTIME_COMPILERS):
            continue
        scope = _enclosing_function(s, node, ctx.tree)
        args = list(node.args) + [k.value for k in node.keywords if k.arg in (None, "code", "source", "cuda_sources", "operation", "map_expr", "reduce_expr", "preamble")]
        for arg in args:
            text = _string_value(ctx, arg, scope)
            tokens = [t for t in gn.CUDA_SOURCE_TOKENS if text and t in text]
            if tokens:
                yield Spot(node, (
                    f"{qual} compiles CUDA C source ({', '.join(tokens[:3])}) at run time: live GPU code that never runs "
                    f"on Trainium; port it into the NKI kernel (tiles, nisa.* instructions) or delete this path"
                ), Level.ERROR, None)
                break


# ------------------------------------------------------------------ NKI432 GPU framework imports
def gpu_imports(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    if not ctx.model.kernels:
        return
    for node in s.all_nodes:
        paths: list[str] = []
        if isinstance(node, ast.Import):
            paths = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            paths = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        hits = [p for p in paths if any(p == r or p.startswith(r + ".") for r in gn.GPU_IMPORT_ROOTS)]
        if not hits:
            continue
        mod = hits[-1] if isinstance(node, ast.ImportFrom) and hits[-1] != paths[0] else hits[0]
        yield Spot(node, (
            f"import of {mod} in a module that defines NKI kernels: a GPU framework that is unavailable (or dead code) "
            f"on Trainium, a sign that part of the kernel was not ported; move GPU code to a separate module or make "
            f"the import optional"
        ), Level.NOTE, None)


# ------------------------------------------------------------------ NKI433 port residue
_RESIDUE = [(t, re.compile(re.escape(t) if not t[0].isalpha() or "." in t or " " in t else rf"\b{re.escape(t)}", re.I if " " in t else 0))
            for t in gn.RESIDUE_TOKENS]


def residue_tokens(text: str) -> list[str]:
    found = [t for t, rx in _RESIDUE if rx.search(text)]
    # "tl.load" already says "tl."; keep the most specific token of each match.
    return [t for t in found if not any(t != o and t.lower() in o.lower() for o in found)]


def port_residue(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    comments = ctx.source.comments()
    for fn in s.device_functions:
        lines: dict[int, list[str]] = {}
        end = getattr(fn, "end_lineno", fn.lineno) or fn.lineno
        for line, _, text in comments:
            if fn.lineno <= line <= end:
                toks = residue_tokens(text)
                if toks:
                    lines.setdefault(line, []).extend(toks)
        for node in s.nodes(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 3:
                parent = s.parent(node)
                if isinstance(parent, ast.keyword) or isinstance(s.parent(parent) if parent else None, ast.Call):
                    continue  # names, messages: not prose left from the GPU version
                toks = residue_tokens(node.value)
                if toks:
                    lines.setdefault(node.lineno, []).extend(toks)
        if not lines:
            continue
        counts: dict[str, int] = {}
        for toks in lines.values():
            for t in toks:
                counts[t] = counts.get(t, 0) + 1
        top = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in sorted(counts.items(), key=lambda kv: -kv[1])[:5])
        where = ", ".join(str(n) for n in sorted(lines)[:8]) + (" ..." if len(lines) > 8 else "")
        yield Spot(def_span(ctx, fn), (
            f"{fn.name}: {len(lines)} comment/docstring line(s) still mention CUDA/Triton ({top}) at lines {where}; "
            f"check that GPU assumptions (lockstep threads, zero-filled masks, warp reductions) did not survive the port"
        ), Level.NOTE, fn.name)


# ------------------------------------------------------------------ NKI434 program_id axis
def program_id_axes(ctx: RuleContext, s: FileScan) -> Iterator[Spot]:
    if ctx.model.legacy:
        return
    for fn in s.device_functions:
        for node in s.nodes(fn):
            if not isinstance(node, ast.Call):
                continue
            name = nki_name(ctx, node.func)
            if name not in ("nki.language.program_id", "nki.language.num_programs"):
                continue
            axis = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("axis", "axes")), None)
            if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and axis.value >= 1:
                owner = s.function_of(node) or fn
                yield Spot(node, (
                    f"{ast.unparse(node)} asks for SPMD grid axis {axis.value}: current NKI sizes a launch by the "
                    f"logical-NeuronCore degree (1 or 2; a grid that differs from it is slated to become a compile-time "
                    f"error), so axes beyond 0 are leftovers of multi-axis Triton/legacy grids that did the tiling; "
                    f"loop over those tiles inside the kernel"
                ), Level.WARNING, owner.name)
