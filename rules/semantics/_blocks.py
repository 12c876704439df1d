"""Block scoping of legacy NKI tensors (NKI709, NKI710), and which loops
the legacy frontend keeps as loops (also NKI714).

The legacy frontend gives every ``if`` / ``else`` / ``for`` block that it
keeps as control flow its own scope for tensors (aws-neuron-sdk
nki/api/nki.errors.rst @1db4d74e, err_local_variable_used_out_of_scope): a
tensor bound inside a block may not be read after it, and rebinding an
outer tensor inside a block creates a new, block-local object (the frontend
warns "shadowing local tensor ... use 'x[...] =' if you want to update the
existing object").

Blocks are the bodies of loops over symbolic iterators (``range``,
``affine_range``, ``sequential_range``) and of ``if`` statements whose
condition depends on such a loop's variable (``Scopes``'
``loop_dependents``); an ``if`` on specialization-time values is resolved
while tracing and opens no scope (the SDK's own reference kernels bind
tensors under ``if use_dma_transpose ...`` and use them after).

This is the frontend's rule, not Python's, so it stays here as family
knowledge: a forward pass over one function in which each binding
remembers the block it was made in, and a read is out of scope when a
tensor binding that reaches it was made in a block that does not enclose
the read. What a binding holds (a new tensor or not) and what a loop is
are the model's facts (``ExprFacts``, ``Scopes``); ``LegacyBlockScopes``
runs the pass once per file for both rules.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from nkilint import astwalk
from nkilint.model.analysis import Analysis
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import VIEW_METHODS, ExprFacts, Holds
from nkilint.model.scopes import COMPREHENSIONS, SCOPE_NODES, Scopes

if TYPE_CHECKING:  # pragma: no cover
    from nkilint.model.semantic import FileModel

# Loops the legacy frontend keeps as loops (range is lowered to
# sequential_range); Python sequences and static_range are unrolled while
# tracing.
SYMBOLIC_LOOPS = ("range", "affine_range", "sequential_range")


def symbolic_loop(exprs: ExprFacts, loop: ast.For) -> bool:
    """A for loop the legacy frontend keeps as a loop (over symbolic indices)."""
    return exprs.loop_kind(loop) in SYMBOLIC_LOOPS


def symbolic_loop_vars(scopes: Scopes, exprs: ExprFacts, fn: ast.AST) -> set[str]:
    """Targets of the symbolic loops of a function and of the functions
    around it (closures see their loop variables)."""
    out: set[str] = set()
    scope = scopes.of(fn)
    while scope is not None:
        for node in scopes.own_nodes(scope.fn):
            if isinstance(node, ast.For) and symbolic_loop(exprs, node):
                out |= {n.id for n in astwalk.walk(node.target) if isinstance(n, ast.Name)}
        scope = scope.parent
    return out


class LegacyBlockScopes(Analysis):
    """The block-scoping report of each legacy device function of the file
    (a per-file analysis shared by NKI709 and NKI710)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        scopes, exprs = model.analysis(Scopes), model.analysis(ExprFacts)
        self.reports: list[tuple[ast.AST, ScopeReport]] = []
        for fn in model.analysis(DeviceCode).functions:
            report = BlockScopes(
                fn,
                lambda value, fn=fn: _new_tensor(exprs, fn, value),
                lambda loop: symbolic_loop(exprs, loop),
                scopes.file.loop_dependents,
            ).run()
            self.reports.append((fn, report))


def _new_tensor(exprs: ExprFacts, fn: ast.AST, value: ast.AST) -> bool:
    """Only a *new* tensor is block-local: an alias (`a = b`) or a view
    (`a = b[i]`, `b.reshape(...)`) of an outer tensor is not (the SDK's conv
    kernel rebinds `img = img_raw` inside a loop)."""
    if not isinstance(value, (ast.Call, ast.BinOp, ast.UnaryOp)):
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS:
        return False
    return exprs.holds(fn, value) is Holds.TENSOR


@dataclass(frozen=True)
class BlockBinding:
    block: int  # id of the block the binding was made in
    node: ast.AST  # the binding target (ast.Name)
    tensor: bool
    block_kind: str  # if / else / for / function
    block_line: int


