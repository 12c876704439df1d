"""NKI613 output-not-shared-hbm."""

from __future__ import annotations

from nkilint.findings import Edit, Level
from nkilint.rule import invalid, valid

from ._base import MIGRATION_GUIDE, Issues, MigrationRule, make_fix
from ._index import NameIndex
from ._kernels import KernelOutputs


class OutputNotSharedHbm(MigrationRule):
    id = "NKI613"
    name = "output-not-shared-hbm"
    family = "migration"
    level = Level.ERROR
    fixable = True
    fix_follows_target = True
    summary = "A kernel returns a tensor allocated in nl.hbm / nl.private_hbm: outputs must be nl.shared_hbm from NKI 0.3"
    explanation = """
"All kernel output (return) tensors must be allocated with
`buffer=nl.shared_hbm`. Using `nl.hbm` for output tensors will cause
compilation failures" (aws-neuron-sdk `nki/migration/index.rst`, 0.2 ->
0.3). NKI 0.2 and the legacy API accepted `nl.hbm` outputs (some tutorials
still show them).

Reported for tensors a kernel (a function decorated with `nki.jit`)
returns directly when their single allocation in the kernel passes
`buffer=nl.hbm`, `nl.private_hbm` or the string `'hbm'`. (The memory
family checks other placement rules of outputs; this rule is the version
change.)

**Fix:** allocate the output with `buffer=nl.shared_hbm`.
`nkilint check --fix` rewrites the buffer (the tensor stays in device HBM;
shared_hbm is the kind the runtime can hand back to the caller).
"""
    references = (f"{MIGRATION_GUIDE} (0.2 -> 0.3, Output tensors must use nl.shared_hbm)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[7],
            level=Level.ERROR,
            fixed="""
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="NKI 0.2 accepted hbm outputs",
            nki_version="0.2",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                scratch = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.hbm)
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=scratch, src=a)
                nisa.dma_copy(dst=out, src=scratch)
                return out
            """,
            title="internal HBM scratch tensors may stay in nl.hbm",
        ),
    )

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        nl = index.alias_of("nki.language")
        for t in index.model.analysis(KernelOutputs).items:
            fix = None
            if nl:
                fix = make_fix(f"use {nl}.shared_hbm", [Edit(index.span(t.buffer), f"{nl}.shared_hbm")], True)
            out.add(t.buffer, index.level(t.gen, t.buffer),
                    f"kernel `{t.kernel.name}` returns `{t.name}`, allocated in {t.kind}: from NKI 0.3 every returned "
                    f"tensor must be allocated with buffer=nl.shared_hbm{index.port_note(t.gen)}",
                    hint="allocate the output with buffer=nl.shared_hbm", fix=fix, gen=t.gen)
