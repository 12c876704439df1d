"""Scopes and def-use chains: which definitions of a name reach a use.

The binder layer of the model (what ruff keeps in ``ruff_python_semantic``
and pyright in its binder): for every function of a module, the names it
binds (with the statement and, for ``name = value``, the bound expression),
the names it reads, its parameters and its ``global``/``nonlocal``
declarations; and the structural questions rules ask of syntax (parent,
enclosing function, the nodes a function owns, names a block assigns, the
conditions between a node and an enclosing statement).

The analysis is flow-insensitive: every definition of a name in the scope
that owns it "reaches" every use. Questions built on it are must-analyses
(``always``: every definition satisfies a predicate), so a rule that relies
on them stays silent rather than guess when a name has a definition of
another kind.

``Scopes`` is a per-file analysis (``ctx.analysis(Scopes)``); it indexes the
file being checked and, on request, the project modules that helpers
reached from its kernels live in (``Scopes.index_for(path)``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from .. import astwalk
from .analysis import Analysis

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel

SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# Kinds of definitions whose bound expression is known (``name = value``).
VALUE_KINDS = ("assign", "annassign", "namedexpr")


@dataclass
class Def:
    """One place a name is bound in a function's own scope.

    ``kind``: assign, annassign, augassign, for, with, unpack, import, def,
    namedexpr, except, other (``del``). ``value`` is the bound expression
    for ``name = value`` (also an element of a tuple assigned element-wise,
    and the right-hand side of ``name += value``)."""

    kind: str
    node: ast.AST  # the statement (or expression) that binds
    value: ast.AST | None = None


@dataclass
class Scope:
    """Names bound and read in one function (nested scopes excluded)."""

    fn: ast.AST
    params: set[str] = field(default_factory=set)
    bindings: dict[str, list[Def]] = field(default_factory=dict)
    loads: dict[str, list[ast.Name]] = field(default_factory=dict)
    declared_outer: set[str] = field(default_factory=set)  # global / nonlocal
    parent: "Scope | None" = None

    def bind(self, name: str, definition: Def) -> None:
        self.bindings.setdefault(name, []).append(definition)

    def owner(self, name: str) -> "Scope | None":
        """The scope a free name resolves to (Python's closure rule)."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings or name in scope.params:
                return scope
            scope = scope.parent
        return None

    def definitions(self, name: str) -> list[Def]:
        """Definitions of ``name`` in the scope that owns it (empty for a
        parameter that is never rebound, a global or an unknown name)."""
        owner = self.owner(name)
        return list(owner.bindings.get(name, ())) if owner is not None else []

    def is_param(self, name: str) -> bool:
        """``name`` resolves to a parameter of its owning function that the
        function never rebinds."""
        owner = self.owner(name)
        return owner is not None and name in owner.params and not owner.bindings.get(name)


class _ScopeBuilder:
    """Collects one scope's bindings and loads, without recursion.

    An explicit work stack replaces ``ast.NodeVisitor``'s recursion, so a
    valid but deeply nested expression (a 3,000-operand sum, a long ternary
    chain) needs no Python frames per level. A work item is a node (visited:
    its ``visit_*`` handler, or its children in field order) or a callable
    (called; it may return more work). Handlers return their work in the
    order the recursive visitor did it, so bindings and loads keep source
    order."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def build(self, nodes: Iterable[ast.AST]) -> None:
        stack: list = list(reversed(list(nodes)))
        while stack:
            item = stack.pop()
            if isinstance(item, ast.AST):
                handler = getattr(self, "visit_" + type(item).__name__, None)
                work = handler(item) if handler is not None else astwalk.child_nodes(item)
            else:
                work = item()
            if work:
                stack.extend(reversed(work))

    # nested scopes: their bodies belong to them, defaults/decorators to us
    def visit_FunctionDef(self, node: ast.FunctionDef) -> list:
        self.scope.bind(node.name, Def("def", node))
        return [*node.decorator_list, *node.args.defaults, *(x for x in node.args.kw_defaults if x is not None)]

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> list:
        self.scope.bind(node.name, Def("def", node))
        return list(node.bases)

    def visit_Lambda(self, node: ast.Lambda) -> list:
        return list(node.args.defaults)

    def _comprehension(self, node) -> None:
        # Targets are local to the comprehension; everything else reads our scope.
        # Nested comprehensions and lambdas inside it bind their own names too.
        local: set[str] = set()
        for sub in astwalk.walk(node):
            if isinstance(sub, ast.comprehension):
                for t in astwalk.walk(sub.target):
                    if isinstance(t, ast.Name):
                        local.add(t.id)
            elif isinstance(sub, ast.Lambda):
                a = sub.args
                local.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
                local.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
        for sub in astwalk.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in local:
                self.scope.loads.setdefault(sub.id, []).append(sub)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.declared_outer.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.scope.loads.setdefault(node.id, []).append(node)

    def _targets(self, target: ast.AST, stmt: ast.AST, value: ast.AST | None, kind: str) -> list:
        if isinstance(target, ast.Name):
            self.scope.bind(target.id, Def(kind, stmt, value))
            return []
        if isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            work = []
            for i, elt in enumerate(target.elts):
                sub = values[i] if values is not None and not isinstance(elt, ast.Starred) else None
                work.append(self._later(elt.value if isinstance(elt, ast.Starred) else elt, stmt, sub,
                                        kind if sub is not None else "unpack"))
            return work
        if isinstance(target, ast.Starred):
            return [self._later(target.value, stmt, None, "unpack")]
        return [target]  # t[...] = / obj.attr = : reads of t / obj

    def _later(self, target: ast.AST, stmt: ast.AST, value: ast.AST | None, kind: str) -> Callable[[], list]:
        return lambda: self._targets(target, stmt, value, kind)

    def visit_Assign(self, node: ast.Assign) -> list:
        return [node.value, *(self._later(t, node, node.value, "assign") for t in node.targets)]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> list:
        if node.value is not None:
            return [node.value, self._later(node.target, node, node.value, "annassign"), node.annotation]
        return [node.annotation]

    def visit_AugAssign(self, node: ast.AugAssign) -> list:
        return [node.value, lambda: self._aug_target(node)]

    def _aug_target(self, node: ast.AugAssign) -> list:
        if isinstance(node.target, ast.Name):
            # x += y reads x too.
            self.scope.loads.setdefault(node.target.id, []).append(
                ast.Name(node.target.id, ast.Load(), lineno=node.lineno, col_offset=node.col_offset)
            )
            self.scope.bind(node.target.id, Def("augassign", node, node.value))
            return []
        return [node.target]

    def visit_NamedExpr(self, node: ast.NamedExpr) -> list:
        return [node.value, lambda: self.scope.bind(node.target.id, Def("namedexpr", node, node.value))]

    def visit_For(self, node: ast.For) -> list:
        return [node.iter, self._later(node.target, node, None, "for"), *node.body, *node.orelse]

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With) -> list:
        work: list = []
        for item in node.items:
            work.append(item.context_expr)
            if item.optional_vars is not None:
                work.append(self._later(item.optional_vars, node, None, "with"))
        return work + list(node.body)

    visit_AsyncWith = visit_With

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.scope.bind((alias.asname or alias.name).split(".")[0], Def("import", node))

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> list:
        if node.name:
            self.scope.bind(node.name, Def("except", node))
        return astwalk.child_nodes(node)

    def visit_Delete(self, node: ast.Delete) -> list:
        work: list = []
        for t in node.targets:
            if isinstance(t, ast.Name):
                self.scope.bind(t.id, Def("other", node))
            else:
                work.append(t)
        return work


def names_in(node: ast.AST) -> set[str]:
    """Every identifier an expression or statement mentions."""
    return {n.id for n in astwalk.walk(node) if isinstance(n, ast.Name)}


def mentions(expr: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in astwalk.walk(expr))


def callee_name(call: ast.Call) -> str:
    """The last component of a call's callee (``f`` for ``a.b.f(...)``)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def call_argument(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    """The argument a call passes as ``keyword=`` or at position ``index``
    (None when absent, or when a ``*args`` before it hides the position)."""
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return None


class SyntaxIndex:
    """Structure and scopes of one module's syntax tree (built lazily)."""

    def __init__(self, tree: ast.AST, nodes: list[ast.AST] | None = None,
                 parents: dict[int, ast.AST] | None = None) -> None:
        self.tree = tree
        self._nodes = nodes
        self._parents = parents
        self._scopes: dict[int, Scope] = {}
        self._own: dict[int, list[ast.AST]] = {}
        self._walked: dict[int, list[ast.AST]] = {}
        self._assigned: dict[int, frozenset] = {}
        self._loop_assigned: dict[int, frozenset] = {}
        self._loop_dependents: dict[int, frozenset] = {}
        self._functions: list[ast.AST] | None = None
        self._values: dict[str, list[tuple[ast.AST, ast.AST]]] | None = None

    # -- structure -------------------------------------------------------------
    @property
    def nodes(self) -> list[ast.AST]:
        """Every node of the tree, in ``ast.walk`` order."""
        if self._nodes is None:
            self._nodes = astwalk.walk_list(self.tree)
        return self._nodes

    @property
    def parents(self) -> dict[int, ast.AST]:
        if self._parents is None:
            parents: dict[int, ast.AST] = {}
            for node in self.nodes:
                for child in astwalk.iter_child_nodes(node):
                    parents[id(child)] = node
            self._parents = parents
        return self._parents

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        cur = self.parent(node)
        while cur is not None:
            yield cur
            cur = self.parent(cur)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        """The innermost function (def, async def or lambda) around a node."""
        for anc in self.ancestors(node):
            if isinstance(anc, FUNCTION_NODES):
                return anc
        return None

    def is_inside(self, node: ast.AST, container: ast.AST) -> bool:
        return any(anc is container for anc in self.ancestors(node))

    def functions(self) -> list[ast.AST]:
        """Every function definition of the module, outermost first."""
        if self._functions is None:
            self._functions = [n for n in self.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return self._functions

    def own_nodes(self, fn: ast.AST) -> Iterator[ast.AST]:
        """Nodes of a function body, in source order, not descending into
        nested functions or classes (computed once per function)."""
        cached = self._own.get(id(fn))
        if cached is None:
            cached = []
            stack = list(reversed(fn.body)) if not isinstance(fn, ast.Lambda) else [fn.body]
            while stack:
                node = stack.pop()
                cached.append(node)
                if isinstance(node, SCOPE_NODES):
                    continue
                stack.extend(reversed(astwalk.child_nodes(node)))
            self._own[id(fn)] = cached
        return iter(cached)

    def subtree(self, node: ast.AST) -> list[ast.AST]:
        """``list(ast.walk(node))``, computed once per node (nested functions included)."""
        cached = self._walked.get(id(node))
        if cached is None:
            cached = self._walked[id(node)] = astwalk.walk_list(node)
        return cached

    # -- scopes ----------------------------------------------------------------
    def scope(self, fn: ast.AST) -> Scope:
        """The scope of a function (its parent scope is the enclosing function's)."""
        hit = self._scopes.get(id(fn))
        if hit is not None:
            return hit
        # The enclosing functions without a scope yet, built outermost first
        # (a loop, not recursion: lambdas can nest deeply).
        chain = [fn]
        outer = self.enclosing_function(fn)
        while outer is not None and id(outer) not in self._scopes:
            chain.append(outer)
            outer = self.enclosing_function(outer)
        for node in reversed(chain):
            parent_fn = self.enclosing_function(node)
            self._scopes[id(node)] = self._build_scope(node, self._scopes[id(parent_fn)] if parent_fn is not None else None)
        return self._scopes[id(fn)]

    @staticmethod
    def _build_scope(fn: ast.AST, parent: Scope | None) -> Scope:
        scope = Scope(fn, parent=parent)
        args = fn.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            scope.params.add(a.arg)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                scope.params.add(a.arg)
        _ScopeBuilder(scope).build([fn.body] if isinstance(fn, ast.Lambda) else fn.body)
        return scope

    def definitions(self, fn: ast.AST, name: str) -> list[Def]:
        """Definitions of ``name`` that may reach a use of it in ``fn``
        (flow-insensitive: every definition in the owning scope)."""
        return self.scope(fn).definitions(name)

    def reaching(self, name: ast.Name) -> list[Def]:
        """Definitions that may reach this use of a name (empty outside functions)."""
        fn = self.enclosing_function(name)
        return self.definitions(fn, name.id) if fn is not None else []

    def always(self, fn: ast.AST, expr: ast.AST, pred: Callable[[ast.AST], bool]) -> bool:
        """``expr`` satisfies ``pred``, or is a name of ``fn`` every
        definition of which binds a value that does (following names through
        their definitions; a cycle or a definition without a value is "no")."""
        return self._always(fn, expr, pred, set())

    def _always(self, fn: ast.AST, expr: ast.AST, pred, seen: set) -> bool:
        if pred(expr):
            return True
        if not isinstance(expr, ast.Name):
            return False
        scope = self.scope(fn)
        owner = scope.owner(expr.id)
        if owner is None or expr.id in scope.declared_outer or owner.is_param(expr.id):
            return False
        key = (id(owner.fn), expr.id)
        if key in seen:
            return False
        seen.add(key)
        defs = owner.bindings.get(expr.id, [])
        return bool(defs) and all(
            d.kind in VALUE_KINDS and d.value is not None and self._always(owner.fn, d.value, pred, seen) for d in defs
        )

    def derived(self, fn: ast.AST, seed_nodes: set[int], seed_names: Iterable[str] = (), rounds: int | None = None,
                chained: bool = False) -> set[str]:
        """Names of ``fn`` (its whole body, nested functions included) that a
        single-name assignment binds to an expression mentioning a seed node
        (by id) or an already derived name. ``rounds`` bounds the passes over
        the assignments (None: until nothing changes); ``chained`` also
        follows ``a = b = expr`` and ``a, b = expr`` (every plain-name
        target of an assignment whose value mentions a seed)."""
        names = set(seed_names)
        if chained:
            assigns = [n for n in self.subtree(fn) if isinstance(n, ast.Assign)]
        else:
            assigns = [
                n for n in self.subtree(fn)
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            ]
        done = 0
        while rounds is None or done < rounds:
            done += 1
            before = len(names)
            for node in assigns:
                if mentions_any(node.value, seed_nodes, names):
                    names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            if rounds is None and len(names) == before:
                break
        return names

    # -- name uses -------------------------------------------------------------
    def assigned_values(self, name: str, within: ast.AST | None = None) -> list[ast.AST]:
        """The values that ``name = v`` / ``name: T = v`` statements bind to
        the plain name anywhere in ``within`` (the whole module when None,
        nested functions included), in ``ast.walk`` order. Flow- and
        scope-insensitive: the syntactic question "what is this name ever
        set to", answered from an index built once per module."""
        if self._values is None:
            index: dict[str, list[tuple[ast.AST, ast.AST]]] = {}
            for node in self.nodes:
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            index.setdefault(t.id, []).append((node, node.value))
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                    index.setdefault(node.target.id, []).append((node, node.value))
            self._values = index
        found = self._values.get(name, ())
        if within is None or within is self.tree:
            return [value for _, value in found]
        return [value for stmt, value in found if self.is_inside(stmt, within)]

    # -- names a block assigns ------------------------------------------------------
    def assigned(self, node: ast.AST) -> frozenset:
        """Names a statement or function binds anywhere inside (parameters included)."""
        hit = self._assigned.get(id(node))
        if hit is None:
            out: set[str] = set()
            for sub in astwalk.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    out.add(sub.id)
                elif isinstance(sub, ast.arg):
                    out.add(sub.arg)
            hit = self._assigned[id(node)] = frozenset(out)
        return hit

    def loop_assigned(self, loop: ast.AST) -> frozenset:
        """Names a loop rebinds in each iteration: its target(s) and every
        name its body assigns."""
        hit = self._loop_assigned.get(id(loop))
        if hit is None:
            out = set(self.assigned(loop.target)) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
            for stmt in getattr(loop, "body", ()):
                out |= self.assigned(stmt)
            hit = self._loop_assigned[id(loop)] = frozenset(out)
        return hit

    def binding_loop(self, name: ast.Name) -> ast.AST | None:
        """The loop whose target binds the name a use reads: the innermost
        ``for`` statement (or comprehension generator) around the use, in the
        use's own function, that assigns the name as its target. Two loops
        that reuse one iterator name (``for i ...: for i ...:``) are told
        apart: the inner one binds the uses in its body. None when no loop
        target binds it (a parameter, a plain assignment)."""
        child: ast.AST = name
        for anc in self.ancestors(name):
            if isinstance(anc, (ast.For, ast.AsyncFor)) and child is not anc.target and child is not anc.iter \
                    and child not in anc.orelse:
                if name.id in self.assigned(anc.target):
                    return anc
            elif isinstance(anc, COMPREHENSIONS):
                # A generator's target is visible in the element and in later generators.
                for gen in anc.generators:
                    if name.id in self.assigned(gen.target) and child is not gen.iter:
                        return anc
            elif isinstance(anc, FUNCTION_NODES + (ast.ClassDef,)):
                return None
            child = anc
        return None

    def conditions_between(self, node: ast.AST, stop: ast.AST | None) -> Iterator[ast.AST]:
        """The conditional constructs between ``node`` and ``stop`` (or the
        enclosing function): the test of each ``if``/``while``/if-expression
        whose body holds the node, the first operand of a short-circuit
        ``and``/``or``, comprehension filters, and ``try``/``except``
        statements (yielded themselves)."""
        child = node
        parent = self.parent(child)
        while parent is not None and parent is not stop and not isinstance(parent, FUNCTION_NODES):
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
                yield parent.test
            elif isinstance(parent, ast.While) and child is not parent.test:
                yield parent.test
            elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
                yield parent.values[0]
            elif isinstance(parent, (ast.Try, ast.ExceptHandler)):
                yield parent
            elif isinstance(parent, ast.comprehension) and child in parent.ifs:
                yield child
            child, parent = parent, self.parent(parent)

    # -- blocks and evaluation -------------------------------------------------------
    def block_nodes(self, body: list[ast.stmt]) -> Iterator[ast.AST]:
        """Nodes of a block of statements, in source order, not descending
        into nested functions or classes (``own_nodes`` of a block)."""
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, SCOPE_NODES):
                continue
            stack.extend(reversed(astwalk.child_nodes(node)))

    def truth_tested(self, node: ast.BoolOp) -> list[ast.AST]:
        """Operands of ``and``/``or`` whose truth value Python takes: all but
        the last, and the last too when the whole expression is itself tested
        (an ``if``/``while``/``assert`` or if-expression test, an operand of
        another ``and``/``or`` or of ``not``, a comprehension filter)."""
        parent = self.parent(node)
        tested = (
            isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and getattr(parent, "test", None) is node
        ) or isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)) or (
            isinstance(parent, ast.comprehension) and node in parent.ifs)
        return list(node.values) if tested else list(node.values[:-1])

    def loop_dependents(self, loop: ast.For) -> frozenset:
        """The loop's target names and the names its body binds, by any
        binding form (assignment, augmented or annotated assignment, walrus,
        inner loop or comprehension target, ``with ... as``), from an
        expression that mentions one of them (a fixed point; nested
        functions excluded). Computed once per loop."""
        hit = self._loop_dependents.get(id(loop))
        if hit is not None:
            return hit
        deps = {n.id for n in astwalk.walk(loop.target) if isinstance(n, ast.Name)}
        assigns: list[tuple[set[str], ast.AST]] = []
        for node in self.block_nodes(loop.body):
            if isinstance(node, ast.Assign):
                names = {n.id for t in node.targets for n in astwalk.walk(t)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                assigns.append((names, node.value))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) \
                    and node.value is not None:
                assigns.append(({node.target.id}, node.value))
            elif isinstance(node, ast.NamedExpr):
                assigns.append(({node.target.id}, node.value))
            elif isinstance(node, (ast.For, ast.comprehension)):
                assigns.append(({n.id for n in astwalk.walk(node.target) if isinstance(n, ast.Name)}, node.iter))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                assigns.append(({n.id for n in astwalk.walk(node.optional_vars) if isinstance(n, ast.Name)},
                                node.context_expr))
        changed = True
        while changed:
            changed = False
            for names, value in assigns:
                if names - deps and any(isinstance(n, ast.Name) and n.id in deps for n in astwalk.walk(value)):
                    deps |= names
                    changed = True
        hit = self._loop_dependents[id(loop)] = frozenset(deps)
        return hit


    def loop_carried(self, loop: ast.AST) -> frozenset:
        """Names the body of a loop reads before it binds them, in source
        order: values carried from one iteration into the next. A statement
        reads its own expressions before it stores its targets, and
        ``x += y`` reads ``x`` first; nested scopes are not looked into."""
        stored: dict[str, tuple[int, int, int]] = {}
        loaded: dict[str, tuple[int, int, int]] = {}
        for sub in self.block_nodes(list(getattr(loop, "body", ()))):
            if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
                where = (sub.lineno, sub.col_offset, 0)
                if sub.target.id not in loaded or where < loaded[sub.target.id]:
                    loaded[sub.target.id] = where
            if isinstance(sub, ast.stmt):
                for name in _own_names(sub):
                    store = isinstance(name.ctx, ast.Store)
                    where = (sub.lineno, sub.col_offset, 1 if store else 0)
                    table = stored if store else loaded
                    if name.id not in table or where < table[name.id]:
                        table[name.id] = where
        return frozenset(name for name, first_store in stored.items()
                         if name in loaded and loaded[name] < first_store)


