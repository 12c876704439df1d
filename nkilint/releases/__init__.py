"""The target of a run: a Neuron SDK release, and what it means for NKI.

* ``table``: the releases 2.20 - 2.34 (date, NKI version, namespaces that
  import, frontend, hardware, identifying package versions).
* ``facts``: every versioned fact (introduced / deprecated / removed /
  becomes an error) with its source and confidence, queried by release:
  ``FACTS.status("block-dimension", release)``.
* ``packages``: which release a pinned package version means.
* ``origin``: why a run targets the release it does.
"""

from __future__ import annotations

from .facts import ALLOWED, ERROR, FACTS, NOTE, WARNING, Fact, FactStatus, FactTable, Status, Step
from .origin import DEFAULT_ORIGIN, TargetOrigin
from .table import (
    CURRENT_NS,
    LATEST_RELEASE,
    LEGACY_NS,
    OLDEST_RELEASE,
    PACKAGES,
    PARSER,
    RELEASES,
    TRACER,
    Patch,
    Release,
    ReleaseError,
    parse_release,
    release_names,
    release_of_nki,
    releases_of_nki,
)

facts = FACTS

__all__ = [
    "ALLOWED", "ERROR", "FACTS", "NOTE", "WARNING", "Fact", "FactStatus", "FactTable", "Status", "Step",
    "DEFAULT_ORIGIN", "TargetOrigin", "CURRENT_NS", "LATEST_RELEASE", "LEGACY_NS", "OLDEST_RELEASE", "PACKAGES",
    "PARSER", "RELEASES", "TRACER", "Patch", "Release", "ReleaseError", "parse_release", "release_names",
    "release_of_nki", "releases_of_nki", "facts",
]
