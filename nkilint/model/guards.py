"""Attribute uses guarded by a presence test (a per-file analysis).

Code written for several releases tests whether a module has a name before
it uses it::

    if hasattr(nl, "spmd_dim"):
        grid = nl.spmd_dim(n, nl.nc(2))
    else:
        grid = (n,)

On a release without the name the guarded use never runs, so a rule about
removed or not-yet-added names must not report it. ``AttrGuards`` records,
for every attribute load ``obj.name`` of a dotted object (``nl``,
``nki.language``), whether a presence test of ``(obj, "name")`` holds where
it is evaluated. The tests understood:

* ``hasattr(obj, "name")``, ``getattr(obj, "name", None)`` (its truth) and
  ``getattr(obj, "name", None) is not None``, and their negations
  (``not ...``, ``... is None``);
* combined with ``and`` / ``or`` (``a and b`` holds both on its true side,
  ``a or b`` neither's negation on its false side, and so on);
* where they hold: the body of ``if`` / ``while`` and the true arm of an
  if-expression; the ``else`` arm for a negated test; the later operands
  of an ``and`` / ``or`` chain; and, after ``if not hasattr(...): return``
  (a branch that always leaves with ``return``, ``raise``, ``continue`` or
  ``break``), the rest of the enclosing block.

Facts are syntactic (no aliasing or rebinding of ``obj`` is followed): the
point is the common multi-release idiom, not a proof. The walk keeps an
explicit stack, so deeply nested files do not exhaust the recursion limit.
"""

from __future__ import annotations

import ast

from .analysis import Analysis

Fact = tuple[str, str]  # (dotted object text, attribute name)
Facts = frozenset[Fact]
_NONE: Facts = frozenset()
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _presence(call: ast.AST) -> Fact | None:
    """``(obj, name)`` for ``hasattr(obj, "name")`` / ``getattr(obj, "name", None)``."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords:
        return None
    args = call.args
    if call.func.id == "hasattr" and len(args) == 2:
        pass
    elif call.func.id == "getattr" and len(args) == 3 and _is_none(args[2]):
        pass
    else:
        return None
    obj = dotted(args[0])
    if obj is None or not isinstance(args[1], ast.Constant) or not isinstance(args[1].value, str):
        return None
    return obj, args[1].value


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def when_true(test: ast.AST) -> Facts:
    """The presence facts that hold when ``test`` is true."""
    return _facts(test, True)


def when_false(test: ast.AST) -> Facts:
    """The presence facts that hold when ``test`` is false."""
    return _facts(test, False)


def _facts(test: ast.AST, truth: bool) -> Facts:
    # Iterative over `not` chains; and/or recurse (their depth is the
    # nesting of the source's own boolean expression, which Python's parser
    # already bounds far below the recursion limit).
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, truth = test.operand, not truth
    fact = _presence(test)
    if fact is not None:
        return frozenset((fact,)) if truth else _NONE
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and _is_none(test.comparators[0]):
        fact = _presence(test.left)
        if fact is not None and isinstance(test.ops[0], (ast.IsNot, ast.Is)):
            present = isinstance(test.ops[0], ast.IsNot)
            return frozenset((fact,)) if present is truth else _NONE
        return _NONE
    if isinstance(test, ast.BoolOp):
        parts = [_facts(v, truth) for v in test.values]
        # `a and b` true: both hold; `a or b` false: both negations hold.
        # The other sides hold only what every operand holds.
        if isinstance(test.op, ast.And) is truth:
            return frozenset().union(*parts)
        common = parts[0]
        for p in parts[1:]:
            common &= p
        return common
    return _NONE


def always_leaves(body: list[ast.stmt]) -> bool:
    """The block ends by leaving it (return, raise, continue, break), on
    every path its last statement takes."""
    # An elif chain is nested in ``orelse``: follow it in a loop (a long
    # chain must not exhaust the recursion limit).
    while body:
        last = body[-1]
        if isinstance(last, _EXITS):
            return True
        if not isinstance(last, ast.If) or not always_leaves(last.body):
            return False
        body = last.orelse
    return False


class AttrGuards(Analysis):
    """The attribute loads of the file that a presence test guards."""

    def __init__(self, model) -> None:
        super().__init__(model)
        self._guarded: set[int] = set()
        text = model.source.text
        if "hasattr" in text or "getattr" in text:  # the only presence tests; most files have none
            self.walk(model.module.tree)

    def walk(self, tree: ast.AST) -> None:
        stack: list[tuple[ast.AST, Facts]] = [(tree, _NONE)]
        guarded = self._guarded
        while stack:
            node, facts = stack.pop()
            if isinstance(node, ast.Attribute) and facts:
                obj = dotted(node.value)
                if obj is not None and (obj, node.attr) in facts:
                    guarded.add(id(node))
            for child, child_facts in _children(node, facts):
                stack.append((child, child_facts))

    def guarded(self, node: ast.AST) -> bool:
        """Whether ``node`` (an attribute load such as ``nl.spmd_dim`` or
        ``nl.nc.x``) or one of the attributes it is built on is guarded."""
        while isinstance(node, ast.Attribute):
            if id(node) in self._guarded:
                return True
            node = node.value
        return False


def _children(node: ast.AST, facts: Facts):
    """The children of ``node`` with the facts that hold where each runs."""
    if isinstance(node, (ast.If, ast.While)):
        yield node.test, facts
        yield from _block(node.body, facts | when_true(node.test))
        yield from _block(node.orelse, facts | when_false(node.test) if isinstance(node, ast.If) else facts)
        return
    if isinstance(node, ast.IfExp):
        yield node.test, facts
        yield node.body, facts | when_true(node.test)
        yield node.orelse, facts | when_false(node.test)
        return
    if isinstance(node, ast.BoolOp):
        seen = facts
        for value in node.values:
            yield value, seen
            # A later operand runs only when the earlier ones were true
            # (and) or false (or).
            seen = seen | (when_true(value) if isinstance(node.op, ast.And) else when_false(value))
        return
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            if value and isinstance(value[0], ast.stmt):
                yield from _block(value, facts)
            else:
                for item in value:
                    if isinstance(item, ast.AST):
                        yield item, facts
        elif isinstance(value, ast.AST):
            yield value, facts


def _block(body: list[ast.stmt], facts: Facts):
    """The statements of a block; after ``if <test>: <leaves>`` the rest of
    the block runs only when the test was false (and the other way round)."""
    for stmt in body:
        yield stmt, facts
        if isinstance(stmt, ast.If):
            if always_leaves(stmt.body):
                facts = facts | when_false(stmt.test)
            elif always_leaves(stmt.orelse):
                facts = facts | when_true(stmt.test)
