"""A tile updated in place many times must not make the partition rules hang.

Issue 20: the walk that decides whether the model's shape of a legacy result
tile can be trusted went from the tile to every op that writes it and on to
their inputs, without remembering where it had been. A tile updated in place
(``nisa.tensor_tensor(dst=t, data1=t, data2=t)``) is its own writer's input
twice, so each update multiplied the work: three updates in a row took over a
minute, four more than five. The walk is memoized per graph now.

A hang guard, not a speed benchmark: the bound is generous, and an alarm
turns a regression into a failure instead of a stuck test run.
"""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager

from fixture_markers import lint_file

UPDATES = 6
BOUND_S = 10.0


class _Expired(BaseException):
    """Raised by the alarm; a BaseException so that the engine, which isolates
    rules that raise an Exception, lets it through."""


@contextmanager
def _deadline(seconds: float):
    def expire(signum, frame):
        raise _Expired(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _kernel(updates: int) -> str:
    lines = [
        "import neuronxcc.nki as nki",
        "import neuronxcc.nki.language as nl",
        "import neuronxcc.nki.isa as nisa",
        "",
        "",
        "@nki.jit",
        "def kernel(a, b):",
        "    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)",
        "    t = nl.load(a[0:128, 0:512])",
        "    u = nl.load(b[0:64, 0:512])",
    ]
    lines += ["    nisa.tensor_tensor(dst=t, data1=t, data2=t, op=nl.add)"] * updates
    # The tile's shape is still trusted after the updates: the mismatch is found.
    lines += ["    nisa.tensor_tensor(dst=t, data1=t, data2=u, op=nl.add)"]
    lines += ["    nl.store(out, value=t)", "    return out", ""]
    return "\n".join(lines)


def test_many_in_place_updates_of_a_loaded_tile_finish(tmp_path):
    path = tmp_path / "in_place.py"
    path.write_text(_kernel(UPDATES))
    start = time.perf_counter()
    with _deadline(BOUND_S):
        findings = lint_file(path, select=("NKI1",))
    assert time.perf_counter() - start < BOUND_S
    mismatch_line = 11 + UPDATES
    assert [(f.rule_id, f.span.start_line) for f in findings] == [("NKI104", mismatch_line)]
