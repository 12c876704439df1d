"""NKI506 activation-input-range."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from ._ranges import activation_ranges
from ._spots import ACT_DOC, NumericsRule


class ActivationInputRange(NumericsRule):
    id = "NKI506"
    name = "activation-input-range"
    family = "numerics"
    level = Level.WARNING
    summary = ("A ScalarE activation (sin, log, rsqrt, reciprocal) gets inputs outside its valid range, "
               "or a variance is inverted with no eps")
    fix_hint = "range-reduce (nl.sin) or add an eps (bias=eps) before the activation or the inversion"
    explanation = """
`nisa.activation(op=nl.sin / nl.arctan)` on data that was not range-reduced
(no modulo or pi-offset upstream); `log` of probabilities (exp, softmax or
division output) with no eps; `rsqrt` / `reciprocal` of a variance (nl.var,
bn_aggr, a mean of squares) with no eps. An eps is a positive constant or a
value passed in (`eps` parameter) added on the op (`bias=`) or by an add
between the variance or exp and the call (`nisa.tensor_scalar(op0=nl.add,
operand0=eps)`, `nl.add(x, eps)`), or a clamp (`maximum`). The log of a
softmax denominator (a sum of `exp(x - max)`, also kept as an online
running sum) is at least 1 by construction and is not reported.

The other ways of inverting a variance are reported too when nothing
between the variance and the inversion adds anything or clamps it (only
scalings, copies and a square root): `nl.reciprocal(nl.sqrt(ms))`,
`1.0 / nl.sqrt(ms)`, `nl.divide(x, nl.sqrt(ms))`, `nisa.reciprocal`,
`nisa.tensor_scalar(op1=nl.rsqrt)` or `op1=nl.power, operand1=-0.5`.
A sum of squares over the partition axis computed on TensorE (a matmul
with an all-ones or all-`1/N` operand over `x * x`, every output row
holding the column sums) counts as a variance too.
Every release and target: the input ranges are those of the activation
table, unchanged from trn1 to trn3, and a zero variance is a zero divisor
on any engine.

**Why on Trainium:** ScalarE evaluates activations with piecewise
polynomials that are valid only on limited input ranges: sin `[-pi, pi]`
(no range reduction: `sin(9.0)` returns about 27.65), arctan
`[-pi/2, pi/2]`, log `[2^-64, 2^64]`, rsqrt `[2^-87, 2^97]`, reciprocal
`+-[2^-42, 2^42]`. Outside them the result is garbage, not inf/NaN. CUDA's
libm handles the full range, so the GPU reference passes (RoPE angles of
thousands of radians, probabilities that underflow to 0, a zero variance).

