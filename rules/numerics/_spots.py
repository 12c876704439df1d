"""What the numerics rules share: how they report, the words of their messages, small predicates."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import ClassVar

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.model import dataflow as df
from nkilint.model.bindings import Gen
from nkilint.model.dtypes import LOW_PRECISION
from nkilint.model.graph import KernelGraph, Site
from nkilint.rule import Rule

from .._common import Reporter


MATMUL_DOC = "aws-neuron-sdk nki/api/nki/isa/__init__.py (nc_matmul: accumulation mode, data types)"
ACT_DOC = "aws-neuron-sdk nki/api/nki.api.shared.rst (activation functions and valid input ranges)"
TRN3 = "aws-neuron-sdk nki/guides/architecture/trainium3_arch.rst (BF16 matmul results in PSUM)"


class NumericsRule(Rule):
    fix_hint: ClassVar[str] = ""

    def spots(self, ctx: RuleContext):  # pragma: no cover - interface
        raise NotImplementedError

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for spot in self.spots(ctx):
            kwargs = dict(hint=spot.hint or self.fix_hint, level=spot.level or self.level, kernel=spot.kernel)
            if isinstance(spot.where, Site):
                reporter.at_site(spot.where, spot.message, **kwargs)
            elif spot.where is not None:
                reporter.at(spot.where, spot.message, **kwargs)


@dataclass
class Spot:
    where: ast.AST | Span | Site | None
    message: str
    level: Level | None = None
    kernel: str | None = None
    hint: str | None = None


def tile_name(graph: KernelGraph, node_id: str) -> str:
    data = graph.attrs(node_id)
    name = data.get("name") or graph.attrs(df.base(graph, node_id)).get("name")
    return str(name) if name else "the tile"


def loop_text(graph: KernelGraph, loop: str) -> str:
    data = graph.attrs(loop)
    trip = df.loop_trip_exact(graph, loop)
    it = data.get("iterator") or "the loop"
    return f"the {it} loop ({trip} iterations)" if trip is not None else f"the {it} loop"


def is_matmul(data: dict) -> bool:
    return df.short(data.get("api")) in ("nc_matmul", "nc_matmul_mx", "matmul") and not (
        df.const_param(data, "is_transpose") is True)


def is_low(dtype: str | None) -> bool:
    return dtype in LOW_PRECISION


def number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = number(node.operand)
        return -v if v is not None else None
    return None


def activation_func(data: dict) -> str | None:
    s = df.short(data.get("api"))
    if s in ("activation", "activation_reduce", "activate2"):
        return df.func_params(data).get("op")
    return None


# ------------------------------------------------------------------ NKI510 integers through fp32
ARITH = {"add", "subtract", "multiply", "divide", "power", "mod", "fmod"}


def nki_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    """The canonical NKI name an expression resolves to through the imports."""
    qual = ctx.model.bindings.resolve_nki(expr)
    return qual.name if qual is not None else None


def other_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    """The dotted name of a non-NKI import (``math.log2``, ``numpy.e``) an expression resolves to."""
    qual = ctx.model.bindings.resolve(expr)
    return qual.name if qual is not None and qual.gen is Gen.OTHER else None


def chain_text(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain as written."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))
