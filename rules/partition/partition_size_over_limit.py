"""NKI101 partition-size-over-limit: an SBUF or PSUM tensor spans more than 128 partitions."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.graph import ON_CHIP
from nkilint.model.values import IndexV, const_int
from nkilint.model.views import Op, Tensor, TensorLike, node, tensors, views
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._shapes import LEGACY_ERRORS, limit_text, over_always, over_maybe, provably_equal


class PartitionSizeOverLimit(Rule):
    id = "NKI101"
    name = "partition-size-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "An SBUF or PSUM tensor spans more partitions than the hardware has (128)"
    explanation = """
Finds on-chip tiles whose partition dimension (the first dimension, or the
legacy `par_dim`) is larger than the hardware's 128 partitions: in
allocations (`nl.ndarray`, `nl.zeros`, `*_like`, ...; this includes the
SBUF side of a `dma_copy`), in tiles returned by legacy `nl.load` /
`nl.load_transpose2d` (sized by the HBM slice), in the results of legacy
compute calls, and in on-chip tiles addressed with legacy `nl.arange` /
`nl.mgrid` indices. HBM tensors have no partition dimension and are exempt.
When a legacy result tile only inherits an oversized partition dimension
from its input, only the input (the root cause) is reported. The finding is
an error when every value the code allows is too large, and a warning that
names the bound when only some are (for example `assert K <= 256` leaves
room for K > 128). A bound that comes from compound arithmetic
(`x + x % 2`) is not trusted and gives no warning.

**Why on Trainium:** SBUF and PSUM are two-dimensional memories of 128
partitions on every Trainium generation. The partition dimension of an
on-chip tensor maps onto those partitions, so it can never exceed
`nl.tile_size.pmax` (128); the compiler stops with "Size of partition
dimension 256 exceeds architecture limitation of 128" (legacy
`err_num_partition_exceed_arch_limit`).

**Fix:** tile the data: loop over blocks of at most 128 rows
(`for i in range(n // 128)` with `t[i * 128:(i + 1) * 128, :]`), or fold
the extra rows into a free dimension (a `(256, F)` tile becomes
`(128, 2, F)` or `(128, 2 * F)`).
"""
    references = (
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (tile size constraint #1)",
        "aws-neuron-sdk general/arch/neuron-hardware/trainium2_arch.rst (SBUF partitions)",
        f"{LEGACY_ERRORS} (err_num_partition_exceed_arch_limit)",
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
        for t in tensors(ctx.model, buffers=ON_CHIP, origins=("alloc", "result")):
            size = t.partition_size
            if size is None:
                continue
            if t.origin == "result" and (not t.shape_trusted or _inherits_oversize(t, size, limit)):
                continue
            where = "partition dimension" if not t.partition_axis else "par_dim"
            what = f"{t.buffer.upper()} tensor {t.name}"
            self._judge(ctx, reporter, t.site, t.kernel.name, what, size, q.fmt_shape(t.shape), where, limit)
        # Legacy tiles addressed by nl.arange / nl.mgrid: the index decides the tile's partitions.
        for v in views(ctx.model):
            if not v.on_chip:
                continue
            items = v.index_v or ()
            first = items[0] if items else None
            # Only a partition index the model shapes reliably: arange(n)[:, None] or mgrid
            # (it keeps arange(n)[:, None, None] 1-D and combined index expressions partial).
            if not isinstance(first, IndexV) or len(first.axis_shape) < 2 or const_int(first.axis_shape[0]) == 1:
                continue
            base_size = v.base.partition_size
            if over_always(base_size, limit) or over_maybe(base_size, limit):
                continue  # the tensor itself is reported
            self._judge(ctx, reporter, v.site, v.kernel.name, f"tile {v.label}", first.extent, q.fmt_shape(v.shape),
                        "index's partition extent", limit)

    def _judge(self, ctx, reporter, site, kernel, what, size, shape, where, limit) -> None:
        if over_always(size, limit):
            reporter.at_site(
                site,
                f"{what} has {q.fmt_dim(size)} partitions {shape}; the {where} is limited to {limit_text(ctx)}",
                level=Level.ERROR,
                hint=f"loop over blocks of at most {limit} rows, or fold the extra rows into a free dimension",
                kernel=kernel,
            )
            return
        hi = over_maybe(size, limit)
        if hi is not None:
            reporter.at_site(
                site,
                f"{what} may span up to {int(hi)} partitions {shape}: {q.fmt_dim(size)} exceeds the "
                f"{limit}-partition limit of {ctx.target.name} unless it is at most {limit}",
                level=Level.WARNING,
                hint=f"assert the size is <= {limit} (nl.tile_size.pmax), or tile the partition dimension",
                kernel=kernel,
            )


def _inherits_oversize(t: Tensor, size, limit: int) -> bool:
    """A legacy result tile whose partition size is an oversized dimension of
    an on-chip input: the input (an oversized tile, or a matmul/transpose
    operand that NKI105-NKI108 report) is the root cause."""
    if not (over_always(size, limit) or over_maybe(size, limit)):
        return False
    g = t.graph
    for op_id, _, _ in g.edges_of(t.id, "writes", out=False):
        # Matmul / PE-transpose results take their partitions from an input's
        # free dimension (reported by NKI106 / NKI108); other results from an
        # input's partition dimension (reported by this rule on the input).
        any_dim = Op(g, op_id).short in ("matmul", "nc_matmul", "transpose", "nc_transpose")
        for src, _ in g.reads(op_id):
            source = node(g, src)
            if not isinstance(source, TensorLike) or not source.on_chip:
                continue
            dims = source.shape or () if any_dim else (source.partition_size,)
            if any(dim is not None and provably_equal(dim, size) for dim in dims):
                return True
    return False
