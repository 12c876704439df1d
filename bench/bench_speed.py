#!/usr/bin/env python3
"""Speed of a full nkilint run against the bare libcst parse of the same files.

DESIGN.md's budget: a full run (all rules, one process) within 1.5x the time
libcst alone needs to parse the files. Usage:

    python bench/bench_speed.py [PATH ...]      # default: fixtures/

Prints the times and the ratios; exits 1 if the ratio is over the budget
(only meaningful on a real corpus, e.g. a checkout of nki-library). Timings
are wall-clock on a noisy machine: run it a few times, compare ratios, and
never turn it into a unit test.
"""

from __future__ import annotations

import ast
import statistics
import sys
import time
from pathlib import Path

import libcst as cst

HERE = Path(__file__).resolve().parent
BUDGET = 1.5


def python_files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def timed(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv[1:]] or [HERE.parent / "fixtures"]
    files = python_files(paths)
    texts = []
    for f in files:
        try:
            texts.append((f, f.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            pass
    lines = sum(t.count("\n") for _, t in texts)

    def libcst_parse() -> None:
        for _, t in texts:
            try:
                cst.parse_module(t)
            except Exception:
                pass

    def ast_parse() -> None:
        for _, t in texts:
            try:
                ast.parse(t)
            except SyntaxError:
                pass

    from nkilint.config import Settings
    from nkilint.discovery import InputFile
    from nkilint.engine import Checker, RunOptions, tune_gc
    from nkilint.plugins import installed_rules
    from nkilint.selection import Selector, resolve_enabled

    ruleset = installed_rules()
    enabled = resolve_enabled(ruleset, [Selector("ALL")], [], [])

    tune_gc()

    def nkilint_run() -> None:
        checker = Checker(Settings(root=paths[0].resolve() if paths[0].is_dir() else paths[0].resolve().parent),
                          ruleset, enabled, RunOptions())
        for f, _ in texts:
            checker.check_path(InputFile(f.resolve(), str(f), True))

    repeat = 1 if lines > 50_000 else 3
    t_cst = timed(libcst_parse, repeat)
    t_ast = timed(ast_parse, repeat)
    t_run = timed(nkilint_run, repeat)
    print(f"files: {len(texts)}, lines: {lines}, rules: {len(enabled)}")
    print(f"libcst parse:  {t_cst:8.2f} s")
    print(f"ast parse:     {t_ast:8.2f} s   ({t_ast / t_cst:.2f}x libcst)")
    print(f"nkilint check: {t_run:8.2f} s   ({t_run / t_cst:.2f}x libcst; budget {BUDGET}x)")
    return 0 if t_run / t_cst <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
