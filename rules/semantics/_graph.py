"""What several semantics rules read from the kernel graph: the views the
file's subscripts created and the ops using each view directly, which index
items are tiles of indices, loops that never run, and the shapes the model
computes exactly (NKI711-NKI718, NKI722, NKI723)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.model import query as q
from nkilint.model.exprs import VIEW_METHODS, ExprFacts
from nkilint.model.graph import KernelGraph
from nkilint.model.semantic import FileModel, Kernel

# nki.language calls whose result has the shape of their operands.
_ELEMENTWISE = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "exp", "log", "tanh", "sigmoid", "relu", "gelu",
    "silu", "sqrt", "rsqrt", "negative", "abs", "square", "reciprocal", "copy", "power", "equal", "not_equal",
    "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "invert", "sin", "cos", "erf", "softplus", "mish", "sign", "floor", "ceil", "where",
}


def subscript_views(model: FileModel) -> Iterator[tuple[Kernel, KernelGraph, str, dict, ast.Subscript]]:
    """(kernel, graph, view id, view data, Subscript node) of the views that
    a subscript in this file created."""
    for kernel, graph in model.graphs():
        for view_id, data in graph.views():
            site = data.get("site")
            if site is None or not model.in_this_file(site) or not isinstance(site.node, ast.Subscript):
                continue
            yield kernel, graph, view_id, data, site.node


def index_elements(sub: ast.Subscript) -> list[ast.AST]:
    """The items of a subscript (``a[i, j]`` -> ``[i, j]``)."""
    sl = sub.slice
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


def ops_on_view(graph: KernelGraph, view_id: str) -> list[tuple[str, dict, str]]:
    """(op id, op data, 'reads' | 'writes') of the ops using a view directly."""
    out = []
    for _, op_id, _d in graph.edges_of(view_id, "reads"):
        out.append((op_id, graph.attrs(op_id), "reads"))
    for op_id, _, _d in graph.edges_of(view_id, "writes", out=False):
        out.append((op_id, graph.attrs(op_id), "writes"))
    return out


def tile_positions(exprs: ExprFacts, fn: ast.AST, sub: ast.Subscript) -> list[int]:
    """Positions of the subscript items that are tiles of indices (`idx`,
    `idx[i_p, 0]`), not index arithmetic with a run-time offset
    (`arange + t * B`)."""
    return [i for i, e in enumerate(index_elements(sub)) if _bare_tile(exprs, fn, e)]


def _bare_tile(exprs: ExprFacts, fn: ast.AST, expr: ast.AST) -> bool:
    if isinstance(expr, ast.Name):
        return exprs.is_tensor_name(fn, expr.id)
    if isinstance(expr, ast.Subscript):
        return _bare_tile(exprs, fn, expr.value)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
        return _bare_tile(exprs, fn, expr.func.value)
    return False


def in_dead_loop(graph: KernelGraph, loops) -> bool:
    """Inside a loop whose trip count is provably 0 (the code never runs)."""
    return any(q.upper(graph.attrs(l).get("trip_v")) == 0 for l in loops)


def trusted_shape(ref: q.NodeRef) -> bool:
    """Shapes the model computes exactly: allocations, parameters, views with
    known index items, nl.load results, element-wise results and operators."""
    data = ref.data
    if data.get("kind") == "view":
        return data.get("index_v") is not None
    origin = data.get("origin")
    if origin in ("alloc", "param"):
        return True
    api = str(data.get("api") or "")
    if origin == "result":
        if api == "nki.language.load":
            return True
        short = api.rpartition(".")[2]
        if api.startswith("nki.language.") and short in _ELEMENTWISE:
            return True
        producers = [u for u, _, _d in ref.graph.edges_of(ref.node_id, "writes", out=False)]
        return any(ref.graph.attrs(p).get("operator") for p in producers)
    return False
