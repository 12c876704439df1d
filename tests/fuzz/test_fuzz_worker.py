"""The long fuzz run checks each input in a worker process (scripts/fuzz.py):
a crash or a hang of the worker is a recorded problem, not the end of the run."""

from __future__ import annotations

import importlib.util
import signal
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fuzz.py"


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("nkilint_fuzz_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_crash_and_a_hang_are_problems_and_the_worker_comes_back(fuzz):
    from worker import Worker

    worker = Worker(bound_s=20)
    try:
        assert worker.check("text", "x = 1\n") == []
        died = worker.check("selftest-die", None)
        assert died == [f"process died: exit code {-signal.SIGSEGV} (signal {int(signal.SIGSEGV)})"]
        worker.bound_s = 2
        hung = worker.check("selftest-hang", None)
        assert hung == ["hang: no answer from the worker in 2 s (killed)"]
        worker.bound_s = 20
        assert worker.check("bytes", b"\xff\xfe") == []
        assert worker.restarts == 2
    finally:
        worker.close()


def test_a_short_run_reports_what_it_tried(fuzz, tmp_path, capsys):
    code = fuzz.main(["--minutes", "0.05", "--seed", "7", "--out", str(tmp_path / "found")])
    out = capsys.readouterr().out
    assert "inputs tried:" in out and "worker restarts: 0" in out
    assert code == 0, out
