"""How the pipeline rules report: once per place, and the words their messages use."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.model import query as q
from nkilint.model.graph import KernelGraph
from nkilint.versions import V0_3

from .._common import Reporter


class OncePerSite(Reporter):
    """One finding per reported place: a helper analysed in several contexts
    (two kernels, or a kernel and on its own) may get different messages for
    the same line; the first (kernels are analysed in source order) wins."""

    def __init__(self, ctx: RuleContext) -> None:
        super().__init__(ctx)
        self.places: set[int] = set()

    def at_site(self, site, message: str, **kwargs) -> bool:
        node = self.ctx.model.report_node(site)
        if node is None or id(node) in self.places:
            return False
        if super().at_site(site, message, **kwargs):
            self.places.add(id(node))
            return True
        return False


def old_loop_semantics(ctx: RuleContext) -> bool:
    """Legacy NKI and NKI 0.2 keep affine_range/sequential_range loops rolled
    (0.3 and later unroll every static loop)."""
    return ctx.model.legacy or ctx.nki_version < V0_3


def operand_text(graph: KernelGraph, node_id: str) -> str:
    """``x[i * 128:(i + 1) * 128, 0:512]`` for a view, ``x`` for a tensor."""
    data = graph.attrs(node_id)
    base_id = graph.base_tensor(node_id)
    base = graph.attrs(base_id)
    name = base.get("name") or q.tensor_name(base)
    if node_id == base_id:
        return name
    index = data.get("index") or ""
    if index.startswith("(") and index.endswith(")") and data.get("index_v") is not None and len(data["index_v"]) > 1:
        index = index[1:-1]
    if index.startswith("."):
        return f"{name}{index}"
    return f"{name}[{index}]"


def loop_words(trips: str) -> str:
    return "1 iteration" if trips == "1" else f"{trips} iterations"


def line_of(data: dict) -> int | None:
    site = data.get("site")
    return getattr(site.node, "lineno", None) if site is not None else None
