"""Ctrl-C that a library's clean-up replaced by another error (libcst's
position provider raises KeyError from its ``finally``) is an interruption:
exit 130 with the interrupted message, never an internal error or a crashed
rule (nkilint/interrupts.py)."""

from __future__ import annotations

import contextlib

import pytest

from nkilint.interrupts import caused_by_interrupt


@contextlib.contextmanager
def _cleanup_that_fails():
    try:
        yield
    finally:
        raise KeyError("bookkeeping of an interrupted library")  # what libcst does


def _masked_interrupt() -> BaseException:
    try:
        with _cleanup_that_fails():
            raise KeyboardInterrupt
    except KeyError as exc:
        return exc
    raise AssertionError("the clean-up did not raise")


def test_an_interrupt_in_the_context_chain_is_recognised():
    masked = _masked_interrupt()
    assert isinstance(masked, KeyError) and caused_by_interrupt(masked)
    try:
        raise RuntimeError("wrapped") from masked
    except RuntimeError as outer:
        assert caused_by_interrupt(outer)
    assert not caused_by_interrupt(KeyError("a real bug"))


def test_a_chain_with_a_cycle_terminates():
    a, b = ValueError("a"), ValueError("b")
    a.__context__, b.__context__ = b, a
    assert not caused_by_interrupt(a)


def test_the_cli_exits_130_on_a_masked_interrupt(monkeypatch, capsys):
    from nkilint import cli as cli_module

    def interrupted(*args, **kwargs):
        raise _masked_interrupt()

    monkeypatch.setattr(cli_module.cli, "main", interrupted)
    with pytest.raises(SystemExit) as exit_info:
        cli_module.main()
    assert exit_info.value.code == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "internal error" not in err


def test_a_masked_interrupt_in_a_rule_stops_the_run(tmp_path):
    from nkilint.config import Settings
    from nkilint.discovery import InputFile
    from nkilint.engine import Checker, RunOptions
    from nkilint.findings import Level
    from nkilint.plugins import installed_rules
    from nkilint.rule import Rule, RuleSet

    class Interrupted(Rule):
        id = "ZZZ903"
        name = "interrupted-inside-a-library"
        family = "tool"
        level = Level.WARNING
        summary = "raises a masked interrupt"
        explanation = "test only"

        def check(self, ctx):
            raise _masked_interrupt()

    path = tmp_path / "k.py"
    path.write_text("x = 1\n")
    ruleset = installed_rules()
    checker = Checker(Settings(root=tmp_path), ruleset, frozenset({"ZZZ903"}), RunOptions(extra_rules=(Interrupted,)))
    with pytest.raises(KeyboardInterrupt):
        checker.check_path(InputFile(path, "k.py", True))


def test_interrupts_deferred_holds_ctrl_c_until_the_block_is_done():
    import os
    import signal

    from nkilint.interrupts import interrupts_deferred

    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("after the signal")  # still runs: the interrupt waits
    assert done == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_ctrl_c_during_an_atomic_write_leaves_no_temporary_file(tmp_path):
    # A SIGINT while the temporary file exists (here: during validation) must
    # end with the target either old or new and no temporary file left.
    import os
    import signal

    from nkilint.safefs import replace_bytes

    target = tmp_path / "k.py"
    target.write_bytes(b"x = 1\n")

    def interrupted_validation(tmp):
        os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        replace_bytes(target, b"x = 2\n", b"x = 1\n", validate=interrupted_validation)
    assert target.read_bytes() in (b"x = 1\n", b"x = 2\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.py"]
