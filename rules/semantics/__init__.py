"""Semantics family (NKI7xx): the other errors of the Neuron compiler frontend.

The legacy frontend documents its errors in aws-neuron-sdk
``nki/api/nki.errors.rst`` (commit 1db4d74e, 36 kinds); the NKI 0.2-0.6
migration guide (``nki/migration/index.rst``), the dynamic-loop deep dive
and the release notes add the rules of the new compiler (dynamic loops,
sub-kernels, mutable tensors). Partition, memory and migration errors have
their own families; this one covers the rest wherever the source decides
them: control flow on tensors and indices, dynamic loops, kernel parameters
and outputs, legacy block scoping, affine_range write conflicts, legacy
indexing and masks, static out-of-bounds accesses, kernel structure,
annotations, assignments and activation operands.

The family's code table: one module per rule, in id order. Shared family
knowledge lives in a few private modules: ``_blocks`` (the legacy
block-scoping rule), ``_kernels`` (entry points and their parameters),
``_graph`` (views, dead loops, trusted shapes) and ``_messages``.
"""

from __future__ import annotations

from .activation_operand_type import ActivationOperandType
from .affine_range_write_conflict import AffineRangeWriteConflict
from .allocated_kernel_restriction import AllocatedKernelRestriction
from .annotation_shape_mismatch import AnnotationShapeMismatch
from .api_call_signature import ApiCallSignature
from .assign_to_index_tensor import AssignToIndexTensor
from .assignment_destination_too_small import AssignmentDestinationTooSmall
from .control_flow_on_index import ControlFlowOnIndex
from .control_flow_on_tensor import ControlFlowOnTensor
from .decorated_subkernel_call import DecoratedSubkernelCall
from .device_scalar_misuse import DeviceScalarMisuse
from .dynamic_loop_misuse import DynamicLoopMisuse
from .grid_allocation_shape import GridAllocationShape
from .immutable_parameter_written import ImmutableParameterWritten
from .indirect_index_layout import IndirectIndexLayout
from .indirect_index_unsupported import IndirectIndexUnsupported
from .lnc_degree_mismatch import LncDegreeMismatch
from .loop_over_arange import LoopOverArange
from .mixed_basic_advanced_indexing import MixedBasicAdvancedIndexing
from .mutable_parameter_not_returned import MutableParameterNotReturned
from .name_used_before_assignment import NameUsedBeforeAssignment
from .nested_spmd_kernel_call import NestedSpmdKernelCall
from .nki_api_outside_kernel import NkiApiOutsideKernel
from .non_affine_mask import NonAffineMask
from .output_never_written import OutputNeverWritten
from .reshape_element_count import ReshapeElementCount
from .split_collective_pairing import SplitCollectivePairing
from .static_out_of_bounds import StaticOutOfBounds
from .tensor_shadowed_in_block import TensorShadowedInBlock
from .tensor_truth_value import AmbiguousTensorTruth
from .tensor_used_out_of_scope import TensorUsedOutOfScope
from .tile_arithmetic_operator import TileArithmeticOperator
from .too_many_indices import TooManyIndices
from .undefined_name import UndefinedName
from .while_loop_entry_condition import WhileLoopEntryCondition

RULES = (
    ControlFlowOnTensor,  # NKI701
    AmbiguousTensorTruth,  # NKI702
    ControlFlowOnIndex,  # NKI703
    WhileLoopEntryCondition,  # NKI704
    DynamicLoopMisuse,  # NKI705
    ImmutableParameterWritten,  # NKI706
    MutableParameterNotReturned,  # NKI707
    OutputNeverWritten,  # NKI708
    TensorUsedOutOfScope,  # NKI709
    TensorShadowedInBlock,  # NKI710
    AffineRangeWriteConflict,  # NKI711
    MixedBasicAdvancedIndexing,  # NKI712
    NonAffineMask,  # NKI714
    IndirectIndexLayout,  # NKI715
    IndirectIndexUnsupported,  # NKI716
    AssignToIndexTensor,  # NKI717
    StaticOutOfBounds,  # NKI718
    NkiApiOutsideKernel,  # NKI719
    NestedSpmdKernelCall,  # NKI720
    DecoratedSubkernelCall,  # NKI721
    AnnotationShapeMismatch,  # NKI722
    AssignmentDestinationTooSmall,  # NKI723
    ActivationOperandType,  # NKI724
    AllocatedKernelRestriction,  # NKI725
    TooManyIndices,  # NKI726
    ApiCallSignature,  # NKI727
    UndefinedName,  # NKI728
    LoopOverArange,  # NKI729
    ReshapeElementCount,  # NKI730
    DeviceScalarMisuse,  # NKI731
    SplitCollectivePairing,  # NKI732
    GridAllocationShape,  # NKI733
    NameUsedBeforeAssignment,  # NKI734
    LncDegreeMismatch,  # NKI735
    TileArithmeticOperator,  # NKI736
)
