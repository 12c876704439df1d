"""CUDA family (NKI4xx): CUDA and Triton idioms left unported.

Facts: ../shared/CUDA-IDIOMS.md (catalogue CU01-CU45; section 0 ground
rules), ../shared/NKI-REFERENCE.md section 3.M, and the aws-neuron-sdk docs
cited by each rule. Legacy NKI legitimately uses ``nl.program_id``,
``nl.arange`` and ``mask=``: only GPU names (CUDA, Triton, numba, cupy,
torch.cuda) are errors in both dialects; NKI constructs that look
Triton-shaped are judged by the file's dialect. Comments and docstrings are
at most notes (NKI433, off by default).

The syntactic pass is in ``_device_scan``; the loop and data-flow checks in
``_cuda_structure``.
"""

from __future__ import annotations

from typing import ClassVar

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid

from . import _cuda_structure as cs
from . import _gpu_names as gn
from ._common import Reporter
from ._device_scan import NameHit, scan

CATALOGUE = "../shared/CUDA-IDIOMS.md"
ARCH = "aws-neuron-sdk nki/guides/architecture/trainium2_arch.rst (engines, SBUF, PSUM)"
LANG_GUIDE = "aws-neuron-sdk nki/get-started/nki-language-guide.rst (specialization: loops unrolled, calls inlined)"
TILING = "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (128-partition tiles)"
LNC = "aws-neuron-sdk nki/get-started/about/lnc.rst (program_id / num_programs under LNC)"
MIGRATION = "aws-neuron-sdk nki/migration/index.rst (arange, mask and SPMD grid changes)"


class _GpuNameRule(Rule):
    """Reports GPU names of some categories found in device code."""

    categories: ClassVar[tuple[str, ...]] = ()
    noun: ClassVar[str] = "construct"

    def accepts(self, ctx: RuleContext, hit: NameHit) -> bool:
        return True

    def level_for(self, ctx: RuleContext, hit: NameHit) -> Level:
        return self.level

    def message(self, hit: NameHit) -> str:
        fn = hit.function.name if hit.function is not None else "?"
        pasted = " (pasted CUDA C, not imported)" if hit.bare else ""
        return (
            f"{hit.gpu.shown} is a {hit.gpu.origin} {self.noun}{pasted} left in NKI kernel code ({fn}); "
            f"{hit.gpu.replacement}"
        )

    def hint(self, hit: NameHit) -> str:
        return self.fix_hint

    fix_hint: ClassVar[str] = ""

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for hit in scan(ctx).of(*self.categories):
            if not self.accepts(ctx, hit):
                continue
            reporter.at(
                hit.node,
                self.message(hit),
                hint=self.hint(hit),
                level=self.level_for(ctx, hit),
                kernel=hit.function.name if hit.function is not None else None,
            )


# ---------------------------------------------------------------------------- CUDA execution model
class CudaThreadIndex(_GpuNameRule):
    id = "NKI401"
    name = "cuda-thread-index"
    family = "cuda"
    level = Level.ERROR
    summary = "A CUDA thread index (threadIdx, laneid) is used in NKI kernel code"
    categories = (gn.THREAD,)
    noun = "thread index"
    fix_hint = "delete the per-thread index and compute on a whole [128, F] tile"
    explanation = """
`threadIdx.x`, `cuda.threadIdx.x`, `cupyx.jit.threadIdx.x` or `cuda.laneid`
inside an NKI kernel (or a helper it calls), imported from numba/cupyx or
pasted from CUDA C without an import.

**Why on Trainium.** There are no threads. One NKI instruction processes a
whole tile: up to 128 partitions times a free dimension of many elements
per partition. A per-thread index has no meaning; the CUDA "thread"
dimension becomes the partition axis (or the free axis) of a tile. The name
is undefined (pasted) or a numba/cupyx stub that cannot be evaluated
outside a GPU JIT, so the kernel does not compile.

**Fix.** Delete the index and rewrite the body as tile operations over
`[P <= 128, F]` slices, e.g. `nisa.tensor_tensor(dst=o, data1=a, data2=b,
op=nl.add)` on a `[128, F]` tile (legacy: `nl.add(nl.load(a[...]), ...)`).
"""
    references = (f"{CATALOGUE} CU01", TILING, ARCH)
    examples = (
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def scale_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                row = cuda.threadIdx.x
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t * 2.0)
                return out
            """,
            lines=[8],
            title="legacy API: numba's cuda.threadIdx.x",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                tid = threadIdx.x
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8],
            title="current API: threadIdx pasted from CUDA C",
        ),
        valid(
            """
            from numba import cuda
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @cuda.jit
            def gpu_copy(x, out):
                i = cuda.threadIdx.x
                out[i] = x[i]

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="the GPU reference kernel in the same module is host code, not an NKI kernel",
        ),
    )


class CudaBlockIndex(_GpuNameRule):
    id = "NKI402"
    name = "cuda-block-grid-index"
    family = "cuda"
    level = Level.ERROR
    summary = "A CUDA block or grid index (blockIdx, blockDim, gridDim, cuda.grid) is used in NKI kernel code"
    categories = (gn.BLOCK,)
    noun = "block/grid index"
    fix_hint = "loop over 128-row tiles inside the kernel: for t in range(n // 128): x[t * 128:(t + 1) * 128, :]"
    explanation = """
`blockIdx`, `blockDim`, `gridDim`, `cuda.grid(n)`, `cuda.gridsize(n)` and the
idiom `i = blockIdx.x * blockDim.x + threadIdx.x` in NKI kernel code.

**Why on Trainium.** There is no hardware block scheduler. A CUDA thread
block maps to one iteration of a tile loop *inside* a single kernel
instance; work is split across at most the two physical cores of a logical
NeuronCore with `nl.program_id(0)`. The names are undefined or numba/cupyx
stubs outside a GPU JIT, so the kernel does not compile.

**Fix.** Loop over tiles in the kernel: `for t in range(n // 128):` with
offsets `t * 128:(t + 1) * 128` (legacy: `nl.affine_range`).
"""
    references = (f"{CATALOGUE} CU02", TILING, LNC)
    examples = (
        invalid(
            """
            from numba import cuda
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                row0 = cuda.blockIdx.x * cuda.blockDim.x
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: blockIdx * blockDim from numba",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                base = blockIdx.x * 128
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[7],
            title="legacy API: pasted blockIdx",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n, f = x.shape
                out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
                for t in range(n // 128):
                    tile = nl.ndarray((128, f), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=tile)
                return out
            """,
            title="a tile loop replaces the block index",
        ),
    )


class CudaSharedMemory(_GpuNameRule):
    id = "NKI403"
    name = "cuda-shared-memory"
    family = "cuda"
    level = Level.ERROR
    summary = "CUDA shared/local memory (cuda.shared.array, cuda.local.array, __shared__) in NKI kernel code"
    categories = (gn.SHARED,)
    noun = "shared-memory declaration"
    fix_hint = "allocate an SBUF tile: nl.ndarray((128, F), dtype=..., buffer=nl.sbuf)"
    explanation = """
`cuda.shared.array(shape, dtype)`, `cuda.local.array`, `cuda.const.array_like`,
`cupyx.jit.shared_memory` or a pasted `__shared__` in NKI kernel code.

**Why on Trainium.** Shared memory maps to SBUF (24 MiB on trn1, 28 MiB on
trn2, 128 partitions), which is software-managed and explicitly allocated;
there is no per-block scratchpad and no cache. The numba/cupyx calls are
stubs that only exist inside a GPU JIT, so the kernel does not compile.

**Fix.** Allocate an SBUF tile with `nl.ndarray(shape, dtype,
buffer=nl.sbuf)` and fill it with one DMA (`nisa.dma_copy`, legacy
`nl.load`) instead of a cooperative per-thread copy.
"""
    references = (f"{CATALOGUE} CU10", "aws-neuron-sdk nki/get-started/about/memory-hierarchy-overview.rst", ARCH)
    examples = (
        invalid(
            """
            from numba import cuda
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                smem = cuda.shared.array((32, 32), np.float32)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = cuda.local.array(16, nl.float32)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[8],
            title="legacy API: cuda.local.array",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                smem = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=smem, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=smem)
                return out
            """,
            title="an SBUF tile",
        ),
    )


