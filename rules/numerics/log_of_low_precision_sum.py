"""NKI514 log-of-low-precision-sum: the log of ``c + x`` where the sum was rounded to bf16/fp16 first."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.graph import KernelGraph
from nkilint.model.values import TensorV
from nkilint.rule import invalid, valid

from ._spots import ACT_DOC, NumericsRule, Spot, activation_func, tile_name

# Significant bits (the implicit one included), and below what x (times c) c + x rounds to c.
_BITS = {"bfloat16": (8, "2^-8"), "float16": (11, "2^-11")}


class LogOfLowPrecisionSum(NumericsRule):
    id = "NKI514"
    name = "log-of-low-precision-sum"
    family = "numerics"
    level = Level.WARNING
    summary = "The log of a sum with a constant (log(1 + x), softplus) whose sum is rounded to bf16/fp16 first"
    fix_hint = "compute the sum in fp32 (dtype=nl.float32) or fuse the add into the log (nisa.activation bias)"
    explanation = """
An elementwise add of a constant of at least 0.5 (`1 + x`, softplus's
`1 + exp(x)`) written to a bfloat16 or float16 tile that a log then reads
(`nl.log`, `nisa.activation(op=nl.log)`). Sum reductions kept in low
precision are NKI503's, running sums across a loop NKI502's; an add fused
into the log (`bias=1.0` on the activation) is computed in fp32 and is
not reported. It applies to every release and target: the rounding of an
engine's output to the destination dtype is the hardware's.

**Why on Trainium:** VectorE and ScalarE compute in fp32 but round the
result to the destination dtype, so the sum `1 + x` is stored with 8
significant bits (bf16) or 11 (fp16): every `x` below 2^-8 (bf16) or
2^-11 (fp16) vanishes, and the log returns exactly 0 where the GPU
reference (`torch.log1p`, `F.softplus`, computed in fp32 registers)
returns about `x`; larger `x` keep only a few bits. A softplus of inputs
below about -5.5 becomes 0.

**Fix:** Fuse the add into the log instruction
(`nisa.activation(op=nl.log, data=x, bias=1.0)`, whose affine stage runs
in fp32), or write the sum to an `nl.float32` tile (`dtype=nl.float32`).
"""
    references = ("aws-neuron-sdk nki/api/nki/isa/__init__.py (activation: the Scalar Engine computes data * scale + "
                  "bias and the function in float32)", ACT_DOC)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softplus(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                e = nl.exp(t)
                s = nl.add(e, 1.0, dtype=nl.bfloat16)
                nl.store(out, value=nl.log(s))
                return out
            """,
            lines=[9],
            title="legacy API: softplus with the 1 + exp(x) rounded to bf16",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def log1p(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                s = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=s, data=t, op0=nl.add, operand0=1.0)
                nisa.activation(dst=t, op=nl.log, data=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API: 1 + x written to a bf16 tile, then the log",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def log1p(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.log, data=t, bias=1.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: the add fused into the log instruction (fp32 inside)",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softplus(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                e = nl.exp(t, dtype=nl.float32)
                s = nl.add(e, 1.0, dtype=nl.float32)
                nl.store(out, value=nl.log(s))
                return out
            """,
            title="legacy API: the sum kept in fp32",
        ),
    )

    def spots(self, ctx: RuleContext):
        return low_precision_log_sums(ctx)


def _is_log(data: dict) -> bool:
    if activation_func(data) == "log":
        return True
    return df.short(data.get("api")) == "log" and (data.get("api") or "").startswith("nki.language.")


def _constant_addend(graph: KernelGraph, op: str) -> float | None:
    """The constant (at least 0.5) an elementwise add adds: ``nl.add(x, 1.0)``,
    ``1 + x``, ``tensor_scalar(op0=nl.add, operand0=1.0)``, an identity
    activation with ``bias=1.0``. Sum reductions are not elementwise adds."""
    data = graph.attrs(op)
    if df.is_sum_reduction(data):
        return None
    s = df.short(data.get("api"))
    if s == "exponential" or (s in ("activation", "activation_reduce") and
                              df.func_params(data).get("op") not in ("copy", "identity")):
        return None  # exp(x + b) is not a sum
    for value in df.added_scalars(graph, op):
        number = df.const_number(value)
        if number is not None and number >= 0.5:
            return number
    return None


def _running_sum(graph: KernelGraph, add: str, dst: str) -> bool:
    """The add reads the tile it writes, across a loop: a running sum, NKI502's finding."""
    target = df.base(graph, dst)
    reads_itself = any(df.base(graph, n) == target for _, n in df.reads(graph, add))
    return reads_itself and df.accumulation_loop(graph, add, dst, dst) is not None


def low_precision_log_sums(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if not _is_log(data):
                continue
            srcs = [n for p, n in df.reads(graph, op) if p in ("data", "x")]
            if len(srcs) != 1 or isinstance(df.param(data, "bias"), TensorV):
                continue
            dtype = df.dtype_of(graph, srcs[0])
            writers = df.writers(graph, srcs[0])
            if dtype not in _BITS or len(writers) != 1:
                continue
            add = writers[0]
            constant = _constant_addend(graph, add)
            dsts = [n for p, n in df.writes(graph, add) if p in ("dst", "result")]
            if constant is None or not dsts or _running_sum(graph, add, dsts[0]):
                continue
            bits, smallest = _BITS[dtype]
            below = smallest if constant == 1 else f"{constant:g} x {smallest}"
            name = tile_name(graph, dsts[0])
            label = f" ({name})" if name != "the tile" else ""
            yield Spot(graph.attrs(add).get("site"), (
                f"the sum x + {constant:g}{label} is rounded to {dtype} before the log at "
                f"{ctx.model.line_ref(data.get('site'))} reads it: with {bits} significant bits every x below {below} "
                f"vanishes and the log returns 0 where log1p / softplus on the GPU returns about x; compute the sum "
                f"in fp32 (dtype=nl.float32) or fuse the add into the log instruction (its bias runs in fp32)"),
                kernel=kernel.name)
