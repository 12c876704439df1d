"""Which loop repeats a transfer and whether its data could be kept on chip (NKI303, NKI305-NKI308, NKI311)."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import INV, Loops, syms_of

from . import _dma as dma


def total_bytes(t: dma.Transfer) -> float | None:
    """Bytes one execution of the transfer moves, if known exactly."""
    side = t.onchip
    if side is None:
        return None
    per = dma.bytes_per_partition(side)
    parts = dma.exact(dma.partitions(side))
    if per is None or parts is None or per[0] != per[1] or not per[2]:
        return None
    return per[0] * parts


def reload_loop(ctx: RuleContext, graph, lf, t: dma.Transfer):
    """(loop, inner indices, level) of the outermost loop whose iterations
    load the same HBM data again with this transfer, or None."""
    model = ctx.model
    src = t.hbm
    site = graph.attrs(t.op_id).get("site")
    chosen = None
    for loop in lf.enclosing(t.op_id):
        if not loop.may_repeat():
            continue
        fixed = lf.inner_indices(t.op_id, loop)
        if fixed is None:
            break
        if any(lf.inside(w, loop.loop_id) for w in graph.ops_writing(src.base_id)):
            break
        if not model.analysis(Loops).runs_every_iteration(site, loop):
            break
        dep = lf.access_variance(src.node_id, loop, fixed)
        if dep == "variant":
            continue  # an outer loop may still repeat this whole nest
        if dep != INV:
            break
        level = Level.WARNING
        if fixed:
            fits = cache_fits(ctx, lf, t, fixed, mentioned_syms(graph, src.node_id))
            if fits is False:
                break  # keeping the nest's blocks resident would not fit comfortably
            if fits is None:
                level = Level.NOTE  # one strip of blocks of unknown size: worth a look
        chosen = (loop, fixed, level)
    return chosen


def product(values) -> int | None:
    total = 1
    for v in values:
        n = dma.exact(v)
        if n is None:
            return None
        total *= n
    return total


def mentioned_syms(graph, node_id: str) -> set:
    """Symbols the index items / access pattern of a view chain mention."""
    out: set = set()
    for _ in range(32):
        data = graph.attrs(node_id)
        if data.get("kind") != "view":
            break
        syms_of(data.get("index_v"), out)
        syms_of(list((data.get("ap_v") or {}).values()), out)
        nxt = [v for _, v, _d in graph.edges_of(node_id, "view_of")]
        if not nxt:
            break
        node_id = nxt[0]
    return out


def cache_fits(ctx: RuleContext, lf, t: dma.Transfer, fixed, mentioned: set) -> bool | None:
    """Whether the blocks an inner loop nest loads fit in a quarter of the
    usable SBUF per partition (keeping them resident is then a realistic
    fix). None when their size is unknown but they form a single strip
    (one inner loop moves the source); False otherwise."""
    varying = [lp for lp in lf.enclosing(t.op_id) if lp.sym in fixed and lp.sym in mentioned]
    side = t.onchip
    per = dma.bytes_per_partition(side) if side is not None else None
    trips = product(lp.trip for lp in varying)
    if per is None or not per[2] or trips is None:
        return None if len(varying) == 1 else False
    return per[1] * trips <= ctx.target.sbuf_usable_bytes_per_partition // 4


def repeating_loop(model, graph, lf, op_id: str):
    """The innermost loop around an op that may run more than once, if the
    op runs in every iteration of it."""
    site = graph.attrs(op_id).get("site")
    for loop in lf.enclosing(op_id):
        if not loop.may_repeat():
            continue
        return loop if model.analysis(Loops).runs_every_iteration(site, loop) else None
    return None


def indirect(graph, node_id: str) -> bool:
    """A gather/scatter access (an index tensor or vector offset)."""
    for _ in range(16):
        data = graph.attrs(node_id)
        if data.get("kind") != "view":
            return False
        values = list(data.get("index_v") or []) + list((data.get("ap_v") or {}).values())
        if any(isinstance(v, dma.TensorV) for v in values):
            return True
        nxt = [v for _, v, _d in graph.edges_of(node_id, "view_of")]
        if not nxt:
            return False
        node_id = nxt[0]
    return False
