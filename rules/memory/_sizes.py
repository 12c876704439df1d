"""Bytes per partition of a tile or view, and how the memory rules word sizes."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.model import query as q
from nkilint.model.dtypes import DTYPE_BYTES
from nkilint.model.values import Const, Value, const_int, describe, int_binop
from nkilint.model.views import TensorLike


def free_elements(shape: tuple[Value, ...] | None, axis: int = 0) -> Value | None:
    """Elements per partition of one tile: the product of the free dims
    (after the partition dim; legacy block dims before it are excluded)."""
    if shape is None or axis >= len(shape):
        return None
    total: Value = Const(1)
    for d in shape[axis + 1:]:
        total = int_binop(ast.Mult, total, d)
    return total


def _axis(t: TensorLike) -> int:
    """Where the free dims start: a tensor's ``par_dim``; a view is indexed from 0."""
    return t.partition_axis if t.kind == "tensor" else 0


def node_bytes(t: TensorLike) -> tuple[Value | None, Value | None, str | None]:
    """(bytes per partition, elements per partition, dtype) of the tile a
    tensor or view stands for; bytes is None when the dtype is unknown."""
    elems = free_elements(t.shape, _axis(t))
    dtype = t.base.dtype
    size = DTYPE_BYTES.get(dtype or "")
    if elems is None or size is None:
        return None, elems, dtype
    return int_binop(ast.Mult, Const(size), elems), elems, dtype


def attainable_bytes(t: TensorLike) -> float | None:
    """An attainable upper bound of a tile's bytes per partition: every free
    dim exact but one, which is tied to a named quantity. (With several
    unknown dims the bounds may be correlated, e.g. a buffer count chosen
    from the tile size, and their product need not be reachable.)"""
    shape = t.shape
    size = DTYPE_BYTES.get(t.base.dtype or "")
    if shape is None or size is None:
        return None
    total = float(size)
    unknown = 0
    for d in shape[_axis(t) + 1:]:
        hi = q.attainable_upper(d)
        if hi is None:
            return None
        if const_int(d) is None:
            unknown += 1
            if unknown > 1:
                return None
        total *= hi
    return total


def fit_condition(t: TensorLike, limit: int) -> str:
    """`` (it fits only if K <= 53182)`` when one free dim is not exact and
    the others are: the largest value of it that fits ``limit`` bytes per
    partition."""
    shape = t.shape
    size = DTYPE_BYTES.get(t.base.dtype or "")
    if shape is None or size is None:
        return ""
    free = list(shape[_axis(t) + 1:])
    unknown = [d for d in free if const_int(d) is None]
    if len(unknown) != 1:
        return ""
    k = size
    for d in free:
        c = const_int(d)
        if c is not None:
            k *= c
    if k <= 0:
        return ""
    return f" (it fits only if {describe(unknown[0]).split(' (')[0]} <= {limit // k})"


def fmt_count(v: Value | None) -> str:
    if v is None:
        return "?"
    c = const_int(v)
    return str(c) if c is not None else describe(v)


def sbuf_limits(ctx: RuleContext) -> tuple[int, int, bool]:
    """(usable, raw, usable-is-assumed) bytes per partition."""
    t = ctx.target
    return t.sbuf_usable_bytes_per_partition, t.sbuf_bytes_per_partition, "sbuf_usable_bytes_per_partition" in t.assumed
