"""NKI706 immutable-parameter-written: legacy: a kernel writes an input parameter not annotated nt.mutable_tensor."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow
from nkilint.model.exprs import ExprFacts
from nkilint.model.scopes import Scopes
from nkilint.model.semantic import FileModel, Kernel
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._kernels import experimental_flag, is_mutable_annotation, kernel_args, root_kernels
from ._messages import ERRORS_DOC


class ImmutableParameterWritten(Rule):
    id = "NKI706"
    name = "immutable-parameter-written"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes, ExprFacts)
    summary = "Legacy: a kernel writes one of its input parameters, which are immutable unless annotated nt.mutable_tensor"
    explanation = f"""
Finds, in legacy top-level kernels that return their outputs, stores into a kernel
parameter that is not annotated `nt.mutable_tensor`
(`nl.store(in_tensor, ...)`, `in_tensor[...] = ...`, a DMA whose
destination is a parameter).

**Why on Trainium:** the parameters of a legacy top-level `nki.jit` kernel
(one that returns its outputs, the calling convention since Neuron 2.20.1)
are immutable by default; storing into one is rejected with
`err_cannot_update_immutable_parameter` ("Cannot update immutable
parameter", {ERRORS_DOC}).

Every launch form counts: `@nki.jit` (also called with options), the
launchers that wrap it (`@nki.baremetal`, `nki.baremetal(f)`,
`nki.benchmark(...)(f)`, `nki.profile`, `nki.simulate_kernel(f, ...)`), a
grid `f[g](...)`, and a wrapper assigned to a name (`k = nki.jit(f)`).
Kernels in the older pass-by-reference style (`nki.trace`, torch
`nki_jit`, or a kernel that returns nothing) write their output
parameters by design and are not reported; neither are sub-kernels
(`@nki.jit(mode='trace')`, or a kernel another kernel of the file calls),
whose parameters are the caller's tensors, nor kernels compiled with
`experimental_flags='enable-mutable-parameter'` (as in the SDK team's
token-generation attention kernel).

**Fix:** annotate the parameter as mutable (`in_tensor: nt.mutable_tensor`
with `import neuronxcc.nki.typing as nt`) and return it, or write into a
new output tensor (`nl.ndarray(..., buffer=nl.shared_hbm)`) and return
that.
"""
    references = (f"{ERRORS_DOC} (err_cannot_update_immutable_parameter)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def increment(in_tensor):
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(in_tensor, value=y)
                return in_tensor
            """,
            lines=[8],
        ),
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            def increment(in_tensor):
                x = nl.load(in_tensor)
                nl.store(in_tensor, value=x + 1)
                return in_tensor

            nki.baremetal(increment)(np.zeros((128, 512), dtype=np.float32))
            """,
            lines=[7],
            title="launched through nki.baremetal(f)",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def increment(in_tensor: nt.mutable_tensor):
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(in_tensor, value=y)
                return in_tensor
            """,
            title="annotated mutable and returned",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def increment(in_tensor):
                out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
                x = nl.load(in_tensor)
                nl.store(out, value=x + 1)
                return out
            """,
            title="a new output tensor",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        if not model.legacy:
            return  # NKI 0.2+ kernels may write arguments (the docs do)
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for kernel, fn in root_kernels(model, scopes):
            # Older legacy entry points (nki.trace, baremetal, torch nki_jit) took outputs by reference; the
            # immutability rule is that of nki.jit kernels that return their outputs.
            if not _returning_launch(kernel.how) or not any(
                isinstance(n, ast.Return) and n.value is not None for n in scopes.own_nodes(fn)
            ) or _trace_mode(kernel.decorator) or _called_from_kernel(model, kernel) or experimental_flag(
                kernel.decorator, "enable-mutable-parameter"
            ):
                continue
            for arg in kernel_args(fn):
                if is_mutable_annotation(model.bindings, arg.annotation):
                    continue
                for ref in exprs.param_tensors.get(id(arg), []):
                    if ref.kernel is not kernel:
                        continue
                    for op_id in dataflow.stores(ref.graph, ref.node_id):
                        op = ref.graph.attrs(op_id)
                        api = str(op.get("api", "")).rpartition(".")[2]
                        what = "an assignment" if op.get("assignment") or op.get("augmented") else f"nl.{api}" \
                            if op.get("api", "").startswith("nki.language.") else f"nisa.{api}"
                        reporter.at_site(
                            op.get("site"),
                            f"{what} writes kernel parameter `{arg.arg}` of `{kernel.name}`; kernel parameters are "
                            f"immutable unless annotated nt.mutable_tensor (err_cannot_update_immutable_parameter)",
                            hint=f"annotate `{arg.arg}: nt.mutable_tensor` and return it, or write a new shared_hbm "
                            f"output",
                            kernel=kernel.name,
                        )


# Launchers of the legacy calling convention (the kernel returns its
# outputs): nki.jit and the launchers that wrap it, as a decorator, applied
# to the function (``nki.baremetal(f)``, ``nki.benchmark(...)(f)``,
# ``k = nki.jit(f)``) or given it first (``nki.simulate_kernel(f, ...)``).
# nki.trace and torch_neuronx.nki_jit kernels took their outputs by reference.
_RETURNING_LAUNCHERS = ("nki.jit", "nki.baremetal", "nki.benchmark", "nki.profile", "nki.simulate_kernel",
                        "nki.simulate")


def _returning_launch(how: str) -> bool:
    """``Kernel.how`` (``@nki.jit``, ``nki.baremetal(f)``, ...) names one of them."""
    head = how.lstrip("@").split(" ")[0].split(",")[0].split("(")[0]
    return head in _RETURNING_LAUNCHERS


def _trace_mode(decorator: ast.AST | None) -> bool:
    """@nki.jit(mode='trace'): the legacy spelling of a sub-kernel."""
    return isinstance(decorator, ast.Call) and any(
        kw.arg == "mode" and isinstance(kw.value, ast.Constant) and kw.value.value == "trace"
        for kw in decorator.keywords)


def _called_from_kernel(model: FileModel, kernel: Kernel) -> bool:
    """Another kernel of the file inlines this one (it is a sub-kernel there)."""
    return any(other is not kernel and kernel.name in other.graph.helpers for other in model.kernels)