class CudaBarrier(_GpuNameRule):
    id = "NKI404"
    name = "gpu-barrier"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU barrier or fence (__syncthreads, cuda.syncthreads, tl.debug_barrier) in NKI kernel code"
    categories = (gn.BARRIER,)
    noun = "barrier/fence"
    fix_hint = "delete the barrier; the compiler synchronises engines from data dependencies"
    explanation = """
`cuda.syncthreads()`, `cuda.syncwarp()`, `cuda.threadfence*()`, cooperative
group syncs, `tl.debug_barrier()`, `torch.cuda.synchronize()` or a pasted
`__syncthreads()` in NKI kernel code.

**Why on Trainium.** NKI has a sequential program model: "programmers do
not need to program engine synchronization manually. The Neuron Compiler
can automatically insert the required synchronizations during compilation,
based on data dependencies" (architecture guide). Ordering hints
(`nl.no_reorder()`, scheduling APIs) are for performance only, and
`nisa.core_barrier` synchronises the two cores of an LNC on shared HBM.
The GPU calls are undefined or raise outside a GPU JIT.

**Fix.** Delete the barrier. If it separated two phases that run on
different LNC cores, use `nisa.core_barrier` on the shared tensor.
"""
    references = (f"{CATALOGUE} CU21", "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (engine synchronization)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                __syncthreads()
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: pasted __syncthreads()",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                tl.debug_barrier()
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[9],
            title="legacy API: tl.debug_barrier()",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="no barrier: the compiler orders the two DMAs",
        ),
    )


class GpuAtomics(_GpuNameRule):
    id = "NKI405"
    name = "gpu-atomics"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU atomic (cuda.atomic.add, tl.atomic_add, atomicAdd) in NKI kernel code"
    categories = (gn.ATOMIC,)
    noun = "atomic"
    fix_hint = "accumulate per-tile partials and combine them with a reduction or a PSUM matmul accumulation"
    explanation = """
`cuda.atomic.add/max/cas/...`, `tl.atomic_add/max/cas/xchg/...`,
`cupyx.jit.atomic_*` or a pasted `atomicAdd` in NKI kernel code.

**Why on Trainium.** There are no general atomics. Accumulation is
structured: within a partition by VectorE/ScalarE reductions, across
partitions by TensorE (ones-vector matmul) or GpSimd, across matmul tiles by
PSUM accumulation, into HBM by DMA read-modify-write (`nisa.dma_compute`,
add only and unique indices only; legacy `nl.atomic_rmw`). Scatter-add with
duplicate indices (histograms, `index_add`) needs an algorithm change. The
GPU reference itself is order-dependent for float atomics.

**Fix.** Two-phase reduction: per-tile partials in SBUF, then
`nisa.tensor_reduce` or a ones-vector `nisa.nc_matmul` into an fp32 PSUM
tile; for duplicate-index scatter, sort + segment reduce or a one-hot
matmul.
"""
    references = (f"{CATALOGUE} CU22", "aws-neuron-sdk nki/api/nki/isa/__init__.py (dma_compute)")
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def sum_kernel(x, total):
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                tl.atomic_add(total, t)
                return total
            """,
            lines=[10],
            title="current API: tl.atomic_add",
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def hist_kernel(x, bins):
                t = nl.load(x[0:128, 0:1])
                cuda.atomic.add(bins, 0, 1)
                return bins
            """,
            lines=[8],
            title="legacy API: cuda.atomic.add",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def sum_kernel(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.dma_copy(dst=out, src=s)
                return out
            """,
            title="a free-axis reduction instead of atomics",
        ),
    )


class WarpIntrinsics(_GpuNameRule):
    id = "NKI406"
    name = "warp-intrinsics"
    family = "cuda"
    level = Level.ERROR
    summary = "A warp intrinsic or warp-size constant (shfl, ballot, activemask, warpSize) in NKI kernel code"
    categories = (gn.WARP,)
    noun = "warp intrinsic"
    fix_hint = "reduce along the free axis with nisa.tensor_reduce; move data across partitions with nc_transpose"
    explanation = """
`cuda.shfl_*_sync`, `cuda.ballot_sync`, `cuda.activemask()`,
`cuda.warpsize`, pasted `__shfl_down_sync`/`warpSize`, and warp-size
constants (`WARP_SIZE = 32`) used in NKI kernel code.

**Why on Trainium.** There are no warps or lanes. Data exchange across
partitions is explicit: `nisa.nc_stream_shuffle` (within 32-partition
quadrants), `nisa.nc_transpose`, or a TensorE matmul with a 0/1 matrix;
within a partition the free axis is plain memory that one instruction
reduces. Intrinsics are errors (undefined or GPU-JIT-only); a warp-size
constant compiles and is reported as a warning because it usually sizes
tiles or reduction steps for 32 lanes instead of 128 partitions.

**Fix.** Express a warp reduction as a free-axis `nisa.tensor_reduce` (or
`nl.sum(t, axis=1)`), and cross-partition sums as a ones-vector matmul or
`nisa.tensor_partition_reduce`.
"""
    references = (f"{CATALOGUE} CU23", ARCH)
    examples = (
        invalid(
            """
            from numba import cuda
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                v = cuda.shfl_down_sync(0xFFFFFFFF, t, 16)
                nisa.dma_copy(dst=out, src=t[:, 0:1])
                return out
            """,
            lines=[11],
            title="current API: cuda.shfl_down_sync",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            WARP_SIZE = 32

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((WARP_SIZE, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:WARP_SIZE, 0:512])
                nl.store(out, value=nl.sum(t, axis=1))
                return out
            """,
            lines=[8],
            title="legacy API: a warp-size constant sizes the tile (warning, reported once per function)",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

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
            title="a free-axis reduction",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        super().check(ctx)
        reporter = Reporter(ctx)
        for fn, node, name in cs.warp_size_constants(ctx, scan(ctx)):
            reporter.at(
                node,
                f"{name} (a warp-size constant, 32 lanes) is used in NKI kernel code ({fn.name}); Trainium tiles "
                f"have {ctx.target.partitions} partitions and no warps: size tiles with nl.tile_size.pmax",
                hint="use nl.tile_size.pmax (128) for the partition extent, or the data's own size",
                level=Level.WARNING,
                kernel=fn.name,
            )


class ForeignJitDecorator(Rule):
    id = "NKI407"
    name = "foreign-jit-decorator"
    family = "cuda"
    level = Level.ERROR
    summary = "NKI kernel code is decorated with a GPU JIT (@triton.jit, @cuda.jit, cupyx rawkernel)"
    explanation = """
A function whose body is NKI code (it calls `nki.language` / `nki.isa`, or
is reached from an NKI kernel) carries a GPU JIT decorator such as
`@triton.jit`, `@numba.cuda.jit`, `@cupyx.jit.rawkernel` or Pallas'
`pallas_call`, possibly stacked with `@nki.jit`.

**Why on Trainium.** The decorator hands the function to the wrong
toolchain: Triton/numba/cupyx compile Python for NVIDIA GPUs and reject (or
never see) NKI calls; stacked with `@nki.jit` the two wrappers fight over
the same function.

**Fix.** Decorate the kernel with `@nki.jit` only (helpers it calls need no
decorator) and keep the GPU version in a separate module.
"""
    references = (f"{CATALOGUE} CU09", LANG_GUIDE)
    examples = (
        invalid(
            """
            import triton
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @triton.jit
            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[6],
            title="current API: @triton.jit stacked on @nki.jit",
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki.language as nl

            @cuda.jit
            def add_kernel(a, b):
                ta = nl.load(a[0:128, 0:512])
                tb = nl.load(b[0:128, 0:512])
                return nl.add(ta, tb)
            """,
            lines=[4],
            title="legacy API: NKI body under @cuda.jit",
        ),
        valid(
            """
            import triton
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @triton.jit
            def copy_gpu(x_ptr, y_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs))

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a pure Triton kernel next to the NKI kernel is host code for this family",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for fn, deco, shown in cs.foreign_jit_decorators(ctx, scan(ctx)):
            reporter.at(
                deco,
                f"{fn.name} is NKI kernel code but is decorated with {shown}, a GPU JIT; "
                f"{gn.REPLACE_JIT}",
                hint="remove the GPU decorator; keep @nki.jit on the kernel only",
                kernel=fn.name,
            )


class TritonProgramId(_GpuNameRule):
    id = "NKI408"
    name = "triton-program-id"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton/Pallas program ids (tl.program_id, tl.num_programs) in NKI kernel code"
    categories = (gn.PROGRAM_ID,)
    noun = "program id"
    fix_hint = "loop over 128-row tiles in the kernel; keep nl.program_id(0) only for the LNC split"
    explanation = """
`tl.program_id(axis)`, `tl.num_programs(axis)` (or Pallas `pl.program_id`)
in NKI kernel code.

**Why on Trainium.** Triton launches thousands of independent programs, one
per block; NKI launches one program per physical core of a logical
NeuronCore (1 or 2), and `nl.program_id(0)` only tells those cores apart
(in legacy NKI a larger SPMD grid ran its instances one after another on
one core). `triton.language` builtins raise outside `@triton.jit`, so the
kernel does not compile.

**Fix.** Loop over 128-partition tiles inside the kernel; optionally split
the outer loop across the LNC cores with `nl.program_id(0)` and
`nl.num_programs()`.
"""
    references = (f"{CATALOGUE} CU03", LNC, MIGRATION)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                pid = tl.program_id(0)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                n = tl.num_programs(0)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
                nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
                return out
            """,
            title="legacy NKI's own nl.program_id is not a Triton leftover",
        ),
    )


class TritonMemoryAccess(_GpuNameRule):
    id = "NKI409"
    name = "triton-memory-access"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton pointer loads/stores and memory hints (tl.load, tl.store, tl.make_block_ptr) in NKI kernel code"
    categories = (gn.MEMORY,)
    noun = "memory access"
    fix_hint = "nisa.dma_copy(dst=tile, src=x[r0:r1, c0:c1]) (legacy nl.load / nl.store) on tensor slices"
    explanation = """
`tl.load(ptr + offs, mask=..., other=...)`, `tl.store`, `tl.make_block_ptr`,
`tl.advance` and the cache/alignment hints (`tl.multiple_of`,
`tl.max_contiguous`, `tl.assume`, `tl.swizzle2d`) in NKI kernel code.

**Why on Trainium.** NKI tensors are shaped views, not pointers: data moves
between HBM and SBUF by DMA on slices (`x[r0:r1, c0:c1]`, `nl.ds`, `.ap()`
access patterns). There is no fill value for masked lanes and no cache to
hint: SBUF is software-managed. Triton builtins raise outside
`@triton.jit`.

**Fix.** `nisa.dma_copy(dst=tile, src=x[r0:r1, c0:c1])` (legacy `nl.load` /
`nl.store`); bound the last tile with `min()` instead of a mask; drop the
hints.
"""
    references = (f"{CATALOGUE} CU12, CU25", "aws-neuron-sdk nki/get-started/about/indexing-overview.rst", MIGRATION)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl

            @nki.jit
            def copy_kernel(x, y):
                offs = nl.ds(0, 128)
                v = tl.load(x + 0)
                tl.store(y, v)
                return y
            """,
            lines=[8, 9],
            title="current API",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                t = tl.multiple_of(t, 16)
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[9],
            title="legacy API: an alignment hint",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="DMA on slices",
        ),
    )


class TritonLanguageCall(_GpuNameRule):
    id = "NKI410"
    name = "triton-language-call"
    family = "cuda"
    level = Level.ERROR
    summary = "A triton.language operation (tl.dot, tl.sum, tl.where, tl.zeros, ...) in NKI kernel code"
    categories = (gn.TRITON_CALL,)
    noun = "operation"
    fix_hint = "replace it with the nki.language / nki.isa operation named in the message"
    explanation = """
Any other `triton.language` operation (`tl.dot`, `tl.sum`, `tl.max`,
`tl.exp`, `tl.where`, `tl.zeros`, `tl.cdiv`, `tl.trans`, ...) or a host-side
`triton.*` utility in NKI kernel code. Program ids, memory access,
iterators, `arange`, `constexpr`, atomics, barriers, math intrinsics and
dtypes have their own rules.

**Why on Trainium.** `triton.language` builtins only work inside
`@triton.jit` (outside they raise "Did you forget to add @triton.jit?"), and
their semantics differ: `tl.dot(a, b)` contracts a's last axis while TensorE
contracts the partition axis of both operands; `tl.sum(x, axis=0)` reduces
the axis that NKI puts on partitions.

**Fix.** Use the NKI operation named in the message, e.g. `tl.dot` ->
`nisa.nc_matmul(dst=psum, stationary=aT, moving=b)` accumulating in an fp32
PSUM tile, `tl.sum(x, axis=1)` -> `nisa.tensor_reduce(dst, op=nl.add,
data=x, axis=1)`, `tl.where` -> `nl.where` / `nisa.affine_select`.
"""
    references = (f"{CATALOGUE} appendix A", "aws-neuron-sdk nki/api/nki.isa.rst", "aws-neuron-sdk nki/api/nki.language.rst")
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=aT[0:128, 0:128])
                nisa.dma_copy(dst=tb, src=b[0:128, 0:512])
                acc = tl.dot(ta, tb)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[13],
            title="current API: tl.dot",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out, value=tl.sum(t, axis=1))
                return out
            """,
            lines=[9],
            title="legacy API: tl.sum",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out, value=nl.sum(t, axis=1, dtype=nl.float32))
                return out
            """,
            title="nl.sum over the free axis",
        ),
    )


class TritonIterator(_GpuNameRule):
    id = "NKI411"
    name = "triton-loop-iterator"
    family = "cuda"
    level = Level.ERROR
    summary = "A Triton loop iterator (tl.range, tl.static_range) in NKI kernel code"
    categories = (gn.ITERATOR,)
    noun = "loop iterator"
    fix_hint = "use range(...) (legacy: nl.affine_range / nl.sequential_range)"
    explanation = """
