"""NKI736 tile-arithmetic-operator: a Python arithmetic operator on a tile in `nki.*` code."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, Holds
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import describe

# The operators and the call each one stands for.
_CALLS = {
    ast.Add: "nl.add", ast.Sub: "nl.subtract", ast.Mult: "nl.multiply", ast.Div: "nl.divide",
    ast.Pow: "nl.power", ast.Mod: "nl.mod", ast.FloorDiv: "nl.divide then nl.floor", ast.MatMult: "nl.matmul",
    ast.USub: "nl.negative",
}
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.Mod: "%", ast.FloorDiv: "//",
            ast.MatMult: "@", ast.USub: "unary -"}


class TileArithmeticOperator(Rule):
    id = "NKI736"
    name = "tile-arithmetic-operator"
    family = "semantics"
    level = Level.NOTE
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "A Python arithmetic operator (`a + b`, `-t`, `acc += t`) on a tile in `nki.*` code"
    explanation = """
Finds `+ - * / // % ** @`, unary minus and their augmented forms (`+=`)
applied to a tile in `nki.*` (NKI 0.2+) device code: `c = a_tile + b_tile`,
`neg = -t`, `acc += t`. Legacy (`neuronxcc.nki`) kernels, where these
operators are the documented tile arithmetic, are not reported, nor are
comparisons and the bitwise mask operators, nor arithmetic on shapes and
other specialization-time values.

**Why on Trainium:** in `nki.*` code a tile is an `NkiTensor`, whose API
reference documents views, indexing and assignment but no arithmetic
operators; element-wise math is an instruction, written as a call: the
`nki.*` getting-started kernels compute `nl.add(a_tile, b_tile)` where
the legacy tutorial wrote `a_tile + b_tile`, and no kernel in the public
`nki.*` corpora uses the operator form. No page says the compiler
rejects it either, so this is advice, not an error.

**Fix:** write the call: `nl.add(a, b)` (or `nisa.tensor_tensor(dst=c,
data1=a, data2=b, op=nl.add)`), `nl.negative(t)` (or
`nisa.tensor_scalar(dst=..., data=t, op0=nl.multiply, operand0=-1.0)`),
`nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)` for `+=`.
"""
    references = (
        "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.33.0/nki/api/generated/nki.language.NkiTensor.html",
        "aws-neuron-sdk nki/api/nki/language/__init__.py (NkiTensor: views, __getitem__, __setitem__)",
        "aws-neuron-sdk nki/examples/getting_started_baremetal.py (nl.add(a_tile, b_tile))",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add(a, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                nisa.dma_copy(dst=y, src=b)
                z = x + y
                nisa.dma_copy(dst=out, src=z)
                return out
            """,
            lines=[12],
            title="current API: `+` between two tiles",
            level=Level.NOTE,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def neg(a):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                nisa.dma_copy(dst=out, src=-x)
                return out
            """,
            lines=[10],
            title="current API: unary minus on a tile",
            level=Level.NOTE,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add(a, b):
                R, C = a.shape
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.ndarray((128, C // 2 + 256), dtype=nl.float32, buffer=nl.sbuf)
                y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a[0:128, 0:C // 2 + 256])
                nisa.dma_copy(dst=y, src=b)
                z = nl.add(x, y)
                nisa.tensor_tensor(dst=y, data1=y, data2=x, op=nl.add)
                nisa.dma_copy(dst=out, src=z)
                return out
            """,
            title="current API: the calls; arithmetic on shapes is not on a tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add(a, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a_tile = nl.load(a[0:128, 0:512])
                b_tile = nl.load(b[0:128, 0:512])
                nl.store(out, value=a_tile + b_tile)
                return out
            """,
            title="legacy API: operators are the documented tile arithmetic",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if ctx.model.legacy:
            return
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            for node in scopes.own_nodes(fn):
                if isinstance(node, ast.BinOp):
                    op, operands = node.op, (node.left, node.right)
                elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
                    op, operands = node.op, (node.operand,)
                elif isinstance(node, ast.AugAssign):
                    op, operands = node.op, (node.target, node.value)
                else:
                    continue
                if type(op) not in _CALLS:
                    continue
                # Only what always holds tile data (not a parameter the caller
                # may pass as a number, not a shape or an index).
                tiles = [o for o in operands if exprs.holds(fn, o) is Holds.TENSOR]
                if not tiles:
                    continue
                symbol = _SYMBOLS[type(op)] + ("=" if isinstance(node, ast.AugAssign) else "")
                reporter.at(
                    node,
                    f"`{symbol}` on tile {describe(exprs, fn, tiles[0])}: in nki.* code a tile is an NkiTensor, whose "
                    f"API reference documents no arithmetic operators; element-wise math is a call "
                    f"({_CALLS[type(op)]}, or the nisa instruction)",
                    hint=f"write {_CALLS[type(op)]}(...) or the nisa.tensor_tensor / tensor_scalar instruction",
                )
