#!/usr/bin/env python3
"""Where the abstract interpreter spends its steps, per helper.

    python bench/bench_interp.py ROOT [FILE ...]   # files relative to ROOT

Runs every rule over the files (one process, the CLI's checker) and prints,
per inlined project helper: how often it was called and the statements and
expressions it executed itself (exclusive steps: its callees' steps are
theirs; a call replayed from a summary counts the steps it stands for),
and how many calls were replayed from a summary (summaries.py).
CPU time is printed for orientation only; compare counts, not times.
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    root = Path(argv[1]).resolve()
    names = argv[2:] or [str(p.relative_to(root)) for p in sorted(root.rglob("*.py"))]

    from nkilint.config import Settings
    from nkilint.discovery import InputFile
    from nkilint.engine import Checker, RunOptions
    from nkilint.model.interp import calls
    from nkilint.plugins import installed_rules
    from nkilint.selection import Selector, resolve_enabled

    calls_by = collections.Counter()
    own_steps = collections.Counter()
    stack: list[int] = []
    original = calls.CallsMixin.call_function

    def counted(self, func, args, kwargs, node):
        name = func.qualname or getattr(func.node, "name", "<lambda>")
        before = self.budget
        stack.append(0)
        try:
            return original(self, func, args, kwargs, node)
        finally:
            steps = before - self.budget
            inner = stack.pop()
            if stack:
                stack[-1] += steps
            calls_by[name] += 1
            own_steps[name] += steps - inner

    calls.CallsMixin.call_function = counted
    replays = collections.Counter()
    replay = getattr(calls.CallsMixin, "_replay", None)

    def counted_replay(self, summary, func, *rest):
        out = replay(self, summary, func, *rest)
        if out is not None:
            replays[func.qualname or getattr(func.node, "name", "<lambda>")] += 1
        return out

    if replay is not None:
        calls.CallsMixin._replay = counted_replay
    ruleset = installed_rules()
    enabled = resolve_enabled(ruleset, [Selector("ALL")], [], [])
    checker = Checker(Settings(root=root), ruleset, enabled, RunOptions())
    start = time.process_time()
    for name in names:
        checker.check_path(InputFile(root / name, name, True))
    cpu = time.process_time() - start
    print(f"files: {len(names)}, cpu: {cpu:.2f} s, helper calls: {sum(calls_by.values())}, "
          f"steps inside helpers: {sum(own_steps.values())}, replayed from a summary: {sum(replays.values())}")
    print(f"{'calls':>7} {'replayed':>8} {'own steps':>10}  helper")
    for name, steps in own_steps.most_common(25):
        print(f"{calls_by[name]:7d} {replays[name]:8d} {steps:10d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
