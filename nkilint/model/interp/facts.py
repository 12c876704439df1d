"""Facts from conditions for the abstract interpreter (asserts, branch
tests, ``x in (...)``, ``a.shape == b.shape``, floor-division provenance)."""

from __future__ import annotations

import ast

from .state import Budget, Frame, ShapeV
from ..values import Const, Int, ObjectV, TupleV, Value, const_int, int_bounds, linear


class FactsMixin:
    """Learning facts from conditions: asserts, branch tests, membership.

    Part of :class:`~nkilint.model.interp.Interpreter`; relies on its
    ``eval``, ``trail`` and frames."""

    def learn(self, test: ast.AST, frame: Frame, holds: bool, permanent: bool = True) -> None:
        """Narrow integer symbols from a condition known to hold (or fail)."""
        if isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And) and holds:
                for v in test.values:
                    self.learn(v, frame, True, permanent)
            elif isinstance(test.op, ast.Or) and not holds:
                for v in test.values:
                    self.learn(v, frame, False, permanent)
            return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self.learn(test.operand, frame, not holds, permanent)
            return
        if isinstance(test, ast.Call):
            # kernel_assert(cond, msg)-style helpers.
            name = test.func.attr if isinstance(test.func, ast.Attribute) else getattr(test.func, "id", "")
            if "assert" in name.lower() and test.args and holds:
                self.learn(test.args[0], frame, True, permanent)
            return
        if not isinstance(test, ast.Compare):
            return
        parts = [test.left, *test.comparators]
        for left, op, right in zip(parts, test.ops, parts[1:]):
            if isinstance(op, (ast.In, ast.NotIn)):
                if holds == isinstance(op, ast.In):
                    self._learn_member(left, right, frame)
                continue
            self._learn_compare(left, op, right, frame, holds, permanent)

    def _learn_member(self, left: ast.AST, right: ast.AST, frame: Frame) -> None:
        """``x in (64, 128)``: x lies between the smallest and largest choice."""
        try:
            value = self.eval(left, frame)
            choices = self.eval(right, frame)
        except (Budget, RecursionError):
            raise
        except Exception:
            return
        if not isinstance(choices, TupleV) or not choices.items:
            return
        ints = [const_int(c) for c in choices.items]
        if any(c is None for c in ints):
            return
        self._narrow(left, value, ast.GtE, Const(min(ints)), frame, True)
        self._narrow(left, value, ast.LtE, Const(max(ints)), frame, True)

    def _learn_compare(self, left, op, right, frame, holds, permanent) -> None:
        if not holds:
            inverse = {ast.Lt: ast.GtE, ast.LtE: ast.Gt, ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
            op_t = inverse.get(type(op))
            if op_t is None:
                return
            op = op_t()
        try:
            lv = self.eval(left, frame)
            rv = self.eval(right, frame)
        except (Budget, RecursionError):
            raise
        except Exception:
            return
        if isinstance(op, ast.Eq):
            la, ra = self._dims_of(lv), self._dims_of(rv)
            if la is not None and ra is not None and len(la) == len(ra):
                # a.shape == b.shape: each dimension is the other's.
                for x, y in zip(la, ra):
                    self._narrow(None, x, ast.Eq, y, frame, permanent)
                    self._narrow(None, y, ast.Eq, x, frame, permanent)
                return
        self._narrow(left, lv, type(op), rv, frame, permanent)
        mirror = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
        if type(op) in mirror:
            self._narrow(right, rv, mirror[type(op)], lv, frame, permanent)
        # N % 512 == 0 -> N is a multiple of 512.
        if isinstance(op, ast.Eq) and isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod):
            if const_int(rv) == 0:
                base = self.eval(left.left, frame)
                mod = const_int(self.eval(left.right, frame))
                if isinstance(base, Int) and base.sym is not None and mod:
                    base.sym.multiple_of = mod

    @staticmethod
    def _dims_of(v: Value) -> tuple[Value, ...] | None:
        if isinstance(v, TupleV) and not v.is_list:
            return v.items
        if isinstance(v, ShapeV) and v.rank is not None:
            return v.fix_rank(v.rank)
        return None

    def _narrow(self, node, value: Value, op: type, other: Value, frame: Frame, permanent: bool) -> None:
        ob = int_bounds(other)
        if ob is None or not isinstance(value, Int):
            return
        lo, hi = None, None
        if op is ast.Lt:
            hi = ob[1] - 1
        elif op is ast.LtE:
            hi = ob[1]
        elif op is ast.Gt:
            lo = ob[0] + 1
        elif op is ast.GtE:
            lo = ob[0]
        elif op is ast.Eq:
            lo, hi = ob
        else:
            return
        if value.meta and value.meta[0] == "floordiv" and permanent:
            # q = x // d with q in [lo, hi]  =>  x in [lo * d, (hi + 1) * d - 1].
            numerator, d = value.meta[1], const_int(value.meta[2])
            lin = linear(numerator) if d is not None else None
            if lin is not None and len(lin[0]) == 1:
                (sym, coeff), = lin[0].items()
                if coeff == 1:
                    off = lin[1]
                    self.narrow_sym(sym, None if lo is None else lo * d - off,
                                    None if hi is None else (hi + 1) * d - 1 - off)
        if value.sym is not None and permanent:
            self.narrow_sym(value.sym, lo, hi)
            return
        narrowed = Int(value.lo if lo is None else max(value.lo, lo), value.hi if hi is None else min(value.hi, hi),
                       sym=value.sym, label=value.label)
        if narrowed.lo > narrowed.hi:
            return
        replacement = narrowed if narrowed.exact is None else Const(narrowed.exact, label=value.label)
        if isinstance(node, ast.Name) and node.id in frame.vars:
            frame.vars[node.id] = replacement
        elif isinstance(node, ast.Attribute):
            owner = self.eval(node.value, frame)
            if isinstance(owner, ObjectV) and node.attr in owner.attrs:
                owner.attrs[node.attr] = replacement
        elif value.sym is not None:
            # A dimension reached through an expression: narrow the symbol only
            # inside this branch by replacing it for the branch's duration.
            pass
