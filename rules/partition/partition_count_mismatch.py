"""NKI104 partition-count-mismatch: the operands of one instruction span different partition counts."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.values import const_int
from nkilint.model.views import Op, Operand, ops
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._operands import SAME_PARTITIONS
from ._shapes import LEGACY_ERRORS, SDK_STUBS, operands, provably_different

# nki.language element-wise binary calls (x, y).
_NL_BINARY = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "fmod", "mod", "equal", "not_equal",
    "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and",
    "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
}


class PartitionCountMismatch(Rule):
    id = "NKI104"
    name = "partition-count-mismatch"
    family = "partition"
    level = Level.ERROR
    summary = "Operands of one instruction span different numbers of partitions"
    explanation = """
Finds instructions whose tensor operands provably cover different numbers
of partitions: the inputs and the output of `tensor_tensor`,
`tensor_scalar`, `activation`, `tensor_copy`, scans and reductions, the
per-partition scalars (`tensor_scalar` `operand0/1`, `activation`
`bias`/`scale`, `reduce_res`), element-wise `nl` calls and operators, and
legacy assignments `t[...] = v`. Broadcasting is allowed where the API
broadcasts: legacy `nki.language` calls (`nl.add(x, y)`) broadcast a
1-partition operand across the partitions; legacy operator overloads
(`x + y`) cannot (a documented known issue, reported as a warning); the
`nki.*` `nl` calls (0.3+) do not broadcast at all; `nisa` instructions never
broadcast on the partition dimension. Assignments `t[...] = v` may broadcast
a 1-partition value.

**Why on Trainium:** Vector, Scalar and GpSimd instructions stream every
operand partition by partition, so all operands of one instruction must
cover the same partitions, and per-partition scalars are `(P, 1)` tiles with
the same `P` as the data. The compiler stops with "number of partitions
(dimension 0 size of a tile) mismatch" (legacy `err_num_partition_mismatch`).

**Fix:** slice the operands to the same partition range, broadcast
explicitly (`y.broadcast_to((128, F))` in legacy code, or a `(P, 1)`
operand with `tensor_scalar` for a per-row value), or use
`nc_matmul` with a ones vector to move data across partitions.
"""
    references = (
        f"{SDK_STUBS} (tensor_tensor, tensor_scalar, activation, tensor_copy)",
        f"{LEGACY_ERRORS} (err_num_partition_mismatch)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst at commit 0521004c (operator broadcasting)",
        "aws-neuron-sdk release-notes/components/nki.rst (0.3-0.6: binary ops do not broadcast)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_row(a, row):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                r = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                nisa.dma_copy(dst=r, src=row)
                y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=y, data1=x, data2=r, op=nl.add)
                nisa.dma_copy(dst=out, src=y)
                return out
            """,
            lines=[13],
            title="current API: tensor_tensor does not broadcast a 1-partition row",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def scale_rows(a, s):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a[0:128, 0:512])
                col = nl.load(s[0:64, 0:1])
                y = nisa.activation(op=nl.exp, data=x, bias=col)
                nl.store(out[0:128, 0:512], value=y)
                return out
            """,
            lines=[10],
            title="legacy API: the bias must be (128, 1)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_col(a, col):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                c = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                nisa.dma_copy(dst=c, src=col)
                y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(dst=y, data=x, op0=nl.add, operand0=c)
                nisa.dma_copy(dst=out, src=y)
                return out
            """,
            title="a per-partition column through tensor_scalar",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_row(a, row):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a[0:128, 0:512])
                r = nl.load(row[0:1, 0:512])
                nl.store(out[0:128, 0:512], value=nl.add(x, r))
                return out
            """,
            title="legacy nl.add broadcasts a 1-partition operand",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        model = ctx.model
        for op in ops(model, apis=[f"nki.isa.{short}" for short in SAME_PARTITIONS]):
            same = [o for o in operands(op, SAME_PARTITIONS[op.short]) if o.node.on_chip]
            self._compare(reporter, op, same, broadcast=False)
        for op in ops(model, prefix="nki.language."):
            if op.assignment or op.augmented:
                same = [o for o in operands(op, ("dst", "value")) if o.node.on_chip]
                self._compare(reporter, op, same, broadcast=True, assignment=True)
                continue
            if op.short not in _NL_BINARY:
                continue
            same = [o for o in operands(op, ("x", "y")) if o.node.on_chip]
            if model.legacy and not op.operator:
                self._compare(reporter, op, same, broadcast=True)
            elif model.legacy:
                self._compare(reporter, op, same, broadcast=False, operator=True)
            elif not op.operator:
                self._compare(reporter, op, same, broadcast=False)

    def _compare(self, reporter, op: Op, same: list[Operand], broadcast: bool, operator: bool = False,
                 assignment: bool = False) -> None:
        sized = [(o, o.node.partition_size) for o in same if o.node.shape_trusted]
        sized = [(o, s) for o, s in sized if s is not None]
        if len(sized) < 2:
            return
        # Compare against the main input (the data operand), then the rest.
        main = ("data", "data1", "data0", "src", "x")
        sized.sort(key=lambda x: main.index(x[0].param) if x[0].param in main else len(main))
        ref_op, ref_size = sized[0]
        if assignment:
            # t[...] = v: compare the value against the destination.
            dst = [x for x in sized if x[0].param == "dst"]
            if dst:
                ref_op, ref_size = dst[0]
        for o, s in sized:
            if o is ref_op or not provably_different(s, ref_size):
                continue
            ones = [x for x in (s, ref_size) if const_int(x) == 1]
            if broadcast and ones:
                continue
            level = Level.ERROR
            note = ""
            if operator and ones:
                level = Level.WARNING
                note = "; operator overloads cannot broadcast on the partition dimension (use nl.add, nl.multiply, ...)"
            if assignment:
                label, names = "assignment", {"dst": "target", "value": "value"}
            elif operator:
                label, names = f"operator {_OPERATOR_SYMBOLS.get(op.short, op.short)}", {
                    "x": "left operand", "y": "right operand"}
            else:
                label, names = op.label, {}
            this = f"{names.get(o.param, o.param + '=')}{'' if o.param not in names else ' '}"
            other = f"{names.get(ref_op.param, ref_op.param + '=')}{'' if ref_op.param not in names else ' '}"
            reporter.at_site(
                op.site,
                f"{label}: {this}{o.node.label} spans {_partitions(s)} "
                f"{q.fmt_shape(o.node.shape)} but {other}{ref_op.node.label} spans "
                f"{q.fmt_dim(ref_size)} {q.fmt_shape(ref_op.node.shape)}; the operands of one instruction must "
                f"cover the same partitions{note}",
                level=level,
                hint="slice both operands to the same partition range, or broadcast explicitly "
                "(a (P, 1) operand with tensor_scalar, or broadcast_to)",
                kernel=op.kernel.name,
            )


_OPERATOR_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**", "mod": "%",
                     "left_shift": "<<", "right_shift": ">>", "bitwise_and": "&", "bitwise_or": "|",
                     "bitwise_xor": "^"}


def _partitions(v) -> str:
    return "1 partition" if const_int(v) == 1 else f"{q.fmt_dim(v)} partitions"
