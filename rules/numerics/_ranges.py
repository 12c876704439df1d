"""NKI506's detector: the ScalarE activations with a limited input range,
and the inversions of a variance, that nothing guards (no range reduction,
no eps, no clamp)."""

from __future__ import annotations

import ast
import math
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.model import dataflow as df
from nkilint.model.graph import KernelGraph, Site
from nkilint.model.scopes import Scopes
from nkilint.model.values import Const, TensorV

from ._spots import Spot, activation_func, tile_name


_RANGED = {"sin": "[-pi, pi]", "arctan": "[-pi/2, pi/2]", "log": "[2^-64, 2^64]", "rsqrt": "[2^-87, 2^97]",
           "reciprocal": "+-[2^-42, 2^42]", "sqrt": "[2^-116, 2^118]"}


_PI_MULTIPLES = [math.pi * k for k in (0.5, 1.0, 1.5, 2.0)]


def _range_reduced(graph: KernelGraph, src: str) -> bool:
    for p in df.producers(graph, src, depth=8):
        pdata = graph.attrs(p)
        s = df.short(pdata.get("api"))
        funcs = set(df.func_params(pdata).values())
        if s in ("mod", "fmod", "remainder") or funcs & {"mod", "fmod", "remainder"}:
            return True
        for value in (pdata.get("params_v") or {}).values():
            v = df.const_number(value)
            if v is not None and any(abs(abs(v) - m) < 1e-3 for m in _PI_MULTIPLES):
                return True
    return False


def _has_positive_offset(graph: KernelGraph, op: str, src: str, origins: set[str]) -> bool:
    """An eps: a bias on the op itself, or an add of a positive constant / a
    maximum (clamp) between the ops that formed the value (``origins``: the
    exp, the variance) and ``op``."""
    data = graph.attrs(op)
    bias = df.param(data, "bias")
    if isinstance(bias, TensorV) or (df.const_number(bias) or 0) > 0:
        return True
    if any(_may_be_eps(v) for v in df.added_scalars(graph, op)):
        return True
    after: set[str] = set()
    for o in origins:
        after |= df.consumers(graph, o, depth=6)
    for p in df.producers(graph, src, depth=4) & after:
        pdata = graph.attrs(p)
        funcs = {v for k, v in df.func_params(pdata).items() if k in ("op", "op0", "op1")}
        s = df.short(pdata.get("api"))
        if "maximum" in funcs or s == "maximum":
            return True
        if "add" in funcs or s == "add" or (s in ("activation",) and funcs <= {"copy", "identity"}):
            params = pdata.get("params_v") or {}
            for key in ("operand0", "operand1", "y", "x", "bias", "imm"):
                v = df.const_number(params.get(key))
                if v is not None and v > 0:
                    return True
            if s == "activation" and isinstance(params.get("bias"), TensorV):
                return True
        if any(_may_be_eps(v) for v in df.added_scalars(graph, p)):
            return True
    return False


def _may_be_eps(value) -> bool:
    """A scalar added on purpose: a positive constant, or a value the model
    does not know (an ``eps`` passed in as a parameter)."""
    number = df.const_number(value)
    if number is not None:
        return number > 0
    return not isinstance(value, Const)


_REDUCTION_NAMES = frozenset({"pi", "mod", "fmod", "remainder"})


def _reduction_syntax(node: ast.AST) -> bool:
    """pi (``math.pi``, ``np.pi``, ``from math import pi``), a modulo
    (``x % n``, ``nl.mod``, ``fmod``, ``remainder``); ``"%d" % x`` is string
    formatting, not a modulo."""
    if isinstance(node, ast.Name):
        return node.id in _REDUCTION_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in _REDUCTION_NAMES
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Mod):
        left = node.left if isinstance(node, ast.BinOp) else node.target
        return not (isinstance(left, (ast.Constant, ast.JoinedStr)) and not isinstance(
            getattr(left, "value", None), (int, float)))
    return False


def _mentions_pi(scopes: Scopes, site: Site | None) -> bool:
    """The function around the call (or around a call that led to it)
    mentions pi or a modulo up to the call's line, directly or through a
    module-level name bound to such an expression (``TWO_PI = 2 * math.pi``):
    a range reduction the graph may not show, e.g. through a helper the
    model could not follow."""
    if site is None:
        return False
    for path, node in ((site.file, site.node), *site.chain):
        index = scopes.index_for(path)
        fn = index.enclosing_function(node) if index is not None else None
        if fn is None:
            continue
        line = getattr(node, "end_lineno", None) or getattr(node, "lineno", 0)
        for sub in index.subtree(fn):
            if getattr(sub, "lineno", line) > line:
                continue
            if _reduction_syntax(sub):
                return True
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and any(
                    _reduction_syntax(n) for v in index.assigned_values(sub.id, index.tree)
                    if index.enclosing_function(v) is None for n in astwalk.walk(v)):
                return True
    return False


