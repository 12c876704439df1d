"""NKI512 fill-value-overflow."""

from __future__ import annotations

import ast
import math
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.dtypes import FINITE_MAX, ROUNDS_TO_INF
from nkilint.model.graph import KernelGraph
from nkilint.rule import invalid, valid

from ._spots import MATMUL_DOC, NumericsRule, Spot, number, other_name, tile_name


class FillValueOverflow(NumericsRule):
    id = "NKI512"
    name = "fill-value-overflow"
    family = "numerics"
    level = Level.WARNING
    summary = "A mask fill value does not fit the tile dtype (becomes inf), or -inf meets a TensorE transpose on trn1"
    fix_hint = "fill with a finite sentinel within the tile dtype's range"
    explanation = """
`nl.full(..., -1e30, dtype=nl.float16)`, `nisa.memset(dst=fp8_tile,
value=-3.4e38)`, `affine_select(on_false_value=...)` with a magnitude
beyond the destination dtype's largest finite value (fp16 65504; fp8 E4M3
240 on trn1/trn2, e4m3fn 448; e5m2 57344), and on trn1, `-inf` fills of a
tile that is transposed on TensorE.

**Why on Trainium:** The fill becomes +-inf in the narrow dtype; a later
max subtraction turns fully masked rows into NaN (`-inf - (-inf)`). GPU
kernels written for fp32 masks used `-1e30` or `FLOAT32_MIN` safely. On
NeuronCore-v2 (trn1) the TensorE transpose is a matmul with an identity,
which is not bit-exact for inf/NaN (`inf x 0` pollutes the row); trn2+ has
an exact transpose mode.

**Fix:** Use a finite sentinel valid in the tile dtype (e.g. -65504 for
fp16, -240 for Neuron E4M3), and guard fully masked rows.
"""
    references = (MATMUL_DOC,)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def masked(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                nisa.memset(dst=t, value=-1e30)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: -1e30 in fp16",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def masked(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                m = nl.full((128, 512), -3.4e38, dtype=nl.float16, buffer=nl.sbuf)
                nl.store(out, value=m)
                return out
            """,
            lines=[7],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def masked(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                nisa.memset(dst=t, value=-60000.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a finite fp16 sentinel",
        ),
    )

    def spots(self, ctx: RuleContext):
        return fill_overflow(ctx)


def _fill_value(ctx: RuleContext, node: ast.AST | None) -> float | None:
    if node is None:
        return None
    v = number(node)
    if v is not None:
        return v
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _fill_value(ctx, node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and node.args and \
            isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        try:
            return float(node.args[0].value)
        except ValueError:
            return None
    text = other_name(ctx, node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if text in ("numpy.inf", "math.inf", "numpy.Inf", "numpy.infty"):
        return math.inf
    return None


def fill_overflow(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for nid, data in graph.tensors():
            if data.get("origin") != "alloc" or df.short(data.get("api")) not in ("full", "full_like"):
                continue
            call = data.get("call")
            if not isinstance(call, ast.Call):
                continue
            value_node = next((k.value for k in call.keywords if k.arg in ("fill_value", "value")), None)
            if value_node is None and len(call.args) >= 2:
                value_node = call.args[1]
            yield from _check_fill(ctx, graph, nid, _fill_value(ctx, value_node), data.get("site"), kernel.name, "nl.full")
        for op, data in graph.ops():
            s = df.short(data.get("api"))
            if s not in ("memset", "affine_select", "range_select"):
                continue
            key = "value" if s == "memset" else "on_false_value"
            value = df.const_number(df.param(data, key))
            dst = next((n for p, n in df.writes(graph, op) if p == "dst"), None)
            if dst is None:
                continue
            yield from _check_fill(ctx, graph, dst, value, data.get("site"), kernel.name, f"nisa.{s}")


def _check_fill(ctx, graph: KernelGraph, nid: str, value: float | None, site, kernel: str, api: str) -> Iterator[Spot]:
    if value is None:
        return
    dtype = df.dtype_of(graph, nid)
    limit = FINITE_MAX.get(dtype or "")
    overflow = ROUNDS_TO_INF.get(dtype or "")
    if dtype == "float8_e4m3" and ctx.target.name == "trn3":
        limit = None
    if limit is None or overflow is None:
        return
    if math.isinf(value):
        transposed = _tensor_engine_transposed(graph, nid, ctx.model)
        if ctx.target.name == "trn1" and transposed:
            yield Spot(site, (
                f"{api} fills {tile_name(graph, nid)} with {value:g} and the tile is transposed on TensorE "
                f"({transposed}): on trn1 (NeuronCore-v2) the matmul-based transpose is not bit-exact for inf/NaN "
                f"(inf x 0 gives NaN across the row); fill with a large finite value valid in {dtype} instead"
            ), kernel=kernel)
        return
    if abs(value) >= overflow:
        yield Spot(site, (
            f"{api} fills {tile_name(graph, nid)} ({dtype}) with {value:g}, beyond the largest finite {dtype} value "
            f"{limit:g}: it becomes {'-' if value < 0 else ''}inf, and a later max-subtraction turns fully masked "
            f"rows into NaN (inf - inf); use a finite sentinel within {dtype} range (e.g. {-limit if value < 0 else limit:g})"
        ), kernel=kernel)


def _tensor_engine_transposed(graph: KernelGraph, nid: str, model) -> str | None:
    for c in df.readers(graph, nid):
        cdata = graph.attrs(c)
        s = df.short(cdata.get("api"))
        if s in ("transpose",) or (s == "nc_transpose" and cdata.get("engine") in ("tensor", "any")) or (
                s == "nc_matmul" and df.const_param(cdata, "is_transpose") is True):
            return f"{s} at {model.line_ref(cdata.get('site'))}"
    return None
