"""Numerics family (NKI5xx): hazards that make Trainium results differ from the GPU's.

Facts: ../shared/CUDA-IDIOMS.md section 2 (NUM01-NUM18) and the
aws-neuron-sdk pages each rule cites (nc_matmul accumulation and dtype
notes in nki/api/nki/isa/__init__.py, the activation table in
nki/api/nki.api.shared.rst, the FP8 notes of the NxD quantization guide).
Findings are warnings or notes: they depend on data values, which a static
tool cannot know. The detectors are in ``_numerics_checks``.
"""

from __future__ import annotations

from typing import ClassVar

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid

from . import _numerics_checks as nc
from ._common import Reporter
from ._cuda_structure import Site
from ._device_scan import scan

CATALOGUE = "../shared/CUDA-IDIOMS.md"
MATMUL_DOC = "aws-neuron-sdk nki/api/nki/isa/__init__.py (nc_matmul: accumulation mode, data types)"
ACT_DOC = "aws-neuron-sdk nki/api/nki.api.shared.rst (activation functions and valid input ranges)"
TRN3 = "aws-neuron-sdk nki/guides/architecture/trainium3_arch.rst (BF16 matmul results in PSUM)"


class _NumericsRule(Rule):
    fix_hint: ClassVar[str] = ""

    def spots(self, ctx: RuleContext):  # pragma: no cover - interface
        raise NotImplementedError

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for spot in self.spots(ctx):
            kwargs = dict(hint=spot.hint or self.fix_hint, level=spot.level or self.level, kernel=spot.kernel)
            if isinstance(spot.where, Site):
                reporter.at_site(spot.where, spot.message, **kwargs)
            elif spot.where is not None:
                reporter.at(spot.where, spot.message, **kwargs)


class LowPrecisionPsumAccumulation(_NumericsRule):
    id = "NKI501"
    name = "low-precision-psum-accumulation"
    family = "numerics"
    level = Level.WARNING
    summary = "Matmul partial sums accumulate in a bf16/fp16/fp8 PSUM tile instead of fp32"
    fix_hint = "declare the PSUM accumulator nl.float32; cast once when evicting to SBUF"
    explanation = """
`nc_matmul` writes the same low-precision (bf16, fp16, fp8) PSUM tile
across a contraction loop (or with `accumulate=True`), or legacy code adds
`nl.matmul` results into a low-precision PSUM tile (`acc += nl.matmul(...)`
with `acc = nl.zeros(..., dtype=nl.bfloat16, buffer=nl.psum)`).

**Why on Trainium.** TensorE accumulates in fp32 internally, and the
Triton/CUDA original kept its `tl.dot` / WMMA accumulator in fp32
registers. A bf16 PSUM accumulator is rounded back to bf16 after every
accumulation on NeuronCore-v4 (trn3), so a K loop of many tiles loses
precision step by step; on NeuronCore-v2/v3 (trn1/trn2) the matmul
destination must be fp32 anyway.

**Fix.** Accumulate all K tiles in one `nl.float32` PSUM tile (first
matmul overwrites, the rest accumulate) and cast once when evicting with
`nisa.tensor_copy` to a bf16 SBUF tile.
"""
    references = (f"{CATALOGUE} NUM01", MATMUL_DOC, TRN3, "../shared/NKI-REFERENCE.md PS06, PS07")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                K, M = aT.shape
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
                for k in range(8):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb)
                res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[15],
            title="current API, trn3: bf16 PSUM accumulated over 8 K tiles",
            target="trn3",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
                for k in nl.affine_range(8):
                    ta = nl.load(aT[k * 128:(k + 1) * 128, 0:128])
                    tb = nl.load(b[k * 128:(k + 1) * 128, 0:512])
                    acc += nl.matmul(ta, tb, transpose_x=True)
                nl.store(out, value=acc)
                return out
            """,
            lines=[11],
            title="legacy API: acc += nl.matmul into a bf16 PSUM tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in range(8):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb)
                res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="fp32 PSUM, one cast at eviction",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.psum_low_precision_accumulation(ctx)


class LowPrecisionAccumulator(_NumericsRule):
    id = "NKI502"
    name = "low-precision-accumulator"
    family = "numerics"
    level = Level.WARNING
    summary = "A running sum accumulates in bf16/fp16/fp8 across loop iterations, or adds partials cast down in the loop"
    fix_hint = "accumulate in an nl.float32 tile and cast once at the end"
    explanation = """
