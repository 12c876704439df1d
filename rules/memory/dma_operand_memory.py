"""NKI211 dma-operand-memory: a DMA's source or destination is in the wrong memory."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.graph import HBM
from nkilint.model.views import Operand, kernel_role, ops_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._text import assumed_text, legacy_or_before


class DmaOperandMemory(Rule):
    id = "NKI211"
    name = "dma-operand-memory"
    family = "memory"
    level = Level.ERROR
    summary = "A load, store or DMA copy has an endpoint in a memory it cannot use"
    explanation = """
Finds DMAs whose source or destination is in a memory the API does not
accept:

* `nl.load(src)` loads **from HBM**: an SBUF or PSUM source is rejected
  (legacy `err_unsupported_memory`: "Expected operand 'src' of 'load' to be
  in address space 'hbm'"); `nl.store(dst, value)` stores **into HBM** from
  an on-chip tile.
* `nl.store` of a PSUM tile: legacy NKI inserted a copy to SBUF; from NKI
  0.3 it is not supported ("Storing a tile that resides in PSUM requires
  manually copying it to SBUF first").
* `nisa.dma_copy` moves data between HBM and SBUF; from NKI 0.3 it "no
  longer supports reading directly from PSUM" (migration guide 0.2 -> 0.3),
  and DMA engines do not write PSUM either.
* `nisa.dma_transpose` writes to SBUF.

The PSUM cases depend on the NKI version (`--nki-version`); the others hold
for every version.

**Why on Trainium:** data moves between HBM and on-chip memory with DMAs,
and each DMA API accepts only some memories at each end.

**Fix:** evict PSUM results to SBUF with `nisa.tensor_copy` (legacy
`nl.copy`) before a DMA; load from and store to HBM tensors (kernel inputs,
`nl.shared_hbm` outputs); copy between on-chip tiles with
`nisa.tensor_copy`.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (dma_copy — reading from PSUM, NKI 0.3)",
        "aws-neuron-sdk release-notes/components/nki.rst (NKI 0.3 known issue: nl.store of PSUM tiles)",
        "aws-neuron-sdk nki/api/nki.errors.rst at 1db4d74e (err_unsupported_memory)",
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (dma_copy: HBM or SBUF)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                nisa.dma_copy(dst=out, src=ps)
                return out
            """,
            lines=[14],
            title="current API: a DMA reading PSUM (NKI 0.3+)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                nisa.dma_copy(dst=out, src=ps)
                return out
            """,
            title="the same kernel for NKI 0.2, where dma_copy could still read PSUM",
            nki_version="0.2",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                u = nl.load(t)
                nl.store(out, value=u)
                return out
            """,
            lines=[8],
            title="legacy API: nl.load from an SBUF tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                u = nl.copy(t)
                nl.store(out, value=u)
                return out
            """,
            title="legacy API: on-chip copies use nl.copy",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        psum_rules = not legacy_or_before(ctx)
        for kernel in ctx.model.kernels:
            role = kernel_role(ctx.model, kernel)
            for op in ops_of(kernel):
                if op.assignment or op.augmented:
                    continue
                problem = self._problem(op.api, op.operands(role), psum_rules, ctx)
                if problem is None:
                    continue
                message, hint, operand = problem
                reporter.at_site(op.site, message + assumed_text(kernel, [operand] if operand.assumed else []),
                                 level=Level.WARNING if operand.assumed else Level.ERROR, hint=hint, kernel=kernel.name)

    @staticmethod
    def _problem(api: str, ops: list[Operand], psum_rules: bool, ctx: RuleContext) -> tuple[str, str, Operand] | None:
        def first(params: tuple[str, ...], buffers: tuple[str, ...], written: bool | None = None) -> Operand | None:
            for o in ops:
                if o.param in params and o.buffer in buffers and (written is None or o.written == written):
                    return o
            return None

        version = f"NKI {ctx.nki_version}"
        if api in ("nki.language.load", "nki.language.load_transpose2d"):
            o = first(("src", "arg0"), ("sbuf", "psum"), written=False)
            if o is not None:
                return (f"nl.{api.rsplit('.', 1)[-1]} loads from HBM but its source {o.name} is in {o.buffer.upper()}",
                        "copy between on-chip tiles with nl.copy / nisa.tensor_copy", o)
        if api == "nki.language.store":
            o = first(("dst", "arg0"), ("sbuf", "psum"), written=True)
            if o is not None:
                return (f"nl.store stores into HBM but its destination {o.name} is in {o.buffer.upper()}",
                        "store into an HBM tensor (a kernel output allocated with buffer=nl.shared_hbm)", o)
            o = first(("value", "arg1"), HBM, written=False)
            if o is not None:
                return (f"nl.store stores an on-chip tile but its value {o.name} is in HBM",
                        "load it into SBUF first, or copy HBM to HBM with nisa.dma_copy", o)
            o = first(("value", "arg1"), ("psum",), written=False)
            if o is not None and psum_rules:
                return (f"nl.store of PSUM tile {o.name} is not supported in {version} (the value must be in SBUF)",
                        "copy the PSUM tile to SBUF with nisa.tensor_copy first", o)
        if api == "nki.isa.dma_copy" and psum_rules:
            o = first(("src", "dst"), ("psum",))
            if o is not None:
                role = "reads" if not o.written else "writes"
                return (f"nisa.dma_copy {role} PSUM tensor {o.name}; from NKI 0.3 DMAs move data between HBM and SBUF "
                        f"only (target {version})",
                        "copy PSUM to SBUF with nisa.tensor_copy and DMA the SBUF tile", o)
        if api == "nki.isa.dma_transpose":
            o = first(("dst",), ("psum",) + HBM, written=True)
            if o is not None:
                return (f"nisa.dma_transpose writes to SBUF only, but its destination {o.name} is in {o.buffer.upper()}",
                        "transpose into an SBUF tile", o)
        return None
