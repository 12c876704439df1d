"""Data types: sizes, ranges and classes of the NKI dtypes, and a node's dtype.

One home for dtype facts every family uses: bytes per element, which types
are low-precision floats or integers, the largest finite value of each float
type and the magnitude at which a value rounds to infinity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .values import DType

if TYPE_CHECKING:  # pragma: no cover
    from .graph import KernelGraph

DTYPE_BYTES = {
    "bool_": 1, "int8": 1, "uint8": 1, "float8_e4m3": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e8m0fnu": 1,
    "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
    "int32": 4, "uint32": 4, "float32": 4, "tfloat32": 4,
    "float8_e5m2_x4": 4, "float8_e4m3fn_x4": 4, "float4_e2m1fn_x4": 2,
    "int64": 8, "uint64": 8, "float64": 8,
}
LOW_PRECISION = {
    "bfloat16", "float16", "float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fn_x4", "float8_e5m2_x4",
    "float4_e2m1fn_x4",
}
INTEGER = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"}
FP8_MAX = {"float8_e4m3": 240.0, "float8_e4m3fn": 448.0, "float8_e5m2": 57344.0}
FINITE_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38, **FP8_MAX}
# Magnitudes that round (to nearest even) to inf: halfway between the largest
# finite value and the next power step. bf16: (2 - 2^-8) * 2^127; fp16: 65520;
# e4m3 (IEEE-style, max 240): 248; e5m2: 61440. OCP e4m3fn has no inf (448 is
# the largest value; beyond 464 it is NaN or saturates).
ROUNDS_TO_INF = {"float16": 65520.0, "bfloat16": 3.3961775292304135e38, "float8_e4m3": 248.0,
                 "float8_e4m3fn": 464.0, "float8_e5m2": 61440.0}


def dtype_name(data: dict) -> str | None:
    """The dtype name recorded on a graph node (None when unknown)."""
    d = data.get("dtype_v")
    if isinstance(d, DType):
        return d.name
    return data.get("dtype")


def dtype_of(graph: "KernelGraph", node_id: str) -> str | None:
    """The dtype name of a tensor or view, from the node or, for a view
    that records none, from the tensor it views (None when unknown)."""
    data = graph.attrs(node_id)
    d = data.get("dtype_v")
    if isinstance(d, DType):
        return d.name
    if data.get("dtype"):
        return str(data["dtype"])
    base = graph.base_tensor(node_id)
    if base != node_id:
        return dtype_of(graph, base)
    return None


def dtype_bytes(data: dict) -> int | None:
    name = dtype_name(data)
    return DTYPE_BYTES.get(name) if name else None


__all__ = ["DTYPE_BYTES", "FINITE_MAX", "FP8_MAX", "INTEGER", "LOW_PRECISION", "ROUNDS_TO_INF", "dtype_bytes",
           "dtype_name", "dtype_of"]
