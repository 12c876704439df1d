"""Definite assignment: local names a function may read before it binds them.

Python makes a name local to a function when the function binds it
anywhere; reading it on a path where no binding ran raises
``UnboundLocalError`` (a ``NameError``). The legacy tracer runs the kernel
body as Python and the NKI 0.2+ frontend resolves names the same way, so a
tile bound in one branch of an ``if`` and read after it fails whenever the
kernel is traced down the other branch.

The analysis walks each function's statements forward (the order Python
runs them) with, for every local name, one of:

* ``DEF``: every path from the entry to here binds it;
* ``MAYBE``: some path binds it and some path coming through an ``if``
  (or a ``try``) skips it;
* ``UNDEF``: no path binds it (a use here raises on every path);
* ``CARRIED``: a loop body binds it, so the value may come from an earlier
  iteration (``if i > 0: use(prev)``); never reported, because the test
  that guards such a read is usually the loop index.

Tests the syntax decides (``if False:``, ``if 0:``, a module constant bound
once to a literal) skip the branch that cannot run. A loop is assumed to
run at least once (kernels loop over tile counts), so a name a loop body
binds is bound after it. ``return``/``raise``/``break``/``continue`` end a
path, and so do ``assert False``, ``sys.exit`` and ``kernel_assert(False,
...)``-style helpers; an ``if``/``elif`` chain over members of one enum is
taken as exhaustive. A function with a ``match`` statement, a handler that catches
``NameError`` (or ``Exception``), or whose names may be bound by
``exec``/``locals()``, has no answer (a must-analysis: silent rather than a
guess). The walk keeps its own stack (``trampoline``), so deeply nested
blocks do not recurse in Python.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from .. import astwalk
from .analysis import Analysis
from .names import catches_name_error
from .scopes import COMPREHENSIONS, SCOPE_NODES, Scopes
from .trampoline import Step, run

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel

DEF, MAYBE, UNDEF, CARRIED = "def", "maybe", "undef", "carried"
_DYNAMIC = frozenset({"exec", "eval", "locals", "vars"})

State = dict  # name -> status; a missing name is UNDEF; None is an unreachable point


@dataclass(frozen=True)
class UnboundUse:
    """A read of local ``name`` that some path (``status == MAYBE``) or every
    path (``UNDEF``) reaches without binding it. ``bindings`` are the
    statements of the function that bind the name (source order)."""

    node: ast.Name
    status: str
    bindings: tuple[ast.AST, ...]

    @property
    def name(self) -> str:
        return self.node.id


def _join(a: State | None, b: State | None) -> State | None:
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    out: State = {}
    for name in set(a) | set(b):
        x, y = a.get(name, UNDEF), b.get(name, UNDEF)
        if x == y:
            out[name] = x
        elif CARRIED in (x, y):
            out[name] = CARRIED
        else:
            out[name] = MAYBE
    return out


def _join_all(states: list[State | None]) -> State | None:
    out: State | None = None
    for s in states:
        out = _join(out, s) if out is not None else (dict(s) if s is not None else None)
    return out


def _expr_events(expr: ast.AST | None) -> Iterator[tuple[str, ast.AST]]:
    """``("load", Name)`` / ``("store", Name)`` of an expression in roughly
    evaluation order, not entering lambdas; inside comprehensions, names the
    comprehension binds are left out (its own scope)."""
    if expr is None:
        return
    stack: list[tuple[ast.AST, frozenset]] = [(expr, frozenset())]
    stores: list[ast.Name] = []
    while stack:
        node, hidden = stack.pop()
        if isinstance(node, ast.Lambda):
            for d in reversed(node.args.defaults + [d for d in node.args.kw_defaults if d is not None]):
                stack.append((d, hidden))
            continue
        if isinstance(node, COMPREHENSIONS):
            bound = set(hidden)
            for gen in node.generators:
                for sub in astwalk.walk(gen.target):
                    if isinstance(sub, ast.Name):
                        bound.add(sub.id)
            inner = frozenset(bound)
            # The first iterator runs in the enclosing scope; the rest in the comprehension's.
            parts: list[tuple[ast.AST, frozenset]] = [(node.generators[0].iter, hidden)]
            for i, gen in enumerate(node.generators):
                if i:
                    parts.append((gen.iter, inner))
                parts.extend((cond, inner) for cond in gen.ifs)
            elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            parts.extend((e, inner) for e in elts)
            stack.extend(reversed(parts))
            continue
        if isinstance(node, ast.NamedExpr):
            stack.append((node.value, hidden))
            stores.append(node.target)
            continue
        if isinstance(node, ast.Name):
            if node.id not in hidden and isinstance(node.ctx, ast.Load):
                yield "load", node
            continue
        stack.extend((child, hidden) for child in reversed(astwalk.child_nodes(node)))
    for target in stores:
        yield "store", target


def _target_events(target: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Events of an assignment target: loads in subscripts and attribute
    bases (``t[i] = v`` reads ``t`` and ``i``), then the names it binds."""
    names: list[ast.Name] = []
    stack = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.append(node)
        elif isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(reversed(node.elts))
        elif isinstance(node, ast.Starred):
            stack.append(node.value)
        else:  # Subscript / Attribute: the whole target is evaluated as loads
            yield from _expr_events(node)
    for name in names:
        yield "store", name


