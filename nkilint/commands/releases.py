"""``nkilint releases``: the Neuron SDK releases nkilint can target."""

from __future__ import annotations

import json

import click


@click.command(name="releases")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="markdown is docs/releases.md.")
def releases_command(output_format: str) -> None:
    """List the Neuron SDK releases (targets of --sdk) and what changed in each."""
    from ..releases import RELEASES
    from ..releases.render import release_json, render_markdown, render_text

    if output_format == "json":
        click.echo(json.dumps([release_json(r) for r in RELEASES], indent=2))
    elif output_format == "markdown":
        click.echo(render_markdown(), nl=False)
    else:
        click.echo(render_text(), nl=False)