**Fix:** Call `nl.sin` (which range-reduces) or reduce `x mod 2*pi` first;
add an eps (`bias=eps`, or an add before the call) for log, rsqrt and
reciprocal, and to the variance before any other inversion
(`nl.sqrt(ms + eps)`, `tensor_scalar(op1=nl.add, operand1=eps)`).
"""
    references = (ACT_DOC,)
    requires = (Scopes,)
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
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def log_softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                m = nl.max(t, axis=1)
                e = nl.exp(t - m)
                s = nl.sum(e, axis=1)
                p = nl.divide(e, s)
                nl.store(out, value=nl.log(p))
                return out
            """,
            lines=[12],
            title="legacy API: log of softmax probabilities (they underflow to 0)",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def rms_norm(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                ms = nl.mean(nl.square(t), axis=1)
                r = nl.reciprocal(nl.sqrt(ms))
                nl.store(out, value=t * r)
                return out
            """,
            lines=[9],
            title="legacy API: reciprocal of the square root of a mean of squares, no eps",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def rms_norm(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
                rms = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=rms, op=nl.sqrt, data=ss, scale=1.0 / 512)
                inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.reciprocal(dst=inv, data=rms)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[16],
            title="current API: nisa.reciprocal of sqrt(mean of squares), no eps",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def column_rms(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                ones = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=ones, value=1.0)
                sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=sq, data1=t, data2=t, op=nl.multiply)
                ss = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ss, stationary=ones, moving=sq)
                inv = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=inv, op=nl.rsqrt, data=ss, scale=1.0 / 128)
                nisa.dma_copy(dst=out, src=inv)
                return out
            """,
            lines=[17],
            title="current API: rsqrt of an all-ones matmul over x * x (a sum of squares across partitions), no eps",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def column_rms(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                mean_w = nl.full((128, 128), 1.0 / 128, dtype=nl.float32)
                ms = nl.matmul(mean_w, nl.multiply(t, t), transpose_x=True)
                nl.store(out, value=nl.multiply(t, nl.reciprocal(nl.sqrt(ms))))
                return out
            """,
            lines=[10],
            title="legacy API: a 1/N-filled matmul over x * x (mean of squares across partitions), no eps",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def column_rms(x, eps):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                ones = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=ones, value=1.0)
                sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=sq, data1=t, data2=t, op=nl.multiply)
                ss = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ss, stationary=ones, moving=sq)
                inv = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=inv, data=ss, op0=nl.multiply, operand0=1.0 / 128, op1=nl.add, operand1=eps)
                nisa.activation(dst=inv, op=nl.rsqrt, data=inv)
                nisa.dma_copy(dst=out, src=inv)
                return out
            """,
            title="current API: the all-ones matmul sum of squares gets eps before rsqrt",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def inverse_column_sum(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                ones = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=ones, value=1.0)
                ss = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ss, stationary=ones, moving=t)
                inv = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.reciprocal(dst=inv, data=ss)
                nisa.dma_copy(dst=out, src=inv)
                return out
            """,
            title="current API: an all-ones matmul over the data (a column sum, not a variance)",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def rms_norm(x, eps):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                ms = nl.mean(nl.square(t), axis=1)
                r = nl.reciprocal(nl.sqrt(ms + eps))
                nl.store(out, value=t * r)
                return out
            """,
            title="legacy API: eps added to the mean of squares before sqrt and reciprocal",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def rms_norm(x, eps):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
                inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=inv, data=ss, op0=nl.multiply, operand0=1.0 / 512, op1=nl.add, operand1=eps)
                nisa.tensor_scalar(dst=inv, data=inv, op0=nl.power, operand0=-0.5)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: mean of squares plus eps, then a power -0.5",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def log_softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                m = nl.max(t, axis=1)
                e = nl.exp(t - m)
                s = nl.sum(e, axis=1)
                nl.store(out, value=t - m - nl.log(s))
                return out
            """,
            title="legacy API: log of a softmax denominator (max subtracted: the sum is at least 1)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def attention_lse(scores, n_tiles):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                run_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                run_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=run_max, value=-30000.0)
                nisa.memset(dst=run_sum, value=0.0)
                for i in nl.sequential_range(n_tiles):
                    s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=s, src=scores[0:128, i * 512:(i + 1) * 512])
                    new_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_reduce(dst=new_max, data=s, op=nl.maximum, axis=1)
                    nisa.tensor_tensor(dst=new_max, data1=new_max, data2=run_max, op=nl.maximum)
                    neg = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_scalar(dst=neg, data=new_max, op0=nl.multiply, operand0=-1.0)
                    corr = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.activation(dst=corr, op=nl.exp, data=run_max, bias=neg)
                    p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    tile_sum = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.activation(dst=p, op=nl.exp, data=s, bias=neg, reduce_op=nl.add, reduce_res=tile_sum)
                    nisa.tensor_tensor(dst=run_sum, data1=run_sum, data2=corr, op=nl.multiply)
                    nisa.tensor_tensor(dst=run_sum, data1=run_sum, data2=tile_sum, op=nl.add)
                    nisa.tensor_copy(dst=run_max, src=new_max)
                lse = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=lse, op=nl.log, data=run_sum)
                nisa.dma_copy(dst=out, src=lse)
                return out
            """,
            title="current API: log of an online-softmax running sum (at least 1 by construction)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa


            @nki.jit
            def rms(x, eps=1e-6):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=sq, data1=t, data2=t, op=nl.multiply)
                ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=ss, data=sq, op=nl.add, axis=1)
                var = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=var, data=ss, op0=nl.multiply, operand0=1.0 / 512)
                ve = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=ve, data=var, op0=nl.add, operand0=eps)
                inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=inv, op=nl.rsqrt, data=ve)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: eps passed in as a parameter and added by a separate tensor_scalar",
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
        return activation_ranges(ctx)
