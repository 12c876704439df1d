"""Migration family (NKI6xx): what the target NKI version deprecated,
removed or changed.

Facts: the API table ``nkilint/data/nki_api.json`` (every API and parameter
per Neuron SDK release, 2.20-2.32, with the change records), and
aws-neuron-sdk ``nki/migration/index.rst`` and
``release-notes/components/nki.rst``.

Every rule reports at the level the target version gives the construct:
deprecated -> warning, removed or rejected -> error. In a file that still
imports the legacy ``neuronxcc.nki`` namespace, every construct that must
change is reported (the port list): as warnings while the target still
compiles legacy kernels (0.2, 0.3), as errors from 0.4.

The family's code table: one module per rule, in id order. Each rule runs
its own detection over the file's name-use index (``_index``: NKI name uses,
device code, root kernels); shared facts in ``_names`` (what each used name
is in the target's API), ``_calls`` (NKI calls and their keywords against
the target's signatures), ``_kernels`` (kernel launches and outputs), the
API table queries in ``nkilint.model.api_history`` and the rule shape in ``_base``.
"""
from __future__ import annotations

from .deprecated_loop_iterator import DeprecatedLoopIterator
from .dynamic_loop_form import DynamicLoopForm
from .isa_calling_convention import IsaCallingConvention
from .kernel_language_restriction import KernelLanguageRestriction
from .legacy_namespace import LegacyNamespace
from .mixed_namespaces import MixedNamespaces
from .output_not_shared_hbm import OutputNotSharedHbm
from .psum_accumulate_semantics import PsumAccumulation
from .removed_api import RemovedApi
from .removed_parameter import RemovedParameter
from .renamed_api import RenamedApi
from .spmd_launch_grid import SpmdLaunchGrid
from .string_buffer_or_int_enum import LiteralBufferOrEnum
from .unknown_api import UnknownApi
from .unknown_keyword import UnknownKeyword
from .version_behavior_change import BehaviorChange


RULES = (
    LegacyNamespace,  # NKI601
    MixedNamespaces,  # NKI602
    RemovedApi,  # NKI603
    RenamedApi,  # NKI604
    RemovedParameter,  # NKI605
    DeprecatedLoopIterator,  # NKI606
    DynamicLoopForm,  # NKI607
    SpmdLaunchGrid,  # NKI608
    IsaCallingConvention,  # NKI609
    PsumAccumulation,  # NKI610
    KernelLanguageRestriction,  # NKI611
    LiteralBufferOrEnum,  # NKI612
    OutputNotSharedHbm,  # NKI613
    UnknownApi,  # NKI614
    UnknownKeyword,  # NKI615
    BehaviorChange,  # NKI616
)
