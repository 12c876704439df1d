"""Numerics family (NKI5xx): hazards that make Trainium results differ from the GPU's."""

from __future__ import annotations
