"""NKI509 shape-dependent-reduction-tile."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._spots import NumericsRule, Spot, nki_name, number


class ShapeDependentReductionTile(NumericsRule):
    id = "NKI509"
    name = "shape-dependent-reduction-tile"
    family = "numerics"
    level = Level.NOTE
    summary = "A reduction/contraction tile size is chosen from the input shape (batch-invariance note)"
    fix_hint = "fix the reduction tile size (e.g. 128) independently of the batch size"
    explanation = """
A tile size assigned different constants depending on a condition
(`K_TILE = 64 if K <= 512 else 512`, or an `if/else` choosing 128 or 512),
then used to tile a loop that accumulates (matmul, reduction, `+=`): the
shape of a ported Triton autotune choice.

**Why on Trainium:** Floating-point addition is not associative: when the
reduction tile changes with the input shape, the summation order changes,
so the same row gives slightly different results in a different batch. The
nki-samples batch-invariance study measured, for K_TILE 128 vs 64, matmul
differences of 0.0 in bf16 but 6.1e-5 in fp32. Tiling parallel axes (M, N)
by shape is harmless; a note, because the rule cannot always tell which
axis the tile splits.

**Fix:** If batch-invariant (deterministic across shapes) results are
required, fix the reduction tile size (128 partitions) and keep the
reduction order static.
"""
    references = ("nki-samples contributed/batch_invariance/README.md (PR merge 2f83fa5)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                n, d = x.shape
                D_TILE = 128 if d <= 1024 else 512
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for j in range(d // D_TILE):
                    t = nl.ndarray((128, D_TILE), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, j * D_TILE:(j + 1) * D_TILE])
                    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=s, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[8],
            title="current API",
            level=Level.NOTE,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(aT, b):
                K, M = aT.shape
                if K > 4096:
                    KT = 128
                else:
                    KT = 64
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(K // KT):
                    ta = nl.load(aT[k * KT:(k + 1) * KT, 0:128])
                    tb = nl.load(b[k * KT:(k + 1) * KT, 0:512])
                    acc += nl.matmul(ta, tb, transpose_x=True)
                nl.store(out, value=acc)
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
            def row_sum(x):
                n, d = x.shape
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for j in range(d // 512):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, j * 512:(j + 1) * 512])
                    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=s, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            title="a fixed reduction tile",
        ),
    )

    def spots(self, ctx: RuleContext):
        return shape_dependent_reduction_tiles(ctx, ctx.analysis(DeviceCode))


def _conditional_constants(fn: ast.FunctionDef) -> dict[str, ast.AST]:
    """Names assigned different int constants depending on a condition."""
    out: dict[str, ast.AST] = {}
    for node in astwalk.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.IfExp):
                a, b = number(v.body), number(v.orelse)
                if a is not None and b is not None and a != b:
                    out[node.targets[0].id] = node
        if isinstance(node, ast.If) and node.orelse:
            first = _const_assigns(node.body)
            second = _const_assigns(node.orelse)
            for name, value in first.items():
                if name in second and second[name] != value:
                    out.setdefault(name, node)
    return out


def _const_assigns(body: list[ast.stmt]) -> dict[str, float]:
    out: dict[str, float] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            v = number(stmt.value)
            if v is not None:
                out[stmt.targets[0].id] = v
        if isinstance(stmt, ast.If):
            out.update({k: v for k, v in _const_assigns(stmt.body).items() if k not in out})
    return out


def _reduces(ctx: RuleContext, body: list[ast.stmt]) -> bool:
    for stmt in body:
        for n in astwalk.walk(stmt):
            if isinstance(n, ast.Call):
                name = nki_name(ctx, n.func) or ""
                short = name.rsplit(".", 1)[-1]
                if short in ("nc_matmul", "matmul", "tensor_reduce", "sum", "mean"):
                    return True
                if short in ("activation", "activation_reduce") and any(k.arg in ("reduce_op", "reduce_res") for k in n.keywords):
                    return True
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add):
                return True
    return False


def shape_dependent_reduction_tiles(ctx: RuleContext, s: DeviceCode) -> Iterator[Spot]:
    for fn in s.outermost:
        candidates = _conditional_constants(fn)
        if not candidates:
            continue
        reported: set[str] = set()
        for node in s.nodes(fn):
            if not (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)):
                continue
            used = {n.id for a in node.iter.args for n in astwalk.walk(a) if isinstance(n, ast.Name)} & set(candidates)
            sliced = {n.id for st in node.body for sub in astwalk.walk(st) if isinstance(sub, ast.Subscript)
                      for n in astwalk.walk(sub.slice) if isinstance(n, ast.Name)} & set(candidates)
            for name in sorted((used | sliced) - reported):
                if not _reduces(ctx, node.body):
                    continue
                reported.add(name)
                where = candidates[name]
                owner = s.owner(where) or fn
                yield Spot(where, (
                    f"the tile size {name} depends on a condition ({ast.unparse(where.test if isinstance(where, ast.If) else where.value.test)}) "
                    f"and tiles a loop that accumulates (matmul / reduction): if it tiles the reduction axis, the "
                    f"summation order (and the rounding) changes with the input shape, so the same row can give "
                    f"different results for different batch sizes; fix the reduction tile size (e.g. 128) if "
                    f"batch-invariant results are required"
                ), Level.NOTE, owner.name)
