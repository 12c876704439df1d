"""NKI728 undefined-name: device code reads a name that nothing binds (a missing import, a helper's local)."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.names import UnboundNames
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC

# What to import for the names kernels usually forget, by generation.
_IMPORTS = {
    "np": "import numpy as np",
    "math": "import math",
    "torch": "import torch",
    "nt": "import nki.typing as nt",
}
_NKI_ALIASES = {"nl": "language", "nisa": "isa", "ni": "isa", "nki": None, "ncc": "compiler", "nccl": "collectives"}
# GPU names that the cuda family reports as port leftovers (NKI401-NKI406).
_GPU_LEFTOVERS = frozenset({
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads", "__syncwarp", "atomicAdd",
    "atomicMax", "atomicMin", "atomicCAS", "atomicExch", "__shfl_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__shared__", "tl", "triton", "cuda", "cp", "cupy", "numba",
})


class UndefinedName(Rule):
    id = "NKI728"
    name = "undefined-name"
    family = "semantics"
    level = Level.ERROR
    summary = "Device code reads a name that no enclosing function, the module or the builtins bind"
    explanation = f"""
Finds names read in a kernel or a helper it reaches that nothing binds:
not a parameter or local of the function or of an enclosing one, not a
module-level name (assignment, import, definition, a `global` declaration
anywhere), not a builtin. The usual cause is a missing import (`np` or `nl`
used in a kernel whose module does not import it) or a helper's local
used in its caller.

**Why on Trainium:** the legacy tracer runs the kernel body as Python, so
the line raises `NameError` and the kernel never compiles; the NKI 0.2+
frontend resolves every name of the kernel when it parses it and rejects
the unknown one (the frontend error catalogue, {ERRORS_DOC}, lists no code
of its own for it: it is Python's error). A read under a condition nkilint
cannot decide is a warning (the branch may never run).

A module whose namespace the syntax does not show in full (`from x
import *`, `globals()`, `exec`, `setattr`, a module `__getattr__`) is not
checked, and neither is a function with a `match` statement or a `try`
that catches `NameError`. GPU names a CUDA or Triton port left behind
(`threadIdx`, `tl`) are reported by the cuda family.

**Fix:** add the import (`import numpy as np`, `import nki.language as
nl`) or define the name before the kernel uses it.
"""
    references = (
        f"{ERRORS_DOC} (errors raised while tracing the kernel's Python body)",
        "aws-neuron-sdk nki/migration/index.rst (the NKI 0.2 frontend parses the kernel's source)",
        "https://docs.python.org/3/reference/executionmodel.html#resolution-of-names",
    )
    requires = (DeviceCode, Scopes, UnboundNames)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def scale(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                nl.store(out, value=nl.multiply(t, np.float32(0.5)))
                return out
            """,
            lines=[8],
            title="legacy: numpy used without its import",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.isa as nisa

            @nki.jit
            def copy(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=x)
                return out
            """,
            lines=[6],
            title="current: nki.language used without its import (reported once per kernel)",
            level=Level.ERROR,
        ),
        valid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            SCALE = np.float32(0.5)

            @nki.jit
            def scale(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                rows = [i for i in range(2) for _ in range(i)]
                nl.store(out, value=nl.multiply(t, SCALE * len(rows)))
                return out
            """,
            title="imported, module constants and comprehension targets",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        device = ctx.analysis(DeviceCode)
        names = ctx.analysis(UnboundNames)
        index = ctx.analysis(Scopes).file
        reporter = Reporter(ctx)
        legacy = ctx.model.legacy
        for fn in device.functions:
            for node in names.unbound(fn):
                if node.id in _GPU_LEFTOVERS:
                    continue
                conditional = any(True for _ in index.conditions_between(node, fn))
                reporter.at(
                    node,
                    f"`{node.id}` is not defined: nothing in `{fn.name}`, the functions around it, this module or "
                    f"the builtins binds it, so this line raises NameError"
                    + (" when this branch runs" if conditional else ""),
                    level=Level.WARNING if conditional else Level.ERROR,
                    hint=_hint(node.id, legacy),
                    kernel=fn.name,
                )


def _hint(name: str, legacy: bool) -> str:
    if name in _IMPORTS:
        return f"add `{_IMPORTS[name]}` at the top of the module"
    if name in _NKI_ALIASES:
        base = "neuronxcc.nki" if legacy else "nki"
        module = _NKI_ALIASES[name]
        if module is None:
            return "add `import neuronxcc.nki as nki`" if legacy else "add `import nki`"
        return f"add `import {base}.{module} as {name}`"
    return f"define `{name}` before the kernel uses it, import it, or pass it as a parameter"
