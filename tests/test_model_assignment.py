"""Definite assignment of device functions' locals (nkilint.model.assignment.DefiniteAssignment)."""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from pathlib import Path

from nkilint.model.assignment import MAYBE, UNDEF, DefiniteAssignment
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST


def _uses(tmp_path: Path, code: str, fn_name: str = "kernel") -> list[tuple[int, str, str]]:
    path = tmp_path / "kernel.py"
    text = textwrap.dedent(code)
    path.write_text(text, encoding="utf-8")
    model = analyze_file(SourceFile(str(path), text, "kernel.py"), Project(tmp_path), TRN2, LATEST)
    fn = next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.FunctionDef) and n.name == fn_name)
    return [(u.node.lineno, u.name, u.status) for u in model.analysis(DefiniteAssignment).unbound_uses(fn)]


def test_one_branch_nested_ifs_and_else_raise(tmp_path):
    code = """
    def kernel(a, flag, mode):
        if flag:
            if mode == 1:
                t = a
            else:
                t = a + 1
            u = a
        print(t)
        if mode == 2:
            w = 1
        elif mode == 3:
            w = 2
        else:
            raise ValueError(mode)
        return w, u
    """
    assert _uses(tmp_path, code) == [(9, "t", MAYBE), (16, "u", MAYBE)]


def test_use_before_assignment_and_constant_conditions(tmp_path):
    code = """
    DEBUG = False
    def kernel(a):
        b = c + 1
        c = a
        if DEBUG:
            d = 1
        if not True:
            e = 1
        if 0 or DEBUG:
            f = 1
        while False:
            g = 1
        return d, e, f, g, b
    """
    assert _uses(tmp_path, code) == [(4, "c", UNDEF), (14, "d", UNDEF), (14, "e", UNDEF), (14, "f", UNDEF),
                                    (14, "g", UNDEF)]


def test_rebound_module_flag_is_not_a_constant(tmp_path):
    code = """
    DEBUG = False
    def configure():
        global DEBUG
        DEBUG = True
    def kernel(a):
        if DEBUG:
            d = 1
        return d
    """
    assert _uses(tmp_path, code) == [(9, "d", MAYBE)]


def test_loops_carry_values_and_count_as_run(tmp_path):
    code = """
    def kernel(a, n):
        for i in range(n):
            if i > 0:
                a = a + prev
            prev = a
        while n:
            last = n
            n -= 1
        while True:
            r = 1
            break
        for j in range(n):
            if j == 3:
                k = j
                break
            k = 0
        return prev, i, last, r, k
    """
    assert _uses(tmp_path, code) == []


def test_try_handlers_comprehensions_del_and_reads_reported_once(tmp_path):
    code = """
    def kernel(a):
        try:
            q = a
        except ValueError:
            pass
        try:
            r = a
        except ValueError:
            raise
        s = [v for v in range(3) if v] + [a for a in range(2)]
        del s
        helper = lambda: later
        later = 1
        print(q, q, r, s, s)
        return helper
    """
    assert _uses(tmp_path, code) == [(15, "q", MAYBE), (15, "s", UNDEF)]


def test_no_answer_with_match_or_locals(tmp_path):
    code = """
    def kernel(a):
        match a:
            case 1:
                x = 1
        return x
    def other(a):
        locals()["x"] = 1
        return x + y
    def third(a):
        try:
            y = x
        except NameError:
            y = None
        x = 1
        return y
    """
    assert _uses(tmp_path, code) == []
    assert _uses(tmp_path, code, "other") == []
    assert _uses(tmp_path, code, "third") == []


def test_deep_nesting_does_not_recurse(tmp_path):
    """90 nested ifs, answered with a recursion limit only 40 frames above the caller's depth."""
    depth = 90
    lines = ["def kernel(a, f):"]
    for i in range(depth):
        lines.append("    " * (i + 1) + f"if f > {i}:")
    lines.append("    " * (depth + 1) + "t = a")
    lines.append("    return t")
    path = tmp_path / "kernel.py"
    text = "\n".join(lines) + "\n"
    path.write_text(text, encoding="utf-8")
    model = analyze_file(SourceFile(str(path), text, "kernel.py"), Project(tmp_path), TRN2, LATEST)
    facts = model.analysis(DefiniteAssignment)
    fn = model.module.tree.body[0]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 40)
    try:
        uses = facts.unbound_uses(fn)
    finally:
        sys.setrecursionlimit(limit)
    assert [(u.node.lineno, u.status) for u in uses] == [(depth + 3, MAYBE)]


def test_path_enders_and_enum_chains(tmp_path):
    code = """
    import sys
    def kernel(a, rank, layout, n):
        if rank == 2:
            x = 1
        elif rank == 3:
            x = 2
        else:
            kernel_assert(False, "rank")
        if layout == Layout.BSD:
            y = 1
        elif layout == Layout.NBSd:
            y = 2
        if n == 1:
            z = 1
        elif n == 2:
            z = 2
        if layout == Layout.BSD:
            w = 1
        if n:
            v = 1
        else:
            sys.exit(1)
        if a:
            u = 1
        else:
            assert False, "no"
        return x, y, z, w, v, u
    """
    assert _uses(tmp_path, code) == [(28, "z", MAYBE), (28, "w", MAYBE)]
