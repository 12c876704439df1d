"""Abstract values: what the interpreter knows about each Python value.

Never guess: a value is exact (``Const``), an integer range (``Int``, from
asserts, ``min()``, loop bounds, ``nl.tile_size``), or ``Unknown`` with the
reason it is unknown. Integer unknowns that stand for a named quantity
(``K`` from ``K, M = a.shape``) are ``Sym``-backed: facts learnt from
``assert`` narrow the symbol everywhere it is used.
"""

from __future__ import annotations

import ast
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

INF = math.inf

# The largest integer the model folds exactly, in bits (about 10**301). Past
# it a value is an unknown integer: ``x = x * x`` twenty times or
# ``(10 ** 256) ** 256`` would otherwise take minutes and gigabytes, and an
# integer this size still converts to a float (the interval bounds mix ints
# with infinities). No tile shape, address or loop bound comes near it.
MAX_INT_BITS = 1000


def int_bits(x: object) -> int:
    """Bits of an integer (or of a finite float's integer part); 0 otherwise."""
    if isinstance(x, bool):
        return 1
    if isinstance(x, int):
        return x.bit_length()
    if isinstance(x, float) and math.isfinite(x):
        return int(abs(x)).bit_length()
    return 0


def folded_bits(op: type, a: object, b: object) -> int:
    """An upper bound on the bits of ``a op b`` for Python integers, computed
    without doing the operation (0 for floats: float arithmetic is bounded
    in time, overflows to inf or raises OverflowError)."""
    if isinstance(a, float) or isinstance(b, float):
        return 0
    ba, bb = int_bits(a), int_bits(b)
    if op is ast.Mult:
        return ba + bb
    if op is ast.Pow:
        if isinstance(a, int) and isinstance(b, int) and not isinstance(b, bool) and b > 1:
            if b >= 1 << 32:
                return MAX_INT_BITS + 1
            return int(b * math.log2(abs(a))) + 1 if abs(a) > 1 else 1
        return ba  # a negative power is a float; 0 and 1 do not grow
    if op is ast.LShift:
        return ba + (int(b) if isinstance(b, int) and 0 <= b < 1 << 32 else MAX_INT_BITS + 1)
    return max(ba, bb) + 1


def too_big_to_fold(op: type, a: object, b: object) -> bool:
    return folded_bits(op, a, b) > MAX_INT_BITS


class Value:
    """Base of all abstract values."""

    label: str | None = None  # source text that produced it (for messages)

    def describe(self) -> str:
        return self.label or repr(self)


@dataclass(eq=False)
class Unknown(Value):
    reason: str = "unknown"
    label: str | None = None
    default: "Value | None" = None  # e.g. a kernel parameter's default

    def __repr__(self) -> str:
        return f"Unknown({self.reason})"


UNKNOWN = Unknown()


@dataclass(eq=False)
class RegisterV(Unknown):
    """A runtime register (``nisa.register_alloc``, a parameter annotated
    ``VirtualRegister``): its value exists only on the device. An unknown
    number to every computation; loops it bounds or conditions are dynamic
    (their loop node has ``register_bound``)."""

    reason: str = "runtime register"

    def __repr__(self) -> str:
        return "RegisterV()"


@dataclass(eq=False)
class ScalarV(RegisterV):
    """An ``nisa.NkiScalar`` (NKI 0.7+): one integer computed on the device
    (``nisa.scalar_load``, and arithmetic or comparisons on scalars). A
    register to everything that follows registers (the loops it bounds are
    dynamic); ``dtype`` is its fixed width (``int32`` / ``int64``, None when
    unknown), ``comparison`` marks a comparison result (usable only as the
    condition of ``nl.if_else``)."""

    reason: str = "device scalar"
    dtype: str | None = None
    comparison: bool = False

    def __repr__(self) -> str:
        return f"ScalarV({self.dtype or '?'}{', comparison' if self.comparison else ''})"


@dataclass(eq=False)
class Const(Value):
    value: Any
    label: str | None = None

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


