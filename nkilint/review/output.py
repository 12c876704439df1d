"""Turn a review into the text of one format (and, for Markdown written to a
file, the SVG pictures it links to, written next to it)."""

from __future__ import annotations

import json
from pathlib import Path

from .report import Review


def pictures(review: Review, stem: str) -> tuple[dict[tuple[int, str], str], dict[str, str]]:
    """({(kernel index, kind): relative file name}, {file name: SVG text})."""
    from .graph_picture import graph_svg
    from .charts import psum_banks, sbuf_bar

    links: dict[tuple[int, str], str] = {}
    files: dict[str, str] = {}
    for index, k in enumerate(review.kernels()):
        uid = f"k{index}"
        svgs = {"graph": graph_svg(k.kernel, uid)[0]}
        if k.memory is not None:
            svgs["sbuf"] = sbuf_bar(k.memory, uid)
            svgs["psum"] = psum_banks(k.memory, uid)
        for kind, svg in svgs.items():
            name = f"{stem}-{index}-{k.card.name.replace('.', '_')}-{kind}.svg"
            links[(index, kind)] = name
            files[name] = '<?xml version="1.0" encoding="UTF-8"?>\n' + svg + "\n"
    return links, files


def render(review: Review, fmt: str, output: str | None) -> tuple[str, dict[str, str]]:
    """(report text, {path: content} of files to write next to it)."""
    if fmt == "json":
        return json.dumps(review.to_json(), indent=2) + "\n", {}
    if fmt == "markdown":
        from .render_markdown import render_markdown

        if output is None:
            return render_markdown(review), {}
        out = Path(output)
        links, files = pictures(review, out.stem)
        return render_markdown(review, links), {str(out.parent / name): text for name, text in files.items()}
    if fmt == "html":
        from .render_html import render_html

        return render_html(review), {}
    raise ValueError(f"unknown format {fmt!r}")


__all__ = ["render", "pictures"]
