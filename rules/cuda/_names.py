"""What a CUDA / Triton / GPU-runtime name means, and what replaces it in NKI.

The cuda family's knowledge of GPU names. A name is either a resolved dotted path
(``triton.language.load``, ``numba.cuda.threadIdx.x``, ``cupyx.jit.threadIdx``)
or a bare identifier pasted from CUDA C without an import (``threadIdx``,
``__syncthreads``, ``atomicAdd``). Each maps to a category (one rule per
category) and the NKI construct that replaces it. The replacements follow
the NKI programming model (tiles of at most 128 partitions, no threads,
warps or atomics; https://awsdocs-neuron.readthedocs-hosted.com/en/latest/
nki/get-started/about/tiling-overview.html) and the public Triton, numba
and cupy APIs.
"""

from __future__ import annotations

from dataclasses import dataclass

# Categories (each is reported by one rule of this package).
THREAD = "thread-index"
BLOCK = "block-index"
SHARED = "shared-memory"
BARRIER = "barrier"
ATOMIC = "atomic"
WARP = "warp"
JIT = "jit"
PROGRAM_ID = "triton-program-id"
MEMORY = "triton-memory"
TRITON_CALL = "triton-call"
ITERATOR = "triton-iterator"
ARANGE = "triton-arange"
CONSTEXPR = "constexpr"
LAUNCH = "launch-option"
RUNTIME = "runtime"
DTYPE = "dtype"
MATH = "math-intrinsic"
POW2 = "pow2"

# Module roots whose members are GPU-only (after canonicalising aliases).
CUDA_DEVICE_ROOTS = ("numba.cuda", "cupyx.jit")
TRITON_LANGUAGE = "triton.language"
PALLAS = "jax.experimental.pallas"

REPLACE_THREAD = (
    "there are no threads: one instruction processes a whole [128-partition x free] tile; "
    "rewrite the body as tile operations (nisa.tensor_tensor / nl.add on a [128, F] tile)"
)
REPLACE_BLOCK = (
    "a thread block becomes one iteration of a 128-partition tile loop inside the kernel "
    "(for t in range(n // 128): x[t * 128:(t + 1) * 128, :]); nl.program_id(0) only splits work across "
    "the cores of a logical NeuronCore"
)
REPLACE_SHARED = (
    "allocate an SBUF tile with nl.ndarray(shape, dtype, buffer=nl.sbuf) and fill it with one DMA "
    "(nisa.dma_copy / nl.load) instead of a cooperative per-thread copy"
)
REPLACE_BARRIER = (
    "delete it: the NKI compiler tracks dependencies between engines and inserts the synchronisation; "
    "only the two cores of an LNC need nisa.core_barrier"
)
REPLACE_ATOMIC = (
    "there are no atomics: restructure as per-tile partial sums reduced with nisa.tensor_reduce or a "
    "ones-vector nisa.nc_matmul in PSUM; scatter-add to HBM with unique indices uses nisa.dma_compute "
    "(legacy nl.atomic_rmw)"
)
REPLACE_WARP = (
    "there are no warps or lanes: reduce along the free axis with nisa.tensor_reduce, move data across "
    "partitions with nisa.nc_transpose, nisa.nc_stream_shuffle or a TensorE matmul"
)
REPLACE_PROGRAM_ID = (
    "loop over 128-partition tiles inside the kernel; nl.program_id(0) / nl.num_programs() only split "
    "that loop across the (at most 2) cores of a logical NeuronCore"
)
REPLACE_MEMORY = (
    "move whole tiles with nisa.dma_copy(dst=tile, src=x[r0:r1, c0:c1]) (legacy nl.load / nl.store) on "
    "slices of the tensor; there are no pointers, masks or cache hints"
)
REPLACE_ITERATOR = "use a Python range (legacy nl.affine_range / nl.sequential_range)"
REPLACE_ARANGE = "index with integer slices or nl.ds(start, size) over a 128-partition tile"
REPLACE_CONSTEXPR = "use a plain int parameter: NKI kernels are specialised on Python argument values already"
REPLACE_LAUNCH = (
    "remove it: warps, pipeline stages and autotuning have no Trainium meaning; choose tile sizes from "
    "nl.tile_size (pmax 128, gemm_stationary_fmax 128, gemm_moving_fmax 512)"
)
REPLACE_RUNTIME = (
    "Neuron devices are reached through torch-xla, JAX or numpy arrays passed to the nki.jit kernel; "
    "inside a kernel allocate with nl.ndarray(..., buffer=nl.sbuf / nl.shared_hbm)"
)
REPLACE_DTYPE = "use an nki.language dtype (nl.float32, nl.bfloat16, nl.float16, nl.float8_e4m3, ...)"
REPLACE_MATH = (
    "use the ScalarE activation table (nisa.activation(op=nl.exp, scale=...)) or nl.* math; exp2(x) is "
    "exp(x * ln 2), and there are no rounding-mode variants"
)
REPLACE_POW2 = "use the exact extent and a min()-bounded last tile; NKI tiles need no power-of-two padding"
REPLACE_JIT = "decorate the kernel with @nki.jit only and keep the GPU version in a separate module"