def _probability_source(graph: KernelGraph, src: str) -> set[str]:
    """The ops (exp, softmax, sigmoid, division) that made src a probability."""
    out = set()
    for p in df.producers(graph, src, depth=3):
        pdata = graph.attrs(p)
        if df.is_exp(pdata) or df.short(pdata.get("api")) in ("softmax", "sigmoid") or \
                df.func_params(pdata).get("op") in ("sigmoid",) or df.is_division(pdata):
            out.add(p)
    return out


def _variance_source(graph: KernelGraph, src: str) -> set[str]:
    """The ops that made src a variance or a mean of squares."""
    out = set()
    for p in df.producers(graph, src, depth=8):
        pdata = graph.attrs(p)
        if df.short(pdata.get("api")) in ("var", "bn_aggr", "bn_stats") or df.ones_matmul_of_squares(graph, p):
            out.add(p)
        elif df.is_sum_reduction(pdata):
            if df.squares(graph, p):
                out.add(p)
            for _, n in df.reads(graph, p):
                if any(df.squares(graph, q) for q in df.writers(graph, n)):
                    out.add(p)
    return out


def activation_ranges(ctx: RuleContext) -> Iterator[Spot]:
    scopes = ctx.analysis(Scopes)
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            func = activation_func(data)
            s = df.short(data.get("api"))
            if func is None and s in ("log", "rsqrt") and (data.get("api") or "").startswith("nki.language"):
                func = s
            if func not in _RANGED:
                spot = _inverse_of_variance(ctx, graph, op)
                if spot is not None:
                    yield Spot(data.get("site"), spot, kernel=kernel.name)
                continue
            src = [n for p, n in df.reads(graph, op) if p in ("data", "x")]
            if not src:
                continue
            src0 = src[0]
            why = None
            if func in ("sin", "arctan") and func == activation_func(data):
                writers = df.writers(graph, src0)
                base = graph.attrs(df.base(graph, src0))
                if base.get("origin") == "alloc" and not writers:
                    continue  # the model saw nothing write the angles: unknown provenance
                if not _range_reduced(graph, src0) and not _mentions_pi(scopes, data.get("site")):
                    why = (f"nisa.activation(op=nl.{func}) has no range reduction: ScalarE evaluates its polynomial only "
                           f"on {_RANGED[func]} (sin(9.0) returns about 27.65); reduce the argument (x mod 2*pi) first "
                           f"or call nl.{func}, which range-reduces")
            elif func == "log" and (origins := _probability_source(graph, src0)) and \
                    not _has_positive_offset(graph, op, src0, origins) and \
                    not df.sum_of_max_subtracted_exps(graph, src0):
                why = ("log of probabilities (exp / softmax / division output) with no eps: values that underflow to 0 "
                       f"fall outside ScalarE's log input range {_RANGED['log']}; add an eps (bias=eps) or clamp first")
            elif func in ("rsqrt", "reciprocal") and (origins := _variance_source(graph, src0)) and \
                    not _has_positive_offset(graph, op, src0, origins):
                why = (f"{func} of a variance with no eps: a zero or tiny variance falls outside ScalarE's {func} input "
                       f"range {_RANGED[func]} and returns garbage instead of inf; add eps (bias=eps) before {func}")
            if why is None:
                continue
            yield Spot(data.get("site"), f"{why} ({tile_name(graph, src0)})", kernel=kernel.name)


_HOW = {"rsqrt": "rsqrt of", "reciprocal": "the reciprocal of", "divide": "a division by",
        "power": "a negative power of"}


def _inverse_of_variance(ctx: RuleContext, graph: KernelGraph, op: str) -> str | None:
    """The forms the activation check does not see: ``nl.reciprocal`` /
    ``nisa.reciprocal``, a division, ``tensor_scalar(op1=nl.rsqrt)``, a
    power -0.5, of a variance (or of its square root) that nothing on the
    way adds an eps to or clamps."""
    inv = df.inverted_operand(graph, op)
    if inv is None or any(_may_be_eps(v) for v in df.added_scalars(graph, op)):
        return None
    how, node = inv
    found = df.eps_free_variance(graph, node)
    if found is None:
        return None
    variance, through_sqrt = found
    what = "the square root of a variance" if through_sqrt else "a variance"
    vdata = graph.attrs(variance)
    outs = sorted(df.writes(graph, variance), key=lambda w: w[0] != "reduce_res")
    label = next((tile_name(graph, n) for _, n in outs if tile_name(graph, n) != "the tile"), tile_name(graph, node))
    return (f"{_HOW[how]} {what} with no eps ({label}, from {df.short(vdata.get('api'))} at "
            f"{ctx.model.line_ref(vdata.get('site'))}): a zero or tiny variance (a constant or zero-padded row) gives "
            f"inf or garbage and the normalised row NaN, where the GPU reference (torch RMSNorm / LayerNorm) adds "
            f"eps; add eps to the variance first")
