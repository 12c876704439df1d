"""The time limit per file (nkilint.deadline) and the NKI005 notes of budgets
that ran out (nkilint.incomplete). Bounds are hang guards, not benchmarks."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from nkilint.cli import cli as main
from nkilint.config import ConfigError, Settings, parse_table
from nkilint.deadline import FileTimeLimit, enforceable, file_deadline
from nkilint.discovery import InputFile
from nkilint.engine import Checker, RunOptions
from nkilint.findings import Level
from nkilint.plugins import installed_rules
from nkilint.rule import Rule
from nkilint.versions import LATEST

from hostile_support import deadline

pytestmark = pytest.mark.skipif(not enforceable(), reason="needs SIGALRM (POSIX)")

KERNEL = """\
import nki
import nki.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((256, 64), dtype=nl.float32, buffer=nl.sbuf)
    return t
"""


class SpinsForever(Rule):
    id = "ZZZ901"
    name = "spins-forever"
    family = "tool"
    level = Level.WARNING
    summary = "loops until stopped"
    explanation = "test only"

    def check(self, ctx):
        while True:
            pass


class SwallowsEverything(Rule):
    """A rule whose broad handler must not hide the time limit."""

    id = "ZZZ902"
    name = "swallows-everything"
    family = "tool"
    level = Level.WARNING
    summary = "loops inside except Exception"
    explanation = "test only"

    def check(self, ctx):
        while True:
            try:
                sum(range(1000))
            except Exception:  # noqa: BLE001 - the point of the test
                pass


def _checker(tmp_path: Path, limit: float, extra: tuple = (), select: frozenset | None = None) -> Checker:
    ruleset = installed_rules()
    settings = Settings(root=tmp_path, nki_version=LATEST, file_time_limit=limit)
    enabled = frozenset(ruleset.rules) if select is None else select
    return Checker(settings, ruleset, enabled, RunOptions(extra_rules=extra))


def _check(checker: Checker, path: Path):
    return checker.check_path(InputFile(path, path.name, True))


@pytest.mark.parametrize("stuck", [SpinsForever, SwallowsEverything])
def test_a_stuck_rule_is_stopped_and_the_file_gets_one_note(tmp_path, stuck):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    checker = _checker(tmp_path, 0.5, extra=(stuck,))
    with deadline(60):
        result = _check(checker, path)
    notes = [f for f in result.findings if f.rule_id == "NKI005"]
    assert len(notes) == 1
    assert f"rule {stuck.id} ({stuck.name}) was running" in notes[0].message
    assert "0.5 s per file" in notes[0].message
    assert notes[0].level is Level.NOTE
    assert result.timed_out and not result.crashed
    # Extra rules run after the installed ones: the installed rules' findings stay.
    assert any(f.rule_id == "NKI101" for f in result.findings), [f.rule_id for f in result.findings]
    assert not any(f.rule_id == stuck.id for f in result.findings)


def test_the_rules_not_run_are_named(tmp_path, monkeypatch):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    ruleset = installed_rules()
    # The first rule to run (in id order) is stuck: the two after it are skipped.
    monkeypatch.setattr(ruleset.rules["NKI101"], "check", SpinsForever.check)
    settings = Settings(root=tmp_path, nki_version=LATEST, file_time_limit=0.3)
    checker = Checker(settings, ruleset, frozenset({"NKI005", "NKI101", "NKI216", "NKI301"}), RunOptions())
    with deadline(60):
        result = _check(checker, path)
    (note,) = [f for f in result.findings if f.rule_id == "NKI005"]
    assert "while rule NKI101 (partition-size-over-limit) was running" in note.message, note.message
    assert "2 rules were not run: NKI216, NKI301" in note.message
    assert not any(f.rule_id in ("NKI101", "NKI216") for f in result.findings)


def test_the_next_file_gets_the_full_time_again(tmp_path):
    slow, fast = tmp_path / "slow.py", tmp_path / "fast.py"
    slow.write_text("x = 1\n")
    fast.write_text(KERNEL)

    class SpinsOnSlow(SpinsForever):
        def check(self, ctx):
            if ctx.source.path.endswith("slow.py"):
                super().check(ctx)

    checker = _checker(tmp_path, 0.5, extra=(SpinsOnSlow,))
    with deadline(60):
        first, second = _check(checker, slow), _check(checker, fast)
    assert first.timed_out and not second.timed_out
    assert any(f.rule_id == "NKI101" for f in second.findings)
    assert not any(f.rule_id == "NKI005" for f in second.findings)


def test_zero_means_no_limit(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)

    class Sleeps(SpinsForever):
        def check(self, ctx):
            time.sleep(0.3)

    checker = _checker(tmp_path, 0, extra=(Sleeps,))
    result = _check(checker, path)
    assert not result.timed_out
    assert not any(f.rule_id == "NKI005" for f in result.findings)


def test_with_nki005_off_a_notification_still_says_so(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    ruleset = installed_rules()
    checker = _checker(tmp_path, 0.3, extra=(SpinsForever,), select=frozenset(ruleset.rules) - {"NKI005"})
    with deadline(60):
        result = _check(checker, path)
    assert not any(f.rule_id == "NKI005" for f in result.findings)
    assert [n.rule_id for n in result.notifications] == ["NKI005"]
    assert "time limit of 0.3 s" in result.notifications[0].message


def test_a_wall_clock_alarm_of_the_caller_is_left_alone():
    """The limit counts CPU on its own timer: a SIGALRM the caller set still fires inside."""

    class Outer(BaseException):
        pass

    def outer(signum, frame):
        raise Outer()

    previous = signal.signal(signal.SIGALRM, outer)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(Outer):
            with file_deadline(30):
                while True:
                    pass
        assert signal.getitimer(signal.ITIMER_PROF)[0] == 0  # the limit is disarmed
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_nested_limit_gives_the_outer_one_its_remaining_time_back():
    with pytest.raises(FileTimeLimit) as outer:
        with file_deadline(1):
            with pytest.raises(FileTimeLimit) as inner:
                with file_deadline(0.1):
                    while True:
                        pass
            assert inner.value.seconds == 0.1
            remaining = signal.getitimer(signal.ITIMER_PROF)[0]
            assert 0 < remaining <= 1
            while True:
                pass
    assert outer.value.seconds == 1
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_sleeping_is_not_counted():
    start = time.monotonic()
    with file_deadline(0.05):
        time.sleep(0.3)  # wall time, no CPU: no FileTimeLimit
    assert time.monotonic() - start >= 0.3


@pytest.mark.parametrize("value", [-1, "10", True])
def test_config_rejects_a_bad_limit(tmp_path, value):
    with pytest.raises(ConfigError, match="file-time-limit"):
        parse_table({"file-time-limit": value}, "pyproject.toml", tmp_path)


def test_config_and_cli_set_the_limit(tmp_path, monkeypatch):
    assert parse_table({"file-time-limit": 5}, "pyproject.toml", tmp_path)["file_time_limit"] == 5.0
    (tmp_path / "pyproject.toml").write_text("[tool.nkilint]\nfile-time-limit = 0.2\nsdk = \"2.34\"\n")
    (tmp_path / "kernel.py").write_text(KERNEL)
    monkeypatch.setattr(installed_rules().rules["NKI101"], "check", SpinsForever.check)
    runner = CliRunner()
    with deadline(120):
        res = runner.invoke(main, ["check", "--format", "json", "--no-cache", str(tmp_path / "kernel.py")])
    report = json.loads(res.output)
    notes = [f for f in report["findings"] if f["rule"] == "NKI005"]
    assert len(notes) == 1 and "0.2 s per file" in notes[0]["message"], report["findings"]
    assert res.exit_code == 0  # a note does not fail the run
    monkeypatch.undo()
    with deadline(120):
        res = runner.invoke(main, ["check", "--format", "json", "--no-cache", "--file-time-limit", "0",
                                   str(tmp_path / "kernel.py")])
    rules = [f["rule"] for f in json.loads(res.output)["findings"]]
    assert "NKI005" not in rules and "NKI101" in rules


def test_a_timed_out_file_is_not_cached(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.nkilint]\nsdk = \"2.34\"\n")
    (tmp_path / "kernel.py").write_text(KERNEL)
    cache = tmp_path / "cache"
    runner = CliRunner()
    args = ["check", "--format", "json", "--cache-dir", str(cache), str(tmp_path / "kernel.py")]
    monkeypatch.setattr(installed_rules().rules["NKI101"], "check", SpinsForever.check)
    with deadline(120):
        first = runner.invoke(main, [*args, "--file-time-limit", "0.2"])
    monkeypatch.undo()
    with deadline(120):
        second = runner.invoke(main, args)
    assert "NKI005" in [f["rule"] for f in json.loads(first.output)["findings"]]
    assert "NKI101" in [f["rule"] for f in json.loads(second.output)["findings"]]


def test_a_kernel_whose_step_budget_ran_out_gets_a_note_at_its_def(tmp_path, monkeypatch):
    import nkilint.model.interp.core as core

    monkeypatch.setattr(core, "MAX_STEPS", 5)
    path = tmp_path / "kernel.py"
    looping = KERNEL.replace("    return t\n", "    for i in range(4):\n        t = t + 1\n    return t\n")
    path.write_text(looping)
    checker = _checker(tmp_path, 60)
    result = _check(checker, path)
    notes = [f for f in result.findings if f.rule_id == "NKI005"]
    assert [n.span.start_line for n in notes] == [6]
    assert "kernel 'k'" in notes[0].message and "step budget of 5 steps" in notes[0].message
    assert not result.timed_out


def test_the_kernels_of_one_file_share_a_step_budget(tmp_path, monkeypatch):
    # Each kernel's budget bounds one kernel; the file's bounds them all
    # together: the first kernel spends it, the second is cut at once and
    # says which budget ran out.
    import nkilint.model.semantic as semantic

    path = tmp_path / "kernel.py"
    long = KERNEL.replace("    return t\n", "".join(f"    v{i} = {i} + 1\n" for i in range(40)) + "    return t\n")
    path.write_text(long + "\n\n" + long.replace("def k(", "def k2("))
    checker = _checker(tmp_path, 60)
    assert not [f for f in _check(checker, path).findings if f.rule_id == "NKI005"]
    monkeypatch.setattr(semantic, "FILE_STEPS", 30)
    result = _check(_checker(tmp_path, 60), path)
    notes = [f for f in result.findings if f.rule_id == "NKI005"]
    assert notes and all("file's step budget of 30 interpreter steps" in n.message for n in notes)
    assert "kernel 'k2'" in notes[-1].message
