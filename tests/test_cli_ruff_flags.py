"""The flags users copy from ruff: -q / -s / -v, --output-format,
--stdin-filename without '-', --color and FORCE_COLOR / NO_COLOR,
--statistics (a table of the findings' real levels, text and JSON),
--show-fixes, and exit 130 on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from conftest import CLEAN_KERNEL, LEGACY_IMPORT_ONLY, LEGACY_KERNEL, run_nkilint, write
from test_fixes import KERNEL_02

def test_quiet_prints_only_the_findings(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "-q", "k.py")
    assert result.exit_code == 1
    assert result.stdout.startswith("k.py:1:1: NKI601")
    assert "target:" not in result.stdout and "Found" not in result.stdout


def test_silent_prints_nothing_but_keeps_the_exit_code(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--silent", "k.py")
    assert result.exit_code == 1 and result.stdout == ""
    assert cli("check", "-s", "--format", "json", "k.py").stdout == ""


def test_verbose_says_where_the_settings_come_from(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "-v", "k.py")
    assert f"project root {project.resolve()}" in result.stderr
    assert "configuration none" in result.stderr and "1 file to check" in result.stderr


def test_output_format_is_an_alias_of_format(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    doc = json.loads(cli("check", "--output-format", "json", "k.py").stdout)
    assert doc["findings"][0]["rule"] == "NKI601"


def test_stdin_filename_alone_reads_stdin(cli, project):
    result = cli("check", "--output-format", "concise", "--stdin-filename", "kern.py", input=LEGACY_KERNEL)
    assert "kern.py:1:1: NKI601" in result.stdout


def test_color_flag_and_force_color_force_colour_into_a_pipe(project):
    write(project / "k.py", LEGACY_KERNEL)
    assert "\x1b[" in run_nkilint("check", "--color", "k.py", cwd=project).stdout
    assert "\x1b[" in run_nkilint("check", "k.py", cwd=project, env_extra={"FORCE_COLOR": "1"}).stdout
    assert "\x1b[" not in run_nkilint("check", "k.py", cwd=project, env_extra={"NO_COLOR": "1"}).stdout
    assert "\x1b[" not in run_nkilint("check", "k.py", cwd=project).stdout


def test_statistics_is_a_table_of_the_findings_levels(cli, project):
    # At SDK 2.33 NKI601 is an error in a legacy kernel (legacy code inside
    # kernels is rejected from 2.30) and a warning on an unused legacy import
    # (the namespace still imports until 2.34).
    write(project / "k.py", LEGACY_KERNEL)
    write(project / "j.py", LEGACY_IMPORT_ONLY)
    result = cli("check", "--statistics", "--sdk", "2.33", "--select", "NKI601", ".")
    lines = result.stdout.splitlines()
    assert not any(line.startswith(("k.py:", "j.py:")) for line in lines)  # the table only
    rows = [line.split() for line in lines if "NKI601" in line]
    levels = {"error", "warning", "note"}
    assert sorted((r[0], next(t for t in r if t in levels)) for r in rows) == [("1", "error"), ("1", "warning")]
    assert result.exit_code == 1


def test_statistics_in_json(cli, project):
    write(project / "k.py", KERNEL_02)
    rows = json.loads(cli("check", "--isolated", "--select", "migration", "--statistics", "--format", "json", "k.py").stdout)
    assert rows and all(set(r) == {"code", "name", "level", "count", "fixable"} for r in rows)
    assert sum(r["fixable"] for r in rows) >= 6
    assert all(0 <= r["fixable"] <= r["count"] for r in rows)


def test_show_fixes_lists_what_was_fixed(cli, project):
    write(project / "k.py", KERNEL_02)
    available = cli("check", "--isolated", "--select", "migration", "--show-fixes", "k.py")
    assert "Fixable" in available.stderr and "k.py:" in available.stderr
    fixed = cli("check", "--isolated", "--select", "migration", "--sdk", "2.34", "--fix", "--show-fixes", "k.py")
    assert "Fixed: 6 findings:" in fixed.stderr
    assert "Fixed 6." in fixed.stdout


def test_ctrl_c_exits_130_and_writes_no_report(project):
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "nkilint", "check", "--format", "json", "-o", "report.json", "-"],
        cwd=project, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    time.sleep(3)  # blocked reading stdin
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert not (project / "report.json").exists()
