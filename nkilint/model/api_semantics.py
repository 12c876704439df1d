"""What each NKI API does, as far as the model needs it.

The API table (apitable.py) says which names and parameters exist in each
release; this module adds the semantics: which engine runs an op, which
arguments it writes, what a legacy call returns (and where), and how loops
and allocations behave. Sources: the NKI ISA and language API
reference (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/nki/api/)
for engines, memories and results, and the nki.isa / nki.language stubs.
"""

from __future__ import annotations

from dataclasses import dataclass

# Allocation functions of nki.language: name -> index of the shape parameter
# ("like" allocations take the shape of their first argument).
ALLOCATIONS = {
    "ndarray": "shape",
    "zeros": "shape",
    "ones": "shape",
    "full": "shape",
    "empty": "shape",
    "rand": "shape",
    "random": "shape",
    "zeros_like": "like",
    "ones_like": "like",
    "empty_like": "like",
    "full_like": "like",
    "rand_like": "like",
    "shared_constant": "const",
    "shared_identity_matrix": "identity",
}

# Loop iterators of nki.language (the canonical kind recorded on loop nodes).
LOOPS = {
    "affine_range": "affine_range",
    "sequential_range": "sequential_range",
    "static_range": "static_range",
    "dynamic_range": "dynamic_range",
    "tile_range": "tile_range",
}

# Parameter names through which an ISA call writes its result.
OUTPUT_PARAMS = {"dst", "reduce_res", "dst_scale", "dst_data", "out", "output", "dst_indices", "dst_count"}

ENGINE_TENSOR = "tensor"
ENGINE_VECTOR = "vector"
ENGINE_SCALAR = "scalar"
ENGINE_GPSIMD = "gpsimd"
ENGINE_DMA = "dma"
ENGINE_ANY = "any"  # engine-selectable (engine= argument, compiler's choice)
ENGINE_NONE = "none"  # no instruction (metadata, index helpers)

_ISA_ENGINES = {
    ENGINE_TENSOR: ("nc_matmul", "nc_matmul_mx"),
    ENGINE_VECTOR: (
        "tensor_reduce", "tensor_copy_predicated", "bn_stats", "bn_aggr", "tensor_tensor_scan",
        "scalar_tensor_tensor", "tensor_scalar_reduce", "tensor_scalar_cumulative", "reciprocal", "max8",
        "nc_find_index8", "nc_match_replace8", "nc_stream_shuffle", "dropout", "set_rng_seed", "range_select",
        "select_reduce", "exponential", "rand2", "quantize_mx",
    ),
    ENGINE_SCALAR: ("activation", "activation_reduce", "activate2"),
    ENGINE_GPSIMD: (
        "iota", "affine_select", "local_gather", "nc_n_gather", "tensor_partition_reduce", "sequence_bounds",
        "nonzero_with_count", "topk", "rand_set_state", "rand_get_state", "core_barrier",
    ),
    ENGINE_DMA: ("dma_copy", "dma_transpose", "dma_compute", "sendrecv", "sendrecv_compute"),
    ENGINE_ANY: ("tensor_tensor", "tensor_scalar", "tensor_copy", "memset", "rng", "nc_transpose", "select"),
}
ISA_ENGINE = {name: engine for engine, names in _ISA_ENGINES.items() for name in names}

# nki.language calls that move data between HBM and on-chip memory.
LANGUAGE_DMA = {"load", "store", "load_transpose2d", "atomic_rmw", "gather_flattened"}
# nki.language calls that only compute indices / metadata.
LANGUAGE_META = {
    "ds", "arange", "mgrid", "program_id", "num_programs", "program_ndim", "par_dim", "spmd_dim", "nc",
    "device_print", "no_reorder", "is_hbm", "is_on_chip", "is_psum", "is_sbuf", "tile_size", "random_seed",
    "fori_loop", "while_loop", "if_else",
}
# NKI 0.7 tile/block grids: views in tile coordinates, and allocations
# organised as grids (kind "grid": no instruction; .data is the tensor).
GRID_VIEWS = {"tiles", "blocks"}
GRID_ALLOCATIONS = {"alloc_tiles", "alloc_blocks"}
# NKI 0.7 scalars: loads and stores between a 1x1 tile and a device scalar.
SCALAR_OPS = {"scalar_load", "scalar_store"}
# nki.lnc (NKI 0.8): the LNC functions nki.isa had; core_barrier only
# synchronises (kind "sync": not a compute instruction, its operand is in HBM).
LNC_KINDS = {"sendrecv": ("dma", ENGINE_DMA), "sendrecv_compute": ("dma", ENGINE_DMA),
             "core_barrier": ("sync", ENGINE_GPSIMD)}
# nki.language compute calls whose result (legacy: returned tile) lives in PSUM.
LANGUAGE_PSUM_RESULT = {"matmul", "transpose"}
LANGUAGE_REDUCTIONS = {"sum", "max", "min", "mean", "prod", "var", "all", "any", "argmax", "argmin"}

# Activation instructions that take a per-partition scale and bias operand.
ACTIVATIONS = ("nki.isa.activation", "nki.isa.activation_reduce")

# Parameter names through which an NKI call only reads a tensor. An output
# whose every use is one of these is written only where the graph shows it;
# any other use (a collective, an unknown parameter) might write it unseen.
# Unlike exprs.TENSOR_ARGUMENT_PARAMS (parameters that always take a tensor,
# for deciding that a kernel parameter is one), this includes x / y / value
# / bias / scale, which may be scalars, and excludes every written
# parameter (dst, ...).
READ_ONLY_PARAMS = frozenset({
    "src", "data", "data0", "data1", "data2", "x", "y", "value", "stationary", "moving", "in_", "input",
    "on_true_tile", "predicate", "bias", "scale", "operand0", "operand1",
})


