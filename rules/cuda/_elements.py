"""Single-element work for the per-element rules (NKI418 loops, NKI419 DMAs).

A GPU thread computes one element; ported literally, an NKI loop body then
works on one-element views (``x[i, j]``) or legacy one-element result
tiles. These predicates say when a graph node is *one element of a larger
tensor* and which loops index it. Legacy ``nl.arange`` loops produce index
items the interpreter records as opaque "loop element" values; an item
naming such a loop's iterator selects one element.
"""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.model import dataflow as df
from nkilint.model.graph import KernelGraph, Site
from nkilint.model.loops import Loops
from nkilint.model.values import Const, DsV, Int, SliceV, Unknown, const_int, int_binop

from ._base import nki_name, word_in


def is_arange_loop(ctx: RuleContext, site: Site | None) -> bool:
    node = site.node if site is not None else None
    return isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and (
        nki_name(ctx, node.iter.func) == "nki.language.arange")


def arange_iterators(ctx: RuleContext, graph: KernelGraph) -> set[str]:
    """The iterator names of the graph's legacy ``for i in nl.arange(n)`` loops."""
    return {d.get("iterator") or "" for _, d in graph.loops() if is_arange_loop(ctx, d.get("site"))}


def single_element(graph: KernelGraph, node_id: str, arange_iters: set[str], depth: int = 3) -> bool:
    """One element of a larger tensor: a view selecting a single element of a
    tensor whose buffer the model knows, or a legacy result tile of one
    element. Whole allocations, lists of tiles and helper parameters of
    unknown buffer never count."""
    data = graph.attrs(node_id)
    if data.get("kind") == "tensor":
        return single_result(graph, node_id, arange_iters, depth)
    base = graph.attrs(graph.base_tensor(node_id))
    if base.get("buffer") in (None, "unknown"):
        return False
    base_shape = base.get("shape_v")
    if base_shape is not None and (len(base_shape) == 0 or df.element_count(base_shape) == 1):
        return False  # a one-element tensor is not "one element of many"
    items = data.get("index_v") or []
    index = data.get("index") or ""
    if base_shape is None and len(items) < 2:
        return False  # rank unknown: x[i] may well be a whole row or tile
    if base_shape is not None and len(items) < len(base_shape):
        return False
    shape = data.get("shape_v")
    if shape is not None and (len(shape) == 0 or df.element_count(shape) == 1):
        return True
    return bool(items) and all(scalar_item(it, index, arange_iters) for it in items)


def single_result(graph: KernelGraph, node_id: str, arange_iters: set[str], depth: int) -> bool:
    """A legacy result tile of one element whose inputs were single elements
    (the model's shape for a tile loaded from x[i] of unknown rank is not
    trusted on its own)."""
    data = graph.attrs(node_id)
    shape = data.get("shape_v")
    if data.get("origin") != "result" or shape is None or not (len(shape) == 0 or df.element_count(shape) == 1):
        return False
    if depth <= 0:
        return False
    writers = graph.ops_writing(node_id)
    if not writers:
        return False
    for op in writers:
        inputs = [n for _, n in df.reads(graph, op) if graph.attrs(n).get("kind") in ("tensor", "view")
                  and not opaque_param(graph.attrs(n))]
        if not inputs or not all(single_element(graph, n, arange_iters, depth - 1) for n in inputs):
            return False
    return True


def scalar_item(item, index: str, arange_iters: set[str]) -> bool:
    """An index item that selects one element along its axis."""
    if isinstance(item, SliceV):
        start = item.start if not (isinstance(item.start, Const) and item.start.value is None) else Const(0)
        if isinstance(item.stop, Const) and item.stop.value is None:
            return False
        return const_int(int_binop(ast.Sub, item.stop, start)) == 1
    if isinstance(item, DsV):
        return const_int(item.size) == 1
    if isinstance(item, Unknown):
        return item.reason == "loop element" and any(word_in(it, index) for it in arange_iters)
    return isinstance(item, (Const, Int)) and (not isinstance(item, Const) or isinstance(item.value, int))


def loop_iters(graph: KernelGraph, loops: tuple[str, ...]) -> dict[str, str]:
    return {lp: graph.attrs(lp).get("iterator") or "" for lp in loops}


def indexing_loops(ctx: RuleContext, graph: KernelGraph, views: list[str], loops: tuple[str, ...]) -> list[str]:
    """The loops among ``loops`` (outermost first) whose iterator an index of
    these views reads: the model's loop binding each name of the subscript
    (two loops reusing one iterator name are told apart), not a loop whose
    iterator merely has the same name."""
    binders: set[int] = set()
    for view in views:
        site = graph.attrs(view).get("site")
        node = site.node if site is not None else None
        if graph.attrs(view).get("kind") == "view" and isinstance(node, ast.Subscript):
            binders |= ctx.analysis(Loops).binding_loops(site, node.slice, through_calls=False)
    out = []
    for lp in loops:
        site = graph.attrs(lp).get("site")
        if site is not None and id(site.node) in binders:
            out.append(lp)
    return out


def operands(graph: KernelGraph, op: str) -> list[str]:
    return [n for _, n in df.reads(graph, op)] + [n for _, n in df.writes(graph, op)]


def hbm(data: dict) -> bool:
    return data.get("buffer") in ("hbm", "shared_hbm", "private_hbm")


def opaque_param(data: dict) -> bool:
    return data.get("kind") == "tensor" and data.get("origin") == "param" and data.get("shape_v") is None


def views_behind(graph: KernelGraph, node_id: str) -> list[str]:
    """The views a legacy result tile was loaded from (for index text)."""
    out = []
    for op in graph.ops_writing(node_id):
        odata = graph.attrs(op)
        if df.short(odata.get("api")) in ("load", "load_transpose2d"):
            out.extend(n for _, n in df.reads(graph, op) if graph.attrs(n).get("kind") == "view")
    return out
