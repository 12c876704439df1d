"""NKI729 loop-over-arange: a Python `for` iterates over nl.arange(...), an index expression, not a range."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.bindings import Dialect, Gen
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import short_text
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC


class LoopOverArange(Rule):
    id = "NKI729"
    name = "loop-over-arange"
    family = "semantics"
    level = Level.ERROR
    summary = "A `for` loop iterates over nl.arange(...), which builds an index expression, not a sequence"
    explanation = f"""
Finds `for i in nl.arange(n):` in legacy (`neuronxcc.nki`) device code.

**Why on Trainium:** `nl.arange` does not produce the numbers `0 .. n-1`:
it builds a symbolic index tensor for tile indexing (`t[nl.arange(128)[:,
None], nl.arange(512)[None, :]]`), which the frontend turns into an access
pattern. It cannot be iterated at trace time: a loop over it is control
flow that depends on `nl.arange`, which the frontend rejects
(`err_control_flow_condition_depending_on_arange`, {ERRORS_DOC}).
Porting from NumPy, CUDA or Triton (`tl.arange`) is the
usual origin. The `nki` namespace (NKI 0.2+) has no `nl.arange` at all
(NKI603 reports it).

**Fix:** loop with `nl.affine_range(n)` (independent iterations),
`nl.sequential_range(n)` (a carried dependency) or `range(n)` (unrolled);
or drop the loop and index the tile with the arange expression.
"""
    references = (
        f"{ERRORS_DOC} (err_control_flow_condition_depending_on_arange)",
        "aws-neuron-sdk nki/api/nki.language.rst (nl.arange: an index for tile indexing)",
    )
    requires = (DeviceCode, Scopes)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_rows(x):
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.arange(4):
                    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
                    nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
                return out
            """,
            lines=[7],
            level=Level.ERROR,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_rows(x):
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                i_f = nl.arange(512)[None, :]
                for i in nl.affine_range(4):
                    i_p = i * 128 + nl.arange(128)[:, None]
                    t = nl.load(x[i_p, i_f])
                    nl.store(out[i_p, i_f], value=t)
                return out
            """,
            title="an affine_range loop; arange only in index expressions",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if ctx.model.dialect not in (Dialect.LEGACY, Dialect.BOTH):
            return
        device = ctx.analysis(DeviceCode)
        reporter = Reporter(ctx)
        bindings = ctx.model.bindings
        for node in device.all_nodes():
            if not isinstance(node, (ast.For, ast.comprehension)) or not isinstance(node.iter, ast.Call):
                continue
            qual = bindings.resolve(node.iter.func)
            if qual is None or qual.name != "nki.language.arange" or qual.gen is not Gen.LEGACY:
                continue
            args = ", ".join(short_text(a) for a in node.iter.args) or "n"
            fn = device.owner(node)
            reporter.at(
                node.iter,
                f"`for ... in {short_text(node.iter)}`: nl.arange builds an index expression for tile indexing, "
                "not a sequence of numbers, and cannot be iterated",
                hint=f"loop with nl.affine_range({args}) (or nl.sequential_range / range), and keep nl.arange "
                     "for index expressions",
                kernel=fn.name if fn is not None else None,
            )