`for k in tl.range(0, K, BLOCK_K, num_stages=3)` or `tl.static_range(...)`
in NKI kernel code.

**Why on Trainium.** Wrong namespace: the builtin raises outside
`@triton.jit`. Software pipelining is not a loop attribute on Trainium: the
NKI compiler schedules engines from data dependencies, and the programmer
overlaps DMA with compute through tiles allocated inside the loop
(multi-buffering). Current NKI unrolls every `range` loop at compile time.

**Fix.** `for k in range(...)` (legacy: `nl.affine_range` for independent
iterations, `nl.sequential_range` for carried ones).
"""
    references = (f"{CATALOGUE} CU27", LANG_GUIDE)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in tl.range(0, 4, num_stages=2):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
                return out
            """,
            lines=[9],
            title="current API",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in tl.static_range(4):
                    t = nl.load(x[i * 128:(i + 1) * 128, :])
                    nl.store(out[i * 128:(i + 1) * 128, :], value=t)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    t = nl.load(x[i * 128:(i + 1) * 128, :])
                    nl.store(out[i * 128:(i + 1) * 128, :], value=t)
                return out
            """,
            title="legacy nl.affine_range",
        ),
    )


class TritonArange(_GpuNameRule):
    id = "NKI412"
    name = "triton-arange-offsets"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton offset vectors (tl.arange) in NKI kernel code"
    categories = (gn.ARANGE,)
    noun = "offset vector"
    fix_hint = "index with slices x[r0:r0 + 128, :] or nl.ds(r0, 128)"
    explanation = """
`offs = pid * BLOCK + tl.arange(0, BLOCK)` in NKI kernel code.

**Why on Trainium.** Triton builds a 1-D vector of per-lane offsets and
masks it; NKI addresses 2-D tiles (partition x free) by slices. The builtin
raises outside `@triton.jit`; legacy `nl.arange` is an NKI construct with
its own rules (multi-dimensional, removed in current NKI — see the
migration family).

**Fix.** Integer slices (`x[r0:r0 + 128, :]`) or `nl.ds(r0, 128)`; bound the
last tile with `min()`.
"""
    references = (f"{CATALOGUE} CU15", "aws-neuron-sdk nki/get-started/about/indexing-overview.rst", MIGRATION)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                offs = tl.arange(0, 128)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                cols = tl.arange(0, 512)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                t = nl.load(x[i_p, i_f])
                nl.store(out[i_p, i_f], value=t)
                return out
            """,
            title="legacy NKI's own index helpers are not Triton leftovers",
        ),
    )


