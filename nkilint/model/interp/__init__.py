"""The abstract interpreter (see core.py): the one class other modules use, and its budget and statistics."""

from .core import Interpreter
from .state import Budget, InterpStats

__all__ = ["Budget", "Interpreter", "InterpStats"]
