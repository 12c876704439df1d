"""The property every input must keep, and the inputs: shared by the CI run
(tests/fuzz/test_fuzz.py) and the long run (scripts/fuzz.py).

The property (``problems``): checking the text raises nothing and reports
no crashed rule or model (NKI003, a crash notification); it ends within a
time bound (a hang guard, not a benchmark); if fixes apply, ``--fix`` (safe
and unsafe, through the same pipeline as the command line, gates included)
gives text that parses, that a second fix leaves unchanged (idempotent), and
that has no new error outside the migration family, or it refuses with a
message (a refusal is allowed, a crash is not).

Inputs: fixture kernels of this repository mutated at random (numbers
replaced by edge values, lines dropped, duplicated, swapped, re-indented or
cut, names swapped, deep nesting inserted), Python modules generated from
the grammar (hypothesmith), and raw bytes for the decoder.
"""

from __future__ import annotations

import ast
import random
import re
import signal
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from nkilint.config import Settings
from nkilint.engine import Checker, RunOptions
from nkilint.fix_gates import introduced_errors
from nkilint.fixes import apply_fixes_to_run
from nkilint.plugins import installed_rules
from nkilint.run import Run
from nkilint.source import SourceError, decode_source
from nkilint.versions import LATEST, V0_1

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
TIME_BOUND_S = 60.0

EDGE_NUMBERS = ["0", "-1", "1", "127", "129", "2 ** 31", "2 ** 64", "10 ** 400", "-(2 ** 63)", "1e308", "1e-320",
                "float('nan')", "float('inf')", "0.5", "True", "None", "(1 << 200)", "10 ** 10 ** 2", "65536 * 65536"]
NAMES = ["a", "t", "nl", "nisa", "nki", "i", "j", "out", "range", "len", "None", "self", "tile", "x", "shape", "dtype"]


class Hang(BaseException):
    """The time bound ran out (a BaseException: the engine must not catch it)."""


