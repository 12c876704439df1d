"""The cache and progress options of ``nkilint check``, and ``nkilint clean``."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import click

from ..cache import ResultCache, check_files_cached, clean, default_cache_dir
from ..discovery import InputFile
from ..engine import Checker, FileResult
from ..progress import Progress


def cache_options(command):
    command = click.option("--cache-dir", type=click.Path(file_okay=False),
                           help=f"Where results are cached [default: .nkilint_cache in the project root, "
                                f"or $NKILINT_CACHE_DIR].")(command)
    return click.option("--no-cache", is_flag=True, help="Analyse every file; neither read nor write the cache.")(command)


def check_through_cache(files: Sequence[InputFile], checker: Checker, jobs: int | None, no_cache: bool,
                        cache_dir: str | None) -> list[FileResult]:
    """Every file's result, reusing cached ones; a progress line on a terminal."""
    cache = None
    if not no_cache:
        directory = Path(cache_dir) if cache_dir else default_cache_dir(checker.settings.root)
        cache = ResultCache.for_checker(checker, directory)
    progress = Progress(len(files))
    try:
        return list(check_files_cached(files, checker, jobs, cache, progress.update))
    finally:
        progress.finish()


@click.command("clean")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="The cache directory to delete.")
def clean_command(cache_dir: str | None) -> None:
    """Delete the result cache (.nkilint_cache) of the current directory's project."""
    if cache_dir:
        directory = Path(cache_dir)
    else:
        from ..config import find_config

        found = find_config(Path.cwd())
        directory = default_cache_dir(found.parent if found else Path.cwd())
    if clean(directory):
        click.echo(f"Removed {directory}")
    else:
        click.echo(f"No nkilint cache at {directory}")
