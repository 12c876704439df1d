"""Whether libcst can parse a file without taking the process down.

libcst's native parser recurses once per operand of a boolean chain
(``a and b and ...``; CPython's parser keeps it flat) and per nesting level,
on the C stack: a valid 10,000-operand ``and`` chain crashes the process
with a segmentation fault, not an exception, so no ``try`` can contain it.
Before a file goes to libcst (fixes only; checking uses ``ast``), its
CPython syntax tree is measured iteratively: the deepest path, counting
every node once and every operand of a boolean operation once more. Over
the budget, the file's fixes are skipped with a message.

The budget keeps a wide margin below the measured crash (a chain of 7,000
operands parses, 10,000 crashes, on the 8 MiB main-thread stack); real
kernels stay under a few hundred.
"""

from __future__ import annotations

import ast

from . import astwalk

MAX_CST_DEPTH = 3000


def cst_depth(tree: ast.AST) -> int:
    """The weighted depth of ``tree`` (see the module docstring)."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values)
        if depth > deepest:
            deepest = depth
        for child in astwalk.iter_child_nodes(node):
            stack.append((child, depth + 1))
    return deepest


def nesting_depth(tree: ast.AST) -> int:
    """The plain depth of ``tree`` (every node counts once), iteratively."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in astwalk.iter_child_nodes(node))
    return deepest


def libcst_refusal(text: str) -> str | None:
    """Why ``text`` must not be given to libcst, or None when it is safe."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"the file does not parse ({type(exc).__name__})"
    depth = cst_depth(tree)
    if depth > MAX_CST_DEPTH:
        return (
            f"an expression nests {depth} levels deep (counting each operand of a long and/or chain), over the "
            f"{MAX_CST_DEPTH} the fixer's parser (libcst) handles safely"
        )
    return None
