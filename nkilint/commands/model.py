"""``nkilint graph`` and ``nkilint stats``: the semantic model on the command line."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from ..config import ConfigError, Settings
from ..discovery import discover
from ..engine import project_scan_roots, read_file
from ..model.project import Project
from ..model.semantic import AllocRecord, FileModel, analyze_file
from ..overrides import settings_for_file
from ..paths import display_path
from ..source import SourceError, SourceFile, decode_source
from ..targets import target_names
from ..versions import VERSION_NAMES
from .common import build_settings
from ..terminal import printable

GRAPH_SCHEMA_VERSION = 1


def _fail(message: str) -> None:
    click.echo(f"nkilint: error: {printable(message)}", err=True)
    sys.exit(2)


def _settings(config: str | None, target: str | None, sdk: str | None, nki_version: str | None, start: Path) -> Settings:
    try:
        return build_settings((str(start),), config, False, target=target, sdk=sdk, nki_version=nki_version)
    except ConfigError as exc:
        _fail(str(exc))
        raise  # pragma: no cover


def _load(path: Path, project: Project, settings: Settings, display: str) -> FileModel | str:
    try:
        text = decode_source(read_file(path))
        source = SourceFile(str(path.resolve()), text, display)
        source.tree
    except SourceError as err:
        return f"{display}: not analysed: {err.message}"
    except OSError as exc:
        return f"{display}: cannot read: {exc.strerror or exc}"
    settings = settings_for_file(settings, display_path(path, settings.root))  # [[tool.nkilint.overrides]]
    return analyze_file(source, project, settings.target, settings.nki_version)


@click.command(name="graph")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--kernel", "kernel_name", help="Only this kernel (default: every kernel in the file).")
@click.option("--format", "output_format", type=click.Choice(["json", "dot"]), default="json", show_default=True)
@click.option("--target", type=click.Choice(target_names(), case_sensitive=False))
@click.option("--sdk", help="Neuron SDK release (2.20 ... 2.34; default: the project's pin, else the newest).")
@click.option("--nki-version", type=click.Choice(VERSION_NAMES))
@click.option("--memory/--no-memory", default=True, show_default=True,
              help="Include the per-kernel memory summary (JSON; the peaks in each DOT cluster's label).")
@click.option("--config", type=click.Path(exists=True, dir_okay=False))
def graph_command(file: str, kernel_name: str | None, output_format: str, target, sdk, nki_version, memory: bool, config) -> None:
    """Print the kernel graph of FILE (see docs/graph.md for the JSON)."""
    path = Path(file)
    settings = _settings(config, target, sdk, nki_version, path)
    settings = settings_for_file(settings, display_path(path, settings.root))  # the file's release and target
    project = Project(settings.root)
    model = _load(path, project, settings, file)
    if isinstance(model, str):
        _fail(model)
        return
    kernels = [k for k in model.kernels if kernel_name is None or k.name == kernel_name]
    if kernel_name is not None and not kernels:
        names = ", ".join(k.name for k in model.kernels) or "none"
        _fail(f"no kernel named {kernel_name!r} in {file}; kernels found: {names}")
    if output_format == "dot":
        from ..model.graph_dot import file_dot

        titles = [_dot_title(k, settings, memory) for k in kernels]
        click.echo(file_dot(file, [(k.graph, t) for k, t in zip(kernels, titles)]), nl=False)
        return
    out = {
        "schema_version": GRAPH_SCHEMA_VERSION,
        "file": file,
        "dialect": model.dialect.value,
        "target": settings.target.name,
        "nki_version": str(settings.nki_version),
        "sdk": settings.release.minor,
        "kernels": [],
    }
    for k in kernels:
        entry = {"name": k.name, "kind": k.kind, "how": k.how, "line": k.node.lineno, "error": k.error}
        entry.update(k.graph.to_json())
        entry.pop("kernel", None)
        entry.pop("file", None)
        if memory:
            summary = _memory_summary(k, settings)
            if summary is not None:
                entry["memory"] = summary
        out["kernels"].append(entry)
    click.echo(json.dumps(out, indent=2, default=str))


def _dot_title(kernel, settings: Settings, memory: bool) -> str:
    """A kernel's cluster label: name, how it is a kernel, and its peaks
    ("at least" unless every on-chip size is exact)."""
    title = f"{kernel.name} ({kernel.how})"
    summary = _memory_summary(kernel, settings) if memory else None
    if summary is None:
        return title
    from ..model.memory import fmt_bytes

    sbuf, psum = summary["sbuf"], summary["psum"]
    sbuf_peak = ("" if sbuf["exact"] else "at least ") + fmt_bytes(sbuf["peak_bytes"])
    banks = psum["peak_banks"]
    psum_peak = ("" if psum["exact"] else "at least ") + f"{banks} bank{'s' if banks != 1 else ''}"
    return f"{title}\nSBUF peak {sbuf_peak} per partition, PSUM peak {psum_peak}"


def _memory_summary(kernel, settings: Settings):
    try:
        from ..model.memory import summarize  # provided by the memory family
    except ImportError:
        return None
    return summarize(kernel, settings.target)


@click.command(name="stats")
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--target", type=click.Choice(target_names(), case_sensitive=False))
@click.option("--sdk", help="Neuron SDK release (2.20 ... 2.34; default: the project's pin, else the newest).")
@click.option("--nki-version", type=click.Choice(VERSION_NAMES))
@click.option("--config", type=click.Path(exists=True, dir_okay=False))
@click.option("--top", default=10, show_default=True, help="How many reasons for unknown sizes to list.")
def stats_command(paths, output_format: str, target, sdk, nki_version, config, top: int) -> None:
    """How well the model resolves a tree of kernels.

    Counts files, kernels (and how many were specialized: analysed again
    with the shapes of a launch in host code), on-chip (SBUF/PSUM) allocations, and how many
    allocations have a partition size that is exact, bounded or unknown,
    with the most common reasons for unknown sizes. An allocation reached
    from several kernels counts once, with its best resolution.
    """
    paths = paths or (".",)
    settings = _settings(config, target, sdk, nki_version, Path(paths[0]))
    files, errors = discover(paths, settings.root, settings.all_excludes,
                             respect_gitignore=settings.respect_gitignore)
    # The tree `check` scans for launches, so kernels launched from the project's tests count as specialized.
    project = Project(settings.root, scan_roots=tuple(Path(p) for p in project_scan_roots(paths, settings)),
                      excludes=tuple(settings.all_excludes))
    records: dict[tuple, AllocRecord] = {}
    rank = {"exact": 2, "bounded": 1, "unknown": 0}
    kernels = roots = probable = truncated = specialized = specializations = 0
    unreadable = 0
    for item in files:
        model = _load(item.path, project, settings, item.display)
        if isinstance(model, str):
            unreadable += 1
            continue
        own = [k for k in model.kernels if k.specialization is None]
        kernels += len(own)
        roots += sum(1 for k in own if k.kind == "root")
        probable += sum(1 for k in own if k.kind == "probable")
        truncated += sum(1 for k in own if k.error)
        specializations += len(model.specializations)
        specialized += len({id(k.node) for k in model.specializations})
        for rec in model.alloc_records():
            key = (rec.file, rec.line, rec.col)
            if key not in records or rank[rec.status] > rank[records[key].status]:
                records[key] = rec
    counts = Counter(r.status for r in records.values())
    reasons = Counter(_reason_key(r.reason) for r in records.values() if r.status == "unknown")
    total = len(records)
    resolved = counts["exact"] + counts["bounded"]
    doc = {
        "files": len(files),
        "unreadable_files": unreadable,
        "kernels": kernels,
        "root_kernels": roots,
        "probable_kernels": probable,
        "truncated_kernels": truncated,
        "specialized_kernels": specialized,
        "specializations": specializations,
        "allocations": total,
        "exact": counts["exact"],
        "bounded": counts["bounded"],
        "unknown": counts["unknown"],
        "resolved_percent": round(100.0 * resolved / total, 1) if total else 100.0,
        "unknown_reasons": [{"reason": r, "count": n} for r, n in reasons.most_common(top)],
        "target": settings.target.name,
        "nki_version": str(settings.nki_version),
        "sdk": settings.release.minor,
    }
    for message in errors:
        click.echo(f"nkilint: error: {printable(message)}", err=True)
    if output_format == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(f"files:        {doc['files']} ({unreadable} not analysed)")
        click.echo(f"kernels:      {kernels} ({roots} decorated or launched, {probable} probable device code"
                   f"{f', {truncated} truncated' if truncated else ''})")
        click.echo(f"specialized:  {specialized} kernels analysed again with the inputs of a launch "
                   f"({specializations} launches)")
        click.echo(f"on-chip allocations: {total}")
        if total:
            for status in ("exact", "bounded", "unknown"):
                click.echo(f"  {status:<8} {counts[status]:>6}  {100.0 * counts[status] / total:5.1f} %")
            click.echo(f"  exact or bounded: {doc['resolved_percent']} %")
        if reasons:
            click.echo("top reasons for unknown partition sizes:")
            for r, n in reasons.most_common(top):
                click.echo(f"  {n:>5}  {r}")
    sys.exit(2 if errors else 0)


def _reason_key(reason: str) -> str:
    """Group reasons that differ only by the expression they mention."""
    if reason.startswith("unbounded: "):
        text = reason[len("unbounded: "):]
        if ".shape[" in text:
            return "unbounded: a dimension of an input tensor with no assert bounding it"
        return "unbounded: a size computed from inputs or configuration with no bound"
    if " is not known statically" in reason:
        return "attribute of a value not known statically (configuration object)"
    return reason
