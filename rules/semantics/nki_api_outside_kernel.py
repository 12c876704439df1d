"""NKI719 nki-api-outside-kernel: an NKI tensor API is called in host code (module level, a kernel launcher)."""

from __future__ import annotations

import ast

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import api_semantics as api
from nkilint.model.exprs import ExprFacts
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC

# Host-side entry points that run a kernel: a function calling one is host code.
_LAUNCHERS = ("nki.simulate_kernel", "nki.simulate", "nki.baremetal", "nki.benchmark", "nki.profile",
              "jax_neuronx.nki_call", "nki.compiler.kernel_builder.compile_kernel")


class NkiApiOutsideKernel(Rule):
    id = "NKI719"
    name = "nki-api-outside-kernel"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes, ExprFacts)
    summary = "An NKI tensor API is called in host code (module level or a function that launches kernels)"
    explanation = f"""
Finds calls of `nki.language` / `nki.isa` operations that create or
compute tensors in host code: at module level, under
`if __name__ == "__main__":`, or in a function that launches a kernel.
Host code may use dtypes, buffers and `nl.tile_size` constants. A
function that calls such operations but has no `@nki.jit` (and is not
made a kernel by assignment) and is called from module-level code is
reported at that call: its operations run on the host.

**Why on Trainium:** these operations only exist while a kernel is being
traced; calling them from host code raises
`err_nki_api_outside_of_nki_kernel` ("Calling NKI API outside of NKI
kernels is not supported", {ERRORS_DOC}).

(Any other function that calls NKI APIs is treated as device code, since it
may be called from a kernel in another module.)

**Fix:** move the computation into a function decorated with `@nki.jit`
(or called from one), and compute reference results on the host with
NumPy.
"""
    references = (f"{ERRORS_DOC} (err_nki_api_outside_of_nki_kernel)",)
    examples = (
        invalid(
            """
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out

            def run():
                a = np.ones((128, 512), dtype=np.float32)
                out = nki.simulate(exp_kernel)(a)
                ref = nl.exp(a)
                return out, ref

            scratch = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            """,
            lines=[18, 21],
        ),
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            def copy_kernel(a):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(a))
                return out

            if __name__ == "__main__":
                result = copy_kernel(np.zeros((128, 128), dtype=np.float32))
            """,
            lines=[11],
            title="legacy: a kernel without @nki.jit called from the host",
        ),
        invalid(
            """
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            def copy_kernel(a):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=a)
                return out

            result = copy_kernel(np.zeros((128, 128), dtype=np.float32))
            """,
            lines=[11],
            title="current API: the same at module level",
        ),
        valid(
            """
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            def copy_kernel(a):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=a)
                return out

            copy_kernel = nki.jit(copy_kernel)
            result = copy_kernel(np.zeros((128, 128), dtype=np.float32))
            """,
            title="decorated by assignment before the host calls it",
        ),
        valid(
            """
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            TILE = (nl.tile_size.pmax, 512)

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(TILE, dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out

            def run():
                a = np.ones((128, 512), dtype=np.float32)
                out = nki.simulate(exp_kernel)(a)
                return out, np.exp(a)
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        # Module level (including `if __name__ == "__main__":` and class bodies).
        undecorated = _undecorated_device_functions(ctx, scopes)
        stack: list[ast.AST] = list(model.module.tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Call):
                name = _tensor_api(ctx, node)
                if name is not None:
                    self._report(reporter, node, name, "at module level")
                elif isinstance(node.func, ast.Name) and node.func.id in undecorated:
                    fn, first = undecorated[node.func.id]
                    reporter.at(
                        node,
                        f"`{fn.name}` is called from host code at module level but is not a kernel (no @nki.jit): "
                        f"its NKI tensor APIs ({first}) then run outside a kernel (err_nki_api_outside_of_nki_kernel)",
                        hint=f"decorate `{fn.name}` with @nki.jit, or launch it through a kernel",
                    )
            stack.extend(astwalk.child_nodes(node))
        # Host functions: they launch a kernel through a launcher and are not device code themselves.
        for fn in scopes.functions():
            if exprs.root_kernel(fn) is not None:
                continue
            launches = [n for n in scopes.own_nodes(fn) if isinstance(n, ast.Call) and _launcher(ctx, n)]
            if not launches:
                continue
            if any(fn is k.node for k in model.kernels if k.kind == "root"):
                continue
            for node in scopes.own_nodes(fn):
                if isinstance(node, ast.Call):
                    name = _tensor_api(ctx, node)
                    if name is not None:
                        self._report(reporter, node, name, f"in host function `{fn.name}`, which launches a kernel")

    @staticmethod
    def _report(reporter: Reporter, node: ast.Call, name: str, where: str) -> None:
        short = ("nl." if name.startswith("nki.language.") else "nisa." if name.startswith("nki.isa.") else "") + \
            name.rpartition(".")[2]
        reporter.at(
            node,
            f"{short} is called {where}; NKI tensor APIs only work inside a kernel (err_nki_api_outside_of_nki_kernel)",
            hint="move it into an @nki.jit kernel (or a helper it calls); compute host-side references with NumPy",
        )


def _tensor_api(ctx: RuleContext, call: ast.Call) -> str | None:
    """The canonical name of an NKI call that creates or computes tensors."""
    qual = ctx.model.bindings.resolve_nki(call.func)
    if qual is None:
        return None
    info = api.classify(qual.name)
    if info is None or info.kind not in ("alloc", "dma", "compute", "matmul", "transpose"):
        return None
    if info.module == "nki.language" and info.short in ("device_print", "static_cast"):
        return None  # static_cast converts host arrays too (legacy stub: "a scalar or array")
    return qual.name


def _undecorated_device_functions(ctx: RuleContext, scopes: Scopes) -> dict[str, tuple[ast.AST, str]]:
    """Module-level functions without decorators that call NKI tensor APIs
    themselves and whose name the module never rebinds (``k = nki.jit(k)``
    makes the name a kernel): name -> (function, the first such call, as
    ``nl.ndarray at line 8``). Calling one from module-level code runs those
    APIs on the host."""
    tree = ctx.model.module.tree
    rebound = {t.id for stmt in tree.body if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign))
               for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
               for t in astwalk.walk(target) if isinstance(t, ast.Name)}
    out: dict[str, tuple[ast.AST, str]] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef) or stmt.decorator_list or stmt.name in rebound:
            continue
        for node in scopes.own_nodes(stmt):
            if isinstance(node, ast.Call):
                name = _tensor_api(ctx, node)
                if name is not None:
                    short = ("nl." if name.startswith("nki.language.") else "nisa.") + name.rpartition(".")[2]
                    out[stmt.name] = (stmt, f"{short} at line {node.lineno}")
                    break
    return out


def _launcher(ctx: RuleContext, call: ast.Call) -> bool:
    """A call that runs a kernel from the host (``nki.simulate_kernel(k, ...)``,
    ``nki.baremetal(k)(...)``, ...)."""
    target = call.func.func if isinstance(call.func, ast.Call) else call.func
    qual = ctx.model.bindings.resolve(target)
    return qual is not None and qual.name in _LAUNCHERS

