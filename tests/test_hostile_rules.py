"""Rules and the model on deep and odd input (issue 20): a rule that raises
RecursionError, OverflowError or even SystemExit is reported as NKI003 for
that rule only and the other rules still run; valid deep expressions crash
no built-in rule and not the model."""

from __future__ import annotations

import sys

import pytest

from conftest import LEGACY_KERNEL, write
from hostile_support import check_one, deadline
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid


def _rule(rule_id: str, body):
    class Broken(Rule):
        id = rule_id
        name = f"broken-{rule_id.lower()}"
        family = "semantics"
        level = Level.WARNING
        summary = "A rule with a bug"
        explanation = "Fails on every file."
        examples = (invalid("x = 1\n", lines=[1]), valid("x = 1\n"))

        def check(self, ctx):
            body(ctx)

    return Broken


def _recurse(ctx, n=0):
    return _recurse(ctx, n + 1)


def _exit(ctx):
    sys.exit(0)


def _overflow(ctx):
    float(10 ** 400)


def _zero(ctx):
    ctx.report(ctx.tree, "half a finding")  # reported, then the rule fails: the finding is dropped
    return 1 // 0


@pytest.mark.parametrize(
    "body,kind",
    [(_recurse, "RecursionError"), (_exit, "SystemExit"), (_overflow, "OverflowError"), (_zero, "ZeroDivisionError")],
)
def test_a_failing_rule_is_nki003_for_that_rule_only(tmp_path, body, kind):
    path = write(tmp_path / "k.py", LEGACY_KERNEL)
    result = check_one(path, extra_rules=(_rule("XTR901", body),))
    crashes = [f for f in result.findings if f.rule_id == "NKI003"]
    assert len(crashes) == 1 and "XTR901" in crashes[0].message and kind in crashes[0].message
    assert any(f.rule_id == "NKI601" for f in result.findings), "the other rules did not run"
    assert not any(f.rule_id == "XTR901" for f in result.findings)
    assert result.crashed


def test_a_rule_calling_sys_exit_does_not_end_the_run(project):
    import subprocess

    from conftest import make_pack

    site = make_pack(project.parent / "site", "exitpack", "exit_rules", '''
import sys
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid


class Quit(Rule):
    id = "XTR902"
    name = "quits"
    family = "semantics"
    level = Level.WARNING
    summary = "A rule that exits"
    explanation = "Calls sys.exit(0). Fix: none."
    examples = (invalid("x = 1\\n", lines=[1]), valid("x = 1\\n"))

    def check(self, ctx):
        sys.exit(0)
''', "exit_rules:Quit")
    write(project / "a.py", LEGACY_KERNEL)
    write(project / "b.py", LEGACY_KERNEL)
    proc = subprocess.run([sys.executable, "-m", "nkilint", "check", "--format", "concise", "a.py", "b.py"],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(site)})
    assert proc.returncode == 2, proc.stdout + proc.stderr  # a crashed rule is an internal error, not exit 0
    assert proc.stdout.count("NKI601") == 2 and proc.stdout.count("NKI003") == 2, proc.stdout
    assert "--show-traceback prints where it crashed" in proc.stderr and "Traceback" not in proc.stderr
    shown = subprocess.run([sys.executable, "-m", "nkilint", "check", "--show-traceback", "a.py"],
                           cwd=project, capture_output=True, text=True, timeout=300,
                           env={**__import__("os").environ, "PYTHONPATH": str(site)})
    assert "Traceback (most recent call last)" in shown.stderr, shown.stderr
    assert "exit_rules.py" in shown.stderr and "sys.exit(0)" in shown.stderr, shown.stderr


