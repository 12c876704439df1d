"""Presence-tested attribute uses (nkilint.model.guards.AttrGuards)."""

from __future__ import annotations

import ast
import sys
import textwrap
import traceback
from pathlib import Path

from nkilint.model.guards import AttrGuards, always_leaves, when_false, when_true
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST


def _guarded(tmp_path: Path, code: str) -> list[tuple[int, str]]:
    """(line, text) of every whole dotted attribute load the analysis guards."""
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    model = analyze_file(SourceFile(str(path), path.read_text(), "k.py"), Project(tmp_path), TRN2, LATEST)
    guards = model.analysis(AttrGuards)
    tree = model.module.tree
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return sorted((n.lineno, ast.unparse(n)) for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and id(n) not in inner and guards.guarded(n))


def _test(src: str) -> ast.expr:
    return ast.parse(src, mode="eval").body


def test_if_body_and_else_of_a_negated_test(tmp_path):
    code = """
    import nki.language as nl

    def grid(n):
        if hasattr(nl, "spmd_dim"):
            a = nl.spmd_dim(n, nl.nc(2))
        else:
            a = nl.program_id(0)
        if not hasattr(nl, "nc"):
            b = (n,)
        else:
            b = nl.nc(2)
        return nl.spmd_dim, a, b
    """
    # nl.nc at line 6 is not tested by the first `if`; line 13 is after both.
    assert _guarded(tmp_path, code) == [(6, "nl.spmd_dim"), (12, "nl.nc")]


def test_guard_clause_covers_the_rest_of_the_block(tmp_path):
    """The NxDI Qwen3.5 shape: an early exit when a name is missing."""
    code = """
    import os

    def grid(num_heads, lnc):
        import nki.language as _nl
        if not hasattr(_nl, "spmd_dim") or not hasattr(_nl, "nc"):
            if os.environ.get("FALLBACK") == "1":
                return (num_heads, 1)
            raise ValueError("no spmd_dim")
        return (_nl.spmd_dim(num_heads, _nl.nc(lnc)),)

    def other(_nl):
        if not hasattr(_nl, "nc"):
            print("missing")
        return _nl.nc(2)
    """
    # In `other` the branch does not leave, so the use after it is unguarded.
    assert _guarded(tmp_path, code) == [(10, "_nl.nc"), (10, "_nl.spmd_dim")]


def test_short_circuit_ternary_and_getattr_forms(tmp_path):
    code = """
    import nki
    import nki.language as nl

    x = hasattr(nl, "fori_loop") and nl.fori_loop
    y = nl.if_else if hasattr(nl, "if_else") else None
    z = not hasattr(nl, "tiles") or nl.tiles
    if getattr(nl, "blocks", None) is not None:
        w = nl.blocks
    if getattr(nki.language, "nc", None):
        v = nki.language.nc(2)
    if getattr(nl, "ds", None) is None:
        u = nl.ds
    if hasattr(nl, "spmd_dim") and nl.spmd_dim(2, nl.nc(2)):
        pass
    """
    assert _guarded(tmp_path, code) == [
        (5, "nl.fori_loop"), (6, "nl.if_else"), (7, "nl.tiles"), (9, "nl.blocks"), (11, "nki.language.nc"),
        (14, "nl.spmd_dim"),
    ]


def test_a_test_of_another_object_or_name_guards_nothing(tmp_path):
    code = """
    import nki.language as nl
    import nki.isa as nisa

    name = "nc"
    if hasattr(nisa, "nc"):
        a = nl.nc(2)
    if hasattr(nl, name):
        b = nl.nc(2)
    if hasattr(nl, "nc") or hasattr(nl, "spmd_dim"):
        c = nl.nc(2)
    if getattr(nl, "nc", 0):
        d = nl.nc(2)
    """
    assert _guarded(tmp_path, code) == []


def test_a_guarded_prefix_guards_the_whole_dotted_name(tmp_path):
    code = """
    import nki.language as nl

    if hasattr(nl, "tile_size"):
        p = nl.tile_size.pmax
    """
    assert _guarded(tmp_path, code) == [(5, "nl.tile_size.pmax")]


def test_condition_facts():
    assert when_true(_test('hasattr(m, "a") and hasattr(m.b, "c")')) == {("m", "a"), ("m.b", "c")}
    assert when_false(_test('hasattr(m, "a") and hasattr(m, "c")')) == set()
    assert when_false(_test('not hasattr(m, "a") or not hasattr(m, "c")')) == {("m", "a"), ("m", "c")}
    assert when_true(_test('not not hasattr(m, "a")')) == {("m", "a")}
    assert when_true(_test('hasattr(m, "a") or hasattr(m, "a")')) == {("m", "a")}
    assert when_true(_test('hasattr(f(), "a")')) == set()


def test_always_leaves_follows_elif_chains():
    def body(src: str) -> list[ast.stmt]:
        return ast.parse(textwrap.dedent(src)).body

    assert always_leaves(body("if a:\n    return 1\nelif b:\n    raise E\nelse:\n    continue\n"))
    assert not always_leaves(body("if a:\n    return 1\nelif b:\n    pass\nelse:\n    break\n"))
    assert not always_leaves(body("if a:\n    return 1\n"))
    assert not always_leaves([])
    chain = "if a0:\n    return 0\n" + "".join(f"elif a{i}:\n    return {i}\n" for i in range(1, 600))
    tree = body(chain + "else:\n    raise E\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(traceback.extract_stack()) + 100)  # far below the chain's 600 levels
    try:
        assert always_leaves(tree)
    finally:
        sys.setrecursionlimit(limit)