@dataclass
class OutOfScope:
    load: ast.Name
    binding: BlockBinding


@dataclass
class Shadow:
    target: ast.Name
    outer: BlockBinding


@dataclass
class ScopeReport:
    out_of_scope: list[OutOfScope] = field(default_factory=list)
    shadows: list[Shadow] = field(default_factory=list)


State = dict[str, frozenset[BlockBinding]]


class BlockScopes:
    """Runs the pass over a function. ``is_tensor(value)`` decides whether a
    bound expression is a tensor."""

    def __init__(self, fn: ast.AST, is_tensor: Callable[[ast.AST], bool],
                 scoped_loop: Callable[[ast.For], bool] = lambda loop: True,
                 loop_names: Callable[[ast.For], set[str]] = lambda loop: set()) -> None:
        self.fn = fn
        self.is_tensor = is_tensor
        self.scoped_loop = scoped_loop
        self.loop_names = loop_names
        # Names that vary with the enclosing symbolic loops (their targets and what derives from them).
        self._symbolic: list[set[str]] = []
        self.report = ScopeReport()
        self._seen_loads: set[int] = set()
        self._seen_shadows: set[int] = set()

    def run(self) -> ScopeReport:
        root = (id(self.fn), "function", self.fn.lineno)
        self._block(self.fn.body, [root], {})
        return self.report

    # -- blocks -----------------------------------------------------------------
    def _block(self, body: list[ast.stmt], stack: list[tuple], state: State) -> State:
        for stmt in body:
            state = self._stmt(stmt, stack, state)
        return state

    def _nested(self, body: list[ast.stmt], stack: list[tuple], state: State, kind: str, line: int, key: object) -> State:
        block = (id(key), kind, line)
        return self._block(body, stack + [block], dict(state))

    def _stmt(self, stmt: ast.stmt, stack: list[tuple], state: State) -> State:
        if isinstance(stmt, ast.If) and not self._symbolic_test(stmt.test):
            # A condition on specialization-time values (flags, shapes, nc_version) is resolved while
            # tracing: both branches stay in the enclosing block.
            self._loads(stmt.test, stack, state)
            after_body = self._block(stmt.body, stack, dict(state))
            after_else = self._block(stmt.orelse, stack, dict(state)) if stmt.orelse else state
            return _merge(after_body, after_else)
        if isinstance(stmt, ast.If):
            self._loads(stmt.test, stack, state)
            after_body = self._nested(stmt.body, stack, state, "if", stmt.lineno, stmt.body)
            if stmt.orelse:
                line = stmt.orelse[0].lineno
                after_else = self._nested(stmt.orelse, stack, state, "else", line, stmt.orelse)
            else:
                after_else = state
            return _merge(after_body, after_else)
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and not self.scoped_loop(stmt):
            # A Python loop unrolled while tracing (a tuple, static_range): no block of its own.
            self._loads(stmt.iter, stack, state)
            state = self._bind_target(stmt.target, None, stack[-1], state, stack)
            state = _merge(state, self._block(stmt.body, stack, dict(state)))
            return self._block(stmt.orelse, stack, state)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._loads(stmt.iter, stack, state)
            block = (id(stmt.body), "for", stmt.lineno)
            inner = dict(state)
            inner = self._bind_target(stmt.target, None, block, inner, stack + [block])
            self._symbolic.append(self.loop_names(stmt))
            try:
                after = self._block(stmt.body, stack + [block], inner)
            finally:
                self._symbolic.pop()
            out = _merge(state, after)
            if stmt.orelse:
                out = _merge(out, self._nested(stmt.orelse, stack, out, "else", stmt.orelse[0].lineno, stmt.orelse))
            return out
        if isinstance(stmt, ast.While):
            # The catalogue names if/else/for blocks only (its own do-while example rebinds an outer
            # tensor inside the loop), so a while body is not treated as a scope.
            self._loads(stmt.test, stack, state)
            state = _merge(state, self._block(stmt.body, stack, dict(state)))
            return self._block(stmt.orelse, stack, state)
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self._loads(item.context_expr, stack, state)
                if item.optional_vars is not None:
                    state = self._bind_target(item.optional_vars, None, stack[-1], state, stack)
            return self._block(stmt.body, stack, state)
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            out = self._block(stmt.body, stack, state)
            merged = out
            for handler in stmt.handlers:
                merged = _merge(merged, self._block(handler.body, stack, dict(state)))
            merged = self._block(stmt.orelse, stack, merged)
            return self._block(stmt.finalbody, stack, merged)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in stmt.decorator_list:
                self._loads(d, stack, state)
            state = dict(state)
            state[stmt.name] = frozenset({BlockBinding(stack[-1][0], stmt, False, stack[-1][1], stack[-1][2])})
            return state
        if isinstance(stmt, ast.Assign):
            self._loads(stmt.value, stack, state)
            for t in stmt.targets:
                self._target_loads(t, stack, state)
            for t in stmt.targets:
                state = self._bind_target(t, stmt.value, stack[-1], state, stack)
            return state
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._loads(stmt.value, stack, state)
                self._target_loads(stmt.target, stack, state)
                state = self._bind_target(stmt.target, stmt.value, stack[-1], state, stack)
            return state
        if isinstance(stmt, ast.AugAssign):
            # `t += x` reads t and updates it in place: not a new binding.
            self._loads(stmt.value, stack, state)
            if isinstance(stmt.target, ast.Name):
                self._check_load(stmt.target, stack, state)
            else:
                self._target_loads(stmt.target, stack, state)
            return state
        self._loads(stmt, stack, state)
        return state

    def _symbolic_test(self, test: ast.AST) -> bool:
        names = {n.id for n in astwalk.walk(test) if isinstance(n, ast.Name)}
        return any(names & active for active in self._symbolic)

    # -- reads and bindings --------------------------------------------------------
    def _loads(self, node: ast.AST, stack: list[tuple], state: State) -> None:
        local: set[str] = set()
        todo = [node]
        while todo:
            cur = todo.pop()
            if isinstance(cur, SCOPE_NODES) and cur is not node:
                continue
            if isinstance(cur, COMPREHENSIONS):
                for gen in cur.generators:
                    local.update(n.id for n in astwalk.walk(gen.target) if isinstance(n, ast.Name))
            if isinstance(cur, ast.Name) and isinstance(cur.ctx, ast.Load) and cur.id not in local:
                self._check_load(cur, stack, state)
            todo.extend(astwalk.child_nodes(cur))

    def _target_loads(self, target: ast.AST, stack: list[tuple], state: State) -> None:
        """Reads inside an assignment target (t in `t[i] = ...`, i too)."""
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self._loads(target, stack, state)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._target_loads(elt, stack, state)
        elif isinstance(target, ast.Starred):
            self._target_loads(target.value, stack, state)

    def _check_load(self, load: ast.Name, stack: list[tuple], state: State) -> None:
        if id(load) in self._seen_loads:
            return
        open_blocks = {b[0] for b in stack}
        for d in sorted(state.get(load.id, ()), key=lambda d: getattr(d.node, "lineno", 0)):
            if d.tensor and d.block not in open_blocks:
                self._seen_loads.add(id(load))
                self.report.out_of_scope.append(OutOfScope(load, d))
                return

    def _bind_target(self, target: ast.AST, value: ast.AST | None, block: tuple, state: State, stack: list[tuple]) -> State:
        state = dict(state)
        if isinstance(target, ast.Name):
            tensor = value is not None and self.is_tensor(value)
            if tensor and len(stack) > 1 and id(target) not in self._seen_shadows:
                outer = [d for d in state.get(target.id, ()) if d.tensor and d.block != block[0]
                         and d.block in {b[0] for b in stack}]
                if outer:
                    self._seen_shadows.add(id(target))
                    self.report.shadows.append(Shadow(target, outer[0]))
            state[target.id] = frozenset({BlockBinding(block[0], target, tensor, block[1], block[2])})
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                sub = values[i] if values is not None else None
                state = self._bind_target(elt.value if isinstance(elt, ast.Starred) else elt, sub, block, state, stack)
        elif isinstance(target, ast.Starred):
            state = self._bind_target(target.value, None, block, state, stack)
        return state


def _merge(a: State, b: State) -> State:
    out = dict(a)
    for name, defs in b.items():
        out[name] = out.get(name, frozenset()) | defs
    return out