@dataclass(frozen=True)
class GpuName:
    category: str
    origin: str  # "numba.cuda", "Triton", "CUDA C", ...
    shown: str  # the name as the message shows it
    replacement: str


def _table(*groups: tuple[tuple[str, ...], str, str]) -> dict[str, tuple[str, str]]:
    """name -> (category, replacement) from (names, category, replacement) groups."""
    return {name: (category, replacement) for names, category, replacement in groups for name in names}


# numba.cuda / cupyx.jit members (first attribute after the module root).
_CUDA_MEMBERS = _table(
    (("threadIdx", "laneid"), THREAD, REPLACE_THREAD),
    (("blockIdx", "blockDim", "gridDim", "grid", "gridsize"), BLOCK, REPLACE_BLOCK),
    (("shared", "local", "const", "shared_memory"), SHARED, REPLACE_SHARED),
    (("syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "syncwarp", "threadfence",
      "threadfence_block", "threadfence_system", "cg", "grid_group", "this_grid", "nanosleep"), BARRIER, REPLACE_BARRIER),
    (("atomic", "atomic_add", "atomic_sub", "atomic_max", "atomic_min", "atomic_cas", "atomic_exch", "atomic_and",
      "atomic_or", "atomic_xor", "atomic_inc", "atomic_dec"), ATOMIC, REPLACE_ATOMIC),
    (("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "any_sync", "all_sync",
      "eq_sync", "match_any_sync", "match_all_sync", "activemask", "lanemask_lt", "warpsize", "shfl", "shfl_down",
      "shfl_up", "shfl_xor", "ballot"), WARP, REPLACE_WARP),
    (("libdevice", "fp16", "cbrt", "brev", "popc", "clz", "ffs", "fma", "selp", "hadd", "hmul", "hfma"), MATH, REPLACE_MATH),
    (("jit", "rawkernel", "declare_device"), JIT, REPLACE_JIT),
    (("to_device", "device_array", "device_array_like", "pinned_array", "mapped_array", "managed_array",
      "synchronize", "stream", "default_stream", "current_context", "select_device", "get_current_device",
      "is_available", "close", "event", "pinned", "mapped", "as_cuda_array", "is_cuda_array"), RUNTIME, REPLACE_RUNTIME),
)

# Pasted CUDA C identifiers (only when the name is not bound in the module).
_BARE = _table(
    (("threadIdx",), THREAD, REPLACE_THREAD),
    (("blockIdx", "blockDim", "gridDim"), BLOCK, REPLACE_BLOCK),
    (("__shared__",), SHARED, REPLACE_SHARED),
    (("__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block", "__threadfence_system",
      "__syncthreads_count", "__syncthreads_and", "__syncthreads_or"), BARRIER, REPLACE_BARRIER),
    (("atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicExch", "atomicCAS", "atomicAnd", "atomicOr",
      "atomicXor", "atomicInc", "atomicDec"), ATOMIC, REPLACE_ATOMIC),
    (("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
      "__all_sync", "__activemask", "__match_any_sync", "__match_all_sync", "warpSize", "__shfl", "__shfl_down",
      "__shfl_xor", "__lanemask_lt"), WARP, REPLACE_WARP),
    (("__expf", "__logf", "__log2f", "__sinf", "__cosf", "__powf", "__fdividef", "__frcp_rn", "__fsqrt_rn",
      "__fmaf_rn", "__saturatef", "__exp10f", "rsqrtf", "exp2f", "expf", "logf", "sqrtf", "fmaf", "__float2half",
      "__half2float", "__hadd", "__hmul", "__hfma", "__float2bfloat16", "__bfloat162float"), MATH, REPLACE_MATH),
)

