"""NKI507 fp8-e4m3-range."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._spots import NumericsRule, Spot, chain_text, nki_name, number, other_name


class Fp8E4m3Range(NumericsRule):
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

**Why on Trainium:** GPU FP8 recipes use OCP E4M3 (`e4m3fn`, max 448, no
inf). Trainium1/2's native `float8_e4m3` keeps inf/NaN and its largest
finite value is 240, so values scaled into (240, 448] overflow; the NxD
quantization guide rescales checkpoints "from -/+448 to -/+240". OCP
`float8_e4m3fn` is native only from trn3.

**Fix:** Scale to 240 on trn1/trn2 (`amax / 240`), or choose the maximum
per generation (`448.0 if nisa.get_nc_version() == nisa.nc_version.gen4
else 240.0`); saturate explicitly before the cast.
"""
    references = (
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
        return fp8_e4m3_range(ctx, ctx.analysis(DeviceCode))


def _is_448(node: ast.AST, ctx: RuleContext) -> bool:
    v = number(node)
    if v is not None:
        return v == 448.0
    if isinstance(node, ast.Attribute) and node.attr == "max" and isinstance(node.value, ast.Call):
        call = node.value
        if (other_name(ctx, call.func) or chain_text(call.func)).endswith("finfo") and call.args and \
                chain_text(call.args[0]).endswith("float8_e4m3fn"):
            return True
    return False


def fp8_e4m3_range(ctx: RuleContext, s: DeviceCode) -> Iterator[Spot]:
    if ctx.target.name not in ("trn1", "trn2"):
        return
    text = ctx.source.text
    if re.search(r"get_nc_version|nc_version|\b240(\.0*)?\b", text):
        return
    for fn in s.outermost:
        nodes = s.nodes(fn)
        uses_e4m3 = any(
            isinstance(n, (ast.Attribute, ast.Name)) and (nki_name(ctx, n) or "") == "nki.language.float8_e4m3"
            for n in nodes
        )
        uses_fn = any(
            isinstance(n, (ast.Attribute, ast.Name)) and (nki_name(ctx, n) or "").endswith("float8_e4m3fn")
            for n in nodes
        )
        if not uses_e4m3 or uses_fn:
            continue
        for node in nodes:
            if _is_448(node, ctx) and not isinstance(s.index.parent(node), ast.UnaryOp):
                owner = s.owner(node) or fn
                yield Spot(node, (
                    f"{ast.unparse(node)} is the OCP E4M3 (float8_e4m3fn) maximum used by GPU FP8 recipes, but this "
                    f"kernel casts to nl.float8_e4m3, whose largest finite value on {ctx.target.name} is 240: values "
                    f"scaled into (240, 448] overflow; scale with 240 on trn1/trn2 (448 only with nl.float8_e4m3fn on "
                    f"trn3)"
                ), Level.WARNING, owner.name)
                break
