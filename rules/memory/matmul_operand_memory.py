"""NKI212 matmul-operand-memory: a matmul or transpose reads or writes the wrong memory."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.api_semantics import MATMUL_APIS, TRANSPOSE_APIS
from nkilint.model.graph import HBM
from nkilint.model.views import Op, Operand, kernel_role, ops_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._ops import engine_arg
from ._text import assumed_text


class MatmulOperandMemory(Rule):
    id = "NKI212"
    name = "matmul-operand-memory"
    family = "memory"
    level = Level.ERROR
    summary = "A TensorE matmul or transpose reads inputs outside SBUF or writes its result outside PSUM"
    explanation = """
Finds matmuls and TensorE transposes with an input outside SBUF or a result
outside PSUM, legacy code that accumulates a matmul into an SBUF tile
(`sb[...] += nl.matmul(...)`), and HBM operands of `nl.matmul` /
`nl.transpose`.

**Why on Trainium:** the Tensor Engine reads its inputs from SBUF and writes
its results to PSUM, with no exceptions: `nisa.nc_matmul` (and
`nc_matmul_mx`) "must read inputs from SBUF and write outputs to PSUM", and
a TensorE `nc_transpose` "must read the input tile from SBUF and write the
transposed result to PSUM". A matmul whose destination is an SBUF tensor
fails with "Matmult dst tensor is not psum".

**Fix:** copy inputs into SBUF tiles first (a PSUM result used as the next
matmul's input must be copied to SBUF with `nisa.tensor_copy`), and give
the matmul a PSUM destination; evict it to SBUF afterwards.
"""
    references = (
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (nc_matmul memory types; nc_transpose)",
        "https://github.com/aws-neuron/aws-neuron-sdk/issues/1054 (Matmult dst tensor is not psum)",
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
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.nc_matmul(dst=res, stationary=a, moving=b)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[13],
            title="current API: the matmul result in SBUF",
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
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="PSUM destination, evicted to SBUF",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for k in nl.affine_range(4):
                    a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
                    b = nl.load(rhs[k * 128:(k + 1) * 128, :])
                    acc[...] += nisa.nc_matmul(a, b)
                nl.store(out, value=acc)
                return out
            """,
            lines=[12],
            title="legacy API: accumulating matmuls into an SBUF tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(4):
                    a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
                    b = nl.load(rhs[k * 128:(k + 1) * 128, :])
                    acc[...] += nisa.nc_matmul(a, b)
                nl.store(out, value=nl.copy(acc))
                return out
            """,
            title="legacy API: accumulating in PSUM",
        ),
    )

    _INPUTS = {
        "nki.isa.nc_matmul": ("stationary", "moving"),
        "nki.isa.nc_matmul_mx": ("stationary", "moving", "stationary_scale", "moving_scale"),
    }

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel in ctx.model.kernels:
            role = kernel_role(ctx.model, kernel)
            for op in ops_of(kernel):
                api = op.api
                if op.augmented:
                    self._augmented(reporter, op, kernel, role)
                    continue
                if api not in MATMUL_APIS + TRANSPOSE_APIS:
                    continue
                problems = []
                culprits: list[Operand] = []
                tensor_engine = api in self._INPUTS or (api == "nki.isa.nc_transpose" and engine_arg(op) == "tensor")
                for o in op.operands(role):
                    if o.buffer == "unknown" or o.param == "result":
                        continue
                    before = len(problems)
                    if o.written:
                        if tensor_engine and o.buffer != "psum":
                            problems.append(f"its result {o.name} is in {o.buffer.upper()} (TensorE writes only PSUM)")
                        elif o.buffer in HBM:
                            problems.append(f"its result {o.name} is in HBM")
                    elif o.buffer in HBM:
                        problems.append(f"{o.param} {o.name} is in HBM")
                    elif tensor_engine and o.buffer == "psum" and (api != "nki.isa.nc_transpose" or o.param == "data"):
                        problems.append(f"{o.param} {o.name} is in PSUM (TensorE reads only SBUF)")
                    if len(problems) > before:
                        culprits.append(o)
                if problems:
                    assumed = all(o.assumed for o in culprits)
                    reporter.at_site(
                        op.site, f"{op.label}: " + "; ".join(problems)
                        + assumed_text(kernel, culprits if assumed else []),
                        level=Level.WARNING if assumed else Level.ERROR,
                        hint="matmul inputs must be SBUF tiles (copy PSUM or HBM data into SBUF first) and the "
                        "result a PSUM tile",
                        kernel=kernel.name,
                    )

    def _augmented(self, reporter, op: Op, kernel, role: str) -> None:
        """Legacy ``t[...] += nl.matmul(...)``: accumulation happens in PSUM only."""
        value = next((o for o in op.operands(role) if o.param == "value" and not o.written), None)
        dst = next((o for o in op.operands(role) if o.written), None)
        if value is None or dst is None or dst.buffer != "sbuf":
            return
        g = op.graph
        producers = [Op(g, w) for w in g.ops_writing(value.base_id)]
        if not any(p.api in ("nki.isa.nc_matmul", "nki.language.matmul") for p in producers):
            return
        reporter.at_site(
            op.site,
            f"a matmul result is accumulated into {dst.name}, which is in SBUF; TensorE accumulates only in PSUM",
            hint=f"allocate {dst.name} with buffer=nl.psum and copy it to SBUF after the loop",
            kernel=kernel.name,
        )