@contextmanager
def time_bound(seconds: float):
    def expire(signum, frame):
        raise Hang(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@lru_cache(maxsize=None)
def fixture_kernels() -> tuple[str, ...]:
    """The repository's own fixture kernels (small ones: fast to check)."""
    out = []
    for path in sorted(FIXTURES.rglob("*.py")):
        if path.stat().st_size <= 4096:
            out.append(path.read_text(encoding="utf-8"))
    return tuple(out)


def _checker(legacy: bool) -> Checker:
    ruleset = installed_rules()
    version = V0_1 if legacy else LATEST
    settings = Settings(root=REPO / "fixtures", target_name="trn2", nki_version=version, nki_version_explicit=True)
    return Checker(settings, ruleset, frozenset(ruleset.rules), RunOptions(keep_text=True))


def _crashes(result) -> list[str]:
    out = [f"{f.rule_id}: {f.message}" for f in result.findings if f.rule_id == "NKI003"]
    out += [f"notification {n.rule_id}: {n.message}" for n in result.notifications if n.rule_id is not None]
    return out


def _fix_through_pipeline(checker: Checker, result) -> tuple[str, list[str]]:
    """(the fixed text, the refusals) of ``--fix --unsafe-fixes`` on one
    checked text, through ``apply_fixes_to_run`` as for standard input."""
    run = Run(checker.settings, checker.ruleset, checker.enabled)
    run.files.append(result)
    report = apply_fixes_to_run(run, checker, write=True, unsafe=True, stdin=True)
    refusals = [n.message for n in run.notifications]
    return (report.diff if report.files else result.text), refusals


def problems(text: str, legacy: bool = False, fix: bool = True, bound: float = TIME_BOUND_S) -> list[str]:
    """What is wrong with how nkilint handles ``text`` (empty: nothing)."""
    try:
        return _problems(text, legacy, fix, bound)
    except Hang as exc:
        return [f"hang: {exc}"]


def _problems(text: str, legacy: bool, fix: bool, bound: float) -> list[str]:
    checker = _checker(legacy)
    found: list[str] = []
    with time_bound(bound):
        try:
            result = checker.check_text(text, "fuzz.py")
        except Exception as exc:  # noqa: BLE001 - the property: nothing escapes
            return [f"check raised {type(exc).__name__}: {exc}"]
        found += _crashes(result)
        if not fix or found or not any(f.fix for f in result.findings):
            return found

        # The fix pipeline --fix runs (both gates of nkilint.fix_gates
        # included), on the text as if read from stdin.
        try:
            fixed, refused = _fix_through_pipeline(checker, result)
        except Exception as exc:  # noqa: BLE001
            return [f"fix raised {type(exc).__name__}: {exc}"]
        if refused or fixed == text:
            return found  # refused with a message: allowed
        try:
            ast.parse(fixed)
        except SyntaxError as exc:
            return [f"fixed text does not parse: {exc}"]
        after = checker.check_text(fixed, "fuzz.py")
        found += [f"after fixing: {c}" for c in _crashes(after)]
        # The pipeline refuses a fix that brings a new error outside the
        # migration family (a staged port may bring up the next migration
        # step); one that got through is a bug of the gate.
        found += [f"fix added an error: {f.rule_id}: {f.message}"
                  for f in introduced_errors(result.findings, after.findings, checker.ruleset)]
        try:
            again, _ = _fix_through_pipeline(checker, after)
        except Exception as exc:  # noqa: BLE001
            return found + [f"second fix raised {type(exc).__name__}: {exc}"]
        if again != fixed:
            found.append("fixes are not idempotent: a second --fix changed the text again")
    return found


def decoding_problems(data: bytes) -> list[str]:
    """Decoding bytes gives text or a SourceError, nothing else."""
    try:
        text = decode_source(data)
    except SourceError:
        return []
    except Exception as exc:  # noqa: BLE001
        return [f"decode raised {type(exc).__name__}: {exc}"]
    return [] if isinstance(text, str) else ["decode gave no text"]


# -- mutations -----------------------------------------------------------------------
_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def mutate(text: str, rng: random.Random, rounds: int = 3) -> str:
    """A random, often still valid, variation of a kernel."""
    for _ in range(rounds):
        lines = text.split("\n")
        kind = rng.randrange(9)
        if kind == 0:
            numbers = list(_NUMBER.finditer(text))
            if numbers:
                m = rng.choice(numbers)
                text = text[: m.start()] + rng.choice(EDGE_NUMBERS) + text[m.end():]
                continue
        if kind == 1 and len(lines) > 2:
            del lines[rng.randrange(len(lines))]
        elif kind == 2 and lines:
            i = rng.randrange(len(lines))
            lines[i:i] = [lines[i]] * rng.randint(1, 4)
        elif kind == 3 and len(lines) > 2:
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == 4 and lines:
            i = rng.randrange(len(lines))
            lines[i] = rng.choice(["", "    ", "\t", "        "]) + lines[i].lstrip()
        elif kind == 5:
            names = list(_NAME.finditer(text))
            if names:
                m = rng.choice(names)
                text = text[: m.start()] + rng.choice(NAMES) + text[m.end():]
                continue
        elif kind == 6 and lines:
            i = rng.randrange(len(lines))
            indent = re.match(r"\s*", lines[i]).group(0)
            depth = rng.choice([5, 50, 400])
            deep = rng.choice([
                "y = " + " + ".join(["t"] * depth),
                "y = " + "(" * min(depth, 150) + "t" + ")" * min(depth, 150),
                "y = " + " and ".join(["t"] * depth * 4),
                "y = " + " if t else ".join(["t"] * depth),
                "y = t" + "[0]" * depth,
            ])
            lines.insert(i, indent + deep)
        elif kind == 7 and text:
            cut = rng.randrange(len(text))
            return text[:cut]
        elif kind == 8 and lines:
            i = rng.randrange(len(lines))
            indent = re.match(r"\s*", lines[i]).group(0)
            lines.insert(i, indent + rng.choice([
                "t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)",
                "nisa.tensor_tensor(dst=t, data1=t, data2=t, op=nl.add)",
                "for i in nl.affine_range(10 ** 6):", "assert a.shape[0] <= 128", "x = x * x",
                "return t", "del t", "global t", "yield t", "t = nl.load(a[0:129, 0:512])",
            ]))
        text = "\n".join(lines)
    return text
