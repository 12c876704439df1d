"""Partition family (NKI1xx): the 128-partition dimension of SBUF and PSUM.

Facts: ../shared/NKI-REFERENCE.md section 3.A (PD01-PD07), 2.4 (matmul),
2.5 (transpose), 2.8 (access patterns), checked against the nki.isa /
nki.language stubs of aws-neuron-sdk (0.6 and the legacy 0.1 stubs at
commit 0521004c) and the legacy error catalogue nki/api/nki.errors.rst at
commit 1db4d74e. SBUF and PSUM have 128 partitions on every generation; the
first dimension of an on-chip tile (or the legacy ``par_dim``) is the
partition dimension.

Every rule errs only when the violation holds for every value the code
allows; a size that depends on an input is at most a warning, and only when
some allowed value really reaches the bound (see
``query.attainable_upper``).
"""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.bindings import Gen
from nkilint.model.values import IndexV, const_int, linear
from nkilint.rule import Rule, invalid, valid

from . import _partition_facts as pf
from ._common import Reporter

_SDK_STUBS = "aws-neuron-sdk nki/api/nki/isa/__init__.py"
_LEGACY_ERRORS = "aws-neuron-sdk nki/api/nki.errors.rst at commit 1db4d74e"


def _limit_text(ctx: RuleContext) -> str:
    return f"{ctx.target.partitions} on {ctx.target.name}"


# =====================================================================
# NKI101
# =====================================================================
class PartitionSizeOverLimit(Rule):
    id = "NKI101"
    name = "partition-size-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "An SBUF or PSUM tensor spans more partitions than the hardware has (128)"
    explanation = """
SBUF and PSUM are two-dimensional memories of 128 partitions on every
Trainium generation. The first dimension of an on-chip tensor (the
partition dimension, or the legacy `par_dim`) maps onto those partitions, so
it can never exceed `nl.tile_size.pmax` (128); the compiler stops with
"Size of partition dimension 256 exceeds architecture limitation of 128"
(legacy `err_num_partition_exceed_arch_limit`). This rule finds such tiles
in allocations (`nl.ndarray`, `nl.zeros`, `*_like`, ...; this includes the
SBUF side of a `dma_copy`), in tiles returned by legacy `nl.load` /
`nl.load_transpose2d` (sized by the HBM slice), in the results of legacy
compute calls, and in on-chip tiles addressed with legacy `nl.arange` /
`nl.mgrid` indices. HBM tensors have no partition dimension and are exempt.

When a legacy result tile only inherits an oversized partition dimension
from its input, only the input (the root cause) is reported.

The finding is an error when every value the code allows is too large, and
a warning that names the bound when only some are (for example
`assert K <= 256` leaves room for K > 128). A bound that comes from
compound arithmetic (`x + x % 2`) is not trusted and gives no warning.

**Fix:** tile the data: loop over blocks of at most 128 rows
(`for i in range(n // 128)` with `t[i * 128:(i + 1) * 128, :]`), or fold
the extra rows into a free dimension (a `(256, F)` tile becomes
`(128, 2, F)` or `(128, 2 * F)`).
"""
    references = (
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (tile size constraint #1)",
        "aws-neuron-sdk general/arch/neuron-hardware/trainium2_arch.rst (SBUF partitions)",
        f"{_LEGACY_ERRORS} (err_num_partition_exceed_arch_limit)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                tile = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=tile, src=a)
                nisa.dma_copy(dst=out, src=tile)
                return out
            """,
            lines=[8],
            title="current API: a 256-row SBUF tile",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            ROWS = 256

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray((ROWS, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                ta = nl.load(a[0:ROWS, 0:512])
                tb = nl.load(b[0:ROWS, 0:512])
                nl.store(out[0:ROWS, 0:512], value=ta + tb)
                return out
            """,
            lines=[9, 10],
            title="legacy API: nl.load of a 256-row slice (the sum only inherits the size: not reported)",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(a):
                out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(256)[:, None]
                i_f = nl.arange(512)[None, :]
                t = nl.load(a[i_p, i_f])
                nl.store(out[i_p, i_f], value=nl.exp(t))
                return out
            """,
            lines=[9],
            title="legacy API: a tile addressed by a 256-long nl.arange",
        ),
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                K, N = a.shape
                assert K <= 256
                buf = nl.ndarray((K, N), dtype=a.dtype, buffer=nl.sbuf)
                return buf
            """,
            lines=[8],
            title="depends on an input: a warning naming the bound",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in range(2):
                    tile = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile, src=a[i * 128:(i + 1) * 128, :])
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=tile)
                return out
            """,
            title="tiled over 128-row blocks",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_kernel(a, b):
                K, N = a.shape
                assert K <= nl.tile_size.pmax
                out = nl.ndarray((K, N), dtype=a.dtype, buffer=nl.shared_hbm)
                ta = nl.load(a)
                tb = nl.load(b[0:K, 0:N])
                nl.store(out, value=ta + tb)
                return out
            """,
            title="legacy API, bounded by an assert",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a, rows):
                assert rows <= 128
                padded = rows + rows % 2
                buf = nl.ndarray((padded, 512), dtype=nl.float32, buffer=nl.sbuf)
                return buf
            """,
            title="rows + rows % 2 never exceeds 128 although interval arithmetic says 129",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        limit = ctx.target.partitions
        reporter = Reporter(ctx)
        for ref in q.tensors(ctx.model, buffers=q.ON_CHIP, origins=("alloc", "result")):
            data = ref.data
            size = pf.partition_dim(data)
            if size is None:
                continue
            if data.get("origin") == "result" and (
                not pf.trusted_shape(ref.graph, ref.node_id) or _inherits_oversize(ref, size, limit)
            ):
                continue
            where = "partition dimension" if not data.get("partition_axis") else "par_dim"
            what = f"{data.get('buffer', '').upper()} tensor {q.tensor_name(data)}"
            self._judge(ctx, reporter, ref.site, ref.kernel.name, what, size, q.fmt_shape(pf.shape(data)), where, limit)
        # Legacy tiles addressed by nl.arange / nl.mgrid: the index decides the tile's partitions.
        for kernel, graph in ctx.model.graphs():
            for view_id, data in graph.views():
                if data.get("buffer") not in q.ON_CHIP:
                    continue
                items = data.get("index_v") or ()
                first = items[0] if items else None
                # Only a partition index the model shapes reliably: arange(n)[:, None] or mgrid
                # (it keeps arange(n)[:, None, None] 1-D and combined index expressions partial).
                if not isinstance(first, IndexV) or len(first.axis_shape) < 2 or const_int(first.axis_shape[0]) == 1:
                    continue
                size = first.extent
                base = graph.attrs(graph.base_tensor(view_id))
                if pf.over_always(pf.partition_dim(base), limit) or pf.over_maybe(pf.partition_dim(base), limit):
                    continue  # the tensor itself is reported
                what = f"tile {pf.operand_name(graph, view_id)}"
                self._judge(ctx, reporter, data.get("site"), kernel.name, what, size, q.fmt_shape(pf.shape(data)),
                            "index's partition extent", limit)

    def _judge(self, ctx, reporter, site, kernel, what, size, shape, where, limit) -> None:
        if pf.over_always(size, limit):
            reporter.at_site(
                site,
                f"{what} has {q.fmt_dim(size)} partitions {shape}; the {where} is limited to {_limit_text(ctx)}",
                level=Level.ERROR,
                hint=f"loop over blocks of at most {limit} rows, or fold the extra rows into a free dimension",
                kernel=kernel,
            )
            return
        hi = pf.over_maybe(size, limit)
        if hi is not None:
            reporter.at_site(
                site,
                f"{what} may span up to {int(hi)} partitions {shape}: {q.fmt_dim(size)} exceeds the "
                f"{limit}-partition limit of {ctx.target.name} unless it is at most {limit}",
                level=Level.WARNING,
                hint=f"assert the size is <= {limit} (nl.tile_size.pmax), or tile the partition dimension",
                kernel=kernel,
            )


def _inherits_oversize(ref: q.NodeRef, size, limit: int) -> bool:
    """A legacy result tile whose partition size is an oversized dimension of
    an on-chip input: the input (an oversized tile, or a matmul/transpose
    operand that NKI105-NKI108 report) is the root cause."""
    if not (pf.over_always(size, limit) or pf.over_maybe(size, limit)):
        return False
    g = ref.graph
    for op_id, _, d in g.g.in_edges(ref.node_id, data=True):
        if d.get("kind") != "writes":
            continue
        # Matmul / PE-transpose results take their partitions from an input's
        # free dimension (reported by NKI106 / NKI108); other results from an
        # input's partition dimension (reported by this rule on the input).
        short = str(g.attrs(op_id).get("api", "")).rsplit(".", 1)[-1]
        any_dim = short in ("matmul", "nc_matmul", "transpose", "nc_transpose")
        for src, _ in g.reads(op_id):
            src_data = g.attrs(src)
            if src_data.get("buffer") not in q.ON_CHIP:
                continue
            dims = pf.shape(src_data) or () if any_dim else (pf.partition_dim(src_data),)
            if any(dim is not None and pf.provably_equal(dim, size) for dim in dims):
                return True
    return False


# =====================================================================
# NKI102
# =====================================================================
class OnChipRankBelowTwo(Rule):
    id = "NKI102"
    name = "onchip-rank-below-2"
    family = "partition"
    level = Level.ERROR
    summary = "An SBUF or PSUM tensor has fewer than two dimensions"
    explanation = """
