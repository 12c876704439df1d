#!/usr/bin/env python3
"""Speed of ``nkilint review`` against ``nkilint check`` on the same file.

The issue's budget: reviewing a 1 kLOC kernel takes under 2 s. Usage:

    python bench/bench_review.py [FILE]     # default: a generated 1 kLOC kernel

Prints the wall-clock and CPU times (median of 3) of a check run and of a
review (the check run, the report model, and the HTML with every picture),
their ratios, and the review's CPU time per 1000 lines; exits 1 when that
is over the budget. The machine is shared and noisy: compare ratios between runs, and
never turn this into a unit test.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S_PER_KLOC = 2.0

HEADER = '''import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def big_kernel(x, w):
    n, m = x.shape
    assert n == 1024 and m == 512
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    wt = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=wt, src=w[0:128, 0:128])
'''

BLOCK = '''    for i{k} in range(n // 128):
        t{k} = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t{k}, src=x[i{k} * 128:(i{k} + 1) * 128, 0:512])
        ps{k} = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps{k}, stationary=wt, moving=t{k})
        u{k} = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=u{k}, op=nl.exp, data=ps{k})
        nisa.dma_copy(dst=out[i{k} * 128:(i{k} + 1) * 128, 0:512], src=u{k})
'''


def generated_kernel(lines: int = 1000) -> str:
    text = HEADER
    k = 0
    while text.count("\n") < lines - 1:
        text += BLOCK.format(k=k)
        k += 1
    return text + "    return out\n"


def _cpu() -> float:
    """CPU seconds of this process and its finished children (Graphviz dot)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(fn, repeat: int = 3) -> tuple[float, float]:
    """Median (wall-clock, CPU) seconds: on a shared machine the CPU time
    is what the run itself costs."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), _cpu()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def main(argv: list[str]) -> int:
    from nkilint.commands.common import _ruleset_and_enabled, build_settings
    from nkilint.engine import Checker, RunOptions, project_scan_roots
    from nkilint.review.render_html import render_html
    from nkilint.review.report import build_review

    given = Path(argv[1]).resolve() if len(argv) > 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the project is the file's directory, not whatever tree the bench runs from
        if given is not None:
            path = given
        else:
            path = Path(tmp) / "big_kernel.py"
            path.write_text(generated_kernel(), encoding="utf-8")
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        settings = build_settings((str(path),), None, True)
        ruleset, enabled = _ruleset_and_enabled(settings)
        # The same options the review uses (it scans the project for kernel calls as check does).
        options = RunOptions(project_roots=project_scan_roots((str(path),), settings))

        def check() -> None:
            Checker(settings, ruleset, enabled, options).check_text(text, str(path), str(path))

        def review() -> None:
            r = build_review((str(path),), settings, ruleset, enabled)
            render_html(r)

        (w_check, c_check), (w_review, c_review) = timed(check), timed(review)
    per_kloc = c_review / max(lines, 1) * 1000
    print(f"file: {path.name}, {lines} lines")
    print(f"nkilint check:  {w_check:.2f} s wall, {c_check:.2f} s CPU")
    print(f"nkilint review: {w_review:.2f} s wall, {c_review:.2f} s CPU (check + report model + HTML with pictures)")
    print(f"ratio review / check: {w_review / w_check:.2f} wall, {c_review / c_check:.2f} CPU")
    print(f"review CPU per 1000 lines: {per_kloc:.2f} s (budget {BUDGET_S_PER_KLOC:.1f} s)")
    return 0 if per_kloc <= BUDGET_S_PER_KLOC else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
