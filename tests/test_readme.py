"""The README's first two commands (install + example, run the tests), and
.ci/run running the same test command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTALL_AND_EXAMPLE = "python3 -m pip install . && nkilint check --example --exit-zero"
TEST_COMMAND = "python3 -m pip install -e '.[test]' && python3 -m pytest -q"


def _readme_commands(limit: int = 12) -> list[str]:
    """Indented (code) lines among the README's first lines."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:limit]
    return [line.strip() for line in lines if line.startswith("    ") and line.strip()]


def test_readme_starts_with_the_two_commands():
    assert _readme_commands()[:2] == [INSTALL_AND_EXAMPLE, TEST_COMMAND]


def test_ci_runs_the_readme_test_command():
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK), ".ci/run must be executable"
    text = script.read_text(encoding="utf-8")
    assert text.startswith("#!")
    assert re.search(r"^set -[a-z]*e", text, re.M), ".ci/run must stop at the first failing command"
    commands = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    steps = [part.strip() for part in _readme_commands()[1].split("&&")]
    positions = [commands.index(step) for step in steps]  # ValueError if a step is missing
    assert positions == sorted(positions)
    # It runs from the repository root, where pyproject.toml is.
    assert 'cd "$(dirname "$0")/.."' in text


def _console_script() -> str | None:
    beside = Path(sys.executable).parent / "nkilint"
    return str(beside) if beside.is_file() else shutil.which("nkilint")


def test_the_example_command_runs(tmp_path):
    command = INSTALL_AND_EXAMPLE.split(" && ")[1].split()
    assert command[:2] == ["nkilint", "check"]
    script = _console_script()
    assert script, "the `nkilint` console script is not installed"
    proc = subprocess.run([script, *command[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "softmax_port.py:8:1: NKI601" in proc.stdout
    assert "Found " in proc.stdout