@dataclass(frozen=True)
class ApiInfo:
    name: str  # canonical dotted name
    module: str  # nki.language / nki.isa / ...
    short: str
    kind: str  # alloc, loop, dma, matmul, transpose, compute, meta, grid, scalar, sync, other
    engine: str

    @property
    def is_isa(self) -> bool:
        return self.module == "nki.isa"


def classify(canonical: str) -> ApiInfo | None:
    """Semantics of a canonical NKI name, or None if it is not an op/alloc/loop."""
    module, _, short = canonical.rpartition(".")
    if module == "nki.language":
        if short in GRID_VIEWS or short in GRID_ALLOCATIONS:
            return ApiInfo(canonical, module, short, "grid", ENGINE_NONE)
        if short in ALLOCATIONS:
            return ApiInfo(canonical, module, short, "alloc", ENGINE_NONE)
        if short in LOOPS:
            return ApiInfo(canonical, module, short, "loop", ENGINE_NONE)
        if short in LANGUAGE_DMA:
            return ApiInfo(canonical, module, short, "dma", ENGINE_DMA)
        if short in LANGUAGE_META:
            return ApiInfo(canonical, module, short, "meta", ENGINE_NONE)
        if short == "matmul":
            return ApiInfo(canonical, module, short, "matmul", ENGINE_TENSOR)
        if short == "transpose":
            return ApiInfo(canonical, module, short, "transpose", ENGINE_TENSOR)
        return ApiInfo(canonical, module, short, "compute", ENGINE_ANY)
    if module == "nki.isa":
        engine = ISA_ENGINE.get(short, ENGINE_ANY)
        if short in ("register_alloc", "register_move", "register_load", "register_store", "get_nc_version"):
            return ApiInfo(canonical, module, short, "meta", ENGINE_NONE)
        if short in SCALAR_OPS:
            return ApiInfo(canonical, module, short, "scalar", ENGINE_NONE)
        if short in ("nc_matmul", "nc_matmul_mx"):
            kind = "matmul"
        elif short in ("nc_transpose",):
            kind = "transpose"
        elif engine == ENGINE_DMA:
            kind = "dma"
        else:
            kind = "compute"
        return ApiInfo(canonical, module, short, kind, engine)
    if module == "nki.collectives":
        return ApiInfo(canonical, module, short, "dma", ENGINE_DMA)
    if module == "nki.lnc" and short in LNC_KINDS:
        kind, engine = LNC_KINDS[short]
        return ApiInfo(canonical, module, short, kind, engine)
    return None


def legacy_result_buffer(info: ApiInfo, engine_arg: str | None = None) -> str:
    """Where a legacy call's returned tile lives."""
    if info.kind == "matmul":
        return "psum"
    if info.kind == "transpose":
        if info.short == "nc_transpose" and engine_arg == "vector":
            return "sbuf"
        return "psum"
    return "sbuf"


# ------------------------------------------------------------------ per-API classification
# One answer each to "is this a matmul / transpose / DMA"; rules ask these
# instead of keeping their own lists of names.
def is_matmul(api: str) -> bool:
    """A TensorE matrix multiplication (``nc_matmul``, ``nc_matmul_mx``, ``nl.matmul``)."""
    info = classify(api)
    return info is not None and info.kind == "matmul"


def is_transpose(api: str) -> bool:
    """A transpose through an engine (``nc_transpose``, ``nl.transpose``; not ``dma_transpose``)."""
    info = classify(api)
    return info is not None and info.kind == "transpose"


def is_dma(api: str) -> bool:
    """A call that moves data through a DMA queue (``dma_copy``, ``nl.load``, collectives, ...)."""
    info = classify(api)
    return info is not None and info.kind == "dma"


MATMUL_APIS = ("nki.isa.nc_matmul", "nki.isa.nc_matmul_mx", "nki.language.matmul")
TRANSPOSE_APIS = ("nki.isa.nc_transpose", "nki.language.transpose")

# Parameters that take only tensors, per purpose. There are three sets and
# they differ on purpose: each answers its own question, and widening one
# changes what its users conclude.
# * TENSOR_OPERAND_PARAMS (here): a kernel parameter the graph shows passed
#   as one of these is surely a tensor, so its recorded memory (HBM for a
#   top-level kernel) may be relied on (views.Operand.buffer, the memory
#   rules NKI210-NKI213). Graph edge names (``in_``, the ISA spelling); not
#   ``x`` (binary nl calls take scalars there; unary ones are handled apart).
# * exprs.TENSOR_ARGUMENT_PARAMS: the same question asked of a call's syntax
#   (keywords as written: ``in_tensor``, ``srcs``/``dsts``, outputs).
# * interp.helpers._TENSOR_ONLY_PARAMS: whether the interpreter gives an
#   unknown value passed there a tensor node (it includes ``x`` and the
#   legacy ``on_true``/``on_false``).
TENSOR_OPERAND_PARAMS = frozenset({
    "data", "data0", "data1", "data2", "src", "dst", "in_", "stationary", "moving", "on_true_tile",
    "on_false_tile", "predicate", "indices",
})
# DMAs whose endpoints are tensors passed as src/dst (or the legacy load/store
# operands): an operand of one of these is certainly a tensor. Narrower than
# is_dma (no collectives, no atomic_rmw/gather_flattened, no dma_compute),
# whose operands may be descriptors or index tiles.
DMA_ENDPOINT_APIS = frozenset({
    "nki.isa.dma_copy", "nki.isa.dma_transpose", "nki.language.load", "nki.language.store",
    "nki.language.load_transpose2d",
})