class _Walker:
    """One function's forward walk (see the module docstring)."""

    def __init__(self, fn: ast.AST, constant: "_Constants") -> None:
        self.fn = fn
        self.constant = constant
        self.locals: set[str] = set()
        self.outer: set[str] = set()
        self.params: set[str] = set()
        self.bindings: dict[str, list[ast.AST]] = {}
        self.uses: list[tuple[ast.Name, str]] = []
        self.breaks: list[list[State | None]] = []
        self.bail = False
        self.exhaustive = _exhaustive_chains(fn)
        self.walrus = constant.walrus
        self._assigned: dict[int, set[str]] = {}

    # -- events -------------------------------------------------------------
    def apply(self, state: State | None, events, stmt: ast.AST) -> State | None:
        if state is None:
            return None
        for kind, node in events:
            name = node.id if isinstance(node, ast.Name) else node
            if kind == "load":
                if name in self.locals and name not in self.outer and name not in self.params:
                    status = state.get(name, UNDEF)
                    if status in (MAYBE, UNDEF):
                        self.uses.append((node, status))
                        # The first failing read ends the trace on those paths: later reads are not new faults.
                        state[name] = DEF
            elif kind == "store":
                state[name] = DEF
            elif kind == "del":
                state[name] = UNDEF
        return state

    # -- statements ----------------------------------------------------------
    def block(self, body: list[ast.stmt], state: State | None) -> Step:
        for stmt in body:
            if state is None:
                return None
            state = yield self.stmt(stmt, state)
        return state

    def stmt(self, s: ast.stmt, state: State) -> Step:
        if isinstance(s, ast.If):
            state = self.apply(state, _expr_events(s.test), s)
            truth = self.constant.truth(s.test)
            then = (yield self.block(s.body, dict(state))) if truth is not False else None
            if truth is not True and not s.orelse and id(s) in self.exhaustive:
                return then  # the last arm of an if/elif chain over one enum's members
            other = (yield self.block(s.orelse, dict(state))) if truth is not True else None
            return _join(then, other)
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            return (yield self.loop(s, state))
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                state = self.apply(state, _expr_events(item.context_expr), s)
                if item.optional_vars is not None:
                    state = self.apply(state, _target_events(item.optional_vars), s)
            return (yield self.block(s.body, state))
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            return (yield self.try_(s, state))
        if isinstance(s, ast.Match):
            self.bail = True
            return None
        if isinstance(s, (ast.Return, ast.Raise)):
            self.apply(state, _expr_events(s), s)
            return None
        if isinstance(s, ast.Break):
            if self.breaks:
                self.breaks[-1].append(dict(state))
            return None
        if isinstance(s, ast.Continue):
            return None
        state = self.apply(state, self.simple(s), s)
        return None if _ends_path(s) else state

    def simple(self, s: ast.stmt) -> Iterator[tuple[str, ast.AST]]:
        if isinstance(s, ast.Assign):
            yield from _expr_events(s.value)
            for t in s.targets:
                yield from _target_events(t)
        elif isinstance(s, ast.AugAssign):
            yield from _expr_events(s.value)
            if isinstance(s.target, ast.Name):
                yield "load", s.target
                yield "store", s.target
            else:
                yield from _expr_events(s.target)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                yield from _expr_events(s.value)
                yield from _target_events(s.target)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in s.decorator_list:
                yield from _expr_events(d)
            if isinstance(s, ast.ClassDef):
                for b in s.bases + [k.value for k in s.keywords]:
                    yield from _expr_events(b)
            else:
                for d in s.args.defaults + [d for d in s.args.kw_defaults if d is not None]:
                    yield from _expr_events(d)
            yield "store", s.name
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for a in s.names:
                if a.name != "*":
                    yield "store", (a.asname or a.name).split(".")[0]
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    yield "load", t
                    yield "del", t.id
                else:
                    yield from _expr_events(t)
        elif isinstance(s, (ast.Global, ast.Nonlocal)):
            return
        else:  # Expr, Assert, Pass, ...
            yield from _expr_events(s)

    def loop(self, s: ast.For | ast.AsyncFor | ast.While, state: State) -> Step:
        if isinstance(s, ast.While):
            truth = self.constant.truth(s.test)
            state = self.apply(state, _expr_events(s.test), s)
            if truth is False:
                return (yield self.block(s.orelse, state))
        else:
            truth = None
            state = self.apply(state, _expr_events(s.iter), s)
        # The body may see values of an earlier iteration: what it binds is CARRIED at its head.
        head = dict(state)
        for name in self.assigned_in(s):
            if head.get(name, UNDEF) != DEF:
                head[name] = CARRIED
        if not isinstance(s, ast.While):
            head = self.apply(head, _target_events(s.target), s)
        self.breaks.append([])
        end = yield self.block(s.body, head)
        breaks = self.breaks.pop()
        if truth is True:  # while True: only a break leaves
            return _join_all(breaks)
        # Loops are taken to run at least once; a path that skips the body entirely is not followed.
        if end is None and not breaks:
            end = dict(head)
        after = (yield self.block(s.orelse, end)) if end is not None else None
        return _join_all([after] + breaks)

    def try_(self, s: ast.AST, state: State) -> Step:
        end = yield self.block(s.body, dict(state))
        # A handler may start after any statement of the body: what the body binds is MAYBE there.
        start = _join(state, end) if end is not None else self.maybe(state, s.body)
        outs: list[State | None] = []
        for handler in s.handlers:
            h = dict(start)
            h = self.apply(h, _expr_events(handler.type), handler)
            if handler.name:
                h[handler.name] = DEF
            h = yield self.block(handler.body, h)
            if h is not None and handler.name:
                h[handler.name] = UNDEF  # Python deletes the handler's name on exit
            outs.append(h)
        if end is not None:
            outs.append((yield self.block(s.orelse, end)))
        after = _join_all(outs)
        if s.finalbody:
            fin = yield self.block(s.finalbody, _join(after, start) if after is not None else dict(start))
            if after is None or fin is None:
                return None
            for name, status in fin.items():
                if status == DEF:
                    after[name] = DEF
        return after

    def maybe(self, state: State, body: list[ast.stmt]) -> State:
        out = dict(state)
        for stmt in body:
            for name in self.assigned_stmt(stmt):
                if out.get(name, UNDEF) != DEF:
                    out[name] = MAYBE if out.get(name) != CARRIED else CARRIED
        return out

    def assigned_in(self, loop: ast.AST) -> set[str]:
        out: set[str] = set()
        for stmt in getattr(loop, "body", ()) + getattr(loop, "orelse", []):
            out |= self.assigned_stmt(stmt)
        return out

    def assigned_stmt(self, stmt: ast.AST) -> set[str]:
        # Loops ask again for the statements of nested loops: computed once.
        hit = self._assigned.get(id(stmt))
        if hit is None:
            hit = self._assigned[id(stmt)] = set(_bound_names(stmt, self.walrus))
        return hit