_sym_ids = itertools.count(1)


def sym_mark() -> int:
    """A number above the ident of every symbol made so far and at most the
    ident of any symbol made from now on."""
    return next(_sym_ids)


@dataclass(eq=False)
class Sym:
    """A named unknown integer (a tensor dimension, a parameter)."""

    name: str
    lo: float = -INF
    hi: float = INF
    multiple_of: int | None = None
    ident: int = field(default_factory=lambda: next(_sym_ids))
    # Stands for a value computed from others (min/max, a branch join): its
    # range is attainable on its own, but it is not independent of other
    # symbols, so it never enters an affine form with them.
    derived: bool = False
    # Where the quantity comes from, so that rules can ask whether a value
    # varies with a loop without parsing names: "loop" (a loop index),
    # "param" (a kernel or helper parameter, or a dimension of one),
    # "program" (an SPMD program id), "derived" (computed from others: a
    # min/max, a branch join), "opaque" (an unknown value of no known origin).
    origin: str = "opaque"

    def narrow(self, lo: float | None = None, hi: float | None = None) -> None:
        if lo is not None and lo > self.lo:
            self.lo = lo
        if hi is not None and hi < self.hi:
            self.hi = hi


@dataclass(eq=False)
class Int(Value):
    """An integer known to lie in [lo, hi] (bounds may be infinite).

    ``sym`` links it to a named quantity whose bounds can still narrow;
    ``terms`` + ``offset`` make it an affine form ``offset + sum(c * sym)``
    so that ``(k + 1) * T - k * T`` is exactly ``T``."""

    lo: float = -INF
    hi: float = INF
    sym: Sym | None = None
    label: str | None = None
    reason: str = ""
    terms: tuple[tuple[Sym, int], ...] | None = None
    offset: int = 0
    meta: tuple | None = None  # provenance, e.g. ("floordiv", x, d)

    @property
    def bounds(self) -> tuple[float, float]:
        lo, hi = self.lo, self.hi
        if self.sym is not None:
            lo, hi = max(lo, self.sym.lo), min(hi, self.sym.hi)
        if self.terms is not None:
            tlo, thi = float(self.offset), float(self.offset)
            for sym, coeff in self.terms:
                a, b = _mul(coeff, sym.lo), _mul(coeff, sym.hi)
                tlo += min(a, b)
                thi += max(a, b)
            lo, hi = max(lo, tlo), min(hi, thi)
        return lo, hi

    @property
    def exact(self) -> int | None:
        lo, hi = self.bounds
        if lo == hi and lo not in (INF, -INF):
            return int(lo)
        return None

    def __repr__(self) -> str:
        lo, hi = self.bounds
        name = f" {self.sym.name}" if self.sym else ""
        return f"Int[{lo}, {hi}]{name}"


def linear(v: "Value") -> tuple[dict, int] | None:
    """The affine form of an integer value: ({sym: coeff}, offset)."""
    if isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return {}, v.value
    if isinstance(v, Int):
        if v.terms is not None:
            return dict(v.terms), v.offset
        if v.sym is not None and v.lo <= v.sym.lo and v.hi >= v.sym.hi:
            return {v.sym: 1}, 0
    return None


def same_int(x: "Value", y: "Value") -> bool:
    """The same integer for certain: equal constants, or the same value/symbol."""
    if x is y:
        return True
    cx, cy = const_int(x), const_int(y)
    if cx is not None and cy is not None:
        return cx == cy
    lx, ly = linear(x), linear(y)
    return lx is not None and ly is not None and lx == ly


def _mixes_derived(ta: dict, tb: dict) -> bool:
    if len(ta) + len(tb) <= 1:
        return False  # at most one symbol (constants on both sides: most calls)
    syms = set(ta) | set(tb)
    return len(syms) > 1 and any(sym.derived for sym in syms)