class TritonConstexpr(_GpuNameRule):
    id = "NKI413"
    name = "triton-constexpr-parameter"
    family = "cuda"
    level = Level.WARNING
    summary = "A kernel parameter is annotated tl.constexpr (Triton meta-parameter)"
    categories = (gn.CONSTEXPR,)
    noun = "meta-parameter annotation"
    fix_hint = "annotate the parameter as int (or drop the annotation)"
    explanation = """
`BLOCK_SIZE: tl.constexpr` on an NKI kernel or helper parameter, or a
`tl.constexpr(...)` value.

**Why on Trainium.** NKI kernels are specialised on the Python values of
their arguments already: "all Python expressions on compile-time values
(integers, booleans, strings, shapes) are evaluated at specialization time"
(language guide), so an int argument is a compile-time constant without any
annotation. The Triton annotation adds a dependency on `triton` and says
nothing to the NKI compiler. Reported as a warning: whether the annotation is
evaluated depends on the caller's Python setup.

**Fix.** Annotate the parameter as `int` (or nothing) and pick the value
from the NKI limits (`nl.tile_size.pmax`, `gemm_moving_fmax`).
"""
    references = (f"{CATALOGUE} CU08", LANG_GUIDE)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, BLOCK: tl.constexpr):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[7],
            title="current API",
            level=Level.WARNING,
        ),
        invalid(
            """
            from triton.language import constexpr
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x, ROWS: constexpr = 128):
                out = nl.ndarray((ROWS, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:ROWS, 0:512])
                nl.store(out[0:ROWS, 0:512], value=t)
                return out
            """,
            lines=[6],
            title="legacy API, imported name",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, BLOCK: int = 128):
                out = nl.ndarray((BLOCK, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((BLOCK, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:BLOCK, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a plain int parameter",
        ),
    )

    def message(self, hit: NameHit) -> str:
        fn = hit.function.name if hit.function is not None else "?"
        what = "annotates a parameter of" if hit.role == "annotation" else "is used in"
        return (
            f"{hit.gpu.shown} (a Triton meta-parameter) {what} NKI kernel code ({fn}); NKI kernels are already "
            f"specialised on Python argument values: use a plain int parameter"
        )


class GpuLaunchOptions(_GpuNameRule):
    id = "NKI414"
    name = "gpu-launch-options"
    family = "cuda"
    level = Level.WARNING
    summary = "Warp/stage/autotune launch options (num_warps, num_stages, @triton.autotune) on NKI kernels"
    categories = (gn.LAUNCH,)
    noun = "launch option"
    fix_hint = "remove the option; pick tile sizes from nl.tile_size"
    explanation = """
A kernel parameter or launch keyword named `num_warps`, `num_stages`,
`num_ctas`, `maxnreg`, `waves_per_eu`; `@triton.autotune`,
`@triton.heuristics` or `triton.Config(...)` on or in NKI kernel code; hint
keywords such as `eviction_policy=`/`cache_modifier=` on NKI calls.

**Why on Trainium.** Warps, pipeline stages and CTAs have no Trainium
meaning: the NKI compiler schedules the engines and DMA queues itself, and
multi-buffering comes from tiles allocated inside loops. An unused
`num_warps=4` parameter compiles but misleads the reader about how the
kernel runs; an autotune decorator hands the kernel to Triton.

**Fix.** Remove the option; choose tile sizes explicitly from the NKI
limits (`nl.tile_size.pmax` = 128 partitions, `gemm_stationary_fmax` = 128,
`gemm_moving_fmax` = 512, `psum_fmax` = 512 fp32 per bank).
"""
    references = (f"{CATALOGUE} CU08, CU25", "aws-neuron-sdk nki/api/nki.language.tile_size.rst", "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softmax_kernel(x, num_warps=4):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[5],
            title="legacy API: a num_warps parameter",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out

            def launch(x):
                return copy_kernel(x, num_warps=8, num_stages=3)
            """,
            lines=[14],
            title="current API: launch keywords at the host call",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, rows=128):
                out = nl.ndarray((rows, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((rows, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:rows, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a tile-size parameter",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        super().check(ctx)
        reporter = Reporter(ctx)
        for node, message, fn_name in cs.launch_option_sites(ctx, scan(ctx)):
            reporter.at(node, message, hint=self.fix_hint, kernel=fn_name)


def _emit(reporter: Reporter, spot: cs.Spot, rule: type[Rule], hint: str) -> None:
    level = spot.level if spot.level is not None else rule.level
    kwargs = dict(hint=spot.hint or hint, level=level, kernel=spot.kernel)
    if isinstance(spot.where, cs.Site):
        reporter.at_site(spot.where, spot.message, **kwargs)
    elif spot.where is not None:
        reporter.at(spot.where, spot.message, **kwargs)


class _SpotRule(Rule):
    """A rule whose detector lives in _cuda_structure."""

    fix_hint: ClassVar[str] = ""

    def spots(self, ctx: RuleContext):  # pragma: no cover - interface
        raise NotImplementedError

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for spot in self.spots(ctx):
            _emit(reporter, spot, type(self), self.fix_hint)


# ---------------------------------------------------------------------------- launch and loop structure
class GpuLaunchGrid(_SpotRule):
    id = "NKI415"
    name = "gpu-launch-grid"
    family = "cuda"
    level = Level.ERROR
    summary = "An NKI kernel is launched with a Triton/CUDA grid (grid lambda, cdiv-sized grid, threads per block)"
    fix_hint = "call kernel(...) (or kernel[2](...) for LNC=2) and loop over 128-row tiles inside the kernel"
    explanation = """
`kernel[grid](...)` where the grid is a Triton grid lambda (`lambda meta:
(triton.cdiv(n, meta['BLOCK']),)`) or a name bound to one (error), a grid
sized from the data with `triton.cdiv`, or a launch dimension that is a
threads-per-block value (warnings). Grids from other expressions are the
migration family's business.

**Why on Trainium.** Since NKI 0.2 the bracket holds one integer, the
logical-NeuronCore degree (1 or 2), which `nl.program_id(0)` tells apart; a
lambda is never a valid launch value. Legacy NKI accepted multi-dimensional
SPMD grids but ran their instances one after another on one NeuronCore, and
had no notion of threads per block.

**Fix.** Call the kernel directly (`kernel(x, y)`, or `kernel[2](x, y)` for
LNC=2) and move the tiling into the kernel body as a loop over 128-row
tiles.
"""
    references = (f"{CATALOGUE} CU04", LNC, MIGRATION)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out

            def launch(x, n):
                grid = lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)
                return copy_kernel[grid](x)
            """,
            lines=[15],
            title="current API: a grid lambda",
            level=Level.ERROR,
        ),
        invalid(
            """
            import triton
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out

            def launch(x, n):
                return copy_kernel[triton.cdiv(n, 128)](x)
            """,
            lines=[13],
            title="legacy API: a cdiv-sized grid (warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
                nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
                return out

            def launch(x):
                return copy_kernel[2](x)
            """,
            title="a legacy SPMD grid of integers",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.launch_grids(ctx, scan(ctx))


class GridStrideLoop(_SpotRule):
    id = "NKI416"
    name = "grid-stride-loop"
    family = "cuda"
    level = Level.ERROR
    summary = "A CUDA grid-stride loop (start at the thread id, step by the grid size) in NKI kernel code"
    fix_hint = "for t in range((n + 127) // 128): process rows t*128 .. min(n, t*128 + 128)"
    explanation = """
`for i in range(cuda.grid(1), n, cuda.gridsize(1))`, `for i in range(pid,
n, tl.num_programs(0))`, or the `while i < n: ...; i += blockDim.x *
gridDim.x` form, in NKI kernel code. Only loops whose start comes from a
GPU thread/program id and whose step from a GPU grid size are reported:
strided loops over compile-time tile lists (`range(0, K, 128)`) are
idiomatic NKI.

**Why on Trainium.** The grid-stride idiom lets a fixed-size GPU grid cover
any `n`. An NKI kernel already sees the whole tensor; tiles are enumerated
explicitly and their sizes are compile-time. The GPU id names do not exist
in NKI, so the loop cannot compile.

**Fix.** `for t in range((n + 127) // 128):` over 128-row tiles with a
`min()`-bounded last tile.
"""
    references = (f"{CATALOGUE} CU05", TILING, LANG_GUIDE)
    examples = (
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def scale_kernel(x, n):
                out = nl.ndarray((n, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in range(cuda.grid(1), n, cuda.gridsize(1)):
                    t = nl.load(x[i, 0:512])
                    nl.store(out[i, 0:512], value=t * 2.0)
                return out
            """,
            lines=[8],
            title="legacy API: numba's grid-stride loop",
        ),
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, n_tiles):
                out = nl.ndarray((n_tiles * 128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                pid = tl.program_id(0)
                step = tl.num_programs(0)
                for t in range(pid, n_tiles, step):
                    tile = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=tile)
                return out
            """,
            lines=[11],
            title="current API: Triton's persistent-kernel stride",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n, f = x.shape
                out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
                for r0 in range(0, n, 128):
                    rows = min(128, n - r0)
                    tile = nl.ndarray((128, f), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile[0:rows, :], src=x[r0:r0 + rows, :])
                    nisa.dma_copy(dst=out[r0:r0 + rows, :], src=tile[0:rows, :])
                return out
            """,
            title="a strided loop over compile-time tiles is idiomatic NKI",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n, f = x.shape
                out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
                for t in range(nl.program_id(0), n // 128, nl.num_programs(0)):
                    tile = nl.ndarray((128, f), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=tile)
                return out
            """,
            title="interleaving tiles across the LNC cores with nl.program_id is legitimate",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.grid_stride_loops(ctx, scan(ctx))


class OneTilePerProgram(_SpotRule):
    id = "NKI417"
    name = "one-tile-per-program"
    family = "cuda"
    level = Level.WARNING
    summary = "A kernel computes one tile per program (nl.program_id(0) * TILE) with no loop over tiles"
    fix_hint = "wrap the body in a loop over 128-row tiles; keep nl.program_id(0) only to split that loop across cores"
    explanation = """
A launched kernel that offsets its HBM accesses by `nl.program_id(...) *
TILE` and has no loop at all: the Triton shape "each program owns one
block", with the grid doing the tiling.

**Why on Trainium.** Since NKI 0.2 a launch has at most as many programs as
the logical NeuronCore has physical cores (1 or 2), so such a kernel
processes at most two tiles whatever the input size — a warning. In legacy
NKI a larger SPMD grid was accepted but its instances ran one after another
on one core, so the structure buys nothing — a note there.

**Fix.** Wrap the body in a loop over 128-row tiles; keep
`nl.program_id(0)` / `nl.num_programs()` only to split that loop between
the cores of an LNC. A kernel whose input is one tile per core by contract
can say so with `assert x.shape[0] <= 128 * nl.num_programs()`.
"""
    references = (f"{CATALOGUE} CU06", LNC, "aws-neuron-sdk general/nki/programming_model.rst at 0521004c (SPMD instances run serially)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                pid = nl.program_id(0)
                row0 = pid * 128
                ta = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=a[row0:row0 + 128, :])
                nisa.dma_copy(dst=tb, src=b[row0:row0 + 128, :])
                nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.add)
                nisa.dma_copy(dst=out[row0:row0 + 128, :], src=ta)
                return out
            """,
            lines=[9],
            title="current API: a warning",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                ta = nl.load(a[i * 128:(i + 1) * 128, 0:512])
                tb = nl.load(b[i * 128:(i + 1) * 128, 0:512])
                nl.store(out[i * 128:(i + 1) * 128, 0:512], value=ta + tb)
                return out
            """,
            lines=[8],
            title="legacy API: a note (SPMD grids are legal there)",
            level=Level.NOTE,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(a, b):
                n, f = a.shape
                out = nl.ndarray((n, f), dtype=a.dtype, buffer=nl.shared_hbm)
                for t in range(nl.program_id(0), n // 128, nl.num_programs(0)):
                    ta = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, f), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=a[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=tb, src=b[t * 128:(t + 1) * 128, :])
                    nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.add)
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=ta)
                return out
            """,
            title="a tile loop split across the LNC cores",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.one_tile_per_program(ctx, scan(ctx))


class PerElementLoop(_SpotRule):
    id = "NKI418"
    name = "per-element-loop"
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
    references = (f"{CATALOGUE} CU07", "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst", LANG_GUIDE)
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
        return cs.per_element_loops(ctx)


class OneElementDma(_SpotRule):
    id = "NKI419"
    name = "one-element-dma"
    family = "cuda"
    level = Level.WARNING
    summary = "A load/store/DMA inside a loop moves one element per iteration"
    fix_hint = "move a [128, F] tile per DMA"
    explanation = """
`nl.load(a[i])`, `nl.store(out[i:i + 1], ...)` or `nisa.dma_copy(...,
src=x[i, j])` inside a loop over `i`: each iteration moves a single
element between HBM and SBUF, the per-thread load of a GPU kernel.

**Why on Trainium.** A DMA has a fixed cost (descriptor generation and
latency); the DMA guides want at least 2 KiB per partition per transfer, and
single elements are far below that. Per-element DMAs in long loops also
multiply the instruction count.

**Fix.** Move a whole `[128, F]` tile with one DMA (a 128-row slice of the
HBM tensor, reshaped to 2-D if it is 1-D); for gathers use indirect DMA or
`nisa.nc_n_gather`.
"""
    references = (f"{CATALOGUE} CU18", "aws-neuron-sdk nki/deep-dives/nki-dma-bandwidth-guide.rst")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a[0:128, 0:512])
                for i in nl.sequential_range(64):
                    v = nl.load(a[i, 0])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[9],
            title="legacy API",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.sbuf)
                for j in range(16):
                    nisa.dma_copy(dst=t[0:1, j:j + 1], src=x[0:1, j:j + 1])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="one tile per DMA",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.one_element_dmas(ctx)


class WarpSizedTile(_SpotRule):
    id = "NKI420"
    name = "warp-sized-tile"
    family = "cuda"
    level = Level.WARNING
    summary = "An on-chip tile is sized for warps or tensor-core fragments (16/32 partitions) instead of 128"
    fix_hint = "use nl.tile_size.pmax (128) rows per tile"
    explanation = """
An SBUF/PSUM allocation whose partition extent is 16 or 32 and comes from a
GPU block-size name (`BLOCK_M = 32`, `TILE`, `WARP_SIZE`, `BM`) or is a
literal 16x16 tensor-core fragment. Kernels that use quadrant-aware APIs
(`tile_position`, `nc_stream_shuffle`, `nc_transpose`, gathers) are skipped:
32-partition quadrants are a genuine Trainium quantity.

**Why on Trainium.** Engines have 128 lanes (partitions): a 32-partition
tile uses a quarter of VectorE/ScalarE and 32 of TensorE's 128 rows, at
the same instruction cost. Triton/CUDA block shapes were chosen for warps
and tensor-core fragments, not for a 128x128 systolic array.

**Fix.** Use `nl.tile_size.pmax` (128) rows per tile, the stationary free
size `gemm_stationary_fmax` (128) and moving free size `gemm_moving_fmax`
(512) for matmuls.
"""
    references = (f"{CATALOGUE} CU29", "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (partition under-use)", "aws-neuron-sdk nki/api/nki.language.tile_size.rst")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            BLOCK_M = 32

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:BLOCK_M, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: a Triton block size on the partition axis",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm_kernel(a):
                out = nl.ndarray((16, 16), dtype=nl.float32, buffer=nl.shared_hbm)
                frag = nl.zeros((16, 16), dtype=nl.float32, buffer=nl.sbuf)
                nl.store(out, value=frag)
                return out
            """,
            lines=[7],
            title="legacy API: a 16x16 WMMA fragment",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            BLOCK_M = 128

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:BLOCK_M, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="128-partition tiles",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.warp_sized_tiles(ctx)


class LogStepTreeReduction(_SpotRule):
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
    references = (f"{CATALOGUE} CU24", "aws-neuron-sdk nki/api/nki/isa/__init__.py (tensor_reduce, activation reduce)")
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
        return cs.log_step_trees(ctx, scan(ctx))


class BankConflictPadding(_SpotRule):
    id = "NKI422"
    name = "bank-conflict-padding"
    family = "cuda"
    level = Level.WARNING
    summary = "An on-chip tile is padded by one column against shared-memory bank conflicts ((T, T + 1), PAD)"
    fix_hint = "drop the padding: allocate (T, T)"
    explanation = """
SBUF/PSUM allocations shaped `(T, T + 1)`, a literal `(32, 33)`, or with a
`PAD`/`SKEW` name in a free dimension: the CUDA transpose trick against
shared-memory bank conflicts.

**Why on Trainium.** SBUF partitions are independent memories with no
banks for threads to conflict on; the extra column wastes bytes per
partition and breaks the square shape that `nisa.nc_transpose`,
`nisa.dma_transpose` and matmul tiles expect. Real algorithmic halos
(convolution borders of `K - 1`) are not reported.

**Fix.** Allocate `(T, T)`; transpose with `nisa.nc_transpose` (TensorE up
to 128x128, VectorE up to 32x32) or `nisa.dma_transpose`.
"""
    references = (f"{CATALOGUE} CU11", ARCH)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            T = 32

            @nki.jit
            def transpose_kernel(x):
                out = nl.ndarray((T, T), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.ndarray((T, T + 1), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=tile[:, 0:T], src=x[0:T, 0:T])
                nisa.dma_copy(dst=out, src=tile[:, 0:T])
                return out
            """,
            lines=[10],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def transpose_kernel(x):
                out = nl.ndarray((32, 32), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.zeros((32, 33), dtype=x.dtype, buffer=nl.sbuf)
                nl.store(out, value=tile[:, 0:32])
                return out
            """,
            lines=[7],
            title="legacy API: literal (32, 33)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            K = 3

            @nki.jit
            def conv_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.ndarray((128, 512 + K - 1), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=tile, src=x[0:128, 0:514])
                nisa.dma_copy(dst=out, src=tile[:, 0:512])
                return out
            """,
            title="a convolution halo is not bank-conflict padding",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.padded_tiles(ctx)


# ---------------------------------------------------------------------------- addressing
class PointerArithmetic(_SpotRule):
    id = "NKI423"
    name = "pointer-arithmetic"
    family = "cuda"
    level = Level.ERROR
    summary = "A kernel argument is used as a pointer (x_ptr + offs, x.data_ptr(), a_ptrs += stride)"
    fix_hint = "address the tensor with slices x[r0:r1, c0:c1], nl.ds(start, size) or .ap() access patterns"
    explanation = """
Offsets added to a kernel argument that is then loaded or stored
(`nl.load(x + offs)`, `tl.load(x_ptr + offs)`, `nisa.dma_copy(src=x + k *
stride, ...)`), pointer advances (`a_ptr += BLOCK_K * stride_ak` on an
argument) and `.data_ptr()`.

**Why on Trainium.** NKI tensors are shaped views (shape, strides, offset);
addressing is by slices, `nl.ds(start, size)` or explicit `.ap(pattern=...,
offset=...)` access patterns. There are no raw pointers: adding an integer
to an HBM tensor is an elementwise add on its data (which compute engines
cannot even read from HBM), never an address.

**Fix.** `x[r0:r1, c0:c1]` slices; strided or gathered access with
`x.ap(...)` or indirect DMA (`vector_offset=` / `scalar_offset=`).
"""
    references = (f"{CATALOGUE} CU12", "aws-neuron-sdk nki/deep-dives/nki-aps.rst", "aws-neuron-sdk nki/get-started/about/indexing-overview.rst")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x_ptr, n):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                offs = n * 512
                t = nl.load(x_ptr + offs)
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API: offsets added to a pointer-named argument",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, k):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x + k * 512)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: offsets added to a tensor argument",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, k):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[k * 128:(k + 1) * 128, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a slice",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.pointer_arithmetic(ctx, scan(ctx))


class FlatIndexMath(_SpotRule):
    id = "NKI424"
    name = "flat-index-math"
    family = "cuda"
    level = Level.WARNING
    summary = "A tensor is indexed with flat row-major offsets computed from strides (row * stride + col)"
    fix_hint = "keep the tensor 2-D: reshape the HBM view to [P, F] and slice it"
    explanation = """
Subscripts whose index multiplies by a stride (`x[row * stride_xm + col]`,
`x[i * x.stride(0) + j]`): the flat pointer-space addressing of CUDA and
Triton (`offs_m[:, None] * stride_m + offs_n[None, :] * stride_n`).

**Why on Trainium.** Trainium tiles have a physical 2-D layout (partition x
free) and HBM is read by strided DMA over views. Flattening and re-deriving
coordinates typically produces 1-D tiles and per-element DMAs. Stride
arithmetic inside `.ap(...)` access patterns and `nl.ds` is legitimate and
is not reported (it is not a subscript).

**Fix.** Keep tensors multi-dimensional: reshape the HBM view to a `[P, F]`
shape (free on HBM), then slice `x[r0:r1, c0:c1]`.
"""
    references = (f"{CATALOGUE} CU13", "aws-neuron-sdk nki/get-started/about/indexing-overview.rst")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x, stride_xm):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[3 * stride_xm + 5])
                nl.store(out[0:1, 0:1], value=t)
                return out
            """,
            lines=[7],
            title="legacy API",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, row, stride_row):
                out = nl.ndarray((1, 1), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((1, 1), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[row * stride_row:row * stride_row + 1])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n = x.shape[0]
                x2 = x.reshape((n // 512, 512))
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x2[0:128, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="reshape the HBM view and slice it",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.flat_index_math(ctx, scan(ctx))


class MaskedLoadFill(_SpotRule):
    id = "NKI425"
    name = "masked-load-fill"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton's masked-lane fill value (other=) on an NKI call, or a legacy masked load feeding a reduction"
    fix_hint = "bound the tile with min() and nisa.memset the tail to the reduction's neutral value"
    explanation = """