def _own_names(stmt: ast.stmt) -> Iterator[ast.Name]:
    """Names in a statement's own expressions (not in nested statements,
    comprehensions or lambdas, which have their own scope)."""
    stack = []
    for _, value in ast.iter_fields(stmt):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.AST) and not isinstance(item, ast.stmt):
                stack.append(item)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
            continue
        if isinstance(node, ast.Name):
            yield node
        for child in astwalk.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                stack.append(child)

def mentions_any(expr: ast.AST, nodes: set[int], names: set[str]) -> bool:
    """``expr`` contains one of the nodes (by id) or mentions one of the names."""
    for n in astwalk.walk(expr):
        if id(n) in nodes:
            return True
        if isinstance(n, ast.Name) and n.id in names:
            return True
    return False


class Scopes(Analysis):
    """Scopes and structure of the checked file and of the project modules
    its kernels reach (a per-file analysis)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        source = model.module.source
        tree = model.module.tree
        if source is not None and getattr(source, "tree", None) is tree:
            # The node list and parent map are the file's, shared with every rule.
            self.file = SyntaxIndex(tree, source.nodes, source.parents)
        else:
            self.file = SyntaxIndex(tree)
        self._others: dict[str, SyntaxIndex | None] = {str(model.module.path): self.file}

    def index_for(self, path: str) -> SyntaxIndex | None:
        """The index of a project module by path (the checked file, or a
        module a helper came from); None when it cannot be read."""
        if path in self._others:
            return self._others[path]
        module = None
        if Path(path) == self.model.module.path:
            module = self.model.module
        else:
            try:
                module = self.model.module.project.module_at(Path(path))
            except Exception:  # an unreadable helper module: no facts, no crash
                module = None
        index = None
        if module is not None:
            index = SyntaxIndex(module.tree, parents=module.source.parents)
        self._others[path] = index
        return index

    # The checked file's questions, for brevity in rules.
    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.file.parent(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        return self.file.ancestors(node)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        return self.file.enclosing_function(node)

    def functions(self) -> list[ast.AST]:
        return self.file.functions()

    def own_nodes(self, fn: ast.AST) -> Iterator[ast.AST]:
        return self.file.own_nodes(fn)

    def of(self, fn: ast.AST) -> Scope:
        return self.file.scope(fn)

    def definitions(self, fn: ast.AST, name: str) -> list[Def]:
        return self.file.definitions(fn, name)

    def reaching(self, name: ast.Name) -> list[Def]:
        return self.file.reaching(name)

    def always(self, fn: ast.AST, expr: ast.AST, pred: Callable[[ast.AST], bool]) -> bool:
        return self.file.always(fn, expr, pred)

    def derived(self, fn: ast.AST, seed_nodes: set[int], seed_names: Iterable[str] = (), rounds: int | None = None,
                chained: bool = False) -> set[str]:
        return self.file.derived(fn, seed_nodes, seed_names, rounds, chained)

    def assigned_values(self, name: str, within: ast.AST | None = None) -> list[ast.AST]:
        return self.file.assigned_values(name, within)


__all__ = [
    "COMPREHENSIONS", "Def", "FUNCTION_NODES", "SCOPE_NODES", "Scope", "Scopes", "SyntaxIndex", "VALUE_KINDS",
    "call_argument", "callee_name", "mentions", "mentions_any", "names_in",
]
