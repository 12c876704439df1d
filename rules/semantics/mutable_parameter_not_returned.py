"""NKI707 mutable-parameter-not-returned: legacy: a kernel parameter annotated nt.mutable_tensor is not returned."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._kernels import experimental_flag, is_mutable_annotation, kernel_args, returned_names, root_kernels
from ._messages import ERRORS_DOC


class MutableParameterNotReturned(Rule):
    id = "NKI707"
    name = "mutable-parameter-not-returned"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes,)
    summary = "Legacy: a kernel parameter annotated nt.mutable_tensor is not returned"
    explanation = f"""
Finds, in legacy kernels, a parameter annotated `nt.mutable_tensor` that a
return statement (or the whole kernel) does not return.

**Why on Trainium:** a legacy kernel parameter annotated
`nt.mutable_tensor` is an output the kernel updates in place, and the
frontend requires the kernel to return it: otherwise it raises
`err_mutable_parameter_not_returned` ("A mutable kernel parameter must be
returned by `return`", {ERRORS_DOC}). (NKI 0.3+ kernels may update a
`nki.typing.mutable_tensor` in place without returning it; this rule only
checks legacy kernels.)

**Fix:** add the parameter to the returned values
(`return out_tensor, in_tensor`), or drop the annotation if the kernel does
not need to update it.
"""
    references = (f"{ERRORS_DOC} (err_mutable_parameter_not_returned)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def update(in_tensor: nt.mutable_tensor):
                out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(out_tensor, value=y)
                nl.store(in_tensor, value=y)
                return out_tensor
            """,
            lines=[12],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.typing as nt

            @nki.jit
            def update(in_tensor: nt.mutable_tensor):
                out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
                x = nl.load(in_tensor)
                y = x + 1
                nl.store(out_tensor, value=y)
                nl.store(in_tensor, value=y)
                return out_tensor, in_tensor
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        if not model.legacy:
            return
        scopes = ctx.analysis(Scopes)
        reporter = Reporter(ctx)
        for kernel, fn in root_kernels(model, scopes):
            mutable = [a for a in kernel_args(fn) if is_mutable_annotation(model.bindings, a.annotation)]
            if not mutable or experimental_flag(kernel.decorator, "skip-mutable-return-check"):
                continue
            returns = [n for n in scopes.own_nodes(fn) if isinstance(n, ast.Return)]
            for arg in mutable:
                if not returns:
                    reporter.at(
                        arg,
                        f"mutable parameter `{arg.arg}` of `{kernel.name}` is never returned; legacy NKI requires "
                        f"every nt.mutable_tensor parameter to be returned (err_mutable_parameter_not_returned)",
                        hint=f"add `return {arg.arg}` (with the other outputs)",
                        kernel=kernel.name,
                    )
                    continue
                for ret in returns:
                    if arg.arg not in returned_names(ret):
                        reporter.at(
                            ret,
                            f"this return of `{kernel.name}` does not return mutable parameter `{arg.arg}`; legacy NKI "
                            f"requires every nt.mutable_tensor parameter to be returned "
                            f"(err_mutable_parameter_not_returned)",
                            hint=f"return `{arg.arg}` as well",
                            kernel=kernel.name,
                        )

