"""NKI731 device-scalar-misuse: an NkiScalar used where NKI 0.7+ rejects it (a Python condition, a 64-bit
comparison, division or loop bound)."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.model.graph import ScalarMisuse
from nkilint.rule import Rule, invalid, valid
from nkilint.findings import Level

from .._common import Reporter, error_or_warning

_DOCS = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/"


def _message(m: ScalarMisuse) -> tuple[str, str]:
    """(message, hint) for one misuse."""
    if m.kind == "condition":
        return ("the result of a device-scalar comparison decides a Python branch here: it is computed on the "
                "device when the kernel runs, so it cannot be a Python `if`/`while`/`and`/`or`/`not` condition "
                "(the tracer has no value to branch on)",
                "branch on the device with nl.if_else(cond, then_fn, else_fn), or loop with nl.while_loop; "
                "keep Python conditions for values known when the kernel is traced")
    if m.kind == "int64-compare":
        return (f"`{m.detail}` on an nl.int64 device scalar: 64-bit scalars support only +, - and *; a comparison "
                "is rejected at compile time",
                "load the value from an nl.int32 tile when it fits in 32 bits, or compare on an int32 copy")
    if m.kind == "int64-op":
        return (f"`{m.detail}` on an nl.int64 device scalar: 64-bit scalars support only +, - and * "
                "(nisa.scalar_alu lists divide, fmod, maximum and minimum for 32-bit scalars only)",
                "do the division or remainder on an nl.int32 scalar, or restructure with +, - and *")
    return ("an nl.int64 device scalar bounds this nl.fori_loop: a bound must be 32-bit (the loop compiles to a "
            "compare-and-branch with no 64-bit form)",
            "load the trip count from an nl.int32 tile; a 64-bit value can still be computed inside the body and "
            "used as an offset there")


class DeviceScalarMisuse(Rule):
    id = "NKI731"
    name = "device-scalar-misuse"
    family = "semantics"
    level = Level.ERROR
    summary = "A device scalar (NkiScalar) is used where NKI rejects it: a Python condition, or a 64-bit comparison, division or loop bound"
    explanation = f"""
Since NKI 0.7 (Neuron SDK 2.33) a kernel can read an integer computed on
the device into an `nki.isa.NkiScalar` (`nisa.scalar_load`) and do
arithmetic on it. That arithmetic is *traced*, not evaluated: `i * 4 + 1`
records instructions and yields a new scalar whose value exists only when
the kernel runs. This rule reports the uses the docs say are rejected:

* **a comparison's result as a Python condition** — `if i > 3:`,
  `while n != 0:`, `a and b`, `not c`, `bool(c)`, a ternary. The result is
  an int32 scalar holding 1 or 0 on the device; the `nisa.scalar_alu` page
  says it "cannot be used as a Python if or while condition";
* **a comparison on an `nl.int64` scalar** — rejected at compile time
  (`NkiScalar` page);
* **`/`, `//`, `%` (and other operations than `+`, `-`, `*`) on an
  `nl.int64` scalar** — `nl.int64` "supports only add, subtract and
  multiply" (`nisa.scalar_alu`);
* **an `nl.int64` scalar as an `nl.fori_loop` bound** — "A bound must be
  32-bit" (`nl.fori_loop`).

**Why on Trainium:** a scalar lives in a register of the engine that runs
the kernel; the compiler turns its arithmetic into scalar ALU
instructions, which have no 64-bit compare, divide or loop-branch form,
and Python control flow runs earlier, while the kernel is traced on the
host, when no device value exists yet.

**Fix:** branch on the device with `nl.if_else` and loop with
`nl.while_loop` / `nl.fori_loop`; load values that fit in 32 bits from
an `nl.int32` tile. A use inside a branch the analysis could not decide is
reported as a warning.

**Releases:** scalars exist from NKI 0.7 (SDK 2.33); the rule has nothing
to report on older code.

Sources: {_DOCS}nki.isa.scalar_alu.html, {_DOCS}nki.isa.NkiScalar.html,
{_DOCS}nki.language.fori_loop.html and the "NKI Scalar Values" deep dive
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/deep-dives/nki-scalar.html).
"""
    references = (
        f"{_DOCS}nki.isa.scalar_alu.html",
        f"{_DOCS}nki.isa.NkiScalar.html",
        f"{_DOCS}nki.language.fori_loop.html",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def pick(data, index):
                out = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                idx = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=idx, src=index)
                i = nisa.scalar_load(idx)
                row = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.sbuf)
                if i > 3:
                    nisa.dma_copy(dst=row, src=data.ap([[512, 1], [1, 512]], scalar_offset=i, indirect_dim=0))
                nisa.dma_copy(dst=out, src=row)
                return out
            """,
            lines=[12],
            title="a device comparison as a Python if",
        ),
        invalid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def rows(data, count):
                out = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                n_sb = nl.ndarray((1, 1), dtype=nl.int64, buffer=nl.sbuf)
                nisa.dma_copy(dst=n_sb, src=count)
                n = nisa.scalar_load(n_sb)
                half = n // 2
                row = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.sbuf)

                def body(r):
                    nisa.dma_copy(dst=row, src=data.ap([[512, 1], [1, 512]], scalar_offset=r, indirect_dim=0))

                nl.fori_loop(0, n, body)
                nisa.dma_copy(dst=out, src=row)
                return out
            """,
            lines=[11, 17],
            title="integer division on a 64-bit scalar; a 64-bit fori_loop bound",
        ),
        valid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def rows(data, count):
                out = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                n_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=n_sb, src=count)
                n = nisa.scalar_load(n_sb)
                last = n - 1
                row = nl.ndarray((1, 512), dtype=data.dtype, buffer=nl.sbuf)

                def body(r):
                    nisa.dma_copy(dst=row, src=data.ap([[512, 1], [1, 512]], scalar_offset=r, indirect_dim=0))

                nl.fori_loop(0, n, body)

                def copy_last():
                    nisa.dma_copy(dst=row, src=data.ap([[512, 1], [1, 512]], scalar_offset=last, indirect_dim=0))

                def nothing():
                    pass

                nl.if_else(n > 1, copy_last, nothing)
                if data.shape[0] > 1:
                    nisa.dma_copy(dst=out, src=row)
                return out
            """,
            title="32-bit scalars, a device branch through nl.if_else, a Python if on a traced shape",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel, graph in ctx.model.graphs():
            for misuse in graph.scalar_misuses:
                message, hint = _message(misuse)
                if misuse.conditional:
                    message += " (on the paths that reach this branch)"
                reporter.at_site(misuse.site, message, hint=hint, level=error_or_warning(not misuse.conditional),
                                 kernel=kernel.base_name)
