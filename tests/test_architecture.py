"""The shape of the code base: no import circles (deferred imports count)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "scripts" / "import_cycles.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


# Circles still to dissolve; the list may only shrink.
KNOWN_CIRCLES: list[list[str]] = []


def test_no_import_circles():
    assert _script().circles(ROOT) == KNOWN_CIRCLES


def test_import_cycle_finder_sees_deferred_imports(tmp_path):
    """The checker itself: a circle through a function-level import is found,
    one through a TYPE_CHECKING import is not."""
    (tmp_path / "nkilint").mkdir()
    (tmp_path / "rules").mkdir()
    (tmp_path / "nkilint" / "__init__.py").write_text("")
    (tmp_path / "rules" / "__init__.py").write_text("")
    (tmp_path / "nkilint" / "a.py").write_text("from . import b\n")
    (tmp_path / "nkilint" / "b.py").write_text("def f():\n    from .a import x\n")
    (tmp_path / "nkilint" / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n")
    (tmp_path / "nkilint" / "d.py").write_text("from .c import z\n")
    script = _script()
    assert script.circles(tmp_path) == [["nkilint.a", "nkilint.b"]]


def test_family_packages_hold_one_rule_per_module_in_id_order():
    """A family package's __init__ lists its rules in id order, and each
    rule lives in a module of its own named after the rule."""
    import importlib
    import pkgutil

    import nkilint_rules

    for info in pkgutil.iter_modules(nkilint_rules.__path__):
        if not info.ispkg:
            continue
        family = importlib.import_module(f"nkilint_rules.{info.name}")
        table = family.RULES
        assert [r.id for r in table] == sorted(r.id for r in table), f"{info.name}: RULES not in id order"
        modules = [r.__module__ for r in table]
        assert len(set(modules)) == len(modules), f"{info.name}: two rules share a module"
        for rule in table:
            assert rule.__module__ == f"nkilint_rules.{info.name}.{rule.name.replace('-', '_')}", (
                f"{rule.id} lives in {rule.__module__}, expected a module named after the rule"
            )
        rule_modules = {
            m.name for m in pkgutil.iter_modules(family.__path__) if not m.name.startswith("_")
        }
        assert rule_modules == {m.rsplit(".", 1)[1] for m in modules}, f"{info.name}: modules without a rule in RULES"


def test_rule_modules_stay_small():
    for path in sorted((ROOT / "rules").glob("*/*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        assert lines <= 450, f"{path.relative_to(ROOT)} has {lines} lines (keep a rule module under about 400)"


def _rule_modules():
    for path in sorted((ROOT / "rules").glob("*/*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def test_family_modules_hold_no_visitor_and_no_module_level_cache():
    """Rules query the model: no family module walks the tree with its own
    NodeVisitor or keeps facts between files in a module-level cache
    (per-file facts are analyses, dropped with the file)."""
    for path, tree in _rule_modules():
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                assert not bases & {"ast.NodeVisitor", "NodeVisitor", "ast.NodeTransformer"}, f"{where}: {node.name}"
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decorators = {ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
                assert not decorators & {"lru_cache", "functools.lru_cache", "cache", "functools.cache"}, (
                    f"{where}: {node.name} is memoised across files"
                )
            if isinstance(node, (ast.Global,)):
                raise AssertionError(f"{where}: a global statement (state kept between files)")
        for stmt in tree.body:
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            empty = isinstance(value, (ast.Dict, ast.List, ast.Set)) and not (
                getattr(value, "keys", None) or getattr(value, "elts", None))
            empty = empty or (isinstance(value, ast.Call) and ast.unparse(value.func) in ("dict", "list", "set", "WeakKeyDictionary", "weakref.WeakKeyDictionary"))
            assert not empty, f"{where}:{stmt.lineno}: an empty module-level container (a cache?)"


def test_converted_families_do_not_read_the_old_shared_fact_layers():
    """A family package reads the model (nkilint.model) and its own private
    modules, not the rule pack's old shared scans."""
    old = {"_device_scan", "_flow", "_cuda_structure", "_gpu_names"}
    for path, tree in _rule_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                names = {node.module} if node.module else {a.name for a in node.names}
                assert not names & old, f"{path.relative_to(ROOT)} imports {names & old}"
    # and, every family converted, the shared scans are gone
    assert not [name for name in old if (ROOT / "rules" / f"{name}.py").exists()]


def test_cuda_family_is_a_package_of_its_34_rules():
    import nkilint_rules
    from nkilint_rules import cuda

    assert [r.id for r in cuda.RULES] == [f"NKI{n}" for n in range(401, 435)]
    assert all(r.family == "cuda" for r in cuda.RULES)
    assert set(cuda.RULES) <= set(nkilint_rules.RULES)
    assert not (ROOT / "rules" / "cuda.py").exists() and not (ROOT / "rules" / "_gpu_names.py").exists()
