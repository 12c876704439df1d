"""Partition family (NKI1xx): the 128-partition dimension of SBUF and PSUM.

SBUF and PSUM have 128 partitions on every Trainium generation; the first
dimension of an on-chip tile (or the legacy ``par_dim``) is the partition
dimension. Facts: the nki.isa / nki.language stubs of aws-neuron-sdk
(``nki/api/nki``, 0.6, and the legacy 0.1 stubs at commit 0521004c), the
tiling overview (``nki/get-started/about/tiling-overview.rst``) and the
legacy error catalogue ``nki/api/nki.errors.rst`` at commit 1db4d74e.

Every rule errs only when the violation holds for every value the code
allows; a size that depends on an input is at most a warning, and only when
some allowed value really reaches the bound (``query.attainable_upper``).

The family's code table: one module per rule, in id order; shared helpers
in ``_shapes`` (bounds and shapes), ``_matmul`` and ``_operands``.
"""

from __future__ import annotations

from .dma_transpose_shape import DmaTransposeShape
from .matmul_contraction_mismatch import MatmulContractionMismatch
from .matmul_moving_free_over_limit import MatmulMovingFreeOverLimit
from .matmul_stationary_free_over_limit import MatmulStationaryFreeOverLimit
from .one_dimensional_arange_index import OneDimensionalArangeIndex
from .onchip_rank_below_2 import OnChipRankBelowTwo
from .partition_count_mismatch import PartitionCountMismatch
from .partition_dim_not_leading import PartitionDimNotLeading
from .partition_size_over_limit import PartitionSizeOverLimit
from .partition_start_misaligned import PartitionStartMisaligned
from .transpose_over_limit import TransposeOverLimit

RULES = (
    PartitionSizeOverLimit,  # NKI101
    OnChipRankBelowTwo,  # NKI102
    PartitionDimNotLeading,  # NKI103
    PartitionCountMismatch,  # NKI104
    MatmulContractionMismatch,  # NKI105
    MatmulStationaryFreeOverLimit,  # NKI106
    MatmulMovingFreeOverLimit,  # NKI107
    TransposeOverLimit,  # NKI108
    DmaTransposeShape,  # NKI109
    OneDimensionalArangeIndex,  # NKI110
    PartitionStartMisaligned,  # NKI111
)
