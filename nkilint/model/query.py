"""Helpers rules use to query the semantic model.

Rules read the kernel graphs through these functions rather than walking
networkx directly, so the common questions (which tensors are on chip, what
is an op's operand, where to report a node that sits in another file) have
one answer.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from .graph import DTYPE_BYTES, HBM, ON_CHIP, KernelGraph, Site
from .semantic import FileModel, Kernel, partition_size
from .values import (
    Const, DType, Int, TensorV, Unknown, Value, attainable_upper, const_int, describe, lower, upper,
)


@dataclass(frozen=True)
class NodeRef:
    """A graph node with the kernel it belongs to."""

    kernel: Kernel
    graph: KernelGraph
    node_id: str

    @property
    def data(self) -> dict:
        return self.graph.attrs(self.node_id)

    @property
    def site(self) -> Site | None:
        return self.data.get("site")


def tensors(model: FileModel, buffers: tuple[str, ...] | None = None, origins: tuple[str, ...] | None = None) -> Iterator[NodeRef]:
    """Tensor nodes of every kernel, filtered by buffer and origin."""
    for kernel in model.kernels:
        for node_id, data in kernel.graph.tensors():
            if buffers is not None and data.get("buffer") not in buffers:
                continue
            if origins is not None and data.get("origin") not in origins:
                continue
            yield NodeRef(kernel, kernel.graph, node_id)


def ops(model: FileModel, api_prefix: str | tuple[str, ...] | None = None) -> Iterator[NodeRef]:
    """Op nodes of every kernel (optionally only APIs starting with a prefix)."""
    prefixes = (api_prefix,) if isinstance(api_prefix, str) else api_prefix
    for kernel in model.kernels:
        for node_id, data in kernel.graph.ops():
            if prefixes is not None and not str(data.get("api", "")).startswith(prefixes):
                continue
            yield NodeRef(kernel, kernel.graph, node_id)


def operands(ref: NodeRef) -> dict[str, tuple[str, dict]]:
    """An op's tensor operands by parameter name: (node id, node data).

    Read and written operands both appear; a legacy call's returned tile is
    under ``"result"``."""
    out: dict[str, tuple[str, dict]] = {}
    g = ref.graph
    for src, data in g.reads(ref.node_id):
        out.setdefault(data.get("param") or "?", (src, g.attrs(src)))
    for dst, data in g.writes(ref.node_id):
        out.setdefault(data.get("param") or "?", (dst, g.attrs(dst)))
    return out


def param_value(ref: NodeRef, name: str) -> Value | None:
    """The abstract value passed for a parameter of an op (tensor or not)."""
    return (ref.data.get("params_v") or {}).get(name)


def tensor_buffer(ref_graph: KernelGraph, node_id: str) -> str:
    return ref_graph.attrs(node_id).get("buffer") or "unknown"


def shape_of(data: dict) -> tuple[Value, ...] | None:
    return data.get("shape_v")


def dtype_name(data: dict) -> str | None:
    d = data.get("dtype_v")
    if isinstance(d, DType):
        return d.name
    return data.get("dtype")


def dtype_bytes(data: dict) -> int | None:
    name = dtype_name(data)
    return DTYPE_BYTES.get(name) if name else None


def fmt_dim(v: Value) -> str:
    c = const_int(v)
    if c is not None:
        return str(c)
    return describe(v)


def fmt_shape(shape: tuple[Value, ...] | None) -> str:
    if shape is None:
        return "(unknown shape)"
    return "(" + ", ".join(fmt_dim(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def tensor_name(data: dict) -> str:
    """The name to show for a tensor or view in messages."""
    name = data.get("name")
    if name:
        return str(name)
    call = data.get("call")
    if isinstance(call, ast.Call):
        func = call.func
        short = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "call")
        return f"the result of {short}(...)"
    return "tensor"


def loops_at(model: FileModel, node: ast.AST) -> list[dict]:
    """The attributes of every loop node the statement or call ``node``
    created, over all kernel graphs (empty when no analysed kernel runs it)."""
    return [
        data for _, graph in model.graphs() for _, data in graph.loops()
        if getattr(data.get("site"), "node", None) is node
    ]


def loop_multiplicity(graph: KernelGraph, loops: tuple[str, ...]) -> Value:
    """Product of the trip counts of the given loops."""
    from .values import int_binop

    total: Value = Const(1)
    for loop_id in loops:
        trip = graph.attrs(loop_id).get("trip_v")
        if trip is None:
            return Unknown("trip count")
        total = int_binop(ast.Mult, total, trip)
    return total


__all__ = [
    "NodeRef", "tensors", "ops", "operands", "param_value", "tensor_buffer", "shape_of", "dtype_name", "dtype_bytes",
    "fmt_dim", "fmt_shape", "tensor_name", "upper", "lower", "attainable_upper", "loops_at", "loop_multiplicity", "partition_size", "ON_CHIP", "HBM",
    "Int", "TensorV",
]
