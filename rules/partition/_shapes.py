"""Shape facts the partition rules share.

Everything here reads the semantic model; nothing guesses. A dimension is
an abstract value: exact, a range, or unknown. The helpers answer three
questions the rules ask again and again: is a size over a limit for every
value the code allows (an error), is it over the limit for a value the code
really allows (a warning), and do two sizes provably differ.
"""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.model import query as q
from nkilint.model.values import ApiRef, Const, TupleV, Value, const_int, int_binop, int_bounds, linear
from nkilint.model.views import Op, Operand, TensorLike

# Where the facts come from (for rule references).
SDK_STUBS = "aws-neuron-sdk nki/api/nki/isa/__init__.py"
LEGACY_ERRORS = "aws-neuron-sdk nki/api/nki.errors.rst at commit 1db4d74e"


def limit_text(ctx: RuleContext) -> str:
    return f"{ctx.target.partitions} on {ctx.target.name}"


# ---------------------------------------------------------------- bounds
def over_always(v: Value | None, limit: float) -> bool:
    """Every value the code allows exceeds ``limit`` (sound: interval lower bounds)."""
    lo = q.lower(v)
    return lo is not None and lo > limit


def over_maybe(v: Value | None, limit: float) -> float | None:
    """A reachable value above ``limit`` (the attainable upper bound), if any."""
    hi = q.attainable_upper(v)
    return hi if hi is not None and hi > limit else None


def provably_different(a: Value | None, b: Value | None) -> bool:
    """Two integer sizes differ for every value the code allows."""
    if a is None or b is None:
        return False
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None:
        terms = dict(la[0])
        for sym, coeff in lb[0].items():
            terms[sym] = terms.get(sym, 0) - coeff
        if all(c == 0 for c in terms.values()):
            return la[1] != lb[1]
    ba, bb = int_bounds(a), int_bounds(b)
    if ba is None or bb is None:
        return False
    return ba[1] < bb[0] or bb[1] < ba[0]


def provably_equal(a: Value | None, b: Value | None) -> bool:
    if a is None or b is None:
        return False
    if a is b:
        return True
    ca, cb = const_int(a), const_int(b)
    if ca is not None and cb is not None:
        return ca == cb
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None:
        return la[1] == lb[1] and {s: c for s, c in la[0].items() if c} == {s: c for s, c in lb[0].items() if c}
    return False


def fmt(v: Value | None) -> str:
    return "?" if v is None else q.fmt_dim(v)


# ---------------------------------------------------------------- shapes
def free_dims(t: TensorLike) -> tuple[Value, ...] | None:
    """The dimensions other than the partition dimension."""
    s = t.shape
    if s is None:
        return None
    axis = t.partition_axis
    return tuple(d for i, d in enumerate(s) if i != axis)


def product(dims: tuple[Value, ...] | None) -> Value | None:
    """Product of integer dims (None if any is not an integer value)."""
    if dims is None:
        return None
    total: Value = Const(1)
    for d in dims:
        if int_bounds(d) is None:
            return None
        total = int_binop(ast.Mult, total, d)
    return total


def free_size(t: TensorLike) -> Value | None:
    """Elements per partition (free dims flattened, as the engines see them)."""
    dims = free_dims(t)
    if dims is None:
        return None
    if len(dims) == 1:
        return dims[0]
    return product(dims)


# ---------------------------------------------------------------- operands
def operands(op: Op, names: tuple[str, ...] | None = None, include_result: bool = False) -> list[Operand]:
    """Tensor operands of an op, in parameter order (reads first), each
    (parameter, node) once, optionally restricted to ``names``; a legacy
    call's returned tile only with ``include_result``."""
    out: list[Operand] = []
    seen: set[tuple[str, str]] = set()
    for o in op.operands():
        if o.param == "result" and not include_result:
            continue
        if names is not None and o.param not in names:
            continue
        key = (o.param, o.node_id)
        if key in seen:
            continue
        seen.add(key)
        out.append(o)
    return out


# ---------------------------------------------------------------- argument values
def api_leaf(v: Value | None) -> str | None:
    """The last component of an API constant (``nisa.engine.vector`` -> ``vector``)."""
    if isinstance(v, ApiRef):
        return v.qual.name.rsplit(".", 1)[-1]
    return None


def const_tuple(v: Value | None) -> tuple[int, ...] | None:
    """A tuple/list of exact ints, if the value is one."""
    if isinstance(v, TupleV):
        items = [const_int(x) for x in v.items]
        if all(i is not None for i in items):
            return tuple(items)  # type: ignore[arg-type]
    return None


def is_true(v: Value | None) -> bool | None:
    """True/False for an exact bool, int or None argument; None when unknown."""
    if v is None:
        return None
    if isinstance(v, Const):
        if v.value is None:
            return False
        if isinstance(v.value, (bool, int)):
            return bool(v.value)
    return None
