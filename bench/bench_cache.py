#!/usr/bin/env python3
"""The result cache: a cold run against a warm re-run, and a re-run after
editing one file, over the same tree in the same benchmark run.

    python bench/bench_cache.py [PATH]      # default: /work/corpus/nki-library

The tree is copied to a temporary directory first (the edit must not touch
the original). Each run is ``python -m nkilint check`` in a subprocess;
times are the CPU seconds of the run and its worker processes (user +
system), and wall-clock for reference. Prints the ratios: the goal is a
warm run at least 20x cheaper than the cold one, and an edit re-analysing
only the edited file and the files that read it. Never a unit test.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_WARM = 20.0


def _run(tree: Path, cache: Path, *extra: str) -> tuple[float, float, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "nkilint", "check", ".", "--exit-zero", "--format", "json",
                           "--cache-dir", str(cache), *extra], cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"nkilint failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, json.loads(proc.stdout)


def _edit_target(tree: Path) -> Path:
    """A module other files import: the edit must re-check its readers too."""
    files = sorted(tree.rglob("*.py"))
    texts = {p: p.read_text(errors="replace") for p in files}
    for path in files:
        if path.name == "__init__.py":
            continue
        stem = path.stem
        if any(q != path and (f"import {stem}" in t or f".{stem} import" in t) for q, t in texts.items()):
            return path
    return files[0]


def main(argv: list[str]) -> int:
    source = Path(argv[1] if len(argv) > 1 else "/work/corpus/nki-library")
    with tempfile.TemporaryDirectory(prefix="nkilint-bench-") as tmp:
        tree = Path(tmp) / source.name
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns(".git", ".nkilint_cache"))
        cache = Path(tmp) / "cache"
        files = sum(1 for _ in tree.rglob("*.py"))
        print(f"{source}: {files} Python files")
        cold_cpu, cold_wall, cold = _run(tree, cache)
        warm_cpu, warm_wall, warm = _run(tree, cache)
        same = json.dumps(cold["findings"] if "findings" in cold else cold, sort_keys=True) == json.dumps(
            warm["findings"] if "findings" in warm else warm, sort_keys=True)
        entries = sorted(cache.rglob("*.json"))
        stamp = {p: p.stat().st_mtime_ns for p in entries}
        target = _edit_target(tree)
        target.write_text(target.read_text() + "\n# an edit\n")
        edit_cpu, edit_wall, _ = _run(tree, cache)
        rewritten = sum(1 for p in sorted(cache.rglob("*.json")) if stamp.get(p) != p.stat().st_mtime_ns)
        nocache_cpu, _, _ = _run(tree, cache, "--no-cache")
    print(f"cold run:                 {cold_cpu:7.2f} s CPU ({cold_wall:6.2f} s wall)")
    print(f"warm run, no change:      {warm_cpu:7.2f} s CPU ({warm_wall:6.2f} s wall)")
    print(f"after editing {target.relative_to(tree)}: {edit_cpu:7.2f} s CPU ({edit_wall:6.2f} s wall), "
          f"{rewritten} of {len(entries)} entries re-analysed")
    print(f"--no-cache:               {nocache_cpu:7.2f} s CPU")
    print(f"identical findings cold/warm: {same}")
    ratio = cold_cpu / warm_cpu if warm_cpu else float("inf")
    print(f"ratio cold/warm: {ratio:.1f}x (goal >= {GOAL_WARM:.0f}x)")
    print(f"ratio cold/edit: {cold_cpu / edit_cpu:.1f}x")
    return 0 if ratio >= GOAL_WARM and same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