def from_linear(terms: dict, offset: int, label: str | None = None) -> "Value":
    terms = {s: c for s, c in terms.items() if c != 0}
    if not terms:
        return Const(offset, label=label)
    if len(terms) == 1 and offset == 0:
        (sym, coeff), = terms.items()
        if coeff == 1:
            return Int(sym=sym, label=label or sym.name)
    return Int(terms=tuple(terms.items()), offset=offset, label=label)


@dataclass(eq=False)
class TupleV(Value):
    items: tuple[Value, ...]
    label: str | None = None
    is_list: bool = False
    # A list grown inside a loop: its length and items are not known exactly.
    inexact: bool = False

    def __repr__(self) -> str:
        return f"{'List' if self.is_list else 'Tuple'}{list(self.items)!r}"


@dataclass(eq=False)
class DictV(Value):
    items: dict[Any, Value]
    label: str | None = None


@dataclass(eq=False)
class SliceV(Value):
    start: Value
    stop: Value
    step: Value
    label: str | None = None


@dataclass(eq=False)
class DsV(Value):
    """``nl.ds(start, size)``: a dynamic slice of known size."""

    start: Value
    size: Value
    label: str | None = None


@dataclass(eq=False)
class ApiRef(Value):
    """A reference to an NKI (or other library) name: module, function, constant."""

    qual: Any  # bindings.Qual
    label: str | None = None

    def __repr__(self) -> str:
        return f"Api({self.qual.name})"


@dataclass(eq=False)
class DType(Value):
    name: str  # canonical NKI dtype name, e.g. "bfloat16"
    label: str | None = None

    def __repr__(self) -> str:
        return f"DType({self.name})"


@dataclass(eq=False)
class BufferV(Value):
    name: str  # sbuf, psum, hbm, shared_hbm, private_hbm
    label: str | None = None

    def __repr__(self) -> str:
        return f"Buffer({self.name})"