DEEP = {
    "plus": lambda n: "y = " + " + ".join(["a"] * n),
    "and": lambda n: "y = " + " and ".join(["a"] * n),
    "ternary": lambda n: "y = " + " if c else ".join(["a"] * n),
    "not": lambda n: "y = " + "not " * n + "a",
    "neg": lambda n: "y = " + "-" * n + "a",
    "subscript": lambda n: "y = a" + "[0]" * n,
    "attr": lambda n: "y = a" + ".b" * n,
    "call": lambda n: "y = " + "f(" * 180 + ")" * 180,
    "compare": lambda n: "y = " + " < ".join(["a"] * n),
    "lists": lambda n: "y = " + "[" * 180 + "]" * 180,
    "tuple_shape": lambda n: "t = nl.ndarray((" + " * ".join(["2"] * n) + ", 512), dtype=nl.float32, buffer=nl.sbuf)",
    "index": lambda n: "t[" + " + ".join(["i"] * n) + ", 0] = 1",
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_valid_deep_expressions_crash_no_rule(tmp_path, shape):
    n = 900
    body = DEEP[shape](n)
    source = ("import nki\nimport nki.language as nl\n\n\n@nki.jit\ndef kernel(a, c, f, i):\n"
              "    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)\n"
              f"    {body}\n    return a\n\n{body.replace('nl.', 'nl.')}\n")
    compile(source, "k.py", "exec")  # valid Python that CPython compiles
    path = write(tmp_path / "k.py", source)
    with deadline(120):
        result = check_one(path)
    crashes = [n.message for n in result.notifications if n.rule_id]
    assert not crashes, crashes
    assert not any(f.rule_id in ("NKI001", "NKI003") for f in result.findings)


def test_in_place_updates_stay_linear_for_every_rule(tmp_path):
    """The issue's exponential partition case, with every rule and many more
    updates than the partition test: still a hang guard, not a benchmark."""
    from test_partition_in_place_updates import _kernel

    path = write(tmp_path / "in_place.py", _kernel(24))
    with deadline(60):
        result = check_one(path)
    assert not result.crashed
    assert [f.span.start_line for f in result.findings if f.rule_id == "NKI104"] == [11 + 24]


MODULE_TILE = """\
import nki
import nki.isa as nisa
import nki.language as nl

g = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)


@nki.jit
def k(x):
    out = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=g[0:128, 0:64])
    nisa.dma_copy(dst=out, src=g[0:128, 0:64])
    return out
"""


def test_a_tensor_made_at_module_level_and_read_in_a_kernel_crashes_nothing(tmp_path):
    # Minimized from the 30-minute fuzz run: the module's value had no node in the kernel graph.
    path = write(tmp_path / "k.py", MODULE_TILE)
    result = check_one(path)
    assert not result.crashed, [f.message for f in result.findings if f.rule_id == "NKI003"]
    assert [f.rule_id for f in result.findings if f.level.label == "error"] == ["NKI719"]
    from nkilint.model.semantic import analyze_file  # the graph holds one node for g, read twice
    from nkilint.config import Settings
    from nkilint.model.project import Project
    from nkilint.source import SourceFile

    settings = Settings(root=tmp_path)
    model = analyze_file(SourceFile(str(path), MODULE_TILE, "k.py"), Project(tmp_path), settings.target,
                         settings.nki_version, settings.release)
    (kernel,) = model.kernels
    module_tensors = [d for _, d in kernel.graph.tensors() if d.get("origin") == "module"]
    assert [(d["name"], d["buffer"]) for d in module_tensors] == [("g", "sbuf")]


def test_an_empty_partition_slice_in_a_loop_crashes_no_rule(tmp_path):
    # Minimized from the 30-minute fuzz run: NKI306 divided by a 0-partition transfer.
    path = write(tmp_path / "k.py", (
        "import neuronxcc.nki.language as nl\n"
        "def gather_then_store(x):\n"
        "    for j in range(4):\n"
        "        t = nl.load(x[0:0, j * 512:(j + 1) * 512], dtype=nl.float32)\n"
    ))
    result = check_one(path)
    assert not result.crashed, [f.message for f in result.findings if f.rule_id == "NKI003"]
