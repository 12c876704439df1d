"""Semantics family (NKI7xx): the other errors of the Neuron compiler frontend."""

from __future__ import annotations
