"""Index arithmetic of legacy NKI: the shape of index and mask expressions.

Legacy masks and indices are compiled into access patterns, which only
express *affine* forms of the loop indices (``a * i + b * j + c``). This
analysis classifies an expression of device code, following names through
their definitions (``Scopes``) and asking ``ExprFacts`` what a name holds:

* ``affinity(fn, expr, loop_names)``: ``const`` (a specialization-time
  value: constants, parameters, module constants, shapes), ``affine`` (an
  affine form of loop indices and ``nl.arange`` / ``nl.mgrid`` indices),
  ``nonaffine`` (a product of indices, ``i % 4``, ``min(i, ...)``),
  ``runtime`` (it reads tensor data or a runtime ``scalar()``) or
  ``unknown`` (too deep to tell), with the sub-expression that decided it;
* ``only_shifted(fn, expr)``: every ``nl.arange`` / ``nl.mgrid`` index in
  the expression is only shifted by ``+`` / ``-`` (the model's range for
  such an index is exact; it does not track products or divisions of
  index expressions).

Which loops count as index loops is the caller's knowledge (the legacy
frontend keeps ``range`` / ``affine_range`` / ``sequential_range`` as
loops and unrolls the others): it passes their target names.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable

from .. import astwalk
from .analysis import Analysis
from .exprs import MGRID_ATTRS, ExprFacts, Holds
from .scopes import Scopes, callee_name

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel

CONST, AFFINE, NONAFFINE, RUNTIME, UNKNOWN = "const", "affine", "nonaffine", "runtime", "unknown"
_MAX_DEPTH = 12


class IndexArithmetic(Analysis):
    """Affinity of index expressions in the checked file (a per-file analysis)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        self.scopes: Scopes = model.analysis(Scopes)
        self.exprs: ExprFacts = model.analysis(ExprFacts)

    def affinity(self, fn: ast.AST, expr: ast.AST, loop_names: Iterable[str]) -> tuple[str, ast.AST]:
        """(kind, culprit) of an expression of ``fn``: see the module docstring.
        ``loop_names`` are the targets of the loops that count as index loops."""
        return self._affinity(fn, expr, set(loop_names), 0)

    def _affinity(self, fn: ast.AST, expr: ast.AST, symbolic: set[str], depth: int) -> tuple[str, ast.AST]:
        if depth > _MAX_DEPTH:
            return UNKNOWN, expr
        if isinstance(expr, ast.Constant):
            return CONST, expr
        if isinstance(expr, ast.Name):
            return self._name(fn, expr, symbolic, depth)
        if isinstance(expr, ast.Attribute):
            if expr.attr in MGRID_ATTRS and self._affinity(fn, expr.value, symbolic, depth + 1)[0] == AFFINE:
                return AFFINE, expr
            return CONST, expr
        if isinstance(expr, ast.Subscript):
            base = self._affinity(fn, expr.value, symbolic, depth + 1)
            if self.exprs.holds(fn, expr.value) is Holds.TENSOR:
                return RUNTIME, expr
            return base if base[0] in (AFFINE, RUNTIME) else (CONST, expr)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return self._affinity(fn, expr.operand, symbolic, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self._binop(fn, expr, symbolic, depth)
        if isinstance(expr, ast.Call):
            args = [self._affinity(fn, a, symbolic, depth + 1) for a in [*expr.args, *(k.value for k in expr.keywords)]]
            if any(k == RUNTIME for k, _ in args) or self.exprs.holds(fn, expr) is Holds.TENSOR:
                return RUNTIME, expr
            if callee_name(expr) == "scalar":
                return RUNTIME, expr
            if any(k in (AFFINE, NONAFFINE) for k, _ in args):
                return NONAFFINE, expr  # min(i, ...), f(i): not an affine form
            return CONST, expr
        return CONST, expr

    def _name(self, fn: ast.AST, expr: ast.Name, symbolic: set[str], depth: int) -> tuple[str, ast.AST]:
        if expr.id in symbolic or self.exprs.is_index_name(fn, expr.id):
            return AFFINE, expr
        if self.exprs.holds(fn, expr) is Holds.TENSOR:
            return RUNTIME, expr
        owner = self.scopes.of(fn).owner(expr.id)
        if owner is None or expr.id in owner.params:
            return CONST, expr  # module constants, parameters: specialization-time values
        kinds = []
        for d in owner.bindings.get(expr.id, []):
            if d.value is None or d.kind not in ("assign", "annassign"):
                continue  # unpacked shapes, loop targets of unrolled loops: specialization-time values
            kinds.append(self._affinity(owner.fn, d.value, symbolic, depth + 1))
        for kind in (RUNTIME, NONAFFINE, UNKNOWN, AFFINE):
            hit = next((c for k, c in kinds if k == kind), None)
            if hit is not None:
                return kind, expr if kind == AFFINE else hit
        return CONST, expr

    def _binop(self, fn: ast.AST, expr: ast.BinOp, symbolic: set[str], depth: int) -> tuple[str, ast.AST]:
        left = self._affinity(fn, expr.left, symbolic, depth + 1)
        right = self._affinity(fn, expr.right, symbolic, depth + 1)
        for kind in (RUNTIME, NONAFFINE, UNKNOWN):
            for side in (left, right):
                if side[0] == kind:
                    return side
        if left[0] == CONST and right[0] == CONST:
            return CONST, expr
        if isinstance(expr.op, (ast.Add, ast.Sub)):
            return AFFINE, expr
        if isinstance(expr.op, ast.Mult) and (left[0] == CONST or right[0] == CONST):
            return AFFINE, expr
        return NONAFFINE, expr

    def only_shifted(self, fn: ast.AST, expr: ast.AST) -> bool:
        """Every arange/mgrid index in ``expr`` (and in the definitions of
        the index names it uses) is only shifted by ``+`` / ``-``."""
        exprs = self.exprs
        for node in astwalk.walk(expr):
            if isinstance(node, ast.BinOp) and not isinstance(node.op, (ast.Add, ast.Sub)):
                if exprs.is_index(fn, node.left) or exprs.is_index(fn, node.right):
                    return False
            if isinstance(node, ast.UnaryOp) and exprs.is_index(fn, node.operand):
                return False
            if isinstance(node, ast.Name) and exprs.is_index_name(fn, node.id):
                owner = self.scopes.of(fn).owner(node.id)
                for d in owner.bindings.get(node.id, []) if owner else []:
                    if d.value is not None and not self.only_shifted(owner.fn, d.value):
                        return False
        return True


__all__ = ["AFFINE", "CONST", "IndexArithmetic", "NONAFFINE", "RUNTIME", "UNKNOWN"]