# triton.language members with a specific category and replacement.
_TRITON: dict[str, tuple[str, str]] = {
    "program_id": (PROGRAM_ID, REPLACE_PROGRAM_ID),
    "num_programs": (PROGRAM_ID, REPLACE_PROGRAM_ID),
    "load": (MEMORY, REPLACE_MEMORY),
    "store": (MEMORY, REPLACE_MEMORY),
    "make_block_ptr": (MEMORY, REPLACE_MEMORY),
    "make_tensor_descriptor": (MEMORY, REPLACE_MEMORY),
    "advance": (MEMORY, REPLACE_MEMORY),
    "multiple_of": (MEMORY, "remove the hint: SBUF is software-managed and there is no cache to hint"),
    "max_contiguous": (MEMORY, "remove the hint: SBUF is software-managed and there is no cache to hint"),
    "max_constancy": (MEMORY, "remove the hint: SBUF is software-managed and there is no cache to hint"),
    "assume": (MEMORY, "state shape facts with a Python assert on x.shape instead"),
    "swizzle2d": (MEMORY, "remove the L2 swizzle: loop over tiles in the order that reuses resident SBUF tiles"),
    "range": (ITERATOR, REPLACE_ITERATOR),
    "static_range": (ITERATOR, REPLACE_ITERATOR),
    "arange": (ARANGE, REPLACE_ARANGE),
    "constexpr": (CONSTEXPR, REPLACE_CONSTEXPR),
    "debug_barrier": (BARRIER, REPLACE_BARRIER),
    "exp2": (MATH, REPLACE_MATH),
    "log2": (MATH, REPLACE_MATH),
    "fma": (MATH, REPLACE_MATH),
    "umulhi": (MATH, REPLACE_MATH),
    "fdiv": (MATH, REPLACE_MATH),
    "div_rn": (MATH, REPLACE_MATH),
    "sqrt_rn": (MATH, REPLACE_MATH),
    "inline_asm_elementwise": (MATH, REPLACE_MATH),
    "math": (MATH, REPLACE_MATH),
    "extra": (MATH, REPLACE_MATH),
    "libdevice": (MATH, REPLACE_MATH),
    "next_power_of_2": (POW2, REPLACE_POW2),
}

# Replacements for the remaining (generic) triton.language calls.
TRITON_CALL_REPLACEMENTS: dict[str, str] = {
    "dot": "nisa.nc_matmul(dst=psum_tile, stationary=aT[K, M], moving=b[K, N]) accumulating in an fp32 PSUM tile "
           "(legacy nl.matmul(a, b, transpose_x=True))",
    "dot_scaled": "nisa.nc_matmul_mx with quantize_mx scales",
    "sum": "nisa.tensor_reduce(dst, op=nl.add, data=t, axis=1) over a free axis (legacy nl.sum(t, axis=1))",
    "max": "nisa.tensor_reduce(dst, op=nl.maximum, data=t, axis=1) over a free axis (legacy nl.max)",
    "min": "nisa.tensor_reduce(dst, op=nl.minimum, data=t, axis=1) over a free axis (legacy nl.min)",
    "argmax": "nisa.max8 / nisa.nc_find_index8",
    "argmin": "nisa.max8 / nisa.nc_find_index8 on the negated tile",
    "maximum": "nisa.tensor_tensor(dst, data1=a, data2=b, op=nl.maximum)",
    "minimum": "nisa.tensor_tensor(dst, data1=a, data2=b, op=nl.minimum)",
    "exp": "nisa.activation(dst, op=nl.exp, data=t) (legacy nl.exp)",
    "log": "nisa.activation(dst, op=nl.log, data=t) (legacy nl.log)",
    "sqrt": "nisa.activation(dst, op=nl.sqrt, data=t) (legacy nl.sqrt)",
    "rsqrt": "nl.rsqrt or nisa.activation(dst, op=nl.rsqrt, data=t)",
    "sigmoid": "nisa.activation(dst, op=nl.sigmoid, data=t)",
    "abs": "nisa.activation(dst, op=nl.abs, data=t)",
    "where": "nl.where / nisa.affine_select / nisa.tensor_copy_predicated",
    "zeros": "nl.ndarray(shape, dtype, buffer=nl.sbuf) plus nisa.memset(dst, 0.0) (legacy nl.zeros)",
    "zeros_like": "nl.ndarray(t.shape, t.dtype, buffer=nl.sbuf) plus nisa.memset",
    "full": "nl.ndarray plus nisa.memset(dst, value) (legacy nl.full)",
    "cdiv": "a Python ceil-division (n + d - 1) // d on compile-time ints",
    "reshape": "reshape the HBM view (x.reshape(...)) before the DMA",
    "view": "reshape the HBM view (x.reshape(...)) before the DMA",
    "trans": "nisa.nc_transpose / nisa.dma_transpose",
    "permute": "nisa.nc_transpose / nisa.dma_transpose",
    "broadcast_to": "a per-partition scalar operand ([128, 1]) or a ones-vector matmul for partition broadcast",
    "cast": "nisa.tensor_copy(dst=tile_of_target_dtype, src=t)",
    "cumsum": "nisa.tensor_tensor_scan",
    "softmax": "nl.softmax or the activation(exp, bias=-max, reduce_op=nl.add) pattern",
    "device_print": "nl.device_print",
    "static_print": "print (runs at compile time)",
    "static_assert": "a Python assert on shapes (evaluated at compile time)",
    "device_assert": "a Python assert on shapes (evaluated at compile time)",
    "expand_dims": "keep tiles 2-D ([128, F]) and index with slices",
    "join": "write both halves into slices of one tile",
    "split": "slice the tile",
    "sort": "nisa.max8 / nisa.nc_match_replace8 for top-k",
    "rand": "nisa.rng / nl.rand",
    "randn": "nisa.rng / nl.rand",
}