`other=` on an NKI call (an error: NKI has no fill value), and in legacy
code a masked `nl.load(..., mask=...)` whose tile feeds a sum or max
reduction (a warning). Plain `mask=` in current code is reported by the
migration family.

**Why on Trainium.** Triton's `tl.load(ptr, mask=m, other=0.0)` fills
masked lanes, so a following `tl.sum` sees zeros. Legacy NKI's `mask=`
"informs the compiler to skip generating the instruction or generate the
instruction with a smaller input tile shape": masked-off elements are
simply not written, so they hold whatever the buffer held (uninitialised
for a fresh tile), and a reduction over the whole tile reads them. Current
NKI removed masks entirely.

**Fix.** Bound the last tile with `min()` and reduce only the valid slice;
if the reduction must see a full tile, `nisa.memset` (legacy `nl.full` /
`nl.zeros`) the tile with the neutral value (0 for sums, the dtype's
lowest finite value for max) before the load.
"""
    references = (f"{CATALOGUE} CU14", MIGRATION, "aws-neuron-sdk general/nki/api/nki.api.shared.rst at 0521004c (NKI API Masking)")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_max(x, n):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                t = nl.load(x[i_p, i_f], mask=(i_f < n), other=-1e30)
                nl.store(out, value=nl.max(t, axis=1))
                return out
            """,
            lines=[8],
            title="legacy API: other= is an error; the masked load feeding nl.max is a warning on the same line",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512], other=0.0)
                nl.store(out, t)
                return out
            """,
            lines=[8],
            title="current API",
            level=Level.ERROR,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_max(x, n):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:n])
                nl.store(out, value=nl.max(t, axis=1))
                return out
            """,
            title="reduce exactly the valid columns",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.masked_loads(ctx, scan(ctx))


