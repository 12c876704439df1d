#!/usr/bin/env python3
"""CPU time of a cold nkilint run against libcst's parse of the same files.

DESIGN.md's budget: a full run (all rules, one process, no cache) within
1.5x the CPU time ``libcst.parse_module`` alone needs for the same files.
Usage:

    python bench/bench_speed.py [--repeat N] [PATH ...]   # default: fixtures/

Each side runs in a fresh subprocess of this interpreter, so neither warms
the other's caches: the parse in a worker of this script (libcst as
installed; since libcst 1.0 that is its native parser), and nkilint as
``python -m nkilint check --no-cache --jobs 1 --select ALL`` over the same
paths. A side's time is the CPU (user + system) of its subprocess from
``resource.getrusage(RUSAGE_CHILDREN)``, not the wall clock: on a shared
machine the wall clock of the same parse varied by half between runs. The
sides run interleaved (libcst, ast, nkilint, then again) N times and the best
of each is kept. The files parsed are the ones nkilint's discovery finds
(excludes and .gitignore applied) and the run checks the count.

Printed: each round, the best times, and the ratio of nkilint's whole
process (start-up, imports, discovery, output) to libcst's parse loop alone
(the worker's own CPU around ``parse_module``, its start-up left out), so the
ratio is never flattered. Exits 1 if it is over the budget (meaningful only
on a real corpus, e.g. a checkout of nki-library). Never a unit test.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUDGET = 1.5


def _parse_worker(kind: str, list_file: str) -> None:
    """Parse every listed file; print the CPU seconds of the parse loop alone."""
    paths = Path(list_file).read_text(encoding="utf-8").splitlines()
    texts = []
    for p in paths:
        try:
            texts.append(Path(p).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            pass
    if kind == "libcst":
        import libcst

        def parse(text: str) -> None:
            libcst.parse_module(text)
    else:
        import ast

        def parse(text: str) -> None:
            ast.parse(text)
    failed = 0
    start = time.process_time()
    for text in texts:
        try:
            parse(text)
        except Exception:  # a file either parser rejects still costs its attempt
            failed += 1
    cpu = time.process_time() - start
    print(json.dumps({"cpu": cpu, "files": len(texts), "lines": sum(t.count("\n") for t in texts),
                      "failed": failed}))


def _child_cpu(cmd: list[str], cwd: Path | None = None) -> tuple[float, str]:
    """CPU seconds (user + system) of one subprocess, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd[:6])} ...\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, proc.stdout


def _discovered(paths: list[Path]) -> list[str]:
    """The files nkilint checks under PATHS (the default excludes, .gitignore)."""
    from nkilint.config import Settings
    from nkilint.discovery import discover

    root = paths[0].resolve() if paths[0].is_dir() else paths[0].resolve().parent
    files, _ = discover([str(p) for p in paths], root, Settings(root=root).all_excludes)
    return [str(f.path) for f in files]


def main(argv: list[str]) -> int:
    if len(argv) == 4 and argv[1] == "--parse-worker":
        _parse_worker(argv[2], argv[3])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best of each side is kept")
    args = parser.parse_args(argv[1:])
    paths = args.paths or [HERE.parent / "fixtures"]
    files = _discovered(paths)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(files))
        list_file = fh.name
    py = sys.executable
    lint_cmd = [py, "-m", "nkilint", "check", "--no-cache", "--isolated", "--jobs", "1", "--select", "ALL",
                "--exit-zero", "--format", "json", *[str(p.resolve()) for p in paths]]
    best = {"libcst parse": float("inf"), "libcst process": float("inf"), "ast parse": float("inf"),
            "nkilint process": float("inf")}
    info: dict = {}
    try:
        for i in range(args.repeat):
            cst_proc, out = _child_cpu([py, __file__, "--parse-worker", "libcst", list_file])
            info = json.loads(out)
            ast_proc, out = _child_cpu([py, __file__, "--parse-worker", "ast", list_file])
            ast_cpu = json.loads(out)["cpu"]
            lint_proc, out = _child_cpu(lint_cmd)
            checked = json.loads(out)["summary"]["files"]
            if checked != len(files):
                sys.exit(f"nkilint checked {checked} files, the parse worker {len(files)}")
            print(f"round {i + 1}: libcst parse {info['cpu']:7.2f} s (process {cst_proc:6.2f} s), "
                  f"ast parse {ast_cpu:6.2f} s, nkilint {lint_proc:7.2f} s CPU", flush=True)
            best["libcst parse"] = min(best["libcst parse"], info["cpu"])
            best["libcst process"] = min(best["libcst process"], cst_proc)
            best["ast parse"] = min(best["ast parse"], ast_cpu)
            best["nkilint process"] = min(best["nkilint process"], lint_proc)
    finally:
        Path(list_file).unlink(missing_ok=True)
    cst_cpu, lint = best["libcst parse"], best["nkilint process"]
    print(f"files: {info['files']}, lines: {info['lines']}, libcst failures: {info['failed']}, "
          f"best of {args.repeat}, CPU seconds (user + system)")
    print(f"libcst parse:    {cst_cpu:8.2f} s   (its whole process {best['libcst process']:.2f} s)")
    print(f"ast parse:       {best['ast parse']:8.2f} s   ({best['ast parse'] / cst_cpu:.2f}x libcst)")
    print(f"nkilint check:   {lint:8.2f} s   ({lint / cst_cpu:.2f}x libcst parse; budget {BUDGET}x; "
          f"{lint / best['libcst process']:.2f}x libcst's whole process)")
    return 0 if lint / cst_cpu <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
