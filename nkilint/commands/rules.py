"""``nkilint rules`` and ``nkilint rule``: the installed rules and their docs."""

from __future__ import annotations

import click

from ..rule import FAMILIES
from .common import UsageFailure, _load_ruleset

@click.command(name="rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True)
@click.option("--family", type=click.Choice(sorted(FAMILIES)), help="Only rules of this family.")
def rules_command(output_format: str, family: str | None) -> None:
    """List every installed rule."""
    ruleset = _load_ruleset()
    rules = [r for r in ruleset if family is None or r.family == family]
    if output_format == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "name": r.name,
                        "family": r.family,
                        "level": r.level.label,
                        "fixable": r.fixable,
                        "default_enabled": r.default_enabled,
                        "summary": r.summary,
                        "origin": ruleset.origins.get(r.id),
                    }
                    for r in rules
                ],
                indent=2,
            )
        )
        return
    if output_format == "markdown":
        from ..explain import explain_markdown

        click.echo("# nkilint rules\n")
        click.echo("| id | name | family | level | fixable | summary |\n|---|---|---|---|---|---|")
        for r in rules:
            click.echo(f"| [{r.id}](#{r.id.lower()}-{r.name}) | {r.name} | {r.family} | {r.level.label} | {'yes' if r.fixable else ''} | {r.summary} |")
        click.echo("")
        for r in rules:
            click.echo(explain_markdown(r).replace(f"# {r.id} {r.name}", f"## {r.id} {r.name}", 1).replace("\n## Examples", "\n### Examples").replace("\n## References", "\n### References"))
        return
    width = max((len(r.name) for r in rules), default=10)
    click.echo(f"{'ID':<7} {'NAME':<{width}} {'FAMILY':<10} {'LEVEL':<8} FIX")
    for r in rules:
        off = "" if r.default_enabled else " (off by default)"
        click.echo(f"{r.id:<7} {r.name:<{width}} {r.family:<10} {r.level.label:<8} {'yes' if r.fixable else '-'}{off}")


@click.command(name="rule")
@click.argument("key")
def rule_command(key: str) -> None:
    """Explain one rule (by id such as NKI201, or by name)."""
    ruleset = _load_ruleset()
    rule = ruleset.get(key)
    if rule is None:
        import difflib

        names = [r.id for r in ruleset] + [r.name for r in ruleset]
        close = difflib.get_close_matches(key, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `nkilint rules` lists them"
        raise UsageFailure(f"no rule {key!r}{hint}")
    from ..explain import explain_markdown

    click.echo(explain_markdown(rule), nl=False)


