"""Declared per-file analyses: fact layers computed once per file, on first use.

A rule that needs a fact layer names it (``requires = (Scopes, ...)``) and asks
the context for it (``ctx.analysis(Scopes)``); the file's model computes each
layer the first time any rule asks and keeps it until the file is done, when
the model and everything cached on it are dropped together. This replaces
module-level caches and attributes set on the context: nothing outlives the
file, and two files never share an entry.

An analysis is a class with a constructor taking the file's model::

    class GpuNameHits(Analysis):
        def __init__(self, model: FileModel) -> None:
            self.hits = [...]

Analyses may ask the model for other analyses in their constructor (a cycle
raises instead of recursing forever).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel

A = TypeVar("A", bound="Analysis")


class Analysis:
    """Base class of a per-file fact layer (see the module docstring)."""

    def __init__(self, model: "FileModel") -> None:
        self.model = model


class AnalysisCycle(RuntimeError):
    """Two analyses need each other to be computed first."""


_COMPUTING = object()


class AnalysisCache:
    """The analyses of one file, by class."""

    def __init__(self) -> None:
        self._done: dict[type, object] = {}

    def get(self, cls: type[A], model: "FileModel") -> A:
        hit = self._done.get(cls)
        if hit is _COMPUTING:
            raise AnalysisCycle(f"analysis {cls.__name__} needs itself (through another analysis)")
        if hit is None:
            self._done[cls] = _COMPUTING
            try:
                hit = cls(model)
            except BaseException:
                del self._done[cls]
                raise
            self._done[cls] = hit
        return hit  # type: ignore[return-value]

    def computed(self) -> list[type]:
        """The analyses computed so far (for tests and profiling)."""
        return [cls for cls, value in self._done.items() if value is not _COMPUTING]