An on-chip tile is always at least two-dimensional: the partition dimension
first, then one or more free dimensions (`[P, F...]`). A 1-D (or 0-D)
allocation in SBUF or PSUM has no free dimension and the compiler rejects it
("Insufficient rank"). HBM tensors may have any rank.

**Fix:** give the tile an explicit partition dimension: `(1, 512)` for a
single row, or better `(128, 4)` to spread the 512 values over all
partitions.
"""
    references = (
        "aws-neuron-sdk nki/get-started/nki-language-guide.rst (on-chip tensors are at least 2-D)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst at commit 0521004c (Insufficient rank)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                acc = nl.ndarray((512,), dtype=nl.float32, buffer=nl.sbuf)
                return acc
            """,
            lines=[6],
            title="current API: a 1-D SBUF tensor",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((1, 128), dtype=a.dtype, buffer=nl.shared_hbm)
                acc = nl.zeros((128,), dtype=nl.float32)
                nl.store(out, value=acc)
                return out
            """,
            lines=[7],
            title="legacy API: nl.zeros defaults to SBUF",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                acc = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.sbuf)
                flat = nl.ndarray((512,), dtype=nl.float32, buffer=nl.shared_hbm)
                return flat
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for ref in q.tensors(ctx.model, buffers=q.ON_CHIP, origins=("alloc",)):
            shape = pf.shape(ref.data)
            if shape is None or len(shape) >= 2 or not _literal_rank(ref.data, shape):
                continue
            data = ref.data
            rank = len(shape)
            first = q.fmt_dim(shape[0]) if shape else "1"
            reporter.at_site(
                ref.site,
                f"{data.get('buffer', '').upper()} tensor {q.tensor_name(data)} is {rank}-D {q.fmt_shape(shape)}; "
                f"on-chip tensors need a partition dimension and at least one free dimension",
                hint=f"allocate it as (1, {first}) or spread it over partitions, e.g. (128, {first} // 128)",
                kernel=ref.kernel.name,
            )


def _literal_rank(data: dict, shape) -> bool:
    """The rank is certain: the shape is written as a tuple/list literal, or
    every dimension is an exact number. (A shape passed through an opaque
    value, ``nl.ndarray(cfg.shape, ...)``, may be read as one dimension.)"""
    call = data.get("call")
    if not isinstance(call, ast.Call) or str(data.get("api", "")).endswith("_like"):
        return False
    arg = next((k.value for k in call.keywords if k.arg == "shape"), call.args[0] if call.args else None)
    if isinstance(arg, (ast.Tuple, ast.List)):
        return not any(isinstance(e, ast.Starred) for e in arg.elts)
    return all(const_int(d) is not None for d in shape)


# =====================================================================
# NKI103
# =====================================================================
class PartitionDimNotLeading(Rule):
    id = "NKI103"
    name = "partition-dim-not-leading"
    family = "partition"
    level = Level.ERROR
    summary = "nl.par_dim used as a block dimension (not first), or at all in nki.* code"
    explanation = """
