"""The original <-> port checklist in Markdown and HTML."""

from __future__ import annotations

from html import escape

from .original import OriginalReview

STATUS_MARK = {"matched": "ok", "differs": "DIFFERS", "open question": "OPEN QUESTION",
               "no counterpart needed": "not needed", "absent": "-"}


def _items(items, limit: int = 5) -> str:
    shown = [f"{i.text} (line {i.line}{', ' + i.detail if i.detail else ''})" for i in items[:limit]]
    if len(items) > limit:
        shown.append(f"... {len(items) - limit} more")
    return "; ".join(shown) or "none"


def _intro(o: OriginalReview) -> str:
    s = o.structure
    kernels = ", ".join(f"{i.text} (line {i.line})" for i in s.items["kernels"]) or "none found"
    return (f"Original: {s.path} ({s.language}, read as text, never compiled or run); kernels: {kernels}. "
            f"{len(o.questions)} open question{'s' if len(o.questions) != 1 else ''} for the reviewer "
            "(not findings: the port may handle them another way).")


def original_markdown(o: OriginalReview) -> list[str]:
    def cell(t: str) -> str:
        return t.replace("|", "\\|").replace("\n", " ")

    out = ["## Original and port", "", _intro(o), "",
           "| aspect | original | port | status | note |", "|---|---|---|---|---|"]
    for r in o.rows:
        out.append(f"| {cell(r.title)} | {cell(_items(r.original))} | {cell(_items(r.port))} | "
                   f"{STATUS_MARK[r.status]} | {cell(r.note)} |")
    out.append("")
    if o.questions:
        out.extend(["Open questions:", ""] + [f"- **{r.title}**: {r.note}" for r in o.questions] + [""])
    return out


def original_html(o: OriginalReview) -> str:
    e = lambda t: escape(str(t), quote=True)  # noqa: E731
    rows = []
    for r in o.rows:
        klass = "bad" if r.status in ("differs", "open question") else ""
        rows.append(f'<tr class="check" data-aspect="{e(r.aspect)}" data-status="{e(r.status)}"><td>{e(r.title)}</td>'
                    f"<td>{e(_items(r.original))}</td><td>{e(_items(r.port))}</td>"
                    f'<td class="{klass}">{e(STATUS_MARK[r.status])}</td><td>{e(r.note)}</td></tr>')
    questions = "".join(f"<li><b>{e(r.title)}</b>: {e(r.note)}</li>" for r in o.questions)
    return (f'<section class="original"><h2>Original and port</h2><p>{e(_intro(o))}</p>'
            "<table class=\"checklist\"><thead><tr><th>aspect</th><th>original</th><th>port</th><th>status</th>"
            f"<th>note</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            + (f"<h3>Open questions</h3><ul>{questions}</ul>" if questions else "") + "</section>")


__all__ = ["original_markdown", "original_html"]
