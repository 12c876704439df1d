"""Numerics family (NKI5xx): hazards that make Trainium results differ from the GPU's.

Facts: the aws-neuron-sdk pages each rule cites (nc_matmul accumulation and
dtype notes in nki/api/nki/isa/__init__.py, the activation table in
nki/api/nki.api.shared.rst, the FP8 notes of the NxD quantization guide).
Findings are warnings or notes: they depend on data values, which a static
tool cannot know. Data flow (producers, consumers, accumulation loops) and
dtypes come from the model (``nkilint.model.dataflow``,
``nkilint.model.dtypes``); device code from ``nkilint.model.device``.

The family's code table: one module per rule, in id order, each with its
detector; what they share (the reporting base class, message words, small
predicates) is in ``_spots``.
"""

from __future__ import annotations

from .activation_input_range import ActivationInputRange
from .engine_precision_choice import EnginePrecisionChoice
from .exp2_scale_leftover import Exp2ScaleLeftover
from .fill_value_overflow import FillValueOverflow
from .fp8_e4m3_range import Fp8E4m3Range
from .integer_through_fp32 import IntegerThroughFp32
from .log_of_low_precision_sum import LogOfLowPrecisionSum
from .low_precision_accumulator import LowPrecisionAccumulator
from .low_precision_psum_accumulation import LowPrecisionPsumAccumulation
from .low_precision_reduction import LowPrecisionReduction
from .mixed_dtype_promotion import MixedDtypePromotion
from .psum_accumulate_init import PsumAccumulateInit
from .shape_dependent_reduction_tile import ShapeDependentReductionTile
from .softmax_without_max_subtraction import SoftmaxWithoutMax

RULES = (
    LowPrecisionPsumAccumulation,  # NKI501
    LowPrecisionAccumulator,  # NKI502
    LowPrecisionReduction,  # NKI503
    SoftmaxWithoutMax,  # NKI504
    Exp2ScaleLeftover,  # NKI505
    ActivationInputRange,  # NKI506
    Fp8E4m3Range,  # NKI507
    PsumAccumulateInit,  # NKI508
    ShapeDependentReductionTile,  # NKI509
    IntegerThroughFp32,  # NKI510
    EnginePrecisionChoice,  # NKI511
    FillValueOverflow,  # NKI512
    MixedDtypePromotion,  # NKI513
    LogOfLowPrecisionSum,  # NKI514
)
