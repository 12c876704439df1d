"""NKI418 per-element-loop: a loop computes one tensor element per iteration
(one GPU thread's work per instruction)."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.loops import Loops
from nkilint.model.values import const_int
from nkilint.rule import invalid, valid

from ._base import LANG_GUIDE, Spot, SpotRule, loop_header
from ._elements import arange_iterators, indexing_loops, opaque_param, operands, single_element, views_behind


def per_element_loops(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        arange_iters = arange_iterators(ctx, graph)
        found: dict[str, list[str]] = {}
        for op, data in graph.ops():
            if data.get("engine") == "dma" or data.get("assignment"):
                continue
            loops = data.get("loops", ())
            if not loops:
                continue
            touched = operands(graph, op)
            # A whole kernel parameter of unknown shape next to a tile may be a scalar
            # (nl.multiply(x, a) with a float a): it neither qualifies nor disqualifies.
            tensors = [n for n in touched if graph.attrs(n).get("kind") in ("tensor", "view")
                       and not opaque_param(graph.attrs(n))]
            if not tensors or not all(single_element(graph, n, arange_iters) for n in tensors):
                continue
            indexed = indexing_loops(ctx, graph, tensors + [v for n in tensors for v in views_behind(graph, n)], loops)
            if not indexed:
                continue
            outer = indexed[0]
            upper = df.loop_trip_upper(graph, outer)
            if upper is not None and upper <= 1:
                continue
            found.setdefault(outer, []).append(op)
        for loop, op_ids in found.items():
            ldata = graph.attrs(loop)
            trip = ldata.get("trip_v")
            trip_text = str(const_int(trip)) if trip is not None and const_int(trip) is not None else "shape-dependent"
            apis = sorted({df.short(graph.attrs(o).get("api")) for o in op_ids})
            where = loop_header(ctx, ldata.get("site"))
            if where is None:
                continue
            yield Spot(where, (
                f"loop over {ldata.get('iterator') or 'elements'} ({trip_text} iterations) computes one element per "
                f"iteration ({', '.join(apis)} on single-element tiles), one thread's work per instruction: every "
                f"instruction has a fixed issue cost and current NKI unrolls the loop; compute whole [128, F] tiles "
                f"(nisa.tensor_tensor / nl.* on 128-partition tiles, nisa.nc_matmul for products)"
            ), kernel=kernel.name)


class PerElementLoop(SpotRule):
    id = "NKI418"
    name = "per-element-loop"
    requires = SpotRule.requires + (Loops,)
    family = "cuda"
    level = Level.WARNING
    summary = "A loop computes one tensor element per iteration (one GPU thread's work per instruction)"
    fix_hint = "tile the data as [128, F] and compute each tile with one instruction"
    explanation = """
A loop whose body computes on single-element tiles indexed by the loop
variable (`nl.add(a[i], b[i])`, `acc += lhs[i, k] * rhs[k, j]`): the CUDA
"one thread per element" structure turned into one instruction per element.
Loops over a batch or head axis that keep whole tiles per iteration are
not reported.

**Why on Trainium.** Every engine instruction has a fixed issue cost (about
64 cycles) whether it touches 1 or 128 x 512 elements, and current NKI
unrolls every loop at compile time, so N elements become N instructions
(slow, and large N hits the instruction limit). Legacy NKI rejects most of
these forms outright (1-D tiles, `arange` as an iterator).

**Fix.** Lay the data out as `[128, F]` tiles (reshaping the HBM view is
free) and compute each tile with one instruction (`nisa.tensor_tensor`,
`nisa.activation`, legacy `nl.add` on tiles); products go to TensorE with
`nisa.nc_matmul`, scans to `nisa.tensor_tensor_scan`.
"""
    references = ("aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst", LANG_GUIDE)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(128):
                    for j in nl.affine_range(512):
                        x = nl.load(a[i, j])
                        y = nl.load(b[i, j])
                        nl.store(out[i, j], value=nl.add(x, y))
                return out
            """,
            lines=[7],
            title="legacy API: an element loop nest (reported at the outer loop)",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_kernel(x):
                out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                for j in range(64):
                    nisa.tensor_scalar(dst=t[0:1, j:j + 1], data=t[0:1, j:j + 1], op0=nl.multiply, operand0=2.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: one element per instruction",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_kernel(x):
                B, P, F = x.shape
                out = nl.ndarray((B, P, F), dtype=x.dtype, buffer=nl.shared_hbm)
                for b in range(B):
                    t = nl.ndarray((P, F), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[b])
                    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
                    nisa.dma_copy(dst=out[b], src=t)
                return out
            """,
            title="a loop over a batch axis with whole tiles per iteration",
        ),
    )

    def spots(self, ctx: RuleContext):
        return per_element_loops(ctx)
