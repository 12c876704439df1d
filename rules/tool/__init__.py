"""Tool family (NKI0xx): problems with the input or with nkilint itself.

The family's code table: one module per rule, in id order.
"""

from __future__ import annotations

from .analysis_incomplete import AnalysisIncomplete
from .rule_crashed import RuleCrashed
from .syntax_error import SyntaxErrorRule
from .unreadable_file import UnreadableFile
from .unused_noqa import UnusedNoqa

RULES = (
    SyntaxErrorRule,  # NKI001
    UnreadableFile,  # NKI002
    RuleCrashed,  # NKI003
    UnusedNoqa,  # NKI004
    AnalysisIncomplete,  # NKI005
)