A loop adds into the same low-precision tile every iteration:
`nisa.tensor_tensor(dst=acc, data1=acc, data2=x, op=nl.add)`, `acc[...] +=
x`, or legacy `acc = acc + x` / `acc = nl.add(acc, x)` with `acc`
allocated outside the loop in bf16, fp16 or fp8 — including PSUM results
evicted to bf16 inside the K loop and summed there. The same rule reports
an fp32 accumulator fed by matmul partials that were cast down to a
low-precision tile (`tensor_copy` from PSUM) inside the loop: split-K
partials rounded before the sum. A warning when the loop
runs at least 8 times for every value the code allows; a note when the
trip count is smaller or unknown (a handful of roundings, e.g. combining a
few expert outputs, is often an accepted trade-off).

**Why on Trainium.** VectorE/ScalarE compute in fp32 but round their output
to the destination dtype, so a bf16 running sum is rounded to 8 significant
bits after every iteration: long loops drift and small addends vanish.
The GPU original kept its accumulator in fp32 registers (`tl.sum` and
`tl.dot` accumulate in fp32), so results differ beyond bf16 tolerance.

**Fix.** Keep the running sum in an `nl.float32` tile (or in fp32 PSUM for
matmul partials) and cast once when storing.
"""
    references = (f"{CATALOGUE} NUM01, NUM03", "aws-neuron-sdk nki/api/nki.api.shared.rst (ALU ops compute in fp32)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def col_sum(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for i in range(16):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[13],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def col_sum(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                for i in nl.sequential_range(16):
                    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
                    acc = nl.add(acc, t)
                nl.store(out, value=acc)
                return out
            """,
            lines=[10],
            title="legacy API: rebinding acc = nl.add(acc, t)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def combine(expert_out, n_experts):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for e in range(n_experts):
                    t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=expert_out[e])
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[13],
            title="unknown trip count: a note",
            level=Level.NOTE,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_split_k(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for k in range(16):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=ta, moving=tb)
                    part = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=part, src=ps)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=part, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[19],
            title="split-K partials cast to bf16 inside the loop, summed in fp32",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def col_sum(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for i in range(16):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
                res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="fp32 accumulator, one cast",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.low_precision_accumulators(ctx)


class LowPrecisionReduction(_NumericsRule):
    id = "NKI503"
    name = "low-precision-reduction"
    family = "numerics"
    level = Level.WARNING
    summary = "A sum/mean reduction result is kept in bf16/fp16/fp8 and used in further arithmetic"
    fix_hint = "reduce into an nl.float32 tile (dtype=nl.float32) and cast only the final output"
    explanation = """
`nl.sum(t, axis=1, dtype=nl.bfloat16)`, `nl.mean` on a bf16 tile without
`dtype=`, `nisa.tensor_reduce(dst=bf16_tile, op=nl.add, ...)` or an
activation `reduce_res` in low precision, whose result is then used in
arithmetic (a softmax denominator, a mean or variance that normalises the
data). Reductions stored directly to the output are not reported (one
rounding at the end is expected).

**Why on Trainium.** The reduction itself runs in fp32, but its result is
rounded to the destination dtype before it is used: a bf16 denominator
carries a relative error up to 2^-8 into every normalised element.
`nl.sum/mean/var` default to the input dtype. Triton's `tl.sum` upcasts to
fp32 and the GPU original kept the statistic in fp32 registers.

**Fix.** Reduce into an `nl.float32` tile (`dtype=nl.float32`, an fp32
`dst`/`reduce_res`), compute the normalisation in fp32, cast only the
final output.
"""
    references = (f"{CATALOGUE} NUM03", "aws-neuron-sdk nki/api/nki.language.rst (nl.sum dtype)", "aws-neuron-sdk nki/api/nki/isa/__init__.py (tensor_reduce)")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def normalize(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                den = nl.sum(t, axis=1, dtype=nl.bfloat16)
                nl.store(out, value=t / den)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def normalize(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                s = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def normalize(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="fp32 statistic",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.low_precision_reductions(ctx)


class SoftmaxWithoutMax(_NumericsRule):
    id = "NKI504"
    name = "softmax-without-max-subtraction"
    family = "numerics"
    level = Level.WARNING
    summary = "exp feeds a sum and a division (a softmax) without subtracting the row maximum first"
    fix_hint = "tensor_reduce(op=nl.maximum, negate=True) then activation(op=nl.exp, bias=neg_max, reduce_op=nl.add)"
    explanation = """
An `exp` (`nl.exp`, `nisa.activation(op=nl.exp)`, `nisa.exponential`)
whose result is summed and then divides (or is multiplied by the
reciprocal of the sum), with no maximum reduction upstream of its input and
no `bias=` / `max_value=` on the exp itself.

**Why on Trainium.** `exp` overflows to inf above about 88.7 in fp32 and
bf16 (11.1 in fp16); inf / inf gives NaN. GPU references (`tl.softmax`,
`torch.softmax`, the Triton tutorial's `row - tl.max(row, axis=0)`) subtract
the row maximum; a port that dropped it matches only for small logits.

**Fix.** `nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x, axis=1,
negate=True)`, then `nisa.activation(dst=e, op=nl.exp, data=x,
bias=neg_max, reduce_op=nl.add, reduce_res=s)`, `nisa.reciprocal` and a
multiply (on trn3, `nisa.exponential(max_value=...)`). Legacy:
`nl.exp(x - nl.max(x, axis=1, keepdims=True))`.
"""
    references = (f"{CATALOGUE} NUM05", ACT_DOC, "aws-neuron-sdk nki/api/nki/isa/__init__.py (activation bias, exponential max_value)")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                e = nl.exp(t)
                s = nl.sum(e, axis=1, dtype=nl.float32)
                nl.store(out, value=e / s)
                return out
            """,
            lines=[8],
            title="legacy API",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=t, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=s)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API: fused exp+sum without bias",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                neg_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=t, axis=1, negate=True)
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=t, op=nl.exp, data=t, bias=neg_max, reduce_op=nl.add, reduce_res=s)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="max subtracted through bias=",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                m = nl.max(t, axis=1, keepdims=True)
                e = nl.exp(t - m)
                s = nl.sum(e, axis=1, dtype=nl.float32)
                nl.store(out, value=e / s)
                return out
            """,
            title="legacy API with the max subtracted",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.softmax_without_max(ctx)


class Exp2ScaleLeftover(_NumericsRule):
    id = "NKI505"
    name = "exp2-scale-leftover"
    family = "numerics"
    level = Level.WARNING
    summary = "A log2(e) factor from Triton's exp2-based softmax survives in a kernel that uses natural exp"
    fix_hint = "scale by sm_scale only (natural exp), or emulate exp2 as exp(x * ln 2) consistently"
    explanation = """
The constant log2(e) = 1.4426950... (as a literal, `LOG2E`/`RCP_LN2`
names, `math.log2(math.e)` or `1 / math.log(2)`) in a kernel that computes
natural `exp` (`nl.exp`, `activation(op=nl.exp)`) and never uses ln 2.

**Why on Trainium.** Triton flash attention computes `exp2(x * sm_scale *
log2(e))` because `exp2` is the fast GPU instruction. Trainium's ScalarE
evaluates natural `exp`; porting `exp2` to `exp` while keeping the log2(e)
factor multiplies every logit by 1.4427, silently sharpening the softmax
(and breaking the log-sum-exp bookkeeping) — the result still looks like a
softmax.

**Fix.** Use `nisa.activation(op=nl.exp, scale=sm_scale, ...)` with the
natural-log LSE, or, if the base-2 form is wanted, compute `exp(x * ln 2)`
and keep both factors together.
"""
    references = (f"{CATALOGUE} NUM06", ACT_DOC)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def attn_probs(s, sm_scale):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=s)
                qk_scale = sm_scale * 1.4426950408889634
                nisa.activation(dst=t, op=nl.exp, data=t, scale=qk_scale)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            LOG2E = 1.44269504

            @nki.jit
            def attn_probs(s):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(s[0:128, 0:512])
                nl.store(out, value=nl.exp(t * LOG2E))
                return out
            """,
            lines=[10],
            title="legacy API: a named constant",
        ),
        valid(
            """
            import math
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp2_kernel(s):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=s)
                nisa.activation(dst=t, op=nl.exp, data=t, scale=1.4426950408889634 * math.log(2))
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="the log2(e) factor paired with ln 2",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.exp2_leftovers(ctx, scan(ctx))


class ActivationInputRange(_NumericsRule):
    id = "NKI506"
    name = "activation-input-range"
    family = "numerics"
    level = Level.WARNING
    summary = "A ScalarE activation (sin, log, rsqrt, reciprocal) gets inputs outside its valid range"
    fix_hint = "range-reduce (nl.sin) or add an eps (bias=eps) before the activation"
    explanation = """
`nisa.activation(op=nl.sin / nl.arctan)` on data that was not range-reduced
(no modulo or pi-offset upstream); `log` of probabilities (exp, softmax or
division output) with no eps; `rsqrt` / `reciprocal` of a variance (nl.var,
bn_aggr, a mean of squares) with no eps.

**Why on Trainium.** ScalarE evaluates activations with piecewise
polynomials that are valid only on limited input ranges: sin `[-pi, pi]`
(no range reduction: `sin(9.0)` returns about 27.65), arctan
`[-pi/2, pi/2]`, log `[2^-64, 2^64]`, rsqrt `[2^-87, 2^97]`, reciprocal
`+-[2^-42, 2^42]`. Outside them the result is garbage, not inf/NaN. CUDA's
libm handles the full range, so the GPU reference passes (RoPE angles of
thousands of radians, probabilities that underflow to 0, a zero variance).

**Fix.** Call `nl.sin` (which range-reduces) or reduce `x mod 2*pi` first;
add an eps (`bias=eps`, or an add before the call) for log, rsqrt and
reciprocal.
"""
    references = (f"{CATALOGUE} NUM07", ACT_DOC, "../shared/NKI-REFERENCE.md API06")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def rope_sin(pos, inv_freq):
                out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ang = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
                f = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=ang, src=pos)
                nisa.dma_copy(dst=f, src=inv_freq)
                nisa.tensor_scalar(dst=ang, data=ang, op0=nl.multiply, operand0=f)
                nisa.activation(dst=ang, op=nl.sin, data=ang)
                nisa.dma_copy(dst=out, src=ang)
                return out
            """,
            lines=[13],
            title="current API: RoPE angles straight into ScalarE sin",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def rms_norm(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                sq = nl.multiply(t, t)
                ms = nl.sum(sq, axis=1, dtype=nl.float32)
                r = nl.rsqrt(ms)
                nl.store(out, value=t * r)
                return out
            """,
            lines=[10],
            title="legacy API: rsqrt of a mean of squares without eps",
        ),
        valid(
            """
            import math
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def rope_sin(pos):
                out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ang = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=ang, src=pos)
                nisa.tensor_scalar(dst=ang, data=ang, op0=nl.add, operand0=math.pi, op1=nl.mod, operand1=2 * math.pi)
                nisa.tensor_scalar(dst=ang, data=ang, op0=nl.add, operand0=-math.pi)
                nisa.activation(dst=ang, op=nl.sin, data=ang)
                nisa.dma_copy(dst=out, src=ang)
                return out
            """,
            title="angles reduced to [-pi, pi] first",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.activation_ranges(ctx)


class Fp8E4m3Range(_NumericsRule):
    id = "NKI507"
    name = "fp8-e4m3-range"
    family = "numerics"
    level = Level.WARNING
    summary = "A kernel casting to nl.float8_e4m3 scales with 448 (OCP e4m3fn max); Neuron's E4M3 tops out at 240"
    fix_hint = "scale to 240 for nl.float8_e4m3 on trn1/trn2 (448 only with nl.float8_e4m3fn on trn3)"
    explanation = """
The literal 448 (or `torch.finfo(torch.float8_e4m3fn).max`) in NKI kernel
code that casts to `nl.float8_e4m3`, on a trn1/trn2 target, in a module
that does not choose the maximum per generation (no 240 and no
`get_nc_version` check).

**Why on Trainium.** GPU FP8 recipes use OCP E4M3 (`e4m3fn`, max 448, no
inf). Trainium1/2's native `float8_e4m3` keeps inf/NaN and its largest
finite value is 240, so values scaled into (240, 448] overflow; the NxD
quantization guide rescales checkpoints "from -/+448 to -/+240". OCP
`float8_e4m3fn` is native only from trn3.

**Fix.** Scale to 240 on trn1/trn2 (`amax / 240`), or choose the maximum
per generation (`448.0 if nisa.get_nc_version() == nisa.nc_version.gen4
else 240.0`); saturate explicitly before the cast.
"""
    references = (
        f"{CATALOGUE} NUM10",
        "aws-neuron-sdk libraries/nxd-inference/developer_guides/custom-quantization.rst (-/+240 on Neuron)",
        "aws-neuron-sdk vllm-neuron/docs/design/vllm/kv-cache-quantization.md (TRN2 E4M3 max 240, TRN3 E4M3FN 448)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def quantize(x, amax):
                out = nl.ndarray((128, 512), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                q = nl.ndarray((128, 512), dtype=nl.float8_e4m3, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=q, data=t, op0=nl.multiply, operand0=448.0 / amax)
                nisa.dma_copy(dst=out, src=q)
                return out
            """,
            lines=[11],
            title="current API on trn2",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            FP8_MAX = 448.0

            @nki.jit
            def quantize(x, scale):
                out = nl.ndarray((128, 512), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                q = nl.minimum(t * scale, 448.0, dtype=nl.float8_e4m3)
                nl.store(out, value=q)
                return out
            """,
            lines=[10],
            title="legacy API on trn1",
            target="trn1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def quantize(x, amax):
                out = nl.ndarray((128, 512), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                q = nl.ndarray((128, 512), dtype=nl.float8_e4m3, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=q, data=t, op0=nl.multiply, operand0=240.0 / amax)
                nisa.dma_copy(dst=out, src=q)
                return out
            """,
            title="scaled to Neuron's 240",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.fp8_e4m3_range(ctx, scan(ctx))


class PsumAccumulateInit(_NumericsRule):
    id = "NKI508"
    name = "psum-accumulate-init"
    family = "numerics"
    level = Level.WARNING
    summary = "nc_matmul(accumulate=True) onto a value-initialised (zeros/memset) or uninitialised PSUM tile"
    fix_hint = "allocate PSUM with nl.ndarray and pass accumulate=(k > 0), or omit accumulate"
    explanation = """
The Triton/CUDA `acc = zeros(); for k: acc += dot(a, b)` idiom ported
literally to current NKI: a PSUM tile initialised by `nl.zeros` /
`nisa.memset` / `tensor_copy` and then the `dst` of
`nisa.nc_matmul(..., accumulate=True)` (on trn1/trn2), or
`accumulate=True` on the first matmul that writes a PSUM tile (all
targets). Legacy code (`psum += nl.matmul(...)` into `nl.zeros(psum)`) is
the documented legacy idiom and is not reported.

**Why on Trainium.** The `nc_matmul` documentation: "Using
`accumulate=True` on an uninitialized PSUM location is undefined behavior
on all targets", and "On NeuronCore-v2 and NeuronCore-v3, matmul
accumulating into a PSUM location that was value-initialized by a
non-matmul instruction (e.g., memset, tensor_copy) is not supported and is
undefined behavior on hardware." The simulator may still pass.

**Fix.** `acc = nl.ndarray(..., buffer=nl.psum)` (no initialisation) and
`nisa.nc_matmul(dst=acc, ..., accumulate=(k > 0))`, or omit `accumulate`
and let the compiler make the first write overwrite.
"""
    references = (f"{CATALOGUE} NUM02", MATMUL_DOC, "../shared/NKI-REFERENCE.md PS08")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.memset(dst=acc, value=0.0)
                for k in range(4):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb, accumulate=True)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[15],
            title="current API on trn2: memset then accumulate=True",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=aT[0:128, 0:128])
                nisa.dma_copy(dst=tb, src=b[0:128, 0:512])
                nisa.nc_matmul(dst=acc, stationary=ta, moving=tb, accumulate=True)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[13],
            title="current API: accumulate=True on the first write (trn3 too)",
            target="trn3",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in range(4):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb, accumulate=(k > 0))
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="uninitialised PSUM, first matmul overwrites",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.psum_accumulate_init(ctx)


class ShapeDependentReductionTile(_NumericsRule):
    id = "NKI509"
    name = "shape-dependent-reduction-tile"
    family = "numerics"
    level = Level.NOTE
    summary = "A reduction/contraction tile size is chosen from the input shape (batch-invariance note)"
    fix_hint = "fix the reduction tile size (e.g. 128) independently of the batch size"
    explanation = """
A tile size assigned different constants depending on a condition
(`K_TILE = 64 if K <= 512 else 512`, or an `if/else` choosing 128 or 512),
then used to tile a loop that accumulates (matmul, reduction, `+=`): the
shape of a ported Triton autotune choice.

**Why on Trainium.** Floating-point addition is not associative: when the
reduction tile changes with the input shape, the summation order changes,
so the same row gives slightly different results in a different batch. The
nki-samples batch-invariance study measured, for K_TILE 128 vs 64, matmul
differences of 0.0 in bf16 but 6.1e-5 in fp32. Tiling parallel axes (M, N)
by shape is harmless; a note, because the rule cannot always tell which
axis the tile splits.

**Fix.** If batch-invariant (deterministic across shapes) results are
required, fix the reduction tile size (128 partitions) and keep the
reduction order static.
"""
    references = (f"{CATALOGUE} NUM12", "nki-samples contributed/batch_invariance/README.md (PR merge 2f83fa5)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                n, d = x.shape
                D_TILE = 128 if d <= 1024 else 512
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for j in range(d // D_TILE):
                    t = nl.ndarray((128, D_TILE), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, j * D_TILE:(j + 1) * D_TILE])
                    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=s, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[8],
            title="current API",
            level=Level.NOTE,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(aT, b):
                K, M = aT.shape
                if K > 4096:
                    KT = 128
                else:
                    KT = 64
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(K // KT):
                    ta = nl.load(aT[k * KT:(k + 1) * KT, 0:128])
                    tb = nl.load(b[k * KT:(k + 1) * KT, 0:512])
                    acc += nl.matmul(ta, tb, transpose_x=True)
                nl.store(out, value=acc)
                return out
            """,
            lines=[7],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                n, d = x.shape
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for j in range(d // 512):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, j * 512:(j + 1) * 512])
                    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=s, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            title="a fixed reduction tile",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.shape_dependent_reduction_tiles(ctx, scan(ctx))


class IntegerThroughFp32(_NumericsRule):
    id = "NKI510"
    name = "integer-through-fp32"
    family = "numerics"
    level = Level.WARNING
    summary = "int32 arithmetic on Vector/Scalar engines (through fp32) can exceed 2^24; 64-bit integer tiles"
    fix_hint = "keep index math at compile time (Python ints) or in access patterns; stay below 2^24 on device"
    explanation = """
Arithmetic (`add`, `subtract`, `multiply`, ...) on int32/uint32 tiles with a
constant large enough to push values past 2^24 (an add of at least 2^24, a
multiply by at least 2^12 — a stride), int32 mixed with uint32 in legacy
`nl.*` arithmetic, and on-chip int64/uint64 tiles.

**Why on Trainium.** CUDA/Triton int32 arithmetic is exact. Vector and
Scalar engine ALU operations convert operands to fp32, so integers above
2^24 = 16,777,216 lose exactness (hashes, RNG counters, flattened indices,
token id times stride); dtype-changing copies and DMA casts go through fp32
too. Trainium has no native int64 (trn1 downcasts to int32; trn2 only with
`--native-int64`), and legacy NKI promotes (int32, uint32) to fp32.

**Fix.** Compute offsets at compile time (Python ints are unbounded) or in
DMA access patterns (`.ap()`); use bit operations for hashing; keep device
integers below 2^24 or split them.
"""
    references = (f"{CATALOGUE} NUM13", "../shared/NKI-REFERENCE.md DT06", "aws-neuron-sdk nki/api/nki.api.shared.rst (ALU operations)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def offsets(ids):
                out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=ids)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=8192)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: token id times a row stride",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def counters(x):
                out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
                c = nl.zeros((128, 1), dtype=nl.int64, buffer=nl.sbuf)
                nl.store(out, value=c)
                return out
            """,
            lines=[7],
            title="legacy API: an int64 tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def offsets(ids):
                out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=ids)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="small-range integer arithmetic",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.integers_through_fp32(ctx)


class EnginePrecisionChoice(_NumericsRule):
    id = "NKI511"
    name = "engine-precision-choice"
    family = "numerics"
    level = Level.NOTE
    summary = "reciprocal/rsqrt on ScalarE (activation) is less precise than the VectorE/GpSimd versions"
    fix_hint = "use nisa.reciprocal (VectorE) or nl.rsqrt (GpSimd) where precision matters"
    explanation = """
`nisa.activation(op=nl.reciprocal)` or `nisa.activation(op=nl.rsqrt)`:
ScalarE's polynomial approximation, typically in a LayerNorm/RMSNorm or
softmax port where the GPU used `1.0f / x` or `rsqrtf` in fp32. A note.

**Why on Trainium.** The NKI docs: "Vector Engine performs reciprocal at a
higher precision compared to Scalar Engine", about 8x slower for large
tiles but comparable below 64 elements per partition; NKI 0.5 moved
`nl.rsqrt` to GpSimd for precision. Normalisations computed on ScalarE can
drift from the GPU reference beyond tight tolerances.

**Fix.** `nisa.reciprocal` (VectorE) for per-row statistics (usually `[128,
1]` tiles, where it costs nothing extra); `nl.rsqrt` for rsqrt.
"""
    references = (f"{CATALOGUE} NUM08", "aws-neuron-sdk nki/api/nki.api.shared.rst (NKI engine selection)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def inv(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.reciprocal, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
            level=Level.NOTE,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def inv(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.reciprocal(dst=t, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="VectorE reciprocal",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.engine_precision(ctx)


class FillValueOverflow(_NumericsRule):
    id = "NKI512"
    name = "fill-value-overflow"
    family = "numerics"
    level = Level.WARNING
    summary = "A mask fill value does not fit the tile dtype (becomes inf), or -inf meets a TensorE transpose on trn1"
    fix_hint = "fill with a finite sentinel within the tile dtype's range"
    explanation = """
`nl.full(..., -1e30, dtype=nl.float16)`, `nisa.memset(dst=fp8_tile,
value=-3.4e38)`, `affine_select(on_false_value=...)` with a magnitude
beyond the destination dtype's largest finite value (fp16 65504; fp8 E4M3
240 on trn1/trn2, e4m3fn 448; e5m2 57344), and on trn1, `-inf` fills of a
tile that is transposed on TensorE.

**Why on Trainium.** The fill becomes +-inf in the narrow dtype; a later
max subtraction turns fully masked rows into NaN (`-inf - (-inf)`). GPU
kernels written for fp32 masks used `-1e30` or `FLOAT32_MIN` safely. On
NeuronCore-v2 (trn1) the TensorE transpose is a matmul with an identity,
which is not bit-exact for inf/NaN (`inf x 0` pollutes the row); trn2+ has
an exact transpose mode.

**Fix.** Use a finite sentinel valid in the tile dtype (e.g. -65504 for
fp16, -240 for Neuron E4M3), and guard fully masked rows.
"""
    references = (f"{CATALOGUE} NUM17", MATMUL_DOC)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def masked(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                nisa.memset(dst=t, value=-1e30)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: -1e30 in fp16",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def masked(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                m = nl.full((128, 512), -3.4e38, dtype=nl.float16, buffer=nl.sbuf)
                nl.store(out, value=m)
                return out
            """,
            lines=[7],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def masked(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                nisa.memset(dst=t, value=-60000.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a finite fp16 sentinel",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.fill_overflow(ctx)


class MixedDtypePromotion(_NumericsRule):
    id = "NKI513"
    name = "mixed-dtype-promotion"
    family = "numerics"
    level = Level.WARNING
    summary = "Legacy nl.* arithmetic mixes fp16 with bf16 (or int32 with uint32): NKI promotes to fp32"
    fix_hint = "pass dtype= explicitly or cast one operand first"
    explanation = """
A legacy `nki.language` arithmetic call or operator without `dtype=` whose
tensor operands are float16 and bfloat16, or int32 and uint32.

**Why on Trainium.** Legacy NKI's promotion table widens (float16,
bfloat16) to float32 and (int32, uint32) to float32 ("new widened type is
float32, since int64 isn't supported on the hardware"), where Triton gives
float16 and uint32. The port's intermediate is then fp32: twice the SBUF
bytes, different rounding and DMA sizes, and for the integer case a loss
of exactness above 2^24.

**Fix.** Give `dtype=` explicitly on the call, or cast one operand to the
other's dtype first.
"""
    references = (f"{CATALOGUE} NUM15", "aws-neuron-sdk general/nki/api/nki.api.shared.rst at 0521004c (NKI Type Promotion)")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mix(a, b):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                ta = nl.zeros((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                tb = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nl.store(out, value=nl.add(ta, tb))
                return out
            """,
            lines=[9],
            title="legacy API",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mix(a, b):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                ta = nl.zeros((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                tb = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nl.store(out, value=nl.add(ta, tb, dtype=nl.float16))
                return out
            """,
            title="explicit dtype",
        ),
    )

    def spots(self, ctx: RuleContext):
        return nc.legacy_promotion(ctx)