# ---------------------------------------------------------------------------- host / device mix-ups
class CudaRuntimeApi(_SpotRule):
    id = "NKI426"
    name = "cuda-runtime-api"
    family = "cuda"
    level = Level.ERROR
    summary = "GPU runtime calls (torch.cuda, .cuda(), device='cuda', cupy, numba device arrays)"
    fix_hint = "pass torch-xla / JAX / numpy arrays to the nki.jit kernel; allocate inside with nl.ndarray"
    explanation = """
`torch.cuda.*`, `.cuda()`, `.to("cuda")`, `device="cuda"`,
`torch.device("cuda")`, `cupy` arrays, `numba.cuda.to_device` /
`device_array`, `pycuda.*`. Inside NKI kernel code this is an error; in
host code of a module that defines NKI kernels it is a warning (a dispatch
leftover), unless it sits under a backend check (`if
torch.cuda.is_available():`) or in a function named for the GPU path.

**Why on Trainium.** Neuron devices are reached through torch-xla, JAX or
numpy arrays; `nki.jit` dispatches on the argument type. A Trainium host
has no CUDA device, so CUDA device strings and GPU array libraries fail,
and inside a kernel the body is compiled, not executed by Python.

**Fix.** Use the XLA device for torch (`xm.xla_device()` / `device="xla"`),
numpy arrays for the simulator, and `nl.ndarray(..., buffer=...)` for
buffers inside the kernel.
"""
    references = (f"{CATALOGUE} CU37", "aws-neuron-sdk nki/guides/framework_custom_op.rst")
    examples = (
        invalid(
            """
            import torch
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                dev = torch.cuda.current_device()
                nl.store(out, value=t)
                return out
            """,
            lines=[9],
            title="legacy API: inside the kernel (error)",
            level=Level.ERROR,
        ),
        invalid(
            """
            import torch
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out

            def run():
                x = torch.rand((128, 512), device="cuda")
                return copy_kernel(x)
            """,
            lines=[15],
            title="current API: host code of the kernel's module (warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import torch
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out

            def run(x):
                if torch.cuda.is_available():
                    return x.cuda() * 1.0
                return copy_kernel(x)
            """,
            title="a guarded GPU fallback path",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.runtime_api(ctx, scan(ctx))


class HostLibraryOnTile(_SpotRule):
    id = "NKI427"
    name = "host-library-on-tile"
    family = "cuda"
    level = Level.ERROR
    summary = "A host library (numpy, torch, math) is applied to an NKI tensor inside kernel code"
    fix_hint = "use the nki.language / nki.isa operation on the tile"
    explanation = """
`np.exp(t)`, `torch.matmul(a, b)`, `math.sqrt(t)`, `t.numpy()`, `t.item()`,
`t.tolist()`, `t.cpu()` on a kernel tensor, and `torch.*` calls that build
buffers (`torch.zeros(...)`) inside NKI kernel code. numpy/math on
compile-time values (`math.ceil(n / 128)`, `np.finfo(np.float32).min`) are
fine and not reported.

**Why on Trainium.** The kernel body is compiled, not executed by Python:
tile values do not exist when the code runs, so host libraries never see
device data. The CPU simulator runs arbitrary Python, so such kernels can
pass simulator tests and then fail to compile.

**Fix.** The NKI equivalent (`nl.exp` / `nisa.activation`,
`nisa.nc_matmul`, `nl.ndarray`); inspect values with `nl.device_print` or by
returning an extra output.
"""
    references = (f"{CATALOGUE} CU36", LANG_GUIDE, "aws-neuron-sdk nki/guides/nki_simulator.rst")
    examples = (
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                e = np.exp(t)
                nl.store(out, value=e)
                return out
            """,
            lines=[9],
            title="legacy API: np.exp on a tile",
        ),
        invalid(
            """
            import torch
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def zero_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                buf = torch.zeros((128, 512))
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.memset(dst=t, value=0.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: a torch buffer inside the kernel",
        ),
        valid(
            """
            import math
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_kernel(x):
                n, d = x.shape
                n_tiles = math.ceil(n / 128)
                scale = 1.0 / math.sqrt(d)
                low = np.finfo(np.float32).min
                out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in range(n_tiles):
                    t = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
                return out
            """,
            title="math/numpy on compile-time values",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.host_library_on_tiles(ctx, scan(ctx))


class GpuDtype(_SpotRule):
    id = "NKI428"
    name = "gpu-dtype"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU framework dtype (tl.float16, torch.bfloat16) or a 64-bit/complex dtype is passed to NKI"
    fix_hint = "use an nki.language dtype: nl.float32, nl.bfloat16, nl.float16, nl.float8_e4m3, ..."
    explanation = """
`dtype=tl.float16`, `dtype=torch.bfloat16`, `.to(tl.float32)`,
`np.float64`, `torch.double`, complex dtypes, `dtype=float` (numpy float64)
or the `fnuz` FP8 variants passed to NKI calls in kernel code. numpy
float32/float16/int dtypes are not reported (legacy NKI documented them).

**Why on Trainium.** NKI APIs take `nki.language` dtypes (`nl.float32`,
`nl.bfloat16`, `nl.float8_e4m3`, ...). Trainium has no 64-bit float or
complex types, and the compiler rejects the `fnuz` FP8 variants
(NCC_EVRF005); Triton and torch dtype objects are not NKI dtypes.

**Fix.** Use the `nki.language` dtype; keep fp32 where a GPU kernel used
fp64 (or emulate double-float), split complex data into real/imaginary
tiles.
"""
    references = (f"{CATALOGUE} CU40, CU41", "aws-neuron-sdk nki/api/nki.api.shared.rst (data types)", "aws-neuron-sdk compiler/error-codes/EVRF005.rst")
    examples = (
        invalid(
            """
            import torch
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def cast_kernel(x):
                out = nl.ndarray((128, 512), dtype=torch.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8],
            title="current API: a torch dtype",
        ),
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def acc_kernel(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 1), dtype=np.float64, buffer=nl.sbuf)
                nl.store(out, value=acc)
                return out
            """,
            lines=[8],
            title="legacy API: float64",
        ),
        valid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def acc_kernel(x):
                out = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nl.store(out, value=acc)
                return out
            """,
            title="nl and numpy 32-bit dtypes",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.gpu_dtypes(ctx, scan(ctx))