@dataclass(eq=False)
class FuncV(Value):
    """A Python function of the project (inlined when called)."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    module: Any  # the ModuleInfo it belongs to
    closure: dict[str, Value] | None = None
    bound_self: Value | None = None
    qualname: str = ""
    partial_args: tuple = ()
    partial_kwargs: tuple = ()
    label: str | None = None

    def __repr__(self) -> str:
        return f"Func({self.qualname or getattr(self.node, 'name', 'lambda')})"


@dataclass(eq=False)
class ClassV(Value):
    node: ast.ClassDef
    module: Any
    attrs: dict[str, Value] = field(default_factory=dict)
    bases: tuple[Value, ...] = ()
    label: str | None = None

    def __repr__(self) -> str:
        return f"Class({self.node.name})"


@dataclass(eq=False)
class ObjectV(Value):
    """An instance of a project class (config objects, NKIObject, dataclasses)."""

    cls: ClassV | None
    attrs: dict[str, Value] = field(default_factory=dict)
    label: str | None = None

    def __repr__(self) -> str:
        return f"Obj({self.cls.node.name if self.cls else '?'})"


@dataclass(eq=False)
class ModuleV(Value):
    """A project module imported as a whole (``from . import utils``)."""

    module: Any
    label: str | None = None


@dataclass(eq=False)
class TensorV(Value):
    """A reference to a tensor or a view of one (graph node ids)."""

    node_id: str  # the tensor or view node
    tensor_id: str  # the underlying tensor node
    shape: tuple[Value, ...] | None  # None: rank unknown
    dtype: Value
    buffer: str  # sbuf, psum, hbm, shared_hbm, private_hbm, unknown
    label: str | None = None
    # Legacy block dimensions: index of the partition dim (par_dim) in shape.
    partition_axis: int = 0

    def __repr__(self) -> str:
        return f"Tensor({self.node_id}, {self.shape}, {self.buffer})"

    @property
    def on_chip(self) -> bool:
        return self.buffer in ("sbuf", "psum")


@dataclass(eq=False)
class IndexV(Value):
    """Legacy ``nl.arange`` / ``nl.mgrid`` index expression.

    ``extent`` is the number of values it takes; ``axis_shape`` the shape it
    broadcasts to ((n, 1) for a partition index, (1, n) for a free index);
    ``stride`` the distance between consecutive values (``nl.arange(n) * 2``
    takes every other element), None once two indices are combined."""

    extent: Value
    axis_shape: tuple[Value, ...]
    offset: Value = field(default_factory=lambda: Const(0))
    label: str | None = None
    stride: Value | None = field(default_factory=lambda: Const(1))


@dataclass(eq=False)
class RangeV(Value):
    """An iterable of loop indices (range / affine_range / ...)."""

    kind: str  # range, affine_range, sequential_range, static_range, dynamic_range, tile_range
    start: Value
    stop: Value
    step: Value
    label: str | None = None


@dataclass(eq=False)
class ParDimV(Value):
    """Legacy ``nl.par_dim(n)`` marker inside a shape tuple."""

    size: Value
    label: str | None = None


# --------------------------------------------------------------------------
# helpers

def const_int(v: Value) -> int | None:
    """The exact integer value, if known."""
    if isinstance(v, Const) and isinstance(v.value, (int, bool)) and not isinstance(v.value, bool):
        return v.value
    if isinstance(v, Const) and isinstance(v.value, bool):
        return int(v.value)
    if isinstance(v, Int):
        return v.exact
    return None


def ceil_div_parts(v: Value) -> tuple[Value, int] | None:
    """(x, d) when v was computed as the ceiling division of x by the integer
    constant d > 1: ``math.ceil(x / d)`` or ``(x + d - 1) // d`` (also through
    a helper that returns one of them, and as the trip count of ``range`` of
    one)."""
    if not isinstance(v, Int) or not v.meta:
        return None
    kind, x, d_v = v.meta[0], v.meta[1], v.meta[2]
    d = const_int(d_v)
    if d is None or d <= 1:
        return None
    if kind == "ceildiv":
        return x, d
    if kind == "floordiv":
        lin = linear(x)
        if lin is not None and lin[0] and lin[1] == d - 1:
            return from_linear(lin[0], 0), d
    return None


def int_bounds(v: Value) -> tuple[float, float] | None:
    """(lo, hi) of an integer-valued abstract value; None if not integer-like."""
    if isinstance(v, Const):
        if isinstance(v.value, bool):
            return float(v.value), float(v.value)
        if isinstance(v.value, int):
            return v.value, v.value
        if isinstance(v.value, float) and v.value.is_integer():
            return v.value, v.value
        return None
    if isinstance(v, Int):
        return v.bounds
    if isinstance(v, ParDimV):
        return int_bounds(v.size)
    return None


def lower(v: Value | None) -> float | None:
    """The interval lower bound of an integer value (None: not an integer)."""
    b = int_bounds(v) if v is not None else None
    return None if b is None else b[0]


def upper(v: Value | None) -> float | None:
    """The interval upper bound of an integer value (None: not an integer)."""
    b = int_bounds(v) if v is not None else None
    return None if b is None else b[1]


def attainable_upper(v: Value | None) -> float | None:
    """The finite upper bound of ``v`` when some value the code allows
    reaches it, else None.

    Interval arithmetic over-approximates expressions that use a quantity
    twice (``x + x % 2`` with ``x <= 128`` is at most 128, not 129), and the
    product of several unknowns need not be reachable when they are
    correlated. The bound is trusted only when it is a single symbol's
    bound: an exact value, a named quantity (a dimension narrowed by an
    assert, a loop index, a value joined from branches) or an affine form of
    one symbol (``i * 64 + 32``)."""
    if v is None:
        return None
    c = const_int(v)
    if c is not None:
        return float(c)
    if not isinstance(v, Int):
        return None
    hi = v.bounds[1]
    if hi == INF:
        return None
    if v.terms is not None:
        return hi if len(v.terms) == 1 else None
    return hi if v.sym is not None else None


def make_int(lo: float, hi: float, label: str | None = None, reason: str = "") -> Value:
    if lo == hi and lo not in (INF, -INF):
        return Const(int(lo), label=label)
    if lo > hi:
        lo, hi = hi, lo
    return Int(lo, hi, label=label, reason=reason)


def _mul(a: float, b: float) -> float:
    if (a == 0 and b in (INF, -INF)) or (b == 0 and a in (INF, -INF)):
        return 0
    return a * b


# Integers this small fold without the size check of int_binop (a product
# of two has at most 2 * 62 bits, far under MAX_INT_BITS).
_SMALL = 1 << 62


def int_binop(op: type, a: Value, b: Value, label: str | None = None) -> Value:
    """Interval arithmetic for + - * // % ** on integer abstract values."""
    # Two small integer constants (most operations) cannot overflow the fold:
    # skip the size check, whose answer is known (only << and ** grow past it).
    if not (type(a) is Const and type(b) is Const and type(a.value) is int and type(b.value) is int
            and -_SMALL < a.value < _SMALL and -_SMALL < b.value < _SMALL and op is not ast.Pow
            and op is not ast.LShift):
        # The bits of the largest number each operand carries (one pass over its numbers).
        big_a, big_b = _largest(a), _largest(b)
        if int_bits(big_a) > MAX_INT_BITS or int_bits(big_b) > MAX_INT_BITS or too_big_to_fold(op, big_a, big_b):
            return Int(sym=Sym(label or "value"), label=label,
                       reason=f"an integer over {MAX_INT_BITS} bits (not folded)")
    ba, bb = int_bounds(a), int_bounds(b)
    if ba is None or bb is None:
        if (ba is not None or isinstance(a, Unknown)) and (bb is not None or isinstance(b, Unknown)):
            # Arithmetic on a number we do not know: an unknown number, which
            # min()/asserts can still bound.
            return Int(sym=Sym(label or "value"), label=label, reason="computed from an unknown value")
        return Unknown("non-integer arithmetic", label=label)
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None and _mixes_derived(la[0], lb[0]):
        la = lb = None  # correlated quantities: plain interval arithmetic below
    if la is not None and lb is not None:
        ta, oa = la
        tb, ob = lb
        if op is ast.Add or op is ast.Sub:
            sign = 1 if op is ast.Add else -1
            terms = dict(ta)
            for sym, c in tb.items():
                terms[sym] = terms.get(sym, 0) + sign * c
            return from_linear(terms, oa + sign * ob, label)
        if op is ast.Mult and (not ta or not tb):
            k, (terms, off) = (oa, lb) if not ta else (ob, la)
            return from_linear({s_: c * k for s_, c in terms.items()}, off * k, label)
        if op is ast.FloorDiv and not tb and ob > 0 and ta:
            if all(c % ob == 0 for c in ta.values()) and oa % ob == 0:
                return from_linear({s_: c // ob for s_, c in ta.items()}, oa // ob, label)
    alo, ahi = ba
    blo, bhi = bb
    if op is ast.Add:
        return make_int(alo + blo, ahi + bhi, label)
    if op is ast.Sub:
        return make_int(alo - bhi, ahi - blo, label)
    if op is ast.Mult:
        cands = [_mul(x, y) for x in (alo, ahi) for y in (blo, bhi)]
        out = make_int(min(cands), max(cands), label)
        # (x // d) * d lies in [x - d + 1, x]: keep the upper bound of x.
        for q, d in ((a, b), (b, a)):
            if isinstance(q, Int) and q.meta and q.meta[0] == "floordiv" and same_int(d, q.meta[2]):
                xb = int_bounds(q.meta[1])
                if xb is not None and xb[0] >= 0 and isinstance(out, Int):
                    out.hi = min(out.hi, xb[1])
                    out.lo = max(out.lo, 0)
        return out
    if op is ast.FloorDiv:
        if blo <= 0 <= bhi:
            return Int(label=label, reason="division by a value that may be 0")
        cands = []
        for x in (alo, ahi):
            for y in (blo, bhi):
                if x in (INF, -INF):
                    cands.append(x if y > 0 else -x)
                elif y in (INF, -INF):
                    cands.append(0 if (x >= 0) == (y > 0) else -1)
                else:
                    cands.append(x // y)
        out = make_int(min(cands), max(cands), label)
        if isinstance(out, Int) and blo > 0:
            # Remember x // d: facts about the quotient narrow x, and
            # (x // d) * d is at most x.
            out.meta = ("floordiv", a, Const(int(blo)) if blo == bhi else b)
        return out
    if op is ast.Mod:
        if blo == bhi and blo > 0:
            if alo == ahi and alo not in (INF, -INF):
                return Const(int(alo % blo), label=label)
            if alo >= 0 and ahi < blo:
                return make_int(alo, ahi, label)
            return make_int(0, blo - 1, label)
        if blo > 0:
            return make_int(0, bhi - 1, label)
        return Int(label=label)
    if op is ast.Pow:
        if alo == ahi and blo == bhi and all(x not in (INF, -INF) for x in (alo, blo)) and 0 <= blo <= 64:
            return Const(int(alo) ** int(blo), label=label)
        if alo >= 0 and blo >= 0:
            return make_int(0 if alo == 0 else 1, INF, label)
        return Int(label=label)
    if op in (ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor):
        ca, cb = const_int(a), const_int(b)
        if ca is not None and cb is not None:
            fn = {ast.LShift: lambda x, y: x << y if 0 <= y < 64 else None, ast.RShift: lambda x, y: x >> y if y >= 0 else None,
                  ast.BitAnd: lambda x, y: x & y, ast.BitOr: lambda x, y: x | y, ast.BitXor: lambda x, y: x ^ y}[op]
            r = fn(ca, cb)
            return Const(r, label=label) if r is not None else Int(label=label)
        return Int(label=label)
    return Unknown("unsupported operator", label=label)


def _numbers_of(v: Value) -> list[object]:
    """The exact numbers an integer value carries (bounds, affine offset and
    coefficients)."""
    if isinstance(v, Const):
        return [v.value]
    if isinstance(v, Int):
        out: list[object] = [v.lo, v.hi, v.offset]
        if v.sym is not None:
            out += [v.sym.lo, v.sym.hi]
        for sym, coeff in v.terms or ():
            out += [coeff, sym.lo, sym.hi]
        return out
    if isinstance(v, ParDimV):
        return _numbers_of(v.size)
    return []


def _largest(v: Value) -> object:
    """The number of largest magnitude ``v`` carries (for the size estimate)."""
    best: object = 0
    best_bits = 0
    for x in _numbers_of(v):
        bits = int_bits(x)
        if bits > best_bits:
            best, best_bits = x, bits
    return best


def join(a: Value, b: Value) -> Value:
    """The least value covering both (for if/else merges and loop widening)."""
    if a is b:
        return a
    if isinstance(a, Const) and isinstance(b, Const) and type(a.value) is type(b.value):
        try:
            if a.value == b.value:
                return a
        except Exception:  # pragma: no cover - exotic constants
            pass
    ba, bb = int_bounds(a), int_bounds(b)
    if ba is not None and bb is not None:
        lo, hi = min(ba[0], bb[0]), max(ba[1], bb[1])
        if lo == hi and lo not in (INF, -INF):
            return Const(int(lo), label=a.label or b.label)
        # A fresh symbol, so that later asserts can still narrow the joined value.
        label = a.label or b.label
        return Int(sym=Sym(label or "value", lo, hi, derived=True, origin="derived"), label=label, reason="joined")
    if isinstance(a, TupleV) and isinstance(b, TupleV) and len(a.items) == len(b.items):
        return TupleV(tuple(join(x, y) for x, y in zip(a.items, b.items)), is_list=a.is_list)
    if (ba is not None and isinstance(b, Unknown)) or (bb is not None and isinstance(a, Unknown)):
        # A number on one path, unknown on the other: an unknown number.
        label = a.label or b.label
        return Int(sym=Sym(label or "value", origin="derived"), label=label, reason="differs between branches")
    if isinstance(a, TensorV) and isinstance(b, TensorV) and a.node_id == b.node_id:
        return a
    if isinstance(a, DType) and isinstance(b, DType) and a.name == b.name:
        return a
    if isinstance(a, BufferV) and isinstance(b, BufferV) and a.name == b.name:
        return a
    if isinstance(a, ApiRef) and isinstance(b, ApiRef) and a.qual == b.qual:
        return a
    if isinstance(a, FuncV) and isinstance(b, FuncV) and a.node is b.node:
        return a
    if isinstance(a, ObjectV) and isinstance(b, ObjectV) and a is b:
        return a
    return Unknown("differs between branches or loop iterations", label=a.label or b.label)


def truth(v: Value) -> bool | None:
    """Python truthiness if known."""
    if isinstance(v, Const):
        try:
            return bool(v.value)
        except Exception:  # pragma: no cover
            return None
    if isinstance(v, Int):
        lo, hi = v.bounds
        if lo > 0 or hi < 0:
            return True
        if lo == hi == 0:
            return False
        return None
    if isinstance(v, TupleV):
        return bool(v.items)
    if isinstance(v, (DType, BufferV, FuncV, ClassV)):
        return True
    # A tensor's truth value depends on its data (and `if tile:` on an
    # optional tensor is a None test): unknown.
    return None


def compare(op: type, a: Value, b: Value) -> bool | None:
    """Decide a comparison if the bounds allow it."""
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return {
                ast.Eq: lambda x, y: x == y,
                ast.NotEq: lambda x, y: x != y,
                ast.Lt: lambda x, y: x < y,
                ast.LtE: lambda x, y: x <= y,
                ast.Gt: lambda x, y: x > y,
                ast.GtE: lambda x, y: x >= y,
                ast.Is: lambda x, y: x is y,
                ast.IsNot: lambda x, y: x is not y,
            }[op](a.value, b.value)
        except Exception:
            return None
    if isinstance(a, DType) and isinstance(b, DType) and op in (ast.Eq, ast.NotEq):
        return (a.name == b.name) == (op is ast.Eq)
    if isinstance(a, BufferV) and isinstance(b, BufferV) and op in (ast.Eq, ast.NotEq):
        return (a.name == b.name) == (op is ast.Eq)
    ba, bb = int_bounds(a), int_bounds(b)
    if ba is None or bb is None:
        if op in (ast.Is, ast.IsNot) and isinstance(b, Const) and b.value is None:
            if isinstance(a, (TensorV, Int, DType, BufferV, TupleV, FuncV)):
                return op is ast.IsNot
        return None
    alo, ahi = ba
    blo, bhi = bb
    if op is ast.Lt:
        return True if ahi < blo else False if alo >= bhi else None
    if op is ast.LtE:
        return True if ahi <= blo else False if alo > bhi else None
    if op is ast.Gt:
        return True if alo > bhi else False if ahi <= blo else None
    if op is ast.GtE:
        return True if alo >= bhi else False if ahi < blo else None
    if op is ast.Eq:
        if alo == ahi == blo == bhi:
            return True
        return False if ahi < blo or bhi < alo else None
    if op is ast.NotEq:
        r = compare(ast.Eq, a, b)
        return None if r is None else not r
    return None




def describe(v: Value) -> str:
    """Short human description for messages."""
    c = const_int(v)
    if c is not None:
        return str(c)
    if isinstance(v, Int):
        lo, hi = v.bounds
        name = v.label or (v.sym.name if v.sym else "value")
        if lo == -INF and hi == INF:
            return name
        if hi == INF:
            return f"{name} (>= {int(lo)})"
        if lo == -INF:
            return f"{name} (<= {int(hi)})"
        return f"{name} (in [{int(lo)}, {int(hi)}])"
    if isinstance(v, Const):
        return repr(v.value)
    return v.label or "an unknown value"

