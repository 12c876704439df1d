"""Memory family (NKI2xx): PSUM and SBUF capacity, operand placement.

Capacity (NKI201-NKI207) rests on the memory model in
``nkilint/model/memory.py`` (footprints, live ranges, live sets; every
number a lower bound, its assumptions documented there). Placement
(NKI210-NKI216) reads each op's operands and the memory of their base
tensor (``nkilint.model.views.Operand.buffer``: how far a kernel
parameter's memory may be relied on). NKI217 reads the graph's
augmented assignments into PSUM. Facts: the memory hierarchy and
engine pages of the NKI documentation and the nki.isa / nki.language stubs
of aws-neuron-sdk (``nki/api/nki``).

The family's code table: one module per rule, in id order; shared helpers
in ``_sizes`` (bytes per partition), ``_ops`` (which ops compute, on which
engine) and ``_text`` (how live sets and assumptions are worded).
"""

from __future__ import annotations

from .compute_operand_in_hbm import ComputeOperandInHbm
from .dma_operand_memory import DmaOperandMemory
from .gpsimd_touches_psum import GpsimdTouchesPsum
from .hbm_tensor_with_init_value import HbmTensorWithInitValue
from .kernel_output_not_shared_hbm import KernelOutputNotSharedHbm
from .matmul_operand_memory import MatmulOperandMemory
from .placement_out_of_range import PlacementOutOfRange
from .placement_overlap import PlacementOverlap
from .psum_bank_oversubscription import PsumBankOversubscription
from .psum_subtract_accumulation import PsumSubtractAccumulation
from .psum_tensor_exceeds_psum import PsumTensorExceedsPsum
from .psum_tile_exceeds_bank import PsumTileExceedsBank
from .sbuf_live_set_overflow import SbufLiveSetOverflow
from .sbuf_tensor_too_large import SbufTensorTooLarge
from .shared_hbm_not_top_level import SharedHbmNotTopLevel

RULES = (
    PsumTileExceedsBank,  # NKI201
    PsumTensorExceedsPsum,  # NKI202
    PsumBankOversubscription,  # NKI203
    SbufTensorTooLarge,  # NKI204
    SbufLiveSetOverflow,  # NKI205
    PlacementOutOfRange,  # NKI206
    PlacementOverlap,  # NKI207
    ComputeOperandInHbm,  # NKI210
    DmaOperandMemory,  # NKI211
    MatmulOperandMemory,  # NKI212
    GpsimdTouchesPsum,  # NKI213
    SharedHbmNotTopLevel,  # NKI214
    HbmTensorWithInitValue,  # NKI215
    KernelOutputNotSharedHbm,  # NKI216
    PsumSubtractAccumulation,  # NKI217
)
