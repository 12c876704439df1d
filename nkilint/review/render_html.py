"""The review as one self-contained HTML file: inline CSS and SVG, no
script, no network, readable offline and attachable to a ticket."""

from __future__ import annotations

from html import escape

from .graph_picture import graph_svg, legend_svg
from .quantity import fmt_bytes
from .render_markdown import summary_rows
from .report import KernelReview, Review
from .rubric import RUBRIC_TITLES, RUBRICS, ReviewFinding
from .charts import INSTALL_HINT, have_pygal, psum_banks, sbuf_bar
from .text import (
    buffer_row, card_rows, cost_headline, intensity_text, loop_row, param_rows, psum_headline, qbytes,
    sbuf_headline, sorted_findings, term_row,
)

CSS = """
body { font-family: "DejaVu Sans", Arial, sans-serif; margin: 24px auto; max-width: 1180px; color: #222;
       line-height: 1.4; padding: 0 16px; }
h1 { font-size: 24px; margin-bottom: 4px; } h2 { font-size: 20px; margin-top: 36px; border-bottom: 2px solid #ddd; }
h3 { font-size: 16px; margin-top: 22px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 13px; }
th, td { border: 1px solid #d4d4d4; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #666; font-size: 13px; }
.figure { overflow-x: auto; border: 1px solid #e4e4e4; border-radius: 6px; padding: 8px; margin: 8px 0; background: #fff; }
pre { background: #f7f7f7; border: 1px solid #e2e2e2; padding: 8px; overflow-x: auto; font-size: 12px; }
pre.diff .add { color: #116611; } pre.diff .del { color: #a31515; }
.finding { border-left: 4px solid #999; padding: 4px 12px; margin: 10px 0; }
.finding.error { border-color: #d62728; } .finding.warning { border-color: #e6a100; } .finding.note { border-color: #1f77b4; }
.level { font-weight: bold; text-transform: uppercase; font-size: 11px; }
.bad { color: #c00; font-weight: bold; }
"""


def _e(s: object) -> str:
    return escape(str(s), quote=True)