The partition dimension of an on-chip tensor must be its left-most
dimension. Legacy NKI allowed *block dimensions* in front of it
(`nl.ndarray((8, nl.par_dim(128), 512), ...)`); they gave warnings in
Neuron SDK 2.23/2.24 and are a compile error from SDK 2.25
("The leading dimension of SBUF/PSUM tensors must be the partition
dimension", legacy `err_leading_dimension_of_tensor_must_be_partition`).
The new `nki.*` namespace (NKI 0.2+) has no `par_dim` at all: every use of
it there fails.

**Fix:** allocate one tile per block (a list of tiles, or allocate inside
the loop), or fold the block into a free dimension: `(8, par_dim(128), 512)`
becomes `(128, 8, 512)`. In `nki.*` code drop `par_dim` and write the
partition size as the first dimension.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (removing block dimensions)",
        "aws-neuron-sdk about-neuron/announcements/neuron2.x/announce-eos-block-dimension-nki.rst",
        f"{_LEGACY_ERRORS} (err_leading_dimension_of_tensor_must_be_partition)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                buf = nl.ndarray((8, nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
                return out
            """,
            lines=[7],
            title="legacy API: a block dimension in front of par_dim",
        ),
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                buf = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
                return buf
            """,
            lines=[6],
            title="current API: nl.par_dim does not exist in nki.language",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                buf = nl.ndarray((nl.par_dim(128), 8, 512), dtype=a.dtype, buffer=nl.sbuf)
                return out
            """,
            title="legacy API: par_dim first is fine",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                bufs = [nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf) for _ in range(8)]
                return bufs[0]
            """,
            title="current API: a list of tiles instead of a block dimension",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        model = ctx.model
        current_calls = []
        # Cheap pre-filter: most files never mention par_dim.
        nodes = ctx.source.nodes if ctx.source is not None and "par_dim" in ctx.source.text else ()
        for node in nodes:
            if isinstance(node, ast.Call):
                qual = model.bindings.resolve(node.func)
                if qual is not None and qual.name == "nki.language.par_dim" and qual.gen is Gen.CURRENT:
                    current_calls.append(node)
        for node in current_calls:
            reporter.at(
                node,
                "nl.par_dim does not exist in nki.language (NKI 0.2+): the partition dimension is always the first "
                "dimension of an on-chip tensor",
                hint="drop par_dim and put the partition size first; fold block dimensions into free dimensions",
            )
        current_lines = {n.lineno for n in current_calls}
        for ref in q.tensors(model, buffers=q.ON_CHIP, origins=("alloc",)):
            axis = ref.data.get("partition_axis") or 0
            if axis <= 0:
                continue
            site = ref.site
            if site is not None and model.in_this_file(site) and getattr(site.node, "lineno", 0) in current_lines:
                continue
            data = ref.data
            shape = pf.shape(data) or ()
            shown = ", ".join(
                (f"par_dim({q.fmt_dim(d)})" if i == axis else q.fmt_dim(d)) for i, d in enumerate(shape)
            )
            reporter.at_site(
                site,
                f"{data.get('buffer', '').upper()} tensor {q.tensor_name(data)} ({shown}) has par_dim at dimension "
                f"{axis}: block dimensions in front of the partition dimension are a compile error since Neuron "
                f"SDK 2.25",
                hint="allocate one tile per block (a list, or inside the loop), or fold the block into a free "
                "dimension: (P, B, F)",
                kernel=ref.kernel.name,
            )


# =====================================================================
# NKI104
# =====================================================================
# Operands of an ISA instruction that must span the same partitions: every
# listed tensor argument (per-partition scalars such as bias / operand0 are
# (P, 1) tiles with the same P). Sources: the nki.isa stubs, legacy
# err_num_partition_mismatch.
_SAME_PARTITIONS = {
    "tensor_tensor": ("dst", "data1", "data2"),
    "tensor_scalar": ("dst", "data", "operand0", "operand1"),
    "tensor_copy": ("dst", "src"),
    "tensor_copy_predicated": ("dst", "src", "predicate"),
    "activation": ("dst", "data", "bias", "scale", "reduce_res"),
    "activation_reduce": ("dst", "data", "bias", "scale", "reduce_res"),
    "tensor_reduce": ("dst", "data"),
    "tensor_tensor_scan": ("dst", "data0", "data1", "initial"),
    "scalar_tensor_tensor": ("dst", "data", "operand0", "operand1"),
    "tensor_scalar_reduce": ("dst", "data", "operand0", "reduce_res"),
    "tensor_scalar_cumulative": ("dst", "src", "imm0", "imm1"),
    "reciprocal": ("dst", "data"),
    "exponential": ("dst", "src", "max_value", "reduce_res"),
    "dropout": ("dst", "data", "prob"),
    "bn_stats": ("dst", "data"),
    "bn_aggr": ("dst", "data"),
}
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
Vector, Scalar and GpSimd instructions stream every operand partition by
partition: the inputs and the output of `tensor_tensor`, `tensor_scalar`,
`activation`, `tensor_copy`, scans and reductions must cover the same number
of partitions, and per-partition scalars (`tensor_scalar` `operand0/1`,
`activation` `bias`/`scale`, `reduce_res`) are `(P, 1)` tiles with the same
`P` as the data. The compiler stops with "number of partitions (dimension 0
size of a tile) mismatch" (legacy `err_num_partition_mismatch`).

Broadcasting: legacy `nki.language` calls (`nl.add(x, y)`) broadcast a
1-partition operand across the partitions; legacy operator overloads
(`x + y`) cannot (a documented known issue, reported as a warning); the
`nki.*` `nl` calls (0.3+) do not broadcast at all; `nisa` instructions never
broadcast on the partition dimension. Assignments `t[...] = v` may broadcast
a 1-partition value.

**Fix:** slice the operands to the same partition range, broadcast
explicitly (`y.broadcast_to((128, F))` in legacy code, or a `(P, 1)`
operand with `tensor_scalar` for a per-row value), or use
`nc_matmul` with a ones vector to move data across partitions.
"""
    references = (
        f"{_SDK_STUBS} (tensor_tensor, tensor_scalar, activation, tensor_copy)",
        f"{_LEGACY_ERRORS} (err_num_partition_mismatch)",
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
        for ref in pf.ops_named(model, "nki.isa", set(_SAME_PARTITIONS)):
            ops = [o for o in pf.operands(ref, _SAME_PARTITIONS[pf.short_api(ref)]) if pf.on_chip(o.data)]
            self._compare(ctx, reporter, ref, ops, broadcast=False)
        for ref in q.ops(model, "nki.language."):
            data = ref.data
            short = pf.short_api(ref)
            if data.get("assignment") or data.get("augmented"):
                ops = [o for o in pf.operands(ref, ("dst", "value")) if pf.on_chip(o.data)]
                self._compare(ctx, reporter, ref, ops, broadcast=True, assignment=True)
                continue
            if short not in _NL_BINARY:
                continue
            ops = [o for o in pf.operands(ref, ("x", "y")) if pf.on_chip(o.data)]
            if model.legacy and not data.get("operator"):
                self._compare(ctx, reporter, ref, ops, broadcast=True)
            elif model.legacy:
                self._compare(ctx, reporter, ref, ops, broadcast=False, operator=True)
            elif not data.get("operator"):
                self._compare(ctx, reporter, ref, ops, broadcast=False)

    def _compare(self, ctx, reporter, ref, ops, broadcast: bool, operator: bool = False, assignment: bool = False) -> None:
        sized = [(o, pf.partition_dim(o.data)) for o in ops if pf.trusted_shape(ref.graph, o.node_id)]
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
            if o is ref_op or not pf.provably_different(s, ref_size):
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
                label, names = f"operator {_OPERATOR_SYMBOLS.get(pf.short_api(ref), pf.short_api(ref))}", {
                    "x": "left operand", "y": "right operand"}
            else:
                label, names = pf.call_label(ref), {}
            this = f"{names.get(o.param, o.param + '=')}{'' if o.param not in names else ' '}"
            other = f"{names.get(ref_op.param, ref_op.param + '=')}{'' if ref_op.param not in names else ' '}"
            reporter.at_site(
                ref.site,
                f"{label}: {this}{pf.operand_name(ref.graph, o.node_id)} spans {_partitions(s)} "
                f"{q.fmt_shape(pf.shape(o.data))} but {other}{pf.operand_name(ref.graph, ref_op.node_id)} spans "
                f"{q.fmt_dim(ref_size)} {q.fmt_shape(pf.shape(ref_op.data))}; the operands of one instruction must "
                f"cover the same partitions{note}",
                level=level,
                hint="slice both operands to the same partition range, or broadcast explicitly "
                "(a (P, 1) operand with tensor_scalar, or broadcast_to)",
                kernel=ref.kernel.name,
            )


_OPERATOR_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**", "mod": "%",
                     "left_shift": "<<", "right_shift": ">>", "bitwise_and": "&", "bitwise_or": "|",
                     "bitwise_xor": "^"}


def _partitions(v) -> str:
    return "1 partition" if const_int(v) == 1 else f"{q.fmt_dim(v)} partitions"


# =====================================================================
# Matmul helpers
# =====================================================================
def _matmul_operands(ref: q.NodeRef) -> dict[str, pf.Operand]:
    """Operands whose shapes the model knows reliably, by parameter."""
    return {
        o.param: o
        for o in pf.operands(ref)
        if o.param in ("stationary", "moving", "x", "y", "dst") and pf.trusted_shape(ref.graph, o.node_id)
    }


def _double_row(ref: q.NodeRef) -> bool | None:
    """True/False when the perf mode is known, None when it is not."""
    mode = pf.param(ref, "perf_mode")
    if mode is None:
        return False
    leaf = pf.api_leaf(mode)
    if leaf is None:
        return None
    return "double" in leaf


def _tile_size(ref: q.NodeRef) -> tuple[int, int] | None:
    t = pf.const_tuple(pf.param(ref, "tile_size"))
    if t is not None and len(t) == 2:
        return t[0], t[1]
    return None


def _nl_matmul_transposed(ref: q.NodeRef) -> bool | None:
    v = pf.param(ref, "transpose_x")
    if v is None:
        return False
    return pf.is_true(v)


# =====================================================================
# NKI105
# =====================================================================
class MatmulContractionMismatch(Rule):
    id = "NKI105"
    name = "matmul-contraction-mismatch"
    family = "partition"
    level = Level.ERROR
    summary = "A matmul's contraction dimension is not the shared partition dimension of both operands"
    explanation = """
