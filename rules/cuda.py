"""CUDA family (NKI4xx): CUDA and Triton idioms left unported."""

from __future__ import annotations