def _table(header: tuple, rows: list[tuple], klass: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    thead = f"<thead><tr>{head}</tr></thead>" if any(header) else ""
    return f'<table class="{klass}">{thead}<tbody>{body}</tbody></table>'


def _pre(lines: str, klass: str = "") -> str:
    if klass == "diff":
        out = []
        for line in lines.splitlines():
            cls = "add" if line.startswith("+") and not line.startswith("+++") else (
                "del" if line.startswith("-") and not line.startswith("---") else "")
            out.append(f'<span class="{cls}">{_e(line)}</span>' if cls else _e(line))
        return f'<pre class="diff">' + "\n".join(out) + "</pre>"
    return f'<pre class="{klass}">{_e(lines)}</pre>'


def _finding(f: ReviewFinding) -> str:
    width = len(str(f.excerpt[-1][0])) if f.excerpt else 1
    excerpt = "\n".join(f"{n:>{width}} | {t}" for n, t in f.excerpt)
    parts = [f'<div class="finding {f.level}" data-rule="{_e(f.rule_id)}">',
             f'<div><span class="level">{_e(f.level)}</span> <b>{_e(f.rule_id)}</b> <code>{_e(f.rule_name)}</code> '
             f'line {f.line}</div><div>{_e(f.message)}</div>', _pre(excerpt)]
    if f.hint:
        parts.append(f"<div><i>hint:</i> {_e(f.hint)}</div>")
    if f.fix_diff:
        parts.append(f"<div><i>fix ({'safe' if f.fix_safe else 'unsafe: review it'}):</i></div>")
        parts.append(_pre(f.fix_diff, "diff"))
    parts.append("</div>")
    return "".join(parts)


def _findings(groups: dict[str, list[ReviewFinding]]) -> str:
    out = []
    for rubric in RUBRICS:
        fs = groups.get(rubric, [])
        out.append(f'<h4 class="rubric" data-rubric="{rubric}">{_e(RUBRIC_TITLES[rubric])} ({len(fs)})</h4>')
        out.append("".join(_finding(f) for f in sorted_findings(fs)) or '<p class="muted">No findings.</p>')
    return "".join(out)


def _kernel(k: KernelReview, index: int, use_dot: bool) -> str:
    c = k.card
    uid = f"k{index}"
    out = [f'<section class="kernel" id="{uid}"><h2>Kernel <code>{_e(c.name)}</code> '
           f'<span class="muted">{_e(c.file)}:{c.line}</span></h2>']
    out.append('<h3 class="card">Card</h3>')
    out.append(_table(("", ""), card_rows(c), "card"))
    if c.params:
        out.append(_table(("parameter", "shape", "dtype", "memory"), param_rows(c), "params"))
    if k.error:
        out.append(f'<p class="bad">{_e(k.error)}</p>')
    m = k.memory
    out.append('<h3 class="memory">Memory picture</h3>')
    if m is not None:
        over = ' class="bad"' if m.sbuf_over else ""
        if not have_pygal():
            out.append(f'<p class="muted missing-charts">The memory {_e(INSTALL_HINT)}.</p>')
        out.append(f"<p{over}>SBUF: {_e(sbuf_headline(m))}.</p>")
        out.append(f'<div class="figure" data-figure="sbuf">{sbuf_bar(m, uid)}</div>')
        over = ' class="bad"' if m.psum_over else ""
        out.append(f"<p{over}>PSUM: {_e(psum_headline(m))}.</p>")
        out.append(f'<div class="figure" data-figure="psum">{psum_banks(m, uid)}</div>')
        out.append(_table(("buffer", "shape", "bytes per partition", "PSUM banks", "live (lines)", ""),
                          [buffer_row(b) for b in m.sbuf + m.psum], "buffers"))
        out.append(f'<p class="muted">Counted as the memory model counts: {_e(m.assumptions)}.</p>')
    svg, picture = graph_svg(k.kernel, uid, use_dot)
    out.append('<h3 class="graph">Kernel graph</h3>')
    note = f"laid out by {'Graphviz dot' if picture.engine == 'dot' else 'networkx (Graphviz dot is not installed)'}"
    if picture.dropped:
        note += f"; {picture.dropped} ops after the first {len([n for n in picture.nodes.values() if n.kind == 'op'])} left out"
    out.append(f'<p class="muted">Data flows left to right; dashed boxes are loops; {note}.</p>')
    out.append(f'<div class="figure" data-figure="graph" data-layout="{picture.engine}">{svg}</div>')
    out.append(f'<div class="legend">{legend_svg()}</div>')
    out.append('<h3 class="loops">Loop nest</h3>')
    if k.loops:
        out.append(_table(("loop", "line", "kind", "trips", "DMA in / iteration", "DMA out / iteration", "engines"),
                          [loop_row(r) for r in k.loops], "loops"))
    else:
        out.append('<p class="muted">No loops.</p>')
    cost = k.cost
    out.append('<h3 class="cost">Cost estimate</h3>')
    out.append(f"<p><b>{_e(cost_headline(cost))}</b></p>")
    out.append(f"<p>HBM read {_e(qbytes(cost.hbm_read))}, written {_e(qbytes(cost.hbm_written))}; arithmetic "
               f"intensity {_e(intensity_text(cost))}.</p>")
    out.append(_table(("resource", "work per launch", "time at peak", "peak rate"), [term_row(t) for t in cost.terms],
                      "cost"))
    out.append("<p class=\"muted\">Assumptions:</p><ul class=\"muted\">" +
               "".join(f"<li>{_e(a)}</li>" for a in cost.assumptions) + "</ul>")
    out.append(f'<h3 class="findings">Findings by rubric ({len(k.findings)})</h3>')
    out.append(_findings(k.by_rubric))
    out.append("</section>")
    return "".join(out)


def render_html(review: Review, use_dot: bool = True) -> str:
    rubric_heads = tuple(RUBRIC_TITLES[r] for r in RUBRICS)
    parts = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>nkilint review</title>", f"<style>{CSS}</style></head><body>",
             "<h1>nkilint review</h1>",
             f'<p class="muted">Target: SDK {_e(review.sdk)} (NKI {_e(review.nki_version)}) '
             f"{_e(review.target_origin)}; {_e(review.target)}. Numbers that are not exact are ranges; "
             "\"unknown\" means the model derived no bound.</p>",
             '<h2 class="summary">Summary</h2>',
             _table(("kernel", "where", "generation", "SBUF peak / capacity", "PSUM banks", "bound", *rubric_heads),
                    [tuple(str(c).strip("`") for c in row) for row in summary_rows(review)], "summary")]
    for message in review.errors:
        parts.append(f'<p class="bad">error: {_e(message)}</p>')
    if review.original is not None:
        from .render_original import original_html

        parts.append(original_html(review.original))
    index = 0
    for f in review.files:
        if f.error:
            parts.append(f'<p class="bad">{_e(f.path)}: {_e(f.error)}</p>')
        if f.quiet:
            parts.append(f'<p class="muted quiet">{_e(f.path)}: also analysed as probable device code, with no op, '
                         f'on-chip tensor or finding: {_e(", ".join(f.quiet))}.</p>')
        for k in f.kernels:
            parts.append(_kernel(k, index, use_dot))
            index += 1
        if f.outside:
            parts.append(f'<section class="outside"><h2>{_e(f.path)}: outside any kernel</h2>')
            parts.append(_findings({r: [x for x in f.outside if x.rubric == r] for r in RUBRICS}))
            parts.append("</section>")
    parts.append(f'<p class="muted">SBUF capacity is the target\'s usable bytes per partition '
                 f'({fmt_bytes(review.kernels()[0].memory.sbuf_capacity) if review.kernels() and review.kernels()[0].memory else "?"}); '
                 "peak rates and their sources: nkilint/data/hardware_perf.json.</p>")
    parts.append("</body></html>\n")
    return "".join(parts)


__all__ = ["render_html"]