TensorE computes `stationary.T @ moving`: the contraction dimension is the
partition dimension of **both** operands, so `stationary.shape[0]` must equal
`moving.shape[0]`, and it is at most 128 (at most `row_size` when
`tile_size` selects row tiling). Legacy `nl.matmul(x, y)` without
`transpose_x=True` computes `x @ y` and transposes `x` first: `x`'s free
dimension is then the contraction, must equal `y`'s partition dimension and
is limited to 128; with `transpose_x=True` `x` is already `[K, M]`.

**Fix:** lay both operands out as `[K, ...]` with K on the partitions
(transpose one of them with `nc_transpose` or a DMA transpose), and for
K > 128 loop over 128-row slices of K, accumulating into the same PSUM tile.
"""
    references = (
        f"{_SDK_STUBS} (nc_matmul: layout, tile size)",
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (layout constraint #1)",
        "aws-neuron-sdk general/nki/api/nki/language/__init__.py at commit 0521004c (nl.matmul)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((64, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[13],
            title="current API: K = 128 for the stationary, 64 for the moving operand",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(x, y):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(x[0:128, 0:256])
                yt = nl.load(y[0:128, 0:512])
                r = nl.matmul(xt, yt)
                nl.store(out[0:128, 0:512], value=r)
                return out
            """,
            lines=[9],
            title="legacy nl.matmul without transpose_x: x's free dimension (256) is the contraction",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(xT, y):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(xT[0:128, 0:128])
                yt = nl.load(y[0:128, 0:512])
                r = nl.matmul(xt, yt, transpose_x=True)
                nl.store(out[0:128, 0:512], value=r)
                return out
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                K, M = lhsT.shape
                out = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ps = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.psum)
                for k in range(K // 128):
                    a = nl.ndarray((128, M), dtype=nl.bfloat16, buffer=nl.sbuf)
                    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, :])
                    nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, :])
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                res = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="K tiled in 128-row slices",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        limit = ctx.target.partitions
        for ref in pf.ops_named(ctx.model, "nki.isa", {"nc_matmul"}):
            ops = _matmul_operands(ref)
            st, mv = ops.get("stationary"), ops.get("moving")
            if st is None or mv is None or not (pf.on_chip(st.data) and pf.on_chip(mv.data)):
                continue
            ks, km = pf.partition_dim(st.data), pf.partition_dim(mv.data)
            if pf.shape(st.data) is None or pf.shape(mv.data) is None:
                continue
            if pf.provably_different(ks, km):
                reporter.at_site(
                    ref.site,
                    f"nisa.nc_matmul: stationary {pf.operand_name(ref.graph, st.node_id)} {q.fmt_shape(pf.shape(st.data))} and moving "
                    f"{pf.operand_name(ref.graph, mv.node_id)} {q.fmt_shape(pf.shape(mv.data))} have different partition dimensions "
                    f"({pf.fmt(ks)} vs {pf.fmt(km)}); the contraction runs over the partitions of both and they "
                    f"must be equal",
                    hint="put the contraction dimension first in both operands, with the same size",
                    kernel=ref.kernel.name,
                )
                continue
            tiles = _tile_size(ref)
            if tiles is not None and tiles[0] < limit and pf.over_always(ks, tiles[0]):
                reporter.at_site(
                    ref.site,
                    f"nisa.nc_matmul: the contraction (partition) size {pf.fmt(ks)} exceeds the row tile size "
                    f"{tiles[0]} given in tile_size={tiles}",
                    hint="slice the contraction dimension to the row tile size, or use a larger tile_size",
                    kernel=ref.kernel.name,
                )
        for ref in pf.ops_named(ctx.model, "nki.language", {"matmul"}):
            ops = _matmul_operands(ref)
            x, y = ops.get("x"), ops.get("y")
            if x is None or y is None or not (pf.on_chip(x.data) and pf.on_chip(y.data)):
                continue
            xs, ys = pf.shape(x.data), pf.shape(y.data)
            if xs is None or ys is None or len(xs) != 2 or len(ys) != 2:
                continue
            transposed = _nl_matmul_transposed(ref)
            if transposed is None:
                continue
            kx = xs[0] if transposed else xs[1]
            ky = ys[0]
            layout = "x is [K, M]" if transposed else "x is [M, K] (no transpose_x)"
            if pf.provably_different(kx, ky):
                reporter.at_site(
                    ref.site,
                    f"nl.matmul: the contraction sizes differ: {layout} gives K = {pf.fmt(kx)} for "
                    f"{pf.operand_name(ref.graph, x.node_id)} {q.fmt_shape(xs)}, but y {pf.operand_name(ref.graph, y.node_id)} {q.fmt_shape(ys)} "
                    f"has {pf.fmt(ky)} partitions",
                    hint="lay out x as [K, M] with transpose_x=True and K equal to y's partition dimension",
                    kernel=ref.kernel.name,
                )
                continue
            if not transposed:
                self._contraction_limit(ctx, reporter, ref, x, xs, kx, limit)

    def _contraction_limit(self, ctx, reporter, ref, x, xs, kx, limit) -> None:
        msg = (
            f"nl.matmul without transpose_x: x {pf.operand_name(ref.graph, x.node_id)} {q.fmt_shape(xs)} is transposed first, so its "
            f"free dimension {pf.fmt(kx)} becomes the contraction on the partitions"
        )
        if pf.over_always(kx, limit):
            reporter.at_site(ref.site, f"{msg}; it is limited to {_limit_text(ctx)}", level=Level.ERROR,
                             hint="slice K into 128-wide blocks and accumulate, or pass x as [K, M] with transpose_x=True",
                             kernel=ref.kernel.name)
            return
        hi = pf.over_maybe(kx, limit)
        if hi is not None:
            reporter.at_site(ref.site, f"{msg}; it may reach {int(hi)} but is limited to {_limit_text(ctx)}",
                             level=Level.WARNING, hint="assert K <= 128 or tile K", kernel=ref.kernel.name)


