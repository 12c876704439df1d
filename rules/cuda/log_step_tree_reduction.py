"""NKI421 log-step-tree-reduction: a log-step (halving) tree reduction over a
tile, the GPU shared-memory reduction pattern."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._base import Spot, SpotRule, header_span, nki_name


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
        for n in astwalk.walk(stmt):
            if isinstance(n, ast.Call) and nki_name(ctx, n.func):
                calls_nki = True
            if isinstance(n, ast.Subscript) and any(isinstance(x, ast.Name) and x.id == var for x in astwalk.walk(n.slice)):
                sliced = True
    return calls_nki and sliced


def log_step_trees(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    for fn in device.outermost:
        for node in device.nodes(fn):
            if isinstance(node, ast.While):
                names = [n.id for n in astwalk.walk(node.test) if isinstance(n, ast.Name)]
                for var in names:
                    if any(_halves(st, var) for st in astwalk.walk(node)) and _tile_work(ctx, node.body, var):
                        yield Spot(header_span(ctx, node, node.test), _tree_message(var), kernel=(device.owner(node) or fn).name)
                        break
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                var = node.target.id
                it = node.iter
                values = None
                if isinstance(it, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Constant) and isinstance(e.value, int) for e in it.elts):
                    values = [e.value for e in it.elts]
                if values and len(values) >= 3 and all(v > 0 and v & (v - 1) == 0 for v in values) and all(
                        a == 2 * b for a, b in zip(values, values[1:])) and _tile_work(ctx, node.body, var):
                    yield Spot(header_span(ctx, node, node.iter), _tree_message(var), kernel=(device.owner(node) or fn).name)


def _tree_message(var: str) -> str:
    return (
        f"log-step tree reduction (halving {var} each step): a GPU pattern for combining thread pairs; on Trainium one "
        f"nisa.tensor_reduce(dst, op=nl.add, data=t, axis=1) reduces a whole row in one instruction (fp32 "
        f"internally), while the tree costs log2(n) instructions on shrinking tiles and changes the summation order"
    )


class LogStepTreeReduction(SpotRule):
    id = "NKI421"
    name = "log-step-tree-reduction"
    family = "cuda"
    level = Level.WARNING
    summary = "A log-step (halving) tree reduction over a tile, the GPU shared-memory reduction pattern"
    fix_hint = "nisa.tensor_reduce(dst, op=nl.add, data=t, axis=1) (legacy nl.sum(t, axis=1))"
    explanation = """
`s = n // 2; while s > 0: t[:, 0:s] += t[:, s:2 * s]; s //= 2` or `for off
in (16, 8, 4, 2, 1): ...` whose body combines slices of a tile with NKI
operations. Halving loops that only compute Python integers (tile-size
searches) are not reported.

**Why on Trainium.** The tree exists because GPU threads combine pairs per
step. One `nisa.tensor_reduce` reduces a whole row along the free axis in
one instruction (fp32 internally); the tree costs log2(n) instructions on
ever smaller tiles and sums in a different order than the straightforward
reduction (so results differ from a reference that reduces sequentially).

**Fix.** `nisa.tensor_reduce(dst, op=nl.add, data=t, axis=1)` (legacy
`nl.sum(t, axis=1)`), or fuse it into the producer with
`nisa.activation(..., reduce_op=nl.add, reduce_res=r)`; across partitions
use a ones-vector `nisa.nc_matmul`.
"""
    references = ("aws-neuron-sdk nki/api/nki/isa/__init__.py (tensor_reduce, activation reduce)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                s = 256
                while s > 0:
                    nisa.tensor_tensor(dst=t[:, 0:s], data1=t[:, 0:s], data2=t[:, s:2 * s], op=nl.add)
                    s //= 2
                nisa.dma_copy(dst=out, src=t[:, 0:1])
                return out
            """,
            lines=[11],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:32])
                for off in (16, 8, 4, 2, 1):
                    t = nl.add(t[:, 0:off], t[:, off:2 * off])
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API: warp-shuffle offsets",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            def pick_tile(n):
                tile = 64
                while tile >= 8:
                    if n % tile == 0:
                        return tile
                    tile //= 2
                return n

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.dma_copy(dst=out, src=s)
                return out
            """,
            title="one tensor_reduce; a halving search over Python ints is fine",
        ),
    )

    def spots(self, ctx: RuleContext):
        return log_step_trees(ctx)
