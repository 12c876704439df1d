"""``nkilint review``: a reviewer's report on kernels ported from CUDA or
Triton (docs/review.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config import ConfigError
from ..targets import target_names
from ..versions import VERSION_NAMES
from .common import EXAMPLE_PATH, UsageFailure, _ruleset_and_enabled, build_settings
from ..terminal import printable

EXAMPLE_ORIGINAL = EXAMPLE_PATH.with_name("softmax_original.py")  # the Triton kernel the example was ported from

FORMATS = ("html", "markdown", "json")


def _format_of(output: str | None, given: str | None) -> str:
    if given:
        return given
    suffix = Path(output).suffix.lower() if output else ""
    return {".md": "markdown", ".markdown": "markdown", ".json": "json", ".html": "html", ".htm": "html"}.get(
        suffix, "markdown" if output is None else "html")


@click.command(name="review")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--original", type=click.Path(exists=True, dir_okay=False),
              help="The CUDA (.cu/.cuh) or Triton/PyTorch (.py) source the kernel was ported from (read as text).")
@click.option("--kernel", "kernel_name", help="Only this kernel (default: every kernel).")
@click.option("--format", "output_format", type=click.Choice(FORMATS),
              help="Report format (default: from the -o suffix; markdown on standard output).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the report here (pictures go next to a Markdown report).")
@click.option("--target", type=click.Choice(target_names(), case_sensitive=False))
@click.option("--sdk", help="Neuron SDK release (2.20 ... 2.34; default: the project's pin, else the newest).")
@click.option("--nki-version", type=click.Choice(VERSION_NAMES))
@click.option("--config", type=click.Path(exists=True, dir_okay=False))
@click.option("--example", is_flag=True,
              help="Review the bundled example (a Triton softmax port; its Triton original is the default --original).")
def review_command(paths, original, kernel_name, output_format, output, target, sdk, nki_version, config, example) -> None:
    """A reviewer's report on NKI kernels: card, memory picture, loop nest,
    cost estimate and findings by rubric (fidelity, performance, numerics,
    correctness); with --original, the correspondence to the GPU source."""
    if example:
        if paths:
            raise UsageFailure("--example reviews the bundled example; give no PATHS with it")
        paths = (str(EXAMPLE_PATH),)
        original = original or str(EXAMPLE_ORIGINAL)
    if not paths:
        raise UsageFailure("give the files or directories to review (or --example)")
    if "-" in paths:
        raise UsageFailure("review reads files, not standard input")
    try:
        settings = build_settings(paths, config, False, find_pins=not example, target=target, sdk=sdk,
                                  nki_version=nki_version)
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None
    ruleset, enabled = _ruleset_and_enabled(settings)
    from ..review.report import build_review

    root = EXAMPLE_PATH.parent.parent.parent if example else None  # show the example as nkilint/examples/...
    try:
        review = build_review(tuple(paths), settings, ruleset, enabled, kernel_name, display_root=root)
    except ConfigError as exc:  # a nested [tool.nkilint] table
        raise UsageFailure(str(exc)) from None
    if original:
        from ..review.original import read_original

        try:
            shown = Path(original).resolve().relative_to(root.resolve()).as_posix() if (
                root and Path(original).resolve().is_relative_to(root.resolve())) else None
            review.original = read_original(Path(original), review, shown)
        except ValueError as exc:
            raise UsageFailure(str(exc)) from None
    fmt = _format_of(output, output_format)
    from ..review.output import render

    text, extra = render(review, fmt, output)
    for message in review.errors:
        click.echo(f"nkilint: error: {printable(message)}", err=True)
    if output:
        try:
            for path, content in extra.items():
                Path(path).write_text(content, encoding="utf-8")
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageFailure(f"cannot write {output}: {exc.strerror or exc}") from None
        click.echo(f"nkilint: wrote {output}" + (f" and {len(extra)} picture(s) next to it" if extra else ""), err=True)
    else:
        click.echo(text, nl=False)
    sys.exit(2 if review.errors else 0)
