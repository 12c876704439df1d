"""NKI708 output-never-written: a kernel output is never written, or only in a loop that never runs."""

from __future__ import annotations

import ast

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow
from nkilint.model import query as q
from nkilint.model.api_semantics import READ_ONLY_PARAMS
from nkilint.model.exprs import ExprFacts
from nkilint.model.scopes import Scope, Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._kernels import is_mutable_annotation, kernel_args, returned_names, root_kernels
from ._messages import ERRORS_DOC


class OutputNeverWritten(Rule):
    id = "NKI708"
    name = "output-never-written"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes, ExprFacts)
    summary = "A kernel output (returned tensor or mutable parameter) is never written, or only in a loop that never runs"
    explanation = f"""
Finds kernel outputs (returned tensors allocated in the kernel, and
`nt.mutable_tensor` parameters) that are never written, or written only
inside a loop whose trip count is 0.

**Why on Trainium:** every output of a kernel must be written. The legacy
frontend rejects a kernel whose output is never stored with
`err_tensor_output_not_written_to` ({ERRORS_DOC}); its most common cause is
a dead loop whose trip count is 0, such as `nl.affine_range(M // N)` with
`N > M`. The NKI 0.3+ compiler requires every `nt.mutable_tensor` parameter
to have at least one store (NCC_IGCA090, quoted in aws-neuron/nki-library
`core/router_topk`), and an unwritten returned tensor holds garbage (legacy
known issue "Unwritten output tensor will have garbage data").

Levels: an error for legacy kernels and for mutable parameters; a warning
for a returned tensor of an NKI 0.2+ kernel (garbage output). Outputs
passed to helpers the model cannot follow are not reported.

**Fix:** check the range expressions (`math.ceil(M / N)` or
`(M + N - 1) // N` instead of `M // N`, with the tail handled by a mask or
a `min()`-bounded slice), and make sure every output is written on every
path — or initialize it outside the loop.
"""
    references = (
        f"{ERRORS_DOC} (err_tensor_output_not_written_to)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (unwritten output)",
        "aws-neuron/nki-library src/nkilib_src/nkilib/core/router_topk/router_topk.py (NCC_IGCA090)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            M = 128
            N = M + 1

            @nki.jit
            def copy_tiles(tensor_in):
                tensor_out = nl.ndarray((M, 512), dtype=tensor_in.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(M // N):
                    a = nl.load(tensor_in[i * N:(i + 1) * N, 0:512])
                    nl.store(tensor_out[i * N:(i + 1) * N, 0:512], value=a)
                return tensor_out
            """,
            lines=[13],
            title="legacy: the only store is in a loop of M // N = 0 iterations",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scaled(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t)
                return out
            """,
            lines=[11],
            title="current API: the result is computed but never copied to the output (a warning)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_out(tensor_in, tensor_out):
                M = 128
                N = M + 1
                for i in nl.affine_range(M // N):
                    a = nl.load(tensor_in)
                    nl.store(tensor_out, value=a)
            """,
            lines=[5],
            title="legacy output parameter stored to only in a loop of M // N = 0 iterations",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            M = 128
            N = 64

            @nki.jit
            def copy_tiles(tensor_in):
                tensor_out = nl.ndarray((M, 512), dtype=tensor_in.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range((M + N - 1) // N):
                    a = nl.load(tensor_in[i * N:(i + 1) * N, 0:512])
                    nl.store(tensor_out[i * N:(i + 1) * N, 0:512], value=a)
                return tensor_out
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa
            from mylib import fill

            @nki.jit
            def scaled(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                fill(out, x)
                return out
            """,
            title="written by a helper the model cannot see: not reported",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        legacy = model.legacy
        for kernel, fn in root_kernels(model, scopes):
            if kernel.error or kernel.graph.truncated:
                continue
            scope = scopes.of(fn)
            # Returned tensors allocated in the kernel.
            for ret in (n for n in scopes.own_nodes(fn) if isinstance(n, ast.Return)):
                for name in sorted(returned_names(ret)):
                    if not exprs.is_tensor_name(fn, name) or self._escapes(ctx, fn, scope, name):
                        continue
                    refs = [r for b in scope.bindings.get(name, []) if b.value is not None
                            for r in exprs.refs(b.value) if r.kernel is kernel and r.data.get("kind") == "tensor"]
                    if not refs or any(r.data.get("buffer") not in q.HBM or r.data.get("api", "").rpartition(".")[2]
                                       in ("zeros", "ones", "full", "zeros_like", "ones_like", "full_like")
                                       for r in refs):
                        continue
                    problem = self._problem(model, refs)
                    if problem is None:
                        continue
                    node = next(x for x in astwalk.walk(ret) if isinstance(x, ast.Name) and x.id == name)
                    reporter.at(
                        node,
                        f"kernel output `{name}` of `{kernel.name}` is {problem}"
                        + (" (err_tensor_output_not_written_to)" if legacy else "; the caller receives garbage"),
                        level=Level.ERROR if legacy else Level.WARNING,
                        hint="write every output on every path; check range expressions such as M // N",
                        kernel=kernel.name,
                    )
            # Mutable parameters.
            for arg in kernel_args(fn):
                if not is_mutable_annotation(model.bindings, arg.annotation) or self._escapes(ctx, fn, scope, arg.arg):
                    continue
                refs = [r for r in exprs.param_tensors.get(id(arg), []) if r.kernel is kernel]
                problem = self._problem(model, refs) if refs else "never written (not even used)"
                if problem is None:
                    continue
                reporter.at(
                    arg,
                    f"mutable parameter `{arg.arg}` of `{kernel.name}` is {problem}"
                    + (" (err_tensor_output_not_written_to)" if legacy
                       else "; the compiler requires a store to every mutable_tensor (NCC_IGCA090)"),
                    hint="store to it, or drop the nt.mutable_tensor annotation",
                    kernel=kernel.name,
                )
            # Legacy output parameters (`def k(tensor_in, tensor_out)`): a parameter the kernel stores
            # to, whose every store sits in a loop that never runs.
            if legacy:
                stored = _store_destinations(model, scopes, fn)
                for arg in kernel_args(fn):
                    if arg.arg not in stored or is_mutable_annotation(model.bindings, arg.annotation) \
                            or self._escapes(ctx, fn, scope, arg.arg):
                        continue
                    refs = [r for r in exprs.param_tensors.get(id(arg), []) if r.kernel is kernel]
                    problem = self._problem(model, refs) if refs else None
                    if problem is None or not problem.startswith("only written inside"):
                        continue
                    reporter.at(
                        arg,
                        f"output parameter `{arg.arg}` of `{kernel.name}` is {problem} "
                        f"(err_tensor_output_not_written_to)",
                        hint="fix the range expression (M // N is 0 when N > M; use math.ceil with a mask), or "
                        "store a default value to the whole output outside the loop",
                        kernel=kernel.name,
                    )

    @staticmethod
    def _problem(model, refs: list[q.NodeRef]) -> str | None:
        """Why the output is unwritten, or None if it is written (or unknown)."""
        all_writes = []
        for ref in refs:
            g = ref.graph
            for nid in g.views_of(ref.node_id) + [ref.node_id]:
                for _, op_id, d in g.edges_of(nid, "reads"):
                    op = g.attrs(op_id)
                    if d.get("param") not in READ_ONLY_PARAMS or not str(op.get("api", "")).startswith(
                            ("nki.language.", "nki.isa.")):
                        return None  # an unmodelled use might write it
            all_writes.extend((ref, op_id) for op_id in dataflow.stores(g, ref.node_id))
        if not all_writes:
            return "never written"
        dead = []
        for ref, op_id in all_writes:
            loops = ref.graph.attrs(op_id).get("loops", ())
            zero = next((l for l in loops if q.upper(ref.graph.attrs(l).get("trip_v")) == 0), None)
            if zero is None:
                return None
            dead.append(ref.graph.attrs(zero))
        loop = dead[0]
        site = loop.get("site")
        line = f" on {model.line_ref(site)}" if site is not None else ""
        return f"only written inside a loop that never runs (trip count 0{line})"

    @staticmethod
    def _escapes(ctx: RuleContext, fn: ast.AST, scope: Scope, name: str) -> bool:
        """The tensor may be written where the model cannot see: passed to a
        non-NKI call, aliased, stored in a container, or used by a nested
        function."""
        index = ctx.analysis(Scopes).file
        bindings = ctx.model.bindings
        for load in scope.loads.get(name, []):
            parent = index.parent(load)
            # Climb through views (out[...], out.reshape(...)) to the use.
            node = load
            while isinstance(parent, (ast.Subscript, ast.Attribute)) and getattr(parent, "value", None) is node:
                if isinstance(parent, ast.Attribute) and parent.attr in ("shape", "dtype", "ndim", "buffer", "size"):
                    parent = None
                    break
                node = parent
                parent = index.parent(parent)
                if isinstance(parent, ast.Call) and parent.func is node:
                    node = parent  # out.reshape(...) / out.ap(...)
                    parent = index.parent(parent)
            if parent is None:
                continue
            # Anywhere inside the arguments of a call that is not an NKI API
            # (helper(out), tl.store(out + offsets, ...)).
            child = node
            for anc in [parent, *index.ancestors(parent)]:
                if isinstance(anc, ast.stmt):
                    break
                if isinstance(anc, ast.Call) and anc.func is not child:
                    qual = bindings.resolve_nki(anc.func)
                    if (qual is None or not qual.name.startswith(("nki.language.", "nki.isa."))) and not (
                            isinstance(anc.func, ast.Name) and anc.func.id in ("len", "print", "isinstance")):
                        return True
                child = anc
            if isinstance(parent, ast.keyword):
                parent = index.parent(parent)
            if isinstance(parent, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Starred)):
                if not isinstance(index.parent(parent), ast.Return):
                    return True
            elif isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and getattr(parent, "value", None) is node:
                return True
        # Nested functions that mention it (closures the model may not run).
        for sub in index.subtree(fn):
            if sub is not fn and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                if any(isinstance(n, ast.Name) and n.id == name for n in astwalk.walk(sub)):
                    return True
        return False



def _store_destinations(model, scopes, fn) -> set[str]:
    """Names the function's own ``nl.store(dst, ...)`` calls write (the root
    name of ``dst``)."""
    out: set[str] = set()
    for node in scopes.own_nodes(fn):
        if not isinstance(node, ast.Call):
            continue
        qual = model.bindings.resolve_nki(node.func)
        if qual is None or qual.name != "nki.language.store":
            continue
        dst = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "dst"), None)
        while isinstance(dst, (ast.Subscript, ast.Attribute)):
            dst = dst.value
        if isinstance(dst, ast.Name):
            out.add(dst.id)
    return out