class GpuMathIntrinsic(_GpuNameRule):
    id = "NKI429"
    name = "gpu-math-intrinsic"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU math intrinsic (tl.exp2, tl.math.*, libdevice, __expf, rsqrtf) in NKI kernel code"
    categories = (gn.MATH,)
    noun = "math intrinsic"
    fix_hint = "nisa.activation(dst, op=nl.exp, data=t, scale=...) or the nl.* math function; exp2(x) = exp(x * ln 2)"
    explanation = """
`tl.exp2`, `tl.math.*`, `tl.extra.cuda.libdevice.*`, `tl.fma`, `tl.umulhi`,
`tl.fdiv`, `tl.div_rn`, `tl.inline_asm_elementwise`, numba
`cuda.libdevice` / `cuda.fp16`, and pasted CUDA intrinsics (`__expf`,
`__fdividef`, `rsqrtf`, `exp2f`) in NKI kernel code.

**Why on Trainium.** ScalarE evaluates a fixed table of activation
functions (piecewise-polynomial `exp`, `log`, `tanh`, `gelu`, ...) and
VectorE/GpSimd provide ALU operations; there are no libdevice functions,
no inline assembly and no per-operation rounding modes. `exp2` in
particular must be rewritten, and its `log2(e)` scale factor with it (see
NKI505).

**Fix.** `nisa.activation(dst, op=nl.exp, data=t, scale=math.log(2))` for
`exp2`; `nl.rsqrt` / `nisa.activation(op=nl.rsqrt)`; plain ALU ops via
`nisa.tensor_tensor` / `nisa.tensor_scalar`.
"""
    references = (f"{CATALOGUE} CU42", "aws-neuron-sdk nki/api/nki.api.shared.rst (activation functions)")
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp2_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                e = tl.exp2(t)
                nisa.dma_copy(dst=out, src=t)
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
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out, value=__expf(t))
                return out
            """,
            lines=[8],
            title="legacy API: a pasted CUDA intrinsic",
        ),
        valid(
            """
            import math
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp2_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t, scale=math.log(2))
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="exp2 as exp with scale ln 2",
        ),
    )