# Calls that never return: ``sys.exit``, test-harness failures, and
# ``*assert*(False, ...)`` helpers (``kernel_assert(False, "unsupported")``).
_NO_RETURN = frozenset({"sys.exit", "exit", "quit", "os._exit", "pytest.fail", "pytest.skip", "pytest.xfail"})


def _ends_path(s: ast.stmt) -> bool:
    """The statement always raises or exits: ``assert False`` and the calls above."""
    if isinstance(s, ast.Assert):
        return isinstance(s.test, ast.Constant) and not s.test.value
    if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)):
        return False
    call = s.value
    name = _dotted(call.func)
    if name is None:
        return False
    if name in _NO_RETURN:
        return True
    last = name.rsplit(".", 1)[-1].lower()
    first = call.args[0] if call.args else None
    return "assert" in last and isinstance(first, ast.Constant) and first.value in (False, 0) \
        and not isinstance(first.value, str)


def _dotted(expr: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def _exhaustive_chains(fn: ast.AST) -> set[int]:
    """Ids of the last ``if`` of each ``if``/``elif`` chain (two arms or more,
    no ``else``) whose tests all compare one expression with members of one
    enum (``mode == Layout.A`` ... ``elif mode == Layout.B``): kernels write
    such chains over every member they support, so the missing ``else`` is
    not taken as a path that skips the arms' bindings."""
    out: set[int] = set()
    inner: set[int] = set()
    # Only the function's own statements: the walk never enters nested scopes.
    for node in (n for stmt in fn.body for n in _statements(stmt)):
        if not isinstance(node, ast.If) or id(node) in inner:
            continue
        chain = [node]
        while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
            chain.append(chain[-1].orelse[0])
            inner.add(id(chain[-1]))
        if len(chain) < 2 or chain[-1].orelse:
            continue
        keys = {_enum_test(arm.test) for arm in chain}
        if len(keys) == 1 and None not in keys:
            out.add(id(chain[-1]))
    return out


def _enum_test(test: ast.AST) -> tuple[str, str] | None:
    """(subject, enum) for ``subject == Enum.MEMBER`` / ``subject is Enum.MEMBER``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is))):
        return None
    member = test.comparators[0]
    enum = _dotted(member.value) if isinstance(member, ast.Attribute) else None
    if enum is None or not member.attr[:1].isupper() or not enum.rsplit(".", 1)[-1][:1].isupper():
        return None
    return ast.dump(test.left), enum


def _bound_names(stmt: ast.AST, walrus: bool = True) -> Iterator[str]:
    """Names a statement binds in its own scope (nested scopes left out).

    ``walrus=False`` promises that the file has no ``:=``: a ``Name`` is then
    stored only in an assignment target (``for``/``with``/``del`` included),
    so expressions outside targets are not searched (the same names, found
    without walking every call and subscript of the file)."""
    stack: list[tuple[ast.AST, bool]] = [(stmt, True)]
    while stack:
        node, searched = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
            if walrus:
                stack.extend((d, True) for d in node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, *COMPREHENSIONS)):
            # A walrus in a comprehension binds in the function; rare enough to leave to the caller's CARRIED.
            if walrus:
                for sub in astwalk.walk(node):
                    if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                        yield sub.target.id
            continue
        if not searched:
            continue  # an expression outside any target, in a file with no walrus
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if a.name != "*":
                    yield (a.asname or a.name).split(".")[0]
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name
        if walrus or isinstance(node, ast.expr):
            stack.extend((child, True) for child in astwalk.child_nodes(node))
        else:
            targets = _target_ids(node)
            stack.extend((child, not isinstance(child, ast.expr) or id(child) in targets)
                         for child in astwalk.child_nodes(node))


def _target_ids(node: ast.AST) -> set[int]:
    """Ids of the expressions of a statement (or ``with`` item) that are assignment targets."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        return {id(t) for t in node.targets}
    if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return {id(node.target)}
    if isinstance(node, ast.withitem):
        return {id(node.optional_vars)} if node.optional_vars is not None else set()
    return set()


class _Constants:
    """Tests the syntax decides: literals, ``not``/``and``/``or`` of them, and
    module-level names bound exactly once to a literal (``DEBUG = False``)."""

    def __init__(self, scopes: Scopes) -> None:
        self.scopes = scopes
        tree = scopes.file.tree
        self.module: dict[str, object] = {}
        counts: dict[str, int] = {}
        # Whether the file may hold a walrus (``:=``); without one, only assignment targets bind names.
        self.walrus = False
        for node in scopes.file.nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                counts[node.id] = counts.get(node.id, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for n in node.names:
                    counts[n] = counts.get(n, 0) + 2
            elif isinstance(node, ast.NamedExpr):
                self.walrus = True
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and isinstance(stmt.value, ast.Constant) and counts.get(stmt.targets[0].id) == 1:
                self.module[stmt.targets[0].id] = stmt.value.value
        self.fn_locals: set[str] = set()

    def truth(self, test: ast.AST) -> bool | None:
        """True / False when the syntax decides the test, else None."""
        if isinstance(test, ast.Constant):
            return bool(test.value) if isinstance(test.value, (bool, int, float, str, bytes, type(None))) else None
        if isinstance(test, ast.Name) and test.id in self.module and test.id not in self.fn_locals:
            return bool(self.module[test.id])
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [self.truth(v) for v in test.values]
            stop = isinstance(test.op, ast.Or)
            if stop in values:  # `x or True`, `False and x`
                return stop
            if all(v is not None for v in values):
                return not stop
        return None


class DefiniteAssignment(Analysis):
    """Reads of a function's locals that a path reaches unbound (a per-file analysis)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        self.scopes = model.analysis(Scopes)
        self.constants = _Constants(self.scopes)
        self._cache: dict[int, list[UnboundUse]] = {}

    def unbound_uses(self, fn: ast.AST) -> list[UnboundUse]:
        """Reads of ``fn``'s own locals (bound in ``fn``, not a parameter, not
        ``global``/``nonlocal``) that some (MAYBE) or every (UNDEF) path from
        the entry reaches before a binding, in source order; empty when the
        function's name bindings are not all visible."""
        hit = self._cache.get(id(fn))
        if hit is None:
            hit = self._cache[id(fn)] = self._compute(fn)
        return hit

    def _compute(self, fn: ast.AST) -> list[UnboundUse]:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return []
        walker = _Walker(fn, self.constants)
        for node in self.scopes.own_nodes(fn):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                walker.outer.update(node.names)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC:
                return []
            elif isinstance(node, ast.Match):
                return []
            elif isinstance(node, ast.ExceptHandler) and (catches_name_error(node) or "UnboundLocalError" in
                                                          ast.dump(node.type)):
                return []  # the function handles the NameError itself
        args = fn.args
        walker.params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        walker.params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        bindings: dict[str, list[ast.AST]] = {}
        for stmt in fn.body:
            for node in _statements(stmt):
                for name in _own_bound(node, self.constants.walrus):
                    bindings.setdefault(name, []).append(node)
        walker.locals = set(bindings)
        self.constants.fn_locals = walker.locals | walker.params
        run(walker.block(fn.body, {}))
        if walker.bail:
            return []
        seen: set[int] = set()
        out: list[UnboundUse] = []
        for node, status in walker.uses:
            if id(node) in seen:
                continue
            seen.add(id(node))
            out.append(UnboundUse(node, status, tuple(bindings.get(node.id, ()))))
        out.sort(key=lambda u: (u.node.lineno, u.node.col_offset))
        return out


def _statements(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The statement and the statements nested in its blocks (not in nested scopes)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, SCOPE_NODES):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(reversed(getattr(node, field, None) or []))


def _own_bound(stmt: ast.AST, walrus: bool = True) -> Iterator[str]:
    """Names one statement binds itself (its header and simple targets, not its nested blocks)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield stmt.name
        return
    if isinstance(stmt, ast.ExceptHandler):
        if stmt.name:
            yield stmt.name
        return
    parts: list[ast.AST]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        parts = [stmt.target, stmt.iter] if walrus else [stmt.target]
    elif isinstance(stmt, (ast.While, ast.If)):
        parts = [stmt.test] if walrus else []
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        parts = list(stmt.items)
    elif isinstance(stmt, (ast.Try, ast.Match)) or type(stmt).__name__ == "TryStar":
        parts = []
    else:
        parts = [stmt]
    for part in parts:
        yield from _bound_names(part, walrus)


__all__ = ["CARRIED", "DEF", "DefiniteAssignment", "MAYBE", "UNDEF", "UnboundUse"]
