"""CUDA family (NKI4xx): CUDA and Triton idioms left unported.

Kernels ported from CUDA or Triton keep GPU names (``threadIdx``,
``tl.load``, ``cuda.syncthreads``), GPU launch shapes (grid lambdas,
grid-stride loops, one tile per program) and GPU data layouts (warp-sized
tiles, bank-conflict padding, flat pointer offsets) that mean nothing, or
something slower, on a NeuronCore. Legacy NKI legitimately uses
``nl.program_id``, ``nl.arange`` and ``mask=``: only GPU names (CUDA,
Triton, numba, cupy, torch.cuda) are errors in both dialects; NKI
constructs that look Triton-shaped are judged by the file's dialect.
Comments and docstrings are at most notes (NKI433, off by default).

The family's code table: one module per rule, in id order. Shared pieces:
``_names`` (what each GPU name means and what replaces it), ``_hits`` (the
``GpuNames`` analysis: every GPU name of the file, device or host code),
``_base`` (the two rule shapes, spans, references) and ``_elements``
(single-element views and tiles, for NKI418 / NKI419).
"""

from __future__ import annotations

from .bank_conflict_padding import BankConflictPadding
from .cuda_block_grid_index import CudaBlockIndex
from .cuda_runtime_api import CudaRuntimeApi
from .cuda_shared_memory import CudaSharedMemory
from .cuda_thread_index import CudaThreadIndex
from .flat_index_math import FlatIndexMath
from .foreign_jit_decorator import ForeignJitDecorator
from .gpu_atomics import GpuAtomics
from .gpu_barrier import CudaBarrier
from .gpu_dtype import GpuDtype
from .gpu_framework_import import GpuFrameworkImport
from .gpu_launch_grid import GpuLaunchGrid
from .gpu_launch_options import GpuLaunchOptions
from .gpu_math_intrinsic import GpuMathIntrinsic
from .gpu_source_in_string import GpuSourceInString
from .grid_stride_loop import GridStrideLoop
from .host_library_on_tile import HostLibraryOnTile
from .log_step_tree_reduction import LogStepTreeReduction
from .masked_load_fill import MaskedLoadFill
from .one_element_dma import OneElementDma
from .one_tile_per_program import OneTilePerProgram
from .per_element_loop import PerElementLoop
from .pointer_arithmetic import PointerArithmetic
from .port_residue import PortResidue
from .power_of_two_padding import PowerOfTwoPadding
from .program_id_axis import ProgramIdAxis
from .triton_arange_offsets import TritonArange
from .triton_constexpr_parameter import TritonConstexpr
from .triton_language_call import TritonLanguageCall
from .triton_loop_iterator import TritonIterator
from .triton_memory_access import TritonMemoryAccess
from .triton_program_id import TritonProgramId
from .warp_intrinsics import WarpIntrinsics
from .warp_sized_tile import WarpSizedTile

RULES = (
    CudaThreadIndex,  # NKI401
    CudaBlockIndex,  # NKI402
    CudaSharedMemory,  # NKI403
    CudaBarrier,  # NKI404
    GpuAtomics,  # NKI405
    WarpIntrinsics,  # NKI406
    ForeignJitDecorator,  # NKI407
    TritonProgramId,  # NKI408
    TritonMemoryAccess,  # NKI409
    TritonLanguageCall,  # NKI410
    TritonIterator,  # NKI411
    TritonArange,  # NKI412
    TritonConstexpr,  # NKI413
    GpuLaunchOptions,  # NKI414
    GpuLaunchGrid,  # NKI415
    GridStrideLoop,  # NKI416
    OneTilePerProgram,  # NKI417
    PerElementLoop,  # NKI418
    OneElementDma,  # NKI419
    WarpSizedTile,  # NKI420
    LogStepTreeReduction,  # NKI421
    BankConflictPadding,  # NKI422
    PointerArithmetic,  # NKI423
    FlatIndexMath,  # NKI424
    MaskedLoadFill,  # NKI425
    CudaRuntimeApi,  # NKI426
    HostLibraryOnTile,  # NKI427
    GpuDtype,  # NKI428
    GpuMathIntrinsic,  # NKI429
    PowerOfTwoPadding,  # NKI430
    GpuSourceInString,  # NKI431
    GpuFrameworkImport,  # NKI432
    PortResidue,  # NKI433
    ProgramIdAxis,  # NKI434
)