class PowerOfTwoPadding(_SpotRule):
    id = "NKI430"
    name = "power-of-two-padding"
    family = "cuda"
    level = Level.WARNING
    summary = "A block size is rounded up to a power of two (triton.next_power_of_2, 1 << ceil(log2(n)))"
    fix_hint = "use the exact extent and a min()-bounded last tile"
    explanation = """
`triton.next_power_of_2(n)`, `1 << math.ceil(math.log2(n))` or `2 **
math.ceil(math.log2(n))` in NKI kernel code, typically the Triton softmax
`BLOCK_SIZE = triton.next_power_of_2(n_cols)`.

**Why on Trainium.** Triton needs power-of-two `arange` extents and masks
the excess; NKI tiles take any extent. Without masks (removed in current
NKI) the padded block reads and writes past the data, and in any case it
wastes SBUF bytes per partition. Algorithms that really need powers of two
(FFT, bitonic sort) can suppress the finding.

**Fix.** Use the exact extent (`n_cols`) for the free dimension; tile the
partition dimension by 128 with a `min()`-bounded last tile.
"""
    references = (f"{CATALOGUE} CU43", MIGRATION)
    examples = (
        invalid(
            """
            import triton
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n_rows, n_cols = x.shape
                BLOCK = triton.next_power_of_2(n_cols)
                out = nl.ndarray((n_rows, n_cols), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, n_cols), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, :])
                nisa.dma_copy(dst=out[0:128, :], src=t)
                return out
            """,
            lines=[9],
            title="current API",
        ),
        invalid(
            """
            import math
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                n_rows, n_cols = x.shape
                block = 1 << math.ceil(math.log2(n_cols))
                out = nl.ndarray((128, n_cols), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:n_cols])
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n_rows, n_cols = x.shape
                out = nl.ndarray((n_rows, n_cols), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, n_cols), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, :])
                nisa.dma_copy(dst=out[0:128, :], src=t)
                return out
            """,
            title="exact extents",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.pow2_padding(ctx, scan(ctx))


# ---------------------------------------------------------------------------- residue
class GpuSourceInString(_SpotRule):
    id = "NKI431"
    name = "gpu-source-in-string"
    family = "cuda"
    level = Level.ERROR
    summary = "CUDA C source text is compiled at run time (cupy.RawKernel, SourceModule, load_inline)"
    fix_hint = "port the CUDA source into the NKI kernel, or delete the GPU path"
    explanation = """
A string containing CUDA C (`__global__`, `threadIdx`, `__syncthreads`,
`atomicAdd`, `<<<`, ...) passed to a runtime compiler: `cupy.RawKernel` /
`RawModule` / `ElementwiseKernel` / `ReductionKernel`,
`pycuda.compiler.SourceModule`, `torch.utils.cpp_extension.load_inline(
cuda_sources=...)`, `numba.cuda.compile_ptx`. Strings are traced to their
assignment in the same function or module. Other strings (comments, messages,
docstrings) are at most port residue (NKI433).

**Why on Trainium.** This is live GPU code: it is compiled by NVRTC/nvcc at
run time and can never run on a Trainium host; a module that ships it next
to NKI kernels has not finished the port.

**Fix.** Port the CUDA kernel into the NKI kernel (tiles and `nisa.*`
instructions) or delete the GPU path.
"""
    references = (f"{CATALOGUE} CU44", "../shared/CUDA-IDIOMS.md section 0.3")
    examples = (
        invalid(
            """
            import cupy
            import nki
            import nki.language as nl
            import nki.isa as nisa

            SRC = '''
            extern "C" __global__ void add(const float* a, float* b) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                b[i] += a[i];
            }
            '''

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out

            add_gpu = cupy.RawKernel(SRC, "add")
            """,
            lines=[21],
            title="current API module with a cupy.RawKernel",
        ),
        invalid(
            """
            from pycuda.compiler import SourceModule
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x[0:128, 0:512]))
                return out

            mod = SourceModule("__global__ void k(float* a) { a[threadIdx.x] = 0; }")
            """,
            lines=[11],
            title="legacy API module with pycuda",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                '''Port of the CUDA kernel: each threadIdx.x copied one element.'''
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="CUDA words in a docstring are residue, not live source",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.gpu_source_strings(ctx, scan(ctx))


class GpuFrameworkImport(_SpotRule):
    id = "NKI432"
    name = "gpu-framework-import"
    family = "cuda"
    level = Level.NOTE
    summary = "A module that defines NKI kernels imports a GPU framework (triton, numba.cuda, cupy, pycuda)"
    fix_hint = "move the GPU code to a separate module or make the import optional"
    explanation = """
`import triton`, `import triton.language as tl`, `from numba import cuda`,
`import cupy`, `import pycuda...`, `torch.utils.cpp_extension` in a module
that defines NKI kernels. A note: dual-backend modules are legitimate; the
specific rules report any GPU name that reaches kernel code.

**Why on Trainium.** These frameworks are unavailable (or dead weight) on a
Trainium host; an import that survives the port is a strong sign that part
of the kernel, its launcher or its tests still targets the GPU.

**Fix.** Move the GPU implementation to its own module, or import it
lazily/optionally (`try: import triton` in the GPU-only path).
"""
    references = (f"{CATALOGUE} CU38",)
    examples = (
        invalid(
            """
            import triton
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[1, 2],
            title="current API",
            level=Level.NOTE,
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x[0:128, 0:512]))
                return out
            """,
            lines=[1],
            title="legacy API",
        ),
        valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_gpu(x_ptr, y_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs))
            """,
            title="a pure GPU module (no NKI kernels) is not reported",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.gpu_imports(ctx, scan(ctx))


class PortResidue(_SpotRule):
    id = "NKI433"
    name = "port-residue"
    family = "cuda"
    level = Level.NOTE
    default_enabled = False
    precision = "low"
    summary = "Comments and docstrings of a kernel still mention CUDA/Triton (summary per kernel; off by default)"
    fix_hint = "none required: read the marked regions for surviving GPU assumptions"
    explanation = """
A per-kernel summary of comments, docstrings and prose strings inside NKI
kernel code that mention CUDA or Triton (`threadIdx`, `__syncthreads`,
`tl.load`, `warp`, `shared memory`, `thread block`, `num_warps`, ...),
reported once at the `def` line with the lines involved. Off by default
(enable with `--extend-select NKI433` or `port-residue`) and never more
than a note.

**Why on Trainium.** Comments cannot change behaviour, and porters keep the
original GPU line as a mapping aid; but a cluster of residue marks the
places where GPU assumptions (lockstep threads, zero-filled masked lanes,
warp-level reductions) may have survived in the logic. Docstrings are never
parsed as code (production NKI docstrings contain per-element pseudo-code).

**Fix.** None required; a reviewer reads the marked regions, and removes
stale comments once the port is verified.
"""
    references = (f"{CATALOGUE} CU45 and section 0.3",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                '''Ported from the Triton kernel: one program per BLOCK of rows.'''
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                # was: offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)   # tl.load(x_ptr + offs, mask=mask)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[6],
            title="current API: three residue lines summarised at the def",
            level=Level.NOTE,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])   # each threadIdx.x loaded one element
                nl.store(out, value=t)
                return out
            """,
            lines=[5],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                '''Copy a [128, 512] tile through SBUF.'''
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)   # one DMA per tile
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="no GPU vocabulary",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.port_residue(ctx, scan(ctx))


class ProgramIdAxis(_SpotRule):
    id = "NKI434"
    name = "program-id-axis"
    family = "cuda"
    level = Level.WARNING
    summary = "nl.program_id / nl.num_programs asks for a grid axis >= 1 in current NKI (LNC launches have one axis)"
    fix_hint = "use nl.program_id(0) only for the LNC split and loop over tiles inside the kernel"
    explanation = """
`nl.program_id(1)`, `nl.num_programs(axis=2)` in a file written against the
current `nki` API. Legacy (`neuronxcc.nki`) code with multi-dimensional
SPMD grids is not reported: there the axes existed.

**Why on Trainium.** Current NKI launches a kernel once per physical core
of a logical NeuronCore: the bracket holds the LNC degree (1 or 2) and
`nl.program_id(0)` identifies the core. The NKI 0.5 migration notice says
an SPMD dimension that differs from the LNC degree will become a
compile-time error. Higher axes are leftovers of multi-dimensional Triton
or legacy SPMD grids that did the tiling (a warning: the grid is
deprecated, not yet rejected).

**Fix.** Loop over the tiles that the extra grid axes enumerated inside the
kernel; keep `nl.program_id(0)` only to split work across the LNC cores.
"""
    references = (LNC, "../shared/NKI-REFERENCE.md LNC04", MIGRATION)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                col = nl.program_id(1)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8],
            title="current API",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((256, 1024), dtype=x.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                j = nl.program_id(1)
                t = nl.load(x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
                nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=t)
                return out
            """,
            title="legacy multi-axis SPMD grid",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                core = nl.program_id(0)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[core * 128:(core + 1) * 128, :])
                nisa.dma_copy(dst=out[core * 128:(core + 1) * 128, :], src=t)
                return out
            """,
            title="current API, axis 0 (the LNC split)",
        ),
    )

    def spots(self, ctx: RuleContext):
        return cs.program_id_axes(ctx, scan(ctx))
