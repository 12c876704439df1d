"""NKI724 activation-operand-type: nisa.activation scale/bias has the wrong dtype or is not a [N, 1] vector."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.api_semantics import ACTIVATIONS
from nkilint.model.dtypes import dtype_name
from nkilint.model.values import Const, const_int
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC


class ActivationOperandType(Rule):
    id = "NKI724"
    name = "activation-operand-type"
    family = "semantics"
    level = Level.ERROR
    summary = "nisa.activation scale/bias has the wrong dtype or is not a [partitions, 1] vector"
    explanation = f"""
Finds `nisa.activation` / `nisa.activation_reduce` calls whose `scale` or
`bias` has a dtype the instruction does not take, or is not one value per
partition (a scalar or a `[N, 1]` vector). Dtypes and shapes are checked
where the model knows them.

**Why on Trainium:** ScalarE computes `op(data * scale + bias)` with one
`scale` and one `bias` value per partition. So:

* `scale` is a compile-time scalar or a float32 `[N, 1]` vector:
  `err_activation_scale_invalid_type` ("Scale parameter ... must be a scalar
  or vector of type float32") and `err_activation_scale_scalar_or_vector`
  ("... a scalar value or a 1D vector spanning the partition dimension",
  {ERRORS_DOC}); the NKI 0.6 `nisa.activation` page keeps both rules;
* `bias` is a `[N, 1]` vector of float32, float16 or bfloat16 in legacy NKI
  (`err_activation_bias_invalid_type`); from NKI 0.2 any dtype except
  tfloat32, and a compile-time scalar only from NeuronCore-v3 — on trn1/inf2
  it must be a vector (`nisa.activation` page, "Data types" and "Layout").

**Fix:** keep scale vectors in float32 (`nl.ndarray((N, 1),
dtype=nl.float32)`), reduce scale/bias to one value per partition
(`[N, 1]`, broadcast along the free dimension by the engine), and cast
integer biases to a float type first.
"""
    references = (
        f"{ERRORS_DOC} (err_activation_bias_invalid_type, err_activation_scale_invalid_type, "
        f"err_activation_scale_scalar_or_vector)",
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (activation: Data types, Layout)",
    )
    examples = (
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def scaled_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.load(x)
                bias = nisa.memset((128, 1), 1, dtype=np.int8)
                s16 = nisa.memset((128, 1), 1.2, dtype=np.float16)
                s_row = nl.full((1, 128), 1.2, dtype=nl.float32, buffer=nl.sbuf)
                a = nisa.activation(op=nl.exp, data=data, bias=bias)
                b = nisa.activation(op=nl.exp, data=data, scale=s16)
                c = nisa.activation(op=nl.exp, data=data, scale=s_row)
                nl.store(out, value=nl.add(nl.add(a, b), c))
                return out
            """,
            lines=[13, 14, 15],
            title="legacy: an int8 bias, a float16 scale, a (1, 128) scale",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scaled_exp(x, s):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=data, src=x)
                scale = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=scale, src=s)
                nisa.activation(dst=data, op=nl.exp, data=data, scale=scale)
                nisa.dma_copy(dst=out, src=data)
                return out
            """,
            lines=[12],
            title="current API: a bfloat16 scale vector",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def shifted_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=data, src=x)
                nisa.activation(dst=data, op=nl.exp, data=data, bias=-1.0)
                nisa.dma_copy(dst=out, src=data)
                return out
            """,
            lines=[10],
            target="trn1",
            title="current API on trn1: a scalar bias (fine from trn2)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def shifted_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=data, src=x)
                nisa.activation(dst=data, op=nl.exp, data=data, bias=-1.0)
                nisa.dma_copy(dst=out, src=data)
                return out
            """,
            target="trn2",
            title="a scalar bias on trn2 (NeuronCore-v3)",
        ),
        valid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def scaled_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.load(x)
                bias = nisa.memset((128, 1), 1.2, dtype=nl.bfloat16)
                scale = nisa.memset((128, 1), 1.2, dtype=np.float32)
                a = nisa.activation(op=nl.exp, data=data, bias=bias, scale=scale)
                b = nisa.activation(op=nl.exp, data=data, scale=1.2)
                nl.store(out, value=nl.add(a, b))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        legacy = ctx.model.legacy
        for ref in q.ops(ctx.model, ACTIVATIONS):
            site = ref.site
            if site is None:
                continue
            operands = q.operands(ref)
            api = "nisa." + ref.data.get("api", "").rpartition(".")[2]
            bias_v = q.param_value(ref, "bias")
            if (not legacy and ctx.target.generation == 2 and isinstance(bias_v, Const)
                    and isinstance(bias_v.value, (int, float)) and not isinstance(bias_v.value, bool)):
                reporter.at_site(
                    site,
                    f"{api} bias is the scalar {bias_v.value!r}; on {ctx.target.name} (NeuronCore-v2) the bias must be a "
                    f"[partitions, 1] vector (scalar biases need NeuronCore-v3)",
                    hint="pass a (N, 1) SBUF tile filled with the value (nisa.memset)",
                    kernel=ref.kernel.name,
                )
            for param in ("scale", "bias"):
                if param not in operands:
                    continue
                _, data = operands[param]
                dtype = dtype_name(data)
                name = q.tensor_name(data)
                if dtype is not None:
                    allowed = {"float32"} if param == "scale" else (
                        {"float32", "float16", "bfloat16"} if legacy else None)
                    bad = (dtype not in allowed) if allowed is not None else dtype == "tfloat32"
                    if bad:
                        code = "err_activation_scale_invalid_type" if param == "scale" else "err_activation_bias_invalid_type"
                        need = ("float32" if param == "scale" else
                                "float32, float16 or bfloat16" if legacy else "any dtype except tfloat32")
                        reporter.at_site(
                            site,
                            f"{api} {param} `{name}` is {dtype}; the {param} must be {need}"
                            + (f" ({code})" if legacy or param == "scale" else ""),
                            hint=f"allocate the {param} vector as {'nl.float32' if param == 'scale' else 'nl.float32 (or a 16-bit float)'}",
                            kernel=ref.kernel.name,
                        )
                        continue
                shape = data.get("shape_v")
                if shape is None or len(shape) < 2:
                    continue
                free = [const_int(d) for d in shape[1:]]
                if all(x is not None for x in free) and any(x > 1 for x in free):
                    reporter.at_site(
                        site,
                        f"{api} {param} `{name}` has shape {q.fmt_shape(shape)}; it must be a scalar or a [partitions, 1] "
                        f"vector (one value per partition)"
                        + (" (err_activation_scale_scalar_or_vector)" if param == "scale" else ""),
                        hint=f"reduce {param} to shape (N, 1) or pass a scalar",
                        kernel=ref.kernel.name,
                    )

