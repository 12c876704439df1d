"""NKI733 grid-allocation-shape: nl.alloc_tiles / nl.alloc_blocks shapes the API pages say are rejected (a list
for a shape, a nonpositive entry, a tile of fewer than two dimensions or of more dimensions than the elements, a
block_shape of another rank than tile_shape)."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.graph import GridAllocIssue
from nkilint.releases import ALLOWED, FACTS
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter, error_or_warning

_DOCS = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/"


def _message(issue: GridAllocIssue) -> tuple[str, str]:
    """(message, hint) for one rejected shape."""
    name = "nl." + issue.api.rsplit(".", 1)[-1]
    if issue.kind == "not-a-tuple":
        return (f"`{name}({issue.detail}=[...])` is a list: the shapes must be tuples of Python integers, and a "
                "list raises a TypeError",
                f"write {issue.detail}=(...) (a tuple)")
    if issue.kind == "nonpositive":
        return (f"`{name}`: {issue.detail} — every shape entry must be positive (ValueError)",
                "use a positive extent; drop the dimension instead of giving it 0")
    if issue.kind == "tile-rank":
        return (f"`{name}`: tile_shape has {issue.detail} dimension(s); a tile has at least two (partition and "
                "free), so the call raises a ValueError",
                "give the tile its partition and free extents, e.g. tile_shape=(128, 512)")
    if issue.kind == "tile-over-element":
        return (f"`{name}`: tile_shape has more dimensions than element_shape ({issue.detail}); the tile applies to "
                "the trailing dimensions of element_shape, so the call raises a ValueError",
                "give element_shape at least as many dimensions as tile_shape")
    return (f"`{name}`: block_shape and tile_shape have different ranks ({issue.detail}); block_shape counts tiles "
            "along each tiled dimension, so its rank must equal tile_shape's",
            "give block_shape one tile count per tile dimension, e.g. block_shape=(2, 2) for a 2-D tile")


class GridAllocationShape(Rule):
    id = "NKI733"
    name = "grid-allocation-shape"
    family = "semantics"
    level = Level.ERROR
    summary = "nl.alloc_tiles / nl.alloc_blocks with shapes the API rejects: a list, a nonpositive entry, a tile rank below two or above element_shape's, a block_shape of another rank"
    explanation = f"""
NKI 0.7 (Neuron SDK 2.33) allocates tiled on-chip or HBM storage with
`nl.alloc_tiles(tile_shape=, element_shape=, buffer=, dtype=)` and
`nl.alloc_blocks(..., block_shape=)`. The API pages state what they reject,
and the rule checks what the source decides (literal shapes, or shapes the
analysis computed exactly):

* **a list for a shape** (`alloc_tiles`): "TypeError – if a shape is not a
  tuple of exact Python integers";
* **a nonpositive entry** in `tile_shape`, `element_shape` or `block_shape`
  ("ValueError – if a shape entry is nonpositive"; the `alloc_blocks`
  parameters are "positive");
* **a `tile_shape` of fewer than two dimensions, or of more dimensions than
  `element_shape`** (ValueError; the tile "applies to the trailing
  dimensions of element_shape");
* **a `block_shape` whose rank differs from `tile_shape`'s** (`alloc_blocks`:
  "Its rank must equal tile_shape").

Missing or positional arguments (both functions are keyword-only) are
NKI727. A call inside a branch the analysis could not decide is a warning.

**Why on Trainium:** a tile is the operand of one engine instruction, a
partition extent by free elements, so it has at least two dimensions;
the grid's backing allocation is sized from these shapes when the kernel
is traced, and the tracer refuses shapes it cannot lay out.

**Fix:** tuples of positive integers; a 2-D (or larger) tile that fits the
trailing dimensions of `element_shape`; one block count per tile
dimension.

**Releases:** the grid allocations exist from NKI 0.7 (SDK 2.33); the
rule has nothing to report on older code.

Sources: {_DOCS}nki.language.alloc_tiles.html,
{_DOCS}nki.language.alloc_blocks.html.
"""
    references = (f"{_DOCS}nki.language.alloc_tiles.html", f"{_DOCS}nki.language.alloc_blocks.html")
    examples = (
        invalid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def stage(src):
                assert src.shape == (512, 1024)
                tiles = nl.alloc_tiles(tile_shape=[128, 256], element_shape=(512, 1024), buffer=nl.sbuf,
                                       dtype=nl.float32)
                rows = nl.alloc_tiles(tile_shape=(512,), element_shape=(512,), buffer=nl.sbuf, dtype=nl.float32)
                blocks = nl.alloc_blocks(tile_shape=(128, 256), block_shape=(2,), element_shape=(512, 1024),
                                         buffer=nl.shared_hbm, dtype=nl.float32)
                nisa.dma_copy(dst=blocks[0, 0].data, src=src[0:256, 0:512])
                return blocks
            """,
            lines=[8, 10, 11],
            title="a list tile_shape, a 1-D tile, a 1-D block_shape for a 2-D tile",
        ),
        valid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def stage(src):
                assert src.shape == (512, 1024)
                tile = (128, 256)
                tiles = nl.alloc_tiles(tile_shape=tile, element_shape=(512, 1024), buffer=nl.sbuf, dtype=nl.float32)
                blocks = nl.alloc_blocks(tile_shape=tile, block_shape=(2, 2), element_shape=(4, 512, 1024),
                                         buffer=nl.shared_hbm, dtype=nl.float32)
                nisa.dma_copy(dst=tiles[0, 0].data, src=src[0:128, 0:256])
                nisa.dma_copy(dst=blocks[0, 0, 0].data, src=src[0:256, 0:512])
                return blocks
            """,
            title="tuples, a 2-D tile, an untiled leading dimension, one block count per tile dimension",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        # The APIs exist from SDK 2.33 (release fact "tile-grids"); before,
        # other rules report the names themselves.
        if FACTS.status("tile-grids", ctx.release).status is not ALLOWED:
            return
        reporter = Reporter(ctx)
        seen: set[tuple[int, str, str]] = set()
        for kernel, graph in ctx.model.graphs():
            for issue in graph.grid_alloc_issues:
                key = (id(issue.site.node), issue.kind, issue.detail)
                if key in seen:
                    continue
                seen.add(key)
                message, hint = _message(issue)
                if issue.conditional:
                    message += " (on the paths that reach this branch)"
                reporter.at_site(issue.site, message, hint=hint, level=error_or_warning(not issue.conditional),
                                 kernel=kernel.base_name)
