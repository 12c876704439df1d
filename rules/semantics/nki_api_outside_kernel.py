"""NKI719 nki-api-outside-kernel: an NKI tensor API is called in host code (module level or a function that launches kernels)."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from .._semantics_checks import _launcher, _tensor_api
from .._semantics_facts import FileFacts, facts
from ._messages import ERRORS_DOC


class NkiApiOutsideKernel(Rule):
    id = "NKI719"
    name = "nki-api-outside-kernel"
    family = "semantics"
    level = Level.ERROR
    summary = "An NKI tensor API is called in host code (module level or a function that launches kernels)"
    explanation = f"""
`nki.language` / `nki.isa` operations that create or compute tensors only
exist while a kernel is being traced; calling them from host code — at
module level, under `if __name__ == "__main__":`, or in the function that
launches the kernel — raises `err_nki_api_outside_of_nki_kernel` ("Calling
NKI API outside of NKI kernels is not supported", {ERRORS_DOC}). Host code
may use dtypes, buffers and `nl.tile_size` constants.

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
        f = facts(ctx)
        reporter = Reporter(ctx)
        # Module level (including `if __name__ == "__main__":` and class bodies).
        stack: list[ast.AST] = list(f.tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Call):
                api = _tensor_api(f, node)
                if api is not None:
                    self._report(reporter, f, node, api, "at module level")
            stack.extend(ast.iter_child_nodes(node))
        # Host functions: they launch a kernel through a launcher and are not device code themselves.
        for fn in f.functions():
            if f.root_kernel(fn) is not None:
                continue
            launches = [n for n in f.own_nodes(fn) if isinstance(n, ast.Call) and _launcher(f, n)]
            if not launches:
                continue
            if any(fn is k.node for k in f.model.kernels if k.kind == "root"):
                continue
            for node in f.own_nodes(fn):
                if isinstance(node, ast.Call):
                    api = _tensor_api(f, node)
                    if api is not None:
                        self._report(reporter, f, node, api, f"in host function `{fn.name}`, which launches a kernel")

    @staticmethod
    def _report(reporter: Reporter, f: FileFacts, node: ast.Call, api: str, where: str) -> None:
        short = ("nl." if api.startswith("nki.language.") else "nisa." if api.startswith("nki.isa.") else "") + \
            api.rpartition(".")[2]
        reporter.at(
            node,
            f"{short} is called {where}; NKI tensor APIs only work inside a kernel (err_nki_api_outside_of_nki_kernel)",
            hint="move it into an @nki.jit kernel (or a helper it calls); compute host-side references with NumPy",
        )

