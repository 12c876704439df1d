"""NKI711 affine-range-write-conflict: iterations of an affine_range loop write the same location (legacy, NKI 0.2)."""

from __future__ import annotations

import ast

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import api_semantics as api
from nkilint.model import query as q
from nkilint.model.apitable import api_for, legacy_api
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.graph import KernelGraph
from nkilint.model.scopes import Scopes, call_argument
from nkilint.model.values import TensorV
from nkilint.rule import Rule, invalid, valid
from nkilint.versions import V0_2

from .._common import Reporter
from ._graph import in_dead_loop
from ._messages import ERRORS_DOC


class AffineRangeWriteConflict(Rule):
    id = "NKI711"
    name = "affine-range-write-conflict"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes, ExprFacts)
    summary = "Iterations of an affine_range loop write the same location (legacy and NKI 0.2)"
    explanation = f"""
Finds, in legacy kernels and when the target is NKI 0.2, a write inside an
`nl.affine_range` loop whose destination index does not depend on the loop
variable, into a tensor created outside the loop: every iteration writes
the same location.

**Why on Trainium:** in legacy NKI and NKI 0.2, `nl.affine_range` declares
a *parallel* loop: the compiler may run or pipeline its iterations in any
order, so no two iterations may write the same location, except
associative reductions (matmul accumulation into PSUM,
`psum += nl.matmul(...)`; `acc[...] += x`; an instruction that reads and
updates its destination; `nl.loop_reduce`). Such a write is rejected by the
legacy frontend with `err_unexpected_output_dependencies` ({ERRORS_DOC};
`nl.affine_range` API docs @0521004c and @337e6041).

Levels: an error for legacy kernels when the loop provably runs at least
twice (a warning when its trip count is unknown and might be 1); a warning
(a race) for `nki.*` kernels when the target is NKI 0.2. From NKI 0.3 every
static loop is unrolled in program order and this is no longer a hazard
(the loop iterator is only deprecated, see the migration rules).

**Fix:** index the destination with the loop variable (`a[i] = ...`), or
allocate the tensor inside the loop; if the iterations really depend on
each other, use `nl.sequential_range` (legacy / 0.2) or `range`.
"""
    references = (
        f"{ERRORS_DOC} (err_unexpected_output_dependencies)",
        "aws-neuron-sdk general/nki/api/nki/language/__init__.py @0521004c (affine_range)",
        "aws-neuron-sdk nki/api/nki/language/__init__.py @337e6041 (affine_range, NKI 0.2)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def fill(x):
                out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    a[0] = nl.load(x[i])
                for i in nl.affine_range(4):
                    nl.store(out[i], value=a[i])
                return out
            """,
            lines=[9],
            title="legacy: every iteration writes a[0]",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                part = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[:, i * 512:(i + 1) * 512])
                    nisa.tensor_reduce(dst=part, data=t, op=nl.add, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=part, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[14],
            nki_version="0.2",
            title="NKI 0.2: a scratch tile allocated outside affine_range, overwritten by every iteration (a warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def matmul_acc(xT, y):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    a[i] = nl.load(xT[i])
                result_psum = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(xT.shape[0] // 128):
                    offset = k * 128
                    xt_tile = nl.load(xT[offset:offset + 128, 0:128])
                    y_tile = nl.load(y[offset:offset + 128, 0:128])
                    result_psum += nl.matmul(xt_tile, y_tile, transpose_x=True)
                acc = nl.zeros((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                for k in nl.sequential_range(4):
                    acc[...] = nl.add(acc, nl.load(xT[k * 128:(k + 1) * 128, 0:128]))
                nl.store(out, value=result_psum)
                return out
            """,
            title="indexed by the loop variable; PSUM matmul accumulation; sequential_range",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for i in nl.affine_range(4):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    part = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[:, i * 512:(i + 1) * 512])
                    nisa.tensor_reduce(dst=part, data=t, op=nl.add, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=part, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            title="NKI 0.3+ unrolls affine_range in order: no finding at the default version",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        if model.legacy:
            level = Level.ERROR
        elif model.version == V0_2:
            level = Level.WARNING
        else:
            return
        scopes = ctx.analysis(Scopes)
        reporter = Reporter(ctx)
        for kernel, graph in model.graphs():
            for op_id, op in graph.ops():
                loops = [l for l in op.get("loops", ()) if graph.attrs(l).get("loop_kind") == "affine_range"]
                site = op.get("site")
                if not loops or site is None or not model.in_this_file(site) or in_dead_loop(graph, op["loops"]):
                    continue
                for target, edge in graph.writes(op_id):
                    param = edge.get("param")
                    if param == "result":
                        continue
                    base_id = graph.base_tensor(target)
                    base = graph.attrs(base_id)
                    if self._accumulation(graph, op_id, op, base):
                        continue
                    expr = _written_expr(ctx, op, param)
                    if expr is None or _indirect_destination(ctx, graph, target, expr):
                        continue
                    for loop_id in loops:
                        if loop_id in (base.get("loops") or ()):
                            continue  # allocated inside this loop: one tensor per iteration
                        loop = graph.attrs(loop_id)
                        loop_site = loop.get("site")
                        if loop_site is None or loop_site.chain != site.chain or not isinstance(loop_site.node, ast.For):
                            continue
                        fn = scopes.enclosing_function(loop_site.node)
                        if fn is None or scopes.enclosing_function(site.node) is not fn:
                            continue
                        deps = scopes.file.loop_dependents(loop_site.node)
                        mentioned = {n.id for n in astwalk.walk(expr) if isinstance(n, ast.Name)}
                        mask = call_argument(op["call"], 99, "mask") if isinstance(op.get("call"), ast.Call) else None
                        if mask is not None:
                            mentioned |= {n.id for n in astwalk.walk(mask) if isinstance(n, ast.Name)}
                        if mentioned & deps:
                            continue
                        trip = loop.get("trip_v")
                        if q.upper(trip) is not None and q.upper(trip) <= 1:
                            continue  # a single iteration cannot conflict with another
                        sure = q.lower(trip) is not None and q.lower(trip) >= 2
                        name = q.tensor_name(base)
                        iterator = loop.get("iterator") or "i"
                        reporter.at_site(
                            site,
                            f"every iteration of `nl.affine_range` loop `{iterator}` ({model.line_ref(loop_site)}) writes "
                            f"`{short_text(expr)}` of `{name}`, the same location: affine_range iterations may run in "
                            f"parallel and must write different locations"
                            + (" (err_unexpected_output_dependencies)" if model.legacy else " (NKI 0.2: a race)")
                            + ("" if sure else "; it conflicts when the loop runs more than once (its trip count "
                               "is not known)"),
                            level=level if sure else Level.WARNING,
                            hint=f"index the destination with `{iterator}`, allocate `{name}` inside the loop, or use "
                            f"nl.sequential_range",
                            kernel=kernel.name,
                        )
                        break

    @staticmethod
    def _accumulation(graph: KernelGraph, op_id: str, op: dict, base: dict) -> bool:
        """An associative reduction, which affine_range allows: matmul
        accumulation into PSUM, `t[...] += x`, an instruction that reads and
        writes the same tensor (dst=acc, data1=acc), or nl.loop_reduce."""
        info = api.classify(op["api"]) if op.get("api") else None
        if info is not None and info.kind == "matmul" and base.get("buffer") == "psum":
            return True
        if op.get("augmented") or str(op.get("api", "")).endswith("loop_reduce"):
            return True
        base_id = graph.base_tensor(next((t for t, e in graph.writes(op_id) if graph.base_tensor(t)), ""))
        for src, edge in graph.reads(op_id):
            if edge.get("param") == "value":
                producer = graph.attrs(graph.base_tensor(src))
                if str(producer.get("api", "")).endswith("loop_reduce"):
                    return True
            elif graph.base_tensor(src) == base_id:
                return True  # read-modify-write of the destination
        return False


def _indirect_destination(ctx: RuleContext, graph: KernelGraph, target: str, expr: ast.AST) -> bool:
    """The destination is indexed by tensor data (an index tile), whose
    values the model does not know: it may differ per iteration."""
    data = graph.attrs(target)
    if any(isinstance(x, TensorV) for x in data.get("index_v") or ()):
        return True
    fn = ctx.analysis(Scopes).enclosing_function(expr)
    exprs = ctx.analysis(ExprFacts)
    return fn is not None and any(
        isinstance(sub, ast.Subscript) and any(
            isinstance(n, ast.Name) and exprs.is_tensor_name(fn, n.id) for n in astwalk.walk(sub.slice))
        for sub in astwalk.walk(expr))


def _written_expr(ctx: RuleContext, op: dict, param: str | None) -> ast.AST | None:
    """The source expression of an op's written operand (the assignment
    target, or the argument passed for ``param``)."""
    call = op.get("call")
    if isinstance(call, ast.Assign):
        return call.targets[0] if len(call.targets) == 1 else None
    if isinstance(call, (ast.AugAssign, ast.AnnAssign)):
        return call.target
    if not isinstance(call, ast.Call) or not param:
        return None
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    table = legacy_api() if ctx.model.legacy else api_for(ctx.model.version)
    sig = table.signature(op.get("api", "")) or legacy_api().signature(op.get("api", ""))
    if sig is None or sig.params is None:
        return None
    for i, p in enumerate(sig.positional):
        if p.name == param and i < len(call.args):
            return call.args[i]
    return None