TRITON_DTYPES = {
    "float16", "bfloat16", "float32", "float64", "float8e4nv", "float8e5", "float8e4b15", "float8e4b8", "float8e5b16",
    "int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "fp16", "bf16", "fp32", "fp64",
    "dtype", "pointer_type", "tensor",
}
TORCH_DTYPES = {
    "float16", "half", "bfloat16", "float32", "float", "float64", "double", "int8", "int16", "short", "int32", "int",
    "int64", "long", "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble", "float8_e4m3fn", "float8_e5m2",
    "float8_e4m3fnuz", "float8_e5m2fnuz", "dtype",
}
WIDE_DTYPES = {"float64", "double", "complex64", "complex128", "complex_", "cfloat", "cdouble", "longdouble",
               "float128", "clongdouble", "float8_e4m3fnuz", "float8_e5m2fnuz"}

LAUNCH_KEYWORDS = {"num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu", "num_consumer_groups",
                   "num_buffers_warp_spec", "matrix_instr_nonkdim", "kpack", "enable_fp_fusion"}
HINT_KEYWORDS = {"cache_modifier", "eviction_policy", "volatile", "padding_option", "boundary_check"}


def _after(name: str, root: str) -> list[str]:
    if name == root:
        return []
    if name.startswith(root + "."):
        return name[len(root) + 1:].split(".")
    return []


