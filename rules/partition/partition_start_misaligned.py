"""NKI111 partition-start-misaligned: a compute operand starts off a quadrant boundary."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.values import const_int, linear
from nkilint.model.views import ops
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._operands import SAME_PARTITIONS
from ._shapes import api_leaf, operands


class PartitionStartMisaligned(Rule):
    id = "NKI111"
    name = "partition-start-misaligned"
    family = "partition"
    level = Level.ERROR
    summary = "A Vector/Scalar-engine operand starts off a quadrant boundary (start-partition rule)"
    explanation = """
Finds Vector, Scalar and other compute-engine operands (slices of on-chip
tiles) that start at a partition the engines cannot access from, for the
number of partitions they span. A start that is not a multiple of 32 is an
error on every generation (nki-library's `cross_partition_copy` states it
for `tensor_copy` on current hardware). The size-dependent part is
documented for NeuronCore-v2 (trn1) only and is a warning on trn2/trn3,
where nki-library copies more than 32 partitions from any 32-aligned start.
DMA instructions (`dma_copy`, `nl.load`/`nl.store`), GpSimd instructions and
MX-scale packing are exempt. The rule only reports starts it can decide:
slices of compiler-placed tensors with known offsets.

**Why on Trainium:** Vector and Scalar Engine instructions access SBUF/PSUM
tiles that start at restricted partitions. The Trainium/Inferentia2
architecture guide states the rule by the number of partitions the operand
spans:

* more than 64 partitions: start at partition 0;
* 33 to 64 partitions: start at 0 or 64;
* 1 to 32 partitions: start at 0, 32, 64 or 96 (a quadrant boundary).

The compiler's allocator places whole tensors accordingly, but a slice such
as `t[16:48, :]` passed to a compute instruction starts wherever the slice
says.

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
        for op in ops(ctx.model, prefix=("nki.isa.", "nki.language.")):
            if op.module == "nki.isa":
                if op.short not in _QUADRANT_ISA:
                    continue
            elif op.assignment or op.engine in ("dma", "none", "tensor") or op.short in _NOT_ELEMENTWISE:
                continue
            engine = api_leaf(op.param("engine"))
            if op.engine == "gpsimd" or (engine is not None and engine.startswith("gpsimd")):
                continue
            for o in operands(op):
                t = o.node
                if not t.on_chip:
                    continue
                start = t.partition_start
                size = t.partition_size
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
                    op.site,
                    f"{op.label}: {o.param} {t.label} spans "
                    f"{q.fmt_dim(size)} partitions starting at partition {q.fmt_dim(start)}; {allowed}",
                    level=level,
                    hint="start the slice at a quadrant boundary (0/32/64/96; 0/64 above 32 partitions; 0 above 64), "
                    "or copy through an aligned temporary",
                    kernel=op.kernel.name,
                )


# Vector / Scalar / GpSimd instructions the start-partition rule is documented
# for (the arch guide's "src/dst tensor of an instruction"; nki-library's
# cross_partition_copy for tensor_copy). Left out: TensorE (row tiling has its
# own rules), MX quantize/matmul scales (packed inside quadrants on purpose,
# aws-neuron-sdk nki/deep-dives/mxfp-matmul.rst), shuffles and DMA.
_QUADRANT_ISA = set(SAME_PARTITIONS) | {"memset"}
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