# =====================================================================
# NKI106
# =====================================================================
class MatmulStationaryFreeOverLimit(Rule):
    id = "NKI106"
    name = "matmul-stationary-free-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "A matmul's stationary operand has more than 128 columns (its free size)"
    explanation = """
The stationary operand of `nc_matmul` is loaded into the 128x128 systolic
array: its free size (all free dimensions flattened) becomes the output's
partition dimension and may not exceed 128 (`nl.tile_size.gemm_stationary_fmax`),
or `column_size` when `tile_size` selects column tiling. For legacy
`nl.matmul(x, y, transpose_x=True)` this is `x`'s free size; without
`transpose_x`, `x`'s partition dimension plays that role and is limited by
the partition count.

**Fix:** split the stationary operand's free dimension into 128-column
slices (`a[:, m * 128:(m + 1) * 128]`), one matmul (and one PSUM tile) per
slice.
"""
    references = (
        f"{_SDK_STUBS} (nc_matmul: tile size)",
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (tile size constraint #3)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                return out
            """,
            lines=[13],
            title="current API: a 256-column stationary operand",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(xT, y):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(xT[0:128, 0:256])
                yt = nl.load(y[0:128, 0:512])
                r = nl.matmul(xt, yt, transpose_x=True)
                return out
            """,
            lines=[9],
            title="legacy nl.matmul: x is [K, 256]",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                for m in range(2):
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a[:, m * 128:(m + 1) * 128], moving=b)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        limit = ctx.target.gemm_stationary_fmax
        for ref in pf.ops_named(ctx.model, "nki.isa", {"nc_matmul"}):
            st = _matmul_operands(ref).get("stationary")
            if st is None or not pf.on_chip(st.data):
                continue
            double = _double_row(ref)
            if double is None:
                continue
            dims = pf.free_dims(st.data)
            if dims is None:
                continue
            if double:
                dims = dims[1:]  # the first free dim (2) belongs to the contraction
            size = pf.product(dims) if len(dims) != 1 else dims[0]
            tiles = _tile_size(ref)
            cap, why = limit, f"{limit} on {ctx.target.name}"
            if tiles is not None and tiles[1] < limit:
                cap, why = tiles[1], f"the column tile size {tiles[1]} (tile_size={tiles})"
            self._judge(ctx, reporter, ref, "nisa.nc_matmul", f"stationary {pf.operand_name(ref.graph, st.node_id)}",
                        q.fmt_shape(pf.shape(st.data)), size, cap, why)
        for ref in pf.ops_named(ctx.model, "nki.language", {"matmul"}):
            x = _matmul_operands(ref).get("x")
            if x is None or not pf.on_chip(x.data) or _nl_matmul_transposed(ref) is not True:
                continue
            xs = pf.shape(x.data)
            if xs is None or len(xs) != 2:
                continue
            self._judge(ctx, reporter, ref, "nl.matmul", f"x {pf.operand_name(ref.graph, x.node_id)} (transpose_x=True)",
                        q.fmt_shape(xs), xs[1], limit, f"{limit} on {ctx.target.name}")

    def _judge(self, ctx, reporter, ref, api, what, shape, size, cap, why) -> None:
        if size is None:
            return
        if pf.over_always(size, cap):
            reporter.at_site(
                ref.site,
                f"{api}: {what} {shape} has a free size of {q.fmt_dim(size)}; the stationary operand is limited to {why}",
                level=Level.ERROR,
                hint=f"split it into {cap}-column slices, one matmul per slice",
                kernel=ref.kernel.name,
            )
            return
        hi = pf.over_maybe(size, cap)
        if hi is not None:
            reporter.at_site(
                ref.site,
                f"{api}: {what} {shape} may have a free size of up to {int(hi)}; the stationary operand is limited "
                f"to {why}",
                level=Level.WARNING,
                hint=f"assert the free size is <= {cap} (nl.tile_size.gemm_stationary_fmax), or tile it",
                kernel=ref.kernel.name,
            )


# =====================================================================
# NKI107
# =====================================================================
class MatmulMovingFreeOverLimit(Rule):
    id = "NKI107"
    name = "matmul-moving-free-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "A matmul's moving operand has more columns than one matmul can stream (512 on trn1/trn2)"
    explanation = """
The moving operand of `nc_matmul` streams through the systolic array; its
free size (all free dimensions flattened) becomes the output's free size.
On trn1 and trn2 (NeuronCore-v2/v3) it may not exceed 512
(`nl.tile_size.gemm_moving_fmax`, the fp32 elements of one PSUM bank). On
trn3 (NeuronCore-v4) it may go up to 4096 with an fp32 `dst` or 8192 with a
bfloat16 `dst` (all eight PSUM banks). Legacy `nl.matmul(x, y)` limits `y`'s
free size the same way.

**Fix:** split the moving operand's free dimension into slices of at most
512 columns (`b[:, n * 512:(n + 1) * 512]`), one matmul and one PSUM tile per
slice.
"""
    references = (
        f"{_SDK_STUBS} (nc_matmul: tile size, NeuronCore-v4 limits)",
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (tile size constraint #2)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                return out
            """,
            lines=[13],
            title="current API: 1024 moving columns on trn2",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(xT, y):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(xT[0:128, 0:128])
                yt = nl.load(y[0:128, 0:1024])
                r = nl.matmul(xt, yt, transpose_x=True)
                return out
            """,
            lines=[9],
            title="legacy nl.matmul: y is [K, 1024]",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                return out
            """,
            title="trn3 streams up to 4096 fp32 columns",
            target="trn3",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                for n in range(2):
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b[:, n * 512:(n + 1) * 512])
                return out
            """,
            title="512-column slices on trn2",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        for ref in pf.ops_named(ctx.model, "nki.isa", {"nc_matmul"}):
            ops = _matmul_operands(ref)
            mv = ops.get("moving")
            if mv is None or not pf.on_chip(mv.data):
                continue
            double = _double_row(ref)
            if double is None:
                continue
            dims = pf.free_dims(mv.data)
            if dims is None:
                continue
            if double:
                dims = dims[1:]
            size = pf.product(dims) if len(dims) != 1 else dims[0]
            cap, why = self._cap(target, ops.get("dst"))
            self._judge(ctx, reporter, ref, "nisa.nc_matmul", f"moving {pf.operand_name(ref.graph, mv.node_id)}",
                        q.fmt_shape(pf.shape(mv.data)), size, cap, why)
        for ref in pf.ops_named(ctx.model, "nki.language", {"matmul"}):
            y = _matmul_operands(ref).get("y")
            if y is None or not pf.on_chip(y.data):
                continue
            ys = pf.shape(y.data)
            if ys is None or len(ys) != 2:
                continue
            cap = target.gemm_moving_fmax
            self._judge(ctx, reporter, ref, "nl.matmul", f"y {pf.operand_name(ref.graph, y.node_id)}", q.fmt_shape(ys), ys[1], cap,
                        f"{cap} on {target.name}")

    @staticmethod
    def _cap(target, dst: pf.Operand | None) -> tuple[int, str]:
        fp32, bf16 = target.gemm_moving_fmax, target.gemm_moving_fmax_bf16_dst
        if fp32 == bf16:
            return fp32, f"{fp32} on {target.name}"
        dtype = pf.dtype_of(dst.data) if dst is not None else None
        if dtype == "float32":
            return fp32, f"{fp32} on {target.name} with a float32 dst"
        if dtype == "bfloat16":
            return bf16, f"{bf16} on {target.name} with a bfloat16 dst"
        return max(fp32, bf16), f"{max(fp32, bf16)} on {target.name}"

    def _judge(self, ctx, reporter, ref, api, what, shape, size, cap, why) -> None:
        if size is None:
            return
        if pf.over_always(size, cap):
            reporter.at_site(
                ref.site,
                f"{api}: {what} {shape} has a free size of {q.fmt_dim(size)}; the moving operand is limited to {why}",
                level=Level.ERROR,
                hint=f"split it into slices of at most {cap} columns, one matmul and PSUM tile per slice",
                kernel=ref.kernel.name,
            )
            return
        hi = pf.over_maybe(size, cap)
        if hi is not None:
            reporter.at_site(
                ref.site,
                f"{api}: {what} {shape} may have a free size of up to {int(hi)}; the moving operand is limited to {why}",
                level=Level.WARNING,
                hint=f"assert the free size is <= {cap} (nl.tile_size.gemm_moving_fmax), or tile it",
                kernel=ref.kernel.name,
            )


# =====================================================================
# NKI108
# =====================================================================
class TransposeOverLimit(Rule):
    id = "NKI108"
    name = "transpose-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "A partition/free transpose is larger than its engine handles (128x128 TensorE, 32x32 VectorE)"
    explanation = """
`nisa.nc_transpose` swaps the partition and free dimensions of a tile (all
free dimensions are flattened first). On the Tensor Engine it is a matmul
with an identity matrix and takes inputs up to `[128, 128]`; on the Vector
Engine (`engine=nisa.engine.vector`) only up to `[32, 32]`. Without an
engine, the compiler picks one, so the input must fit at least 128x128.
`nl.transpose(x)` takes a 2-D tile whose dimensions are both at most 128
(legacy `err_size_of_dimension_exceed_arch_limit`,
`err_exceed_max_supported_dimension`).

**Fix:** transpose in blocks: loop over 128-column slices
(`x[:, j * 128:(j + 1) * 128]`) into separate PSUM tiles (32x32 blocks on
the Vector Engine), or use a DMA transpose for free-free layouts.
"""
    references = (
        f"{_SDK_STUBS} (nc_transpose: tile size)",
        f"{_LEGACY_ERRORS} (err_size_of_dimension_exceed_arch_limit, err_exceed_max_supported_dimension)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                x = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                t = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
                nisa.nc_transpose(dst=t, data=x)
                return t
            """,
            lines=[10],
            title="current API: a 128x512 input",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                x = nl.ndarray((64, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                t = nl.ndarray((64, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.nc_transpose(dst=t, data=x, engine=nisa.engine.vector)
                return t
            """,
            lines=[10],
            title="the Vector Engine transposes at most 32x32",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def tr(a):
                out = nl.ndarray((512, 128), dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a[0:128, 0:512])
                t = nl.transpose(x)
                return out
            """,
            lines=[8],
            title="legacy nl.transpose of a 128x512 tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                x = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                for j in range(4):
                    t = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
                    nisa.nc_transpose(dst=t, data=x[:, j * 128:(j + 1) * 128])
                return t
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        for ref in pf.ops_named(ctx.model, "nki.isa", {"nc_transpose"}):
            data = next((o for o in pf.operands(ref, ("data",))
                         if pf.on_chip(o.data) and pf.trusted_shape(ref.graph, o.node_id)), None)
            if data is None or pf.shape(data.data) is None:
                continue
            engine = pf.api_leaf(pf.param(ref, "engine"))
            if engine is not None and engine.startswith("vector"):
                cap, where = target.vector_transpose_max, "the Vector Engine"
            elif engine is not None and engine.startswith("tensor"):
                cap, where = target.tensor_transpose_max, "the Tensor Engine"
            elif pf.param(ref, "engine") is None or engine in ("unknown", "unknown_engine"):
                cap, where = target.tensor_transpose_max, "either engine"
            else:
                continue
            p, f = pf.partition_dim(data.data), pf.free_size(data.data)
            self._judge(ctx, reporter, ref, "nisa.nc_transpose", data, (("partition", p), ("free", f)), cap, where)
        for ref in pf.ops_named(ctx.model, "nki.language", {"transpose"}):
            x = next((o for o in pf.operands(ref, ("x",))
                      if pf.on_chip(o.data) and pf.trusted_shape(ref.graph, o.node_id)), None)
            if x is None:
                continue
            xs = pf.shape(x.data)
            if xs is None:
                continue
            if len(xs) != 2:
                reporter.at_site(
                    ref.site,
                    f"nl.transpose: {pf.operand_name(ref.graph, x.node_id)} {q.fmt_shape(xs)} has {len(xs)} dimensions; nl.transpose "
                    f"takes a 2-D tile",
                    hint="reshape or slice to a 2-D [P, F] tile, or use nisa.nc_transpose (which flattens free dims)",
                    kernel=ref.kernel.name,
                )
                continue
            self._judge(ctx, reporter, ref, "nl.transpose", x, (("free", xs[1]),), target.tensor_transpose_max,
                        "the Tensor Engine")

    def _judge(self, ctx, reporter, ref, api, operand, dims, cap, where) -> None:
        shape = q.fmt_shape(pf.shape(operand.data))
        name = pf.operand_name(ref.graph, operand.node_id)
        always = [(n, d) for n, d in dims if d is not None and pf.over_always(d, cap)]
        if always:
            sizes = " and a ".join(f"{n} size of {q.fmt_dim(d)}" for n, d in always)
            reporter.at_site(
                ref.site,
                f"{api}: input {name} {shape} has a {sizes}; {where} transposes at most {cap}x{cap} on "
                f"{ctx.target.name}",
                level=Level.ERROR,
                hint=f"transpose {cap}x{cap} blocks in a loop",
                kernel=ref.kernel.name,
            )
            return
        maybe = [(n, pf.over_maybe(d, cap)) for n, d in dims if d is not None]
        maybe = [(n, hi) for n, hi in maybe if hi is not None]
        if maybe:
            sizes = " and a ".join(f"{n} size of up to {int(hi)}" for n, hi in maybe)
            reporter.at_site(
                ref.site,
                f"{api}: input {name} {shape} may have a {sizes}; {where} transposes at most {cap}x{cap} on "
                f"{ctx.target.name}",
                level=Level.WARNING,
                hint=f"assert the sizes are <= {cap}, or transpose in blocks",
                kernel=ref.kernel.name,
            )


# =====================================================================
# NKI109
# =====================================================================
_DMA_TRANSPOSE_AXES = {(1, 0), (2, 1, 0), (3, 1, 2, 0)}


class DmaTransposeShape(Rule):
    id = "NKI109"
    name = "dma-transpose-shape"
    family = "partition"
    level = Level.ERROR
    summary = "nisa.dma_transpose with axes, ranks or (HWDGE) shapes the DMA engines do not support"
    explanation = """
`nisa.dma_transpose` (NeuronCore-v3+) moves the innermost source dimension
onto the partitions. Its documented shape rules:

* `axes` is one of `(1, 0)`, `(2, 1, 0)`, `(3, 1, 2, 0)`: only 2-D, 3-D and
  4-D sources;
* since NKI 0.4, `dst` has the same rank as `src`;
* with `dge_mode=nisa.dge_mode.hwdge` (hardware DGE): a 2-D source has
  `src.shape[0] == 16`; a 3-D/4-D source has `src.shape[0]` in
  `{1, 2, 4, 8, 16}` and `src.shape[0] * src.shape[-2]` a multiple of 16; and
  `src.shape[-1] <= 128` (it becomes the partition dimension).

**Fix:** pass one of the supported `axes`, give `dst` the rank of `src`,
and for hardware DGE tile the source into `[16, <=128]` blocks; otherwise
leave `dge_mode` to the compiler.
"""
    references = (
        f"{_SDK_STUBS} (dma_transpose)",
        "aws-neuron-sdk nki/migration/index.rst (0.3 -> 0.4: dma_transpose dst rank)",
        "aws-neuron-sdk release-notes/components/nki.rst (0.6: src.shape[-1] <= 128)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=t, src=a[0:64, 0:128], axes=(0, 1))
                return t
            """,
            lines=[8],
            title="axes (0, 1) is not a transpose the DMA supports",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=t, src=a[0:64, 0:128], dge_mode=nisa.dge_mode.hwdge)
                return t
            """,
            lines=[8],
            title="hardware DGE: a 2-D source needs 16 rows",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def tr(a):
                out = nl.ndarray((64, 4, 16), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nisa.dma_transpose(a[0:16, 0:4, 0:64], axes=(1, 2, 0))
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API: (1, 2, 0) is not a supported permutation",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                for i in range(4):
                    nisa.dma_transpose(dst=t[:, i * 16:(i + 1) * 16], src=a[i * 16:(i + 1) * 16, 0:128],
                                       dge_mode=nisa.dge_mode.hwdge)
                return t
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        current = not ctx.model.legacy and ctx.nki_version.minor >= 4
        for ref in pf.ops_named(ctx.model, "nki.isa", {"dma_transpose"}):
            ops = {o.param: o for o in pf.operands(ref, ("src", "dst"))}
            src, dst = ops.get("src"), ops.get("dst")
            ss = pf.shape(src.data) if src is not None and pf.trusted_shape(ref.graph, src.node_id) else None
            axes = pf.const_tuple(pf.param(ref, "axes"))
            if axes is not None and axes not in _DMA_TRANSPOSE_AXES:
                reporter.at_site(
                    ref.site,
                    f"nisa.dma_transpose: axes={axes} is not supported; the DMA transposes with (1, 0), (2, 1, 0) or "
                    f"(3, 1, 2, 0) only",
                    hint="use one of the supported permutations (and a 2-D, 3-D or 4-D source)",
                    kernel=ref.kernel.name,
                )
                continue
            if ss is not None and axes is not None and len(axes) != len(ss):
                reporter.at_site(
                    ref.site,
                    f"nisa.dma_transpose: axes={axes} has {len(axes)} entries but src {pf.operand_name(ref.graph, src.node_id)} "
                    f"{q.fmt_shape(ss)} is {len(ss)}-D",
                    hint="give the permutation of the source's rank",
                    kernel=ref.kernel.name,
                )
                continue
            if ss is not None and not 2 <= len(ss) <= 4:
                reporter.at_site(
                    ref.site,
                    f"nisa.dma_transpose: src {pf.operand_name(ref.graph, src.node_id)} {q.fmt_shape(ss)} is {len(ss)}-D; the DMA "
                    f"transposes 2-D, 3-D and 4-D sources only",
                    hint="reshape the source to 2-D [rows, cols]",
                    kernel=ref.kernel.name,
                )
                continue
            ds = pf.shape(dst.data) if dst is not None and pf.trusted_shape(ref.graph, dst.node_id) else None
            if current and ss is not None and ds is not None and len(ss) != len(ds):
                reporter.at_site(
                    ref.site,
                    f"nisa.dma_transpose: dst {pf.operand_name(ref.graph, dst.node_id)} {q.fmt_shape(ds)} is {len(ds)}-D but src "
                    f"{pf.operand_name(ref.graph, src.node_id)} {q.fmt_shape(ss)} is {len(ss)}-D; since NKI 0.4 they must have the "
                    f"same rank",
                    hint="give dst the same rank as src (add unit dimensions)",
                    kernel=ref.kernel.name,
                )
                continue
            if pf.api_leaf(pf.param(ref, "dge_mode")) == "hwdge" and ss is not None:
                self._hwdge(ctx, reporter, ref, src, ss)

    def _hwdge(self, ctx, reporter, ref, src, ss) -> None:
        name, shown = pf.operand_name(ref.graph, src.node_id), q.fmt_shape(ss)
        first, last = const_int(ss[0]), ss[-1]
        problems = []
        if len(ss) == 2 and first is not None and first != 16:
            problems.append(f"a 2-D source must have src.shape[0] == 16 (it is {first})")
        if len(ss) in (3, 4) and first is not None:
            if first not in (1, 2, 4, 8, 16):
                problems.append(f"src.shape[0] must be 1, 2, 4, 8 or 16 (it is {first})")
            else:
                second = const_int(ss[-2])
                if second is not None and (first * second) % 16:
                    problems.append(f"src.shape[0] * src.shape[-2] = {first * second} must be a multiple of 16")
        if pf.over_always(last, ctx.target.partitions):
            problems.append(f"src.shape[-1] = {q.fmt_dim(last)} becomes the partition dimension and must be <= "
                            f"{ctx.target.partitions}")
        if problems:
            reporter.at_site(
                ref.site,
                f"nisa.dma_transpose with hardware DGE: src {name} {shown}: " + "; ".join(problems),
                hint="tile the source into [16, <=128] blocks, or let the compiler choose dge_mode",
                kernel=ref.kernel.name,
            )


# =====================================================================
# NKI110
# =====================================================================
class OneDimensionalArangeIndex(Rule):
    id = "NKI110"
    name = "one-dimensional-arange-index"
    family = "partition"
    level = Level.ERROR
    summary = "A legacy tensor index uses a 1-D nl.arange (it needs [:, None] or [None, :])"
    explanation = """
Legacy NKI index tiles must be at least two-dimensional to match the
partition x free layout of SBUF and PSUM. Indexing a tensor with a plain
`nl.arange(n)` (1-D) is rejected ("Indexing a NKI tensor with 1D arange is
not supported", legacy `err_1d_arange_not_supported`): the compiler cannot
tell whether the index runs over partitions or over the free dimension.

**Fix:** add the missing axis: `nl.arange(n)[:, None]` for a partition
index, `nl.arange(n)[None, :]` for a free index, use `nl.mgrid`, or use a
plain slice such as `t[0:64, 0]`.
"""
    references = (f"{_LEGACY_ERRORS} (err_1d_arange_not_supported)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                tmp = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                i = nl.arange(64)
                c = nl.exp(tmp[i, 0])
                return out
            """,
            lines=[9],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                tmp = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                i = nl.arange(64)[:, None]
                c = nl.exp(tmp[i, 0])
                nl.store(out, value=c)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        model = ctx.model
        arange_names = _ArangeNames(ctx)
        for kernel, graph in model.graphs():
            for view_id, data in graph.views():
                items = data.get("index_v") or ()
                if not any(isinstance(x, IndexV) and len(x.axis_shape) == 1 for x in items):
                    continue
                site = data.get("site")
                if site is None or not model.in_this_file(site) or not isinstance(site.node, ast.Subscript):
                    continue
                # The model keeps some 2-D index expressions 1-D (arange(n)[:, None, None],
                # i_p * F + i_f): only an index that is syntactically a bare nl.arange counts.
                elts = site.node.slice.elts if isinstance(site.node.slice, ast.Tuple) else [site.node.slice]
                bare = [e for e in elts if arange_names.is_bare_arange(e, site.node)]
                if not bare:
                    continue
                reporter.at_site(
                    site,
                    f"{pf.operand_name(graph, view_id)} is indexed with a 1-D nl.arange "
                    f"({ast.unparse(bare[0])}); index tiles must be 2-D to say which axis they run over",
                    hint="use nl.arange(n)[:, None] for a partition index or nl.arange(n)[None, :] for a free index",
                    kernel=kernel.name,
                )


class _ArangeNames:
    """Which names are bound only to bare ``nl.arange(...)`` calls, per function."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.functions: list[tuple[ast.AST, dict[str, list[ast.AST]]]] | None = None

    def _build(self) -> None:
        self.functions = []
        for fn in self.ctx.source.nodes:
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names: dict[str, list[ast.AST]] = {}
                for node in ast.walk(fn):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if isinstance(target, ast.Name):
                                names.setdefault(target.id, []).append(node.value)
                            elif isinstance(target, (ast.Tuple, ast.List)):
                                for elt in target.elts:
                                    if isinstance(elt, ast.Name):
                                        names.setdefault(elt.id, []).append(target)  # not a bare call
                    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
                        target = node.target
                        if isinstance(target, ast.Name):
                            names.setdefault(target.id, []).append(node)
                self.functions.append((fn, names))

    def _is_arange_call(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        qual = self.ctx.model.bindings.resolve(node.func)
        return qual is not None and qual.name == "nki.language.arange"

    def is_bare_arange(self, expr: ast.AST, at: ast.AST) -> bool:
        if self._is_arange_call(expr):
            return True
        if not isinstance(expr, ast.Name):
            return False
        if self.functions is None:
            self._build()
        line = getattr(at, "lineno", 0)
        enclosing = [
            (fn, names) for fn, names in self.functions or ()
            if fn.lineno <= line <= (getattr(fn, "end_lineno", None) or fn.lineno)
        ]
        if not enclosing:
            return False
        fn, names = max(enclosing, key=lambda x: x[0].lineno)
        values = names.get(expr.id)
        return bool(values) and all(self._is_arange_call(v) for v in values)


# =====================================================================
# NKI111
# =====================================================================
class PartitionStartMisaligned(Rule):
    id = "NKI111"
    name = "partition-start-misaligned"
    family = "partition"
    level = Level.ERROR
    summary = "A Vector/Scalar-engine operand starts off a quadrant boundary (start-partition rule)"
    explanation = """
Vector and Scalar Engine instructions access SBUF/PSUM tiles that start at
restricted partitions. The Trainium/Inferentia2 architecture guide states
the rule by the number of partitions the operand spans:

* more than 64 partitions: start at partition 0;
* 33 to 64 partitions: start at 0 or 64;
* 1 to 32 partitions: start at 0, 32, 64 or 96 (a quadrant boundary).

The compiler's allocator places whole tensors accordingly, but a slice such
as `t[16:48, :]` passed to a compute instruction starts wherever the slice
says. A start that is not a multiple of 32 is an error on every generation
(nki-library's `cross_partition_copy` states it for `tensor_copy` on current
hardware). The size-dependent part is documented for NeuronCore-v2 (trn1)
only and is a warning on trn2/trn3, where nki-library copies more than 32
partitions from any 32-aligned start. DMA instructions (`dma_copy`,
`nl.load`/`nl.store`), GpSimd instructions and MX-scale packing are exempt.
The rule only reports starts it can decide: slices of compiler-placed
tensors with known offsets.

**Fix:** slice at a quadrant boundary, copy through a quadrant-aligned
temporary, or move data across partitions with `nc_stream_shuffle` / a DMA
(see nki-library `core/utils/cross_partition_copy.py`).
"""
    references = (
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (SBUF/PSUM access: start_partition)",
        "nki-library src/nkilib_src/nkilib/core/utils/cross_partition_copy.py",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def shift(a):
                x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=y[16:48, :], src=x[0:32, :])
                return y
            """,
            lines=[10],
            title="current API: 32 partitions starting at 16",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def half(a):
                out = nl.ndarray((64, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a[0:128, 0:512])
                y = nl.exp(x[32:96, :])
                nl.store(out, value=y)
                return out
            """,
            lines=[8],
            title="legacy API: 64 partitions starting at 32 (documented for trn1)",
            target="trn1",
            level=Level.ERROR,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def shift(a):
                x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=y[32:64, :], src=x[0:32, :])
                nisa.tensor_copy(dst=y[64:128, :], src=x[0:64, :])
                nisa.dma_copy(dst=y[5:6, :], src=x[9:10, :])
                return y
            """,
            title="quadrant-aligned compute copies; DMA may start anywhere",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        partitions = ctx.target.partitions
        quadrant = partitions // 4
        for ref in q.ops(ctx.model, ("nki.isa.", "nki.language.")):
            data = ref.data
            short = pf.short_api(ref)
            if pf.api_module(ref) == "nki.isa":
                if short not in _QUADRANT_ISA:
                    continue
            elif data.get("assignment") or data.get("engine") in ("dma", "none", "tensor") or short in _NOT_ELEMENTWISE:
                continue
            engine = pf.api_leaf(pf.param(ref, "engine"))
            if data.get("engine") == "gpsimd" or (engine is not None and engine.startswith("gpsimd")):
                continue
            for o in pf.operands(ref):
                if not pf.on_chip(o.data):
                    continue
                start = pf.partition_start(ref.graph, o.node_id)
                size = pf.partition_dim(o.data)
                if start is None or size is None:
                    continue
                verdict = _start_verdict(start, size, partitions, quadrant)
                if verdict is None:
                    continue
                allowed, off_quadrant = verdict
                # Off a quadrant boundary: wrong everywhere. Too many partitions for
                # an aligned start: documented for NeuronCore-v2 only.
                level = Level.ERROR if off_quadrant or ctx.target.generation <= 2 else Level.WARNING
                if not off_quadrant and level is Level.WARNING:
                    allowed += f" (documented for trn1; check on {ctx.target.name})"
                reporter.at_site(
                    ref.site,
                    f"{pf.call_label(ref)}: {o.param} {pf.operand_name(ref.graph, o.node_id)} spans "
                    f"{q.fmt_dim(size)} partitions starting at partition {q.fmt_dim(start)}; {allowed}",
                    level=level,
                    hint="start the slice at a quadrant boundary (0/32/64/96; 0/64 above 32 partitions; 0 above 64), "
                    "or copy through an aligned temporary",
                    kernel=ref.kernel.name,
                )


# Vector / Scalar / GpSimd instructions the start-partition rule is documented
# for (the arch guide's "src/dst tensor of an instruction"; nki-library's
# cross_partition_copy for tensor_copy). Left out: TensorE (row tiling has its
# own rules), MX quantize/matmul scales (packed inside quadrants on purpose,
# aws-neuron-sdk nki/deep-dives/mxfp-matmul.rst), shuffles and DMA.
_QUADRANT_ISA = set(_SAME_PARTITIONS) | {"memset"}
_NOT_ELEMENTWISE = {"load", "store", "load_transpose2d", "matmul", "transpose", "atomic_rmw", "gather_flattened",
                    "broadcast_to", "shared_constant", "shared_identity_matrix"}


def _start_verdict(start, size, partitions: int, quadrant: int) -> tuple[str, bool] | None:
    """(what is allowed, whether the start is off a quadrant boundary), or
    None when the operand is fine or the start is not decidable. A violation
    must hold for every size the code allows."""
    s = const_int(start)
    lo_n = q.lower(size)
    if lo_n is None or lo_n < 1:
        return None
    if s is None:
        form = linear(start)
        if form is None:
            return None
        terms, offset = form
        if terms and all(c % quadrant == 0 for c in terms.values()) and offset % quadrant:
            return (f"a compute-engine operand starts on a multiple of {quadrant} partitions", True)
        return None
    if s >= partitions or s <= 0:
        return None  # start 0 always allowed (oversize is NKI101); out of bounds is not this rule's business
    if s % quadrant:
        return (f"a compute-engine operand starts on a multiple of {quadrant} partitions", True)
    half = partitions // 2
    max_n = half if s % half == 0 else quadrant
    if lo_n <= max_n:
        return None
    return (
        f"an operand starting at partition {s} may span at most {max_n} partitions "
        f"(more than {quadrant}: start 0 or {half}; more than {half}: start 0)",
        False,
    )