"""A rule's full explanation, as shown by ``nkilint rule`` and in SARIF help."""

from __future__ import annotations

import textwrap

from .rule import FAMILIES, Example, Rule


def _example_block(example: Example, kind: str) -> str:
    head = f"**{kind}**"
    notes = []
    if example.title:
        notes.append(example.title)
    if example.nki_version:
        notes.append(f"NKI {example.nki_version}")
    if example.target:
        notes.append(f"target {example.target}")
    if example.lines:
        notes.append("reported on line" + ("s " if len(example.lines) > 1 else " ") + ", ".join(map(str, example.lines)))
    if notes:
        head += " (" + "; ".join(notes) + ")"
    body = f"{head}\n\n```python\n{example.code.rstrip()}\n```\n"
    for name, code in example.files:
        body += f"\n`{name}`:\n\n```python\n{code.rstrip()}\n```\n"
    if example.fixed is not None:
        body += f"\nAfter `nkilint check --fix`{' --unsafe-fixes' if example.unsafe_fixes else ''}:\n\n```python\n{example.fixed.rstrip()}\n```\n"
    return body


def explain_markdown(rule: type[Rule]) -> str:
    family = FAMILIES.get(rule.family)
    lines = [
        f"# {rule.id} {rule.name}",
        "",
        f"*{rule.summary}*",
        "",
        f"- Family: `{rule.family}`" + (f" ({family.description})" if family else ""),
        f"- Default level: {rule.level.label}",
        f"- Enabled by default: {'yes' if rule.default_enabled else 'no'}",
        f"- Fixable: {'yes' if rule.fixable else 'no'}",
        "",
        textwrap.dedent(rule.explanation).strip(),
        "",
    ]
    invalid = [e for e in rule.examples if not e.is_valid]
    valid = [e for e in rule.examples if e.is_valid]
    if invalid or valid:
        lines.append("## Examples")
        lines.append("")
        for e in invalid:
            lines.append(_example_block(e, "Reported"))
        for e in valid:
            lines.append(_example_block(e, "Not reported"))
    if rule.references:
        lines.append("## References")
        lines.append("")
        lines.extend(f"- {ref}" for ref in rule.references)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