def classify_qual(name: str) -> GpuName | None:
    """Classify a resolved dotted name (Gen.OTHER); None if it is not GPU code."""
    for root in CUDA_DEVICE_ROOTS:
        rest = _after(name, root)
        if rest:
            member = rest[0]
            hit = _CUDA_MEMBERS.get(member)
            if hit is not None:
                short = "cuda" if root == "numba.cuda" else "cupyx.jit"
                return GpuName(hit[0], root, ".".join([short, *rest]), hit[1])
            return None
    rest = _after(name, TRITON_LANGUAGE)
    if rest:
        member = rest[0]
        shown = ".".join(["tl", *rest])
        if member in TRITON_DTYPES:
            return GpuName(DTYPE, "Triton", shown, REPLACE_DTYPE)
        if member.startswith("atomic_"):
            return GpuName(ATOMIC, "Triton", shown, REPLACE_ATOMIC)
        hit = _TRITON.get(member)
        if hit is not None:
            return GpuName(hit[0], "Triton", shown, hit[1])
        replacement = TRITON_CALL_REPLACEMENTS.get(member, "the nki.language / nki.isa equivalent on whole tiles")
        return GpuName(TRITON_CALL, "Triton", shown, replacement)
    if name.startswith("triton."):
        member = name.split(".")[1]
        shown = name
        if member in ("jit",):
            return GpuName(JIT, "Triton", shown, REPLACE_JIT)
        if member in ("autotune", "heuristics", "Config"):
            return GpuName(LAUNCH, "Triton", shown, REPLACE_LAUNCH)
        if member == "next_power_of_2":
            return GpuName(POW2, "Triton", shown, REPLACE_POW2)
        if member == "cdiv":
            return GpuName(TRITON_CALL, "Triton", shown, TRITON_CALL_REPLACEMENTS["cdiv"])
        return GpuName(TRITON_CALL, "Triton", shown, "host-side Triton utilities have no use in an NKI kernel")
    rest = _after(name, PALLAS)
    if rest:
        member = rest[0]
        shown = ".".join(["pl", *rest])
        if member in ("program_id", "num_programs"):
            return GpuName(PROGRAM_ID, "Pallas", shown, REPLACE_PROGRAM_ID)
        if member in ("load", "store"):
            return GpuName(MEMORY, "Pallas", shown, REPLACE_MEMORY)
        if member in ("pallas_call",):
            return GpuName(JIT, "Pallas", shown, REPLACE_JIT)
        return GpuName(TRITON_CALL, "Pallas", shown, "the nki.language / nki.isa equivalent on whole tiles")
    if name.startswith("torch."):
        parts = name.split(".")
        if parts[1] == "cuda" or (parts[1] == "backends" and len(parts) > 2 and parts[2] == "cuda"):
            if parts[-1] == "synchronize":
                return GpuName(BARRIER, "torch.cuda", name, REPLACE_BARRIER)
            return GpuName(RUNTIME, "torch.cuda", name, REPLACE_RUNTIME)
        if len(parts) == 2 and parts[1] in TORCH_DTYPES:
            return GpuName(DTYPE, "torch", name, REPLACE_DTYPE)
        return None
    if name == "cupy" or name.startswith("cupy."):
        parts = name.split(".")
        if len(parts) == 2 and parts[1] in WIDE_DTYPES | {"float16", "float32", "int32", "int8", "uint8"}:
            return GpuName(DTYPE, "cupy", name, REPLACE_DTYPE)
        return GpuName(RUNTIME, "cupy", name, REPLACE_RUNTIME)
    if name == "pycuda" or name.startswith("pycuda."):
        return GpuName(RUNTIME, "pycuda", name, REPLACE_RUNTIME)
    if name.startswith(("numpy.", "np.")) and name.split(".")[-1] in WIDE_DTYPES:
        return GpuName(DTYPE, "numpy", name.replace("numpy.", "np.", 1), REPLACE_DTYPE)
    return None


def classify_bare(identifier: str) -> GpuName | None:
    """Classify an unbound identifier pasted from CUDA C."""
    hit = _BARE.get(identifier)
    if hit is None:
        return None
    return GpuName(hit[0], "CUDA C", identifier, hit[1])


# Modules whose import in a file that defines NKI kernels is port residue.
GPU_IMPORT_ROOTS = ("numba.cuda", "cupy", "cupyx", "pycuda", "triton", "torch.utils.cpp_extension",
                    "jax.experimental.pallas")

# Callees that compile CUDA source text at run time (their string argument is live GPU code).
RUNTIME_COMPILERS = {
    "cupy.RawKernel", "cupy.RawModule", "cupy.ElementwiseKernel", "cupy.ReductionKernel", "cupy.cuda.compile_with_cache",
    "pycuda.compiler.SourceModule", "pycuda.compiler.compile", "torch.utils.cpp_extension.load_inline",
    "numba.cuda.compile_ptx", "cuda.nvrtc.nvrtcCreateProgram", "cupyx.jit.rawkernel",
}
CUDA_SOURCE_TOKENS = ("__global__", "__device__", "__shared__", "threadIdx", "blockIdx", "__syncthreads",
                      "atomicAdd", "<<<", "cudaMalloc", "wmma::", "half2", "__restrict__", "extern \"C\"")

# Tokens that mark CUDA / Triton residue in comments and docstrings.
RESIDUE_TOKENS = (
    "threadIdx", "blockIdx", "blockDim", "gridDim", "__syncthreads", "syncthreads", "__shared__", "atomicAdd",
    "tl.load", "tl.store", "tl.dot", "tl.sum", "tl.arange", "tl.program_id", "tl.constexpr", "triton.jit",
    "@triton", "num_warps", "warp", "one thread per", "per thread", "thread block", "shared memory", "cuda.",
    "__shfl", "grid-stride", "tl.", "Triton", "CUDA", "numba",
)
