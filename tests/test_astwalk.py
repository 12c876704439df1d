"""nkilint.astwalk gives the nodes ast.walk / ast.iter_child_nodes give, in their order."""

from __future__ import annotations

import ast
from pathlib import Path

from nkilint import astwalk

ROOT = Path(__file__).resolve().parent.parent


def _depth(tree: ast.AST) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _trees():
    for path in sorted((ROOT / "nkilint").rglob("*.py"))[:60] + sorted((ROOT / "fixtures").rglob("*.py"))[:200]:
        try:
            yield ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue


def test_same_nodes_same_order():
    checked = 0
    for tree in _trees():
        expected = list(ast.walk(tree))
        assert list(astwalk.walk(tree)) == expected
        assert astwalk.walk_list(tree) == expected
        nodes, depth = astwalk.walk_levels(tree)
        assert nodes == expected and depth == _depth(tree)
        for node in expected:
            assert astwalk.child_nodes(node) == list(ast.iter_child_nodes(node))
        checked += 1
    assert checked > 50


def test_missing_fields_and_subclasses():
    bare = ast.BinOp()  # no fields set: nothing to walk, as ast.walk
    assert astwalk.child_nodes(bare) == list(ast.iter_child_nodes(bare)) == []

    class Tagged(ast.Name):  # a subclass: every field is looked at
        pass

    inner = ast.Constant(1)
    node = Tagged(id=inner, ctx=ast.Load())
    assert astwalk.child_nodes(node) == list(ast.iter_child_nodes(node))
    assert inner in astwalk.child_nodes(node)


def test_walk_sees_edits_like_ast_walk():
    def visit(walker):
        tree = ast.parse("f(a, g(b))\n")
        seen = []
        for node in walker(tree):
            seen.append(ast.dump(node) if isinstance(node, ast.Name) else type(node).__name__)
            if isinstance(node, ast.Expr):
                node.value.args[1].args = []  # g's arguments, before g is given out
        return seen

    assert visit(astwalk.walk) == visit(ast.walk)
