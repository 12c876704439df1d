"""The review as Markdown for a pull-request comment: the summary table
first, each kernel's sections in ``<details>`` blocks, pictures as links to
SVG files written next to the report (``images``)."""

from __future__ import annotations

from .charts import INSTALL_HINT, have_pygal
from .quantity import fmt_bytes
from .report import KernelReview, Review
from .rubric import RUBRIC_TITLES, RUBRICS, ReviewFinding
from .text import (
    buffer_row, card_rows, cost_headline, intensity_text, loop_row, param_rows, psum_headline, qbytes,
    sbuf_headline, sorted_findings, term_row,
)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: tuple[str, ...], rows: list[tuple]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)
    return out


def _fence(text: str, lang: str = "") -> list[str]:
    fence = "````" if "```" in text else "```"
    return [fence + lang, *text.rstrip("\n").split("\n"), fence]


def _details(summary: str, body: list[str], open_: bool = False) -> list[str]:
    return [f"<details{' open' if open_ else ''}><summary>{summary}</summary>", ""] + body + ["", "</details>", ""]


def _finding(f: ReviewFinding) -> list[str]:
    out = [f"- **{f.rule_id}** `{f.rule_name}` [{f.level}] line {f.line}: {f.message}", ""]
    width = len(str(f.excerpt[-1][0])) if f.excerpt else 1
    excerpt = "\n".join(f"{n:>{width}} | {t}" for n, t in f.excerpt)
    out.extend("  " + line for line in _fence(excerpt, "text"))
    if f.hint:
        out.extend(["", f"  hint: {f.hint}"])
    if f.fix_diff:
        out.extend(["", f"  fix ({'safe' if f.fix_safe else 'unsafe: review it'}):", ""])
        out.extend("  " + line for line in _fence(f.fix_diff, "diff"))
    out.append("")
    return out


def _findings(groups: dict[str, list[ReviewFinding]]) -> list[str]:
    out = []
    for rubric in RUBRICS:
        fs = groups.get(rubric, [])
        out.append(f"**{RUBRIC_TITLES[rubric]}** ({len(fs)})")
        out.append("")
        if not fs:
            out.extend(["No findings.", ""])
        for f in sorted_findings(fs):
            out.extend(_finding(f))
    return out


def _kernel(k: KernelReview, index: int, images: dict) -> list[str]:
    c = k.card
    out = [f"## `{c.name}` ({c.file}:{c.line})", ""]
    out.extend(_table(("", ""), card_rows(c)))
    out.append("")
    if c.params:
        out.extend(_table(("parameter", "shape", "dtype", "memory"), param_rows(c)))
        out.append("")
    if k.error:
        out.extend([f"> {k.error}", ""])
    m = k.memory
    if m is not None:
        body = [f"SBUF: {sbuf_headline(m)}.", ""]
        if (index, "sbuf") in images:
            body.extend([f"![SBUF per partition]({images[(index, 'sbuf')]})", ""])
        body.extend(_table(("buffer", "shape", "bytes per partition", "PSUM banks", "live (lines)", ""),
                           [buffer_row(b) for b in m.sbuf + m.psum]))
        body.extend(["", f"PSUM: {psum_headline(m)}.", ""])
        if (index, "psum") in images:
            body.extend([f"![PSUM banks]({images[(index, 'psum')]})", ""])
        body.append(f"_Counted as the memory model counts: {m.assumptions}._")
        if (index, "sbuf") in images and not have_pygal():
            body.extend(["", f"_The memory {INSTALL_HINT}._"])
        out.extend(_details(f"Memory: SBUF {qbytes(m.sbuf_peak)}, PSUM {m.psum_peak.text()} of {m.psum_banks} banks", body))
    if (index, "graph") in images:
        out.extend(_details("Kernel graph", [f"![kernel graph]({images[(index, 'graph')]})"]))
    if k.loops:
        out.extend(_details(f"Loop nest: {len(k.loops)} loop{'s' if len(k.loops) != 1 else ''}", _table(
            ("loop", "line", "kind", "trips", "DMA in / iteration", "DMA out / iteration", "engines"),
            [loop_row(r) for r in k.loops])))
    cost = k.cost
    body = [f"HBM read {qbytes(cost.hbm_read)}, written {qbytes(cost.hbm_written)}; "
            f"arithmetic intensity {intensity_text(cost)}.", ""]
    body.extend(_table(("resource", "work per launch", "time at peak", "peak rate"), [term_row(t) for t in cost.terms]))
    body.extend(["", "Assumptions:", ""] + [f"- {a}" for a in cost.assumptions])
    out.extend(_details(f"Cost estimate: {cost_headline(cost)}", body))
    total = len(k.findings)
    out.extend(_details(f"Findings: {total}", _findings(k.by_rubric), open_=total > 0))
    return out


def summary_rows(review: Review) -> list[tuple]:
    rows = []
    for k in review.kernels():
        m = k.memory
        counts = k.counts()
        rows.append((
            f"`{k.card.name}`", f"{k.card.file}:{k.card.line}", k.card.generation,
            f"{qbytes(m.sbuf_peak)} / {fmt_bytes(m.sbuf_capacity)}" if m else "?",
            f"{m.psum_peak.text()} / {m.psum_banks}" if m else "?",
            k.cost.bound,
            *(counts[r] for r in RUBRICS),
        ))
    return rows


def render_markdown(review: Review, images: dict | None = None) -> str:
    images = images or {}
    out = ["# nkilint review", "",
           f"Target: SDK {review.sdk} (NKI {review.nki_version}) {review.target_origin}; {review.target}.", ""]
    out.extend(_table(("kernel", "where", "generation", "SBUF peak / capacity", "PSUM banks", "bound",
                       *(RUBRIC_TITLES[r] for r in RUBRICS)), summary_rows(review)))
    out.append("")
    for message in review.errors:
        out.extend([f"> error: {message}", ""])
    if review.original is not None:
        from .render_original import original_markdown

        out.extend(original_markdown(review.original))
    index = 0
    for f in review.files:
        if f.error:
            out.extend([f"> {f.path}: {f.error}", ""])
        if f.quiet:
            out.extend([f"{f.path}: also analysed as probable device code, with no op, on-chip tensor or finding: "
                        + ", ".join(f"`{n}`" for n in f.quiet) + ".", ""])
        for k in f.kernels:
            out.extend(_kernel(k, index, images))
            index += 1
        if f.outside:
            out.extend([f"## {f.path}: outside any kernel", ""])
            out.extend(_findings({r: [x for x in f.outside if x.rubric == r] for r in RUBRICS}))
    return "\n".join(out).rstrip("\n") + "\n"


__all__ = ["render_markdown", "summary_rows"]
