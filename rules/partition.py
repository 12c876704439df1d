"""Partition family (NKI1xx): the 128-partition dimension of SBUF and PSUM.

Facts: ../shared/NKI-REFERENCE.md section 3.A (PD01, PD02) and the
architecture guides: SBUF and PSUM have 128 partitions on every generation;
the first dimension of an on-chip tile (or the ``par_dim`` in legacy block
layouts) is the partition dimension.
"""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.rule import Rule, invalid, valid

from ._common import Reporter


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
it can never exceed `nl.tile_size.pmax` (128). The compiler rejects larger
tiles; this rule finds them in allocations (`nl.ndarray`, `nl.zeros`, ...),
in tiles returned by legacy `nl.load` (sized by the HBM slice) and in the
results of legacy compute calls. HBM tensors have no partition dimension and
are exempt.

The finding is an error when every value the code allows is too large, and
a warning that names the bound when only some are (for example
`assert K <= 256` leaves room for K > 128).

**Fix:** tile the data: loop over blocks of at most 128 rows
(`for i in range(n // 128)` with `t[i * 128:(i + 1) * 128, :]`), or fold
the extra rows into a free dimension (a `(256, F)` tile becomes
`(128, 2, F)` or `(128, 2 * F)`).
"""
    references = (
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (tile size constraints)",
        "aws-neuron-sdk general/arch/neuron-hardware/trainium2_arch.rst (SBUF partitions)",
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
            lines=[9, 10, 11],
            title="legacy API: nl.load of a 256-row slice (the sum is 256 rows too)",
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
    )

    def check(self, ctx: RuleContext) -> None:
        limit = ctx.target.partitions
        reporter = Reporter(ctx)
        for ref in q.tensors(ctx.model, buffers=q.ON_CHIP, origins=("alloc", "result")):
            data = ref.data
            size = q.partition_size(data)
            if size is None:
                continue
            lo, hi = q.lower(size), q.upper(size)
            if lo is None or hi is None:
                continue
            name = q.tensor_name(data)
            buffer = data.get("buffer", "").upper()
            shape = q.fmt_shape(q.shape_of(data))
            where = "partition dimension" if not data.get("partition_axis") else "par_dim"
            if lo > limit:
                reporter.at_site(
                    ref.site,
                    f"{buffer} tensor {name} has {q.fmt_dim(size)} partitions {shape}; the {where} is limited to "
                    f"{limit} on {ctx.target.name}",
                    level=Level.ERROR,
                    hint=f"loop over blocks of at most {limit} rows, or fold the extra rows into a free dimension",
                    kernel=ref.kernel.name,
                )
            elif hi > limit and hi != float("inf"):
                reporter.at_site(
                    ref.site,
                    f"{buffer} tensor {name} may span up to {int(hi)} partitions {shape}: {q.fmt_dim(size)} exceeds "
                    f"the {limit}-partition limit of {ctx.target.name} unless it is at most {limit}",
                    level=Level.WARNING,
                    hint=f"assert the size is <= {limit} (nl.tile_size.pmax), or tile the partition dimension",
                    kernel=ref.kernel.name,
                )
