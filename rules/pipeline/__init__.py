"""Pipeline family (NKI3xx): missing double-buffering and legal-but-slow patterns.

Every finding of this family is a warning or a note: the kernels compile,
they only leave performance on the table. Facts: the aws-neuron-sdk pages
nki/deep-dives/nki_perf_guide.rst, nki/deep-dives/nki-dma-bandwidth-guide.rst,
nki/get-started/about/nki-dma-overview.rst, nki/migration/index.rst (block
dimensions), nki/deep-dives/nki-dynamic-loops.rst and the architecture
guides. Loop facts (which values change between iterations, whether an op
runs in every iteration) come from the model (``nkilint.model.loops``).

The family's code table: one module per rule, in id order; shared helpers
in ``_dma`` (DMA transfers: sides, partitions, bytes), ``_buffers`` (single
buffers a loop refills or drains), ``_reuse`` (the loop that repeats a
transfer, whether its data fits on chip), ``_ops`` (compute operands and
how their index moves with a loop), ``_serial`` (independent iterations of
a legacy loop) and ``_report`` (one finding per place, message words).
"""

from __future__ import annotations

from .dma_transpose_without_tensor_engine import DmaTransposeMemoryBound
from .fixed_address_in_loop import FixedAddressInLoop
from .fp32_matmul import Fp32Matmul
from .loop_invariant_dma import LoopInvariantDma
from .missing_double_buffering import MissingDoubleBuffering
from .partition_underuse import PartitionUnderuse
from .serialized_loop import SerializedLegacyLoop
from .short_stationary import ShortStationary
from .small_dma import SmallDma
from .small_instructions_in_loop import SmallInstructions
from .static_bound_dynamic_loop import StaticBoundDynamicLoop
from .strided_dma import StridedDma

RULES = (
    MissingDoubleBuffering,  # NKI301
    FixedAddressInLoop,  # NKI302
    LoopInvariantDma,  # NKI303
    SerializedLegacyLoop,  # NKI304
    SmallDma,  # NKI305
    PartitionUnderuse,  # NKI306
    StridedDma,  # NKI307
    DmaTransposeMemoryBound,  # NKI308
    Fp32Matmul,  # NKI309
    ShortStationary,  # NKI310
    SmallInstructions,  # NKI311
    StaticBoundDynamicLoop,  # NKI312
)
