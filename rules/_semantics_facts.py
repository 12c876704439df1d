"""Syntax-level facts the semantics rules (NKI7xx) share.

The kernel graph says what each *expression* produced (an allocation, a
view, a legacy result tile) but not what a *name* holds at a given line, nor
what an ``if`` condition evaluated to. The semantics rules need both (``if
tile:``, a tensor used after the block that defined it), so this module
maps graph nodes back to the ast expressions that produced them and runs a
small per-function name analysis on top:

* a name is a *tensor name* of a function when every binding of it in that
  function is an expression the interpreter saw produce a tensor (or an NKI
  allocation call), and it is not a parameter or declared global/nonlocal;
* a name is an *index name* (legacy ``nl.arange`` / ``nl.mgrid``) when every
  binding derives from such an index expression.

Both are must-analyses: a name with any other binding is neither, so rules
built on them stay silent rather than guess.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.model import query as q
from nkilint.model.semantic import FileModel, Kernel

# Attributes of a tensor that are specialization-time values, not data.
META_ATTRS = {"shape", "dtype", "buffer", "ndim", "size", "name", "strides", "offset", "itemsize"}
# Index objects of legacy nl.mgrid expose their axes as attributes.
MGRID_ATTRS = {"p", "x", "y", "z", "w"}
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# Parameter names of NKI APIs that always take a tensor.
# (Not x / y: binary nl ops take scalars there; not bias: a scalar from gen3.)
TENSOR_PARAMS = {
    "src", "dst", "data", "data0", "data1", "data2", "stationary", "moving", "in_tensor", "on_true_tile",
    "predicate", "indices", "reduce_res", "dst_scale", "srcs", "dsts",
}
# Tensor methods that return a view of the same data.
VIEW_METHODS = {"reshape", "view", "ap", "bitcast", "reinterpret_cast", "broadcast_to", "permute", "slice", "select",
                "expand_dim", "squeeze_dim", "reshape_dim", "flatten_dims", "rearrange", "broadcast", "with_dtype"}


@dataclass
class Binding:
    """One place a name is bound in a function's own scope."""

    kind: str  # assign, annassign, augassign, for, with, unpack, import, def, namedexpr, except, other
    node: ast.AST  # the statement (or expression) that binds
    value: ast.AST | None = None  # the bound expression for simple `name = value`


@dataclass
class Scope:
    """Names bound and read in one function (nested scopes excluded)."""

    fn: ast.AST
    params: set[str] = field(default_factory=set)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    loads: dict[str, list[ast.Name]] = field(default_factory=dict)
    declared_outer: set[str] = field(default_factory=set)  # global / nonlocal
    parent: "Scope | None" = None

    def bind(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)

    def owner(self, name: str) -> "Scope | None":
        """The scope a free name resolves to (Python's closure rule)."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.bindings or name in scope.params:
                return scope
            scope = scope.parent
        return None


class _ScopeBuilder(ast.NodeVisitor):
    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    # nested scopes: their bodies belong to them, defaults/decorators to us
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scope.bind(node.name, Binding("def", node))
        for d in node.decorator_list:
            self.visit(d)
        for d in node.args.defaults + [x for x in node.args.kw_defaults if x is not None]:
            self.visit(d)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.bind(node.name, Binding("def", node))
        for b in node.bases:
            self.visit(b)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        for d in node.args.defaults:
            self.visit(d)

    def _comprehension(self, node) -> None:
        # Targets are local to the comprehension; everything else reads our scope.
        local: set[str] = set()
        for gen in node.generators:
            for t in ast.walk(gen.target):
                if isinstance(t, ast.Name):
                    local.add(t.id)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in local:
                self.scope.loads.setdefault(sub.id, []).append(sub)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Global(self, node: ast.Global) -> None:
        self.scope.declared_outer.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.scope.loads.setdefault(node.id, []).append(node)

    def _targets(self, target: ast.AST, stmt: ast.AST, value: ast.AST | None, kind: str) -> None:
        if isinstance(target, ast.Name):
            self.scope.bind(target.id, Binding(kind, stmt, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                sub = values[i] if values is not None and not isinstance(elt, ast.Starred) else None
                self._targets(elt.value if isinstance(elt, ast.Starred) else elt, stmt, sub,
                              kind if sub is not None else "unpack")
        elif isinstance(target, ast.Starred):
            self._targets(target.value, stmt, None, "unpack")
        else:
            self.visit(target)  # t[...] = / obj.attr = : reads of t / obj

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self._targets(t, node, node.value, "assign")

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._targets(node.target, node, node.value, "annassign")
        self.visit(node.annotation)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            # x += y reads x too.
            self.scope.loads.setdefault(node.target.id, []).append(ast.Name(node.target.id, ast.Load(), lineno=node.lineno,
                                                                              col_offset=node.col_offset))
            self.scope.bind(node.target.id, Binding("augassign", node, node.value))
        else:
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self.scope.bind(node.target.id, Binding("namedexpr", node, node.value))

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self._targets(node.target, node, None, "for")
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._targets(item.optional_vars, node, None, "with")
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.scope.bind((alias.asname or alias.name).split(".")[0], Binding("import", node))

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.scope.bind(node.name, Binding("except", node))
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name):
                self.scope.bind(t.id, Binding("other", node))
            else:
                self.visit(t)


class FileFacts:
    """Per-file facts shared by the semantics rules (computed once per file)."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.model: FileModel = ctx.model
        self.tree: ast.Module = self.model.module.tree
        self.bindings = self.model.bindings
        if ctx.source is not None and ctx.source.tree is self.tree:
            # Shared with every other rule of the file.
            self._all_nodes = ctx.source.nodes
            self.parents: dict[int, ast.AST] = ctx.source.parents
        else:
            self._all_nodes = list(ast.walk(self.tree))
            self.parents = {}
            for node in self._all_nodes:
                for child in ast.iter_child_nodes(node):
                    self.parents[id(child)] = node
        # ast expression (in this file) -> graph nodes it produced
        self.produced: dict[int, list[q.NodeRef]] = {}
        self.param_tensors: dict[int, list[q.NodeRef]] = {}  # ast.arg -> param tensor nodes
        for kernel in self.model.kernels:
            graph = kernel.graph
            for node_id, data in graph.g.nodes(data=True):
                kind = data.get("kind")
                if kind not in ("tensor", "view"):
                    continue
                site = data.get("site")
                if site is None or not self.model.in_this_file(site):
                    continue
                ref = q.NodeRef(kernel, graph, node_id)
                if kind == "tensor" and data.get("origin") == "param":
                    self.param_tensors.setdefault(id(site.node), []).append(ref)
                    continue
                expr = data.get("call") if kind == "tensor" else site.node
                if expr is None:
                    expr = site.node
                self.produced.setdefault(id(expr), []).append(ref)
        self._scopes: dict[int, Scope] = {}
        self._own: dict[int, list[ast.AST]] = {}
        self._functions: list[ast.AST] | None = None
        self._tensor_names: dict[tuple[int, str], bool] = {}
        self._index_names: dict[tuple[int, str], bool] = {}
        self._roots = {id(k.node): k for k in self.model.kernels if k.kind == "root"}

    # -- structure ---------------------------------------------------------
    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        cur = self.parent(node)
        while cur is not None:
            yield cur
            cur = self.parent(cur)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        for anc in self.ancestors(node):
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return anc
        return None

    def functions(self) -> list[ast.AST]:
        """Every function definition in the file, outermost first."""
        if self._functions is None:
            self._functions = [n for n in self._all_nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return self._functions

    def device_functions(self) -> list[ast.AST]:
        """Functions of this file that are kernels or were reached from one."""
        return [f for f in self.functions() if self.model.is_device_function(f)]

    def root_kernel(self, fn: ast.AST) -> Kernel | None:
        return self._roots.get(id(fn))

    def own_nodes(self, fn: ast.AST) -> Iterator[ast.AST]:
        """Nodes of a function body, not descending into nested functions/classes
        (computed once per function)."""
        cached = self._own.get(id(fn))
        if cached is None:
            cached = []
            stack = list(reversed(fn.body)) if not isinstance(fn, ast.Lambda) else [fn.body]
            while stack:
                node = stack.pop()
                cached.append(node)
                if isinstance(node, SCOPE_NODES):
                    continue
                stack.extend(reversed(list(ast.iter_child_nodes(node))))
            self._own[id(fn)] = cached
        return iter(cached)

    # -- scopes --------------------------------------------------------------
    def scope(self, fn: ast.AST) -> Scope:
        key = id(fn)
        if key in self._scopes:
            return self._scopes[key]
        parent_fn = self.enclosing_function(fn)
        scope = Scope(fn, parent=self.scope(parent_fn) if parent_fn is not None else None)
        args = fn.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            scope.params.add(a.arg)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                scope.params.add(a.arg)
        builder = _ScopeBuilder(scope)
        if isinstance(fn, ast.Lambda):
            builder.visit(fn.body)
        else:
            for stmt in fn.body:
                builder.visit(stmt)
        self._scopes[key] = scope
        return scope

    # -- tensors ---------------------------------------------------------------
    def produced_by(self, expr: ast.AST) -> list[q.NodeRef]:
        return self.produced.get(id(expr), [])

    def is_alloc_call(self, expr: ast.AST) -> bool:
        if not isinstance(expr, ast.Call):
            return False
        qual = self.bindings.resolve_nki(expr.func)
        if qual is None:
            return False
        module, _, short = qual.name.rpartition(".")
        from nkilint.model.api_semantics import ALLOCATIONS

        return module == "nki.language" and short in ALLOCATIONS

    def is_tensor_expr(self, fn: ast.AST, expr: ast.AST | None) -> bool:
        """The expression always produces tensor data."""
        return expr is not None and self.tensor_value(fn, expr) == "tensor"

    def _trusted_call(self, expr: ast.Call) -> bool:
        """An NKI call the interpreter saw return a tile (legacy results,
        0.3+ nl.* convenience ops), or an allocation."""
        if self.is_alloc_call(expr):
            return True
        qual = self.bindings.resolve_nki(expr.func)
        if qual is None or not qual.name.startswith(("nki.language.", "nki.isa.")):
            return False
        return any(ref.data.get("kind") == "tensor" and ref.data.get("origin") in ("alloc", "result")
                   for ref in self.produced_by(expr))

    def is_tensor_name(self, fn: ast.AST, name: str) -> bool:
        """Every binding of ``name`` visible in ``fn`` produces a tensor."""
        scope = self.scope(fn)
        if name in scope.declared_outer:
            return False
        owner = scope.owner(name)
        if owner is None or name in owner.params:
            return False
        key = (id(owner.fn), name)
        if key in self._tensor_names:
            return self._tensor_names[key]
        self._tensor_names[key] = False  # mutual recursion: not proven
        binds = owner.bindings.get(name, [])
        grounded = False
        ok = bool(binds)
        for b in binds:
            if b.kind == "augassign":
                continue  # `t += x` updates a tensor in place (or rebinds it to a tensor)
            if b.kind not in ("assign", "annassign", "namedexpr") or b.value is None:
                ok = False
                break
            if _mentions(b.value, name):
                # x = x + y: a tensor if x is (assumed while deciding x).
                self._tensor_names[key] = True
                kind = self.tensor_value(owner.fn, b.value)
                self._tensor_names[key] = False
                if kind != "tensor":
                    ok = False
                    break
            elif self.tensor_value(owner.fn, b.value) == "tensor":
                grounded = True
            else:
                ok = False
                break
        self._tensor_names[key] = ok and grounded
        return ok and grounded

    def tensor_param(self, fn: ast.AST, name: str) -> list[q.NodeRef]:
        """Parameter tensor nodes of a root kernel's parameter ``name``."""
        scope = self.scope(fn)
        owner = scope.owner(name)
        if owner is None or name not in owner.params or owner.bindings.get(name):
            return []
        args = owner.fn.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.arg == name:
                return self.param_tensors.get(id(a), [])
        return []

    def tensor_args(self, call: ast.Call, api: str) -> list[ast.AST]:
        """Arguments of an NKI call passed to its tensor parameters."""
        from nkilint.model.apitable import api_for, legacy_api

        table = legacy_api() if self.model.legacy else api_for(self.model.version)
        sig = table.signature(api) or legacy_api().signature(api)
        positional = [p.name for p in sig.positional] if sig is not None and sig.params is not None else []
        out = []
        for i, arg in enumerate(call.args):
            if i < len(positional) and positional[i] in TENSOR_PARAMS:
                out.append(arg)
        out.extend(k.value for k in call.keywords if k.arg in TENSOR_PARAMS)
        return out

    def param_used_as_tensor(self, fn: ast.AST, name: str) -> bool:
        """A parameter (never rebound) that the function passes to an NKI
        API, directly or sliced. The model does not materialize parameters
        with a ``None`` default, and materializes a parameter passed to any
        NKI argument (even ``program_axes=``), so this is decided on the
        syntax: the parameter is passed where an API always takes a tensor."""
        scope = self.scope(fn)
        owner = scope.owner(name)
        if owner is None or name not in owner.params or owner.bindings.get(name):
            return False
        key = (id(owner.fn), "param:" + name)
        if key in self._tensor_names:
            return self._tensor_names[key]
        used = False
        for node in ast.walk(owner.fn):
            if not isinstance(node, ast.Call):
                continue
            qual = self.bindings.resolve_nki(node.func)
            if qual is None or not qual.name.startswith(("nki.language.", "nki.isa.")):
                continue
            for arg in self.tensor_args(node, qual.name):
                base = arg
                while isinstance(base, ast.Subscript):
                    base = base.value
                if isinstance(base, ast.Name) and base.id == name:
                    used = True
                    break
            if used:
                break
        self._tensor_names[key] = used
        return used

    def tensor_value(self, fn: ast.AST, expr: ast.AST) -> str | None:
        """Whether an expression evaluates to tensor data: 'tensor' (always),
        'param' (a kernel parameter used as a tensor elsewhere: a tensor
        whenever the caller passes one), or None (not known to be data).

        Decided on the syntax plus the calls the interpreter saw return a
        tile; the interpreter's own guesses for operators and subscripts of
        unknown objects (which it may treat as tensors) are not trusted."""
        if isinstance(expr, ast.Name):
            if self.is_tensor_name(fn, expr.id):
                return "tensor"
            if self.param_used_as_tensor(fn, expr.id):
                return "param"
            return None
        if isinstance(expr, ast.Call):
            if _callee_name(expr) == "scalar":
                return None  # scalar(tile): a runtime scalar (legacy do-while conditions), not a tensor
            if self._trusted_call(expr):
                return "tensor"
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in VIEW_METHODS:
                return self.tensor_value(fn, func.value)
            return None
        if isinstance(expr, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in expr.ops):
                return None
            operands = [expr.left, *expr.comparators]
            if any(isinstance(o, ast.Constant) and o.value is None for o in operands):
                return None  # `x == None` is the 0.3+ spelling of a None check
            return _strongest(self.tensor_value(fn, o) for o in operands)
        if isinstance(expr, ast.BinOp):
            return _strongest((self.tensor_value(fn, expr.left), self.tensor_value(fn, expr.right)))
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return self.tensor_value(fn, expr.operand)
        if isinstance(expr, ast.Subscript):
            return self.tensor_value(fn, expr.value)
        return None

    def tensor_refs(self, fn: ast.AST, expr: ast.AST) -> list[q.NodeRef]:
        """Graph nodes behind a tensor expression (for shapes in messages)."""
        refs = self.produced_by(expr)
        if refs:
            return refs
        if isinstance(expr, ast.Name):
            owner = self.scope(fn).owner(expr.id)
            if owner is not None:
                out: list[q.NodeRef] = []
                for b in owner.bindings.get(expr.id, []):
                    if b.value is not None:
                        out.extend(self.produced_by(b.value))
                if out:
                    return out
            return self.tensor_param(fn, expr.id)
        return []

    # -- legacy index expressions (nl.arange / nl.mgrid) -------------------------
    def is_index_source(self, expr: ast.AST) -> bool:
        """``nl.arange(...)`` or ``nl.mgrid[...]`` (possibly subscripted)."""
        if isinstance(expr, ast.Call):
            qual = self.bindings.resolve_nki(expr.func)
            return qual is not None and qual.name == "nki.language.arange"
        if isinstance(expr, ast.Subscript):
            qual = self.bindings.resolve_nki(expr.value)
            if qual is not None and qual.name == "nki.language.mgrid":
                return True
            return self.is_index_source(expr.value)
        return False

    def index_value(self, fn: ast.AST, expr: ast.AST) -> bool:
        """The expression's value depends on an arange/mgrid index (not
        through a call or a specialization-time attribute)."""
        if self.is_index_source(expr):
            return True
        if isinstance(expr, ast.Name):
            return self.is_index_name(fn, expr.id)
        if isinstance(expr, ast.Attribute):
            return expr.attr in MGRID_ATTRS and self.index_value(fn, expr.value)
        if isinstance(expr, ast.BinOp):
            return self.index_value(fn, expr.left) or self.index_value(fn, expr.right)
        if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
            return self.index_value(fn, expr.operand)
        if isinstance(expr, ast.Compare):
            return any(self.index_value(fn, o) for o in [expr.left, *expr.comparators])
        if isinstance(expr, ast.Subscript):
            # ix[:, None] keeps an index; x[ix] is a tensor access, not an index
            return self.is_index_source(expr) or (
                self.index_value(fn, expr.value) and not self.tensor_value(fn, expr.value)
            )
        return False

    def is_index_name(self, fn: ast.AST, name: str) -> bool:
        scope = self.scope(fn)
        owner = scope.owner(name)
        if owner is None or name in owner.params or name in scope.declared_outer:
            return False
        key = (id(owner.fn), name)
        if key in self._index_names:
            return self._index_names[key]
        self._index_names[key] = False  # cycles (i = i + ...) resolve to "not proven"
        binds = owner.bindings.get(name, [])
        ok = bool(binds)
        for b in binds:
            if b.kind in ("assign", "annassign", "namedexpr", "augassign") and b.value is not None:
                if b.kind == "augassign":
                    continue
                if not self.index_value(owner.fn, b.value):
                    ok = False
            elif b.kind == "unpack" and isinstance(b.node, ast.Assign) and self.is_index_source(b.node.value):
                continue  # i_p, i_f = nl.mgrid[...]
            else:
                ok = False
        self._index_names[key] = ok
        return ok

    def index_origin(self, fn: ast.AST, name: str) -> str | None:
        """'mgrid' / 'arange' for an index name, following its bindings."""
        if not self.is_index_name(fn, name):
            return None
        owner = self.scope(fn).owner(name)
        origins = set()
        for b in owner.bindings.get(name, []):
            value = b.value if b.value is not None else (b.node.value if isinstance(b.node, ast.Assign) else None)
            if value is None:
                continue
            for sub in ast.walk(value):
                if isinstance(sub, ast.Subscript):
                    qual = self.bindings.resolve_nki(sub.value)
                    if qual is not None and qual.name == "nki.language.mgrid":
                        origins.add("mgrid")
                elif isinstance(sub, ast.Call):
                    qual = self.bindings.resolve_nki(sub.func)
                    if qual is not None and qual.name == "nki.language.arange":
                        origins.add("arange")
                elif isinstance(sub, ast.Name) and sub.id != name:
                    inner = self.index_origin(owner.fn, sub.id) if self.is_index_name(owner.fn, sub.id) else None
                    if inner:
                        origins.add(inner)
        if origins == {"mgrid"}:
            return "mgrid"
        if origins == {"arange"}:
            return "arange"
        return None

    # -- loops -------------------------------------------------------------------
    def loop_kind(self, node: ast.For) -> str | None:
        """range / affine_range / sequential_range / static_range / dynamic_range
        / tile_range of a for loop's iterator, or None."""
        it = node.iter
        if isinstance(it, ast.Call):
            if isinstance(it.func, ast.Name) and it.func.id == "range" and "range" not in self.bindings.names:
                return "range"
            qual = self.bindings.resolve_nki(it.func)
            if qual is not None:
                short = qual.name.rpartition(".")[2]
                if qual.name.startswith("nki.language.") and short in (
                    "affine_range", "sequential_range", "static_range", "dynamic_range", "tile_range",
                ):
                    return short
        return None

    def span_text(self, node: ast.AST) -> str:
        try:
            text = ast.unparse(node)
        except Exception:  # pragma: no cover
            return "?"
        return text if len(text) <= 60 else text[:57] + "..."


def _callee_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _mentions(expr: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(expr))


def _strongest(kinds) -> str | None:
    kinds = [k for k in kinds if k]
    if "tensor" in kinds:
        return "tensor"
    return kinds[0] if kinds else None


_CACHE: dict[int, tuple[FileModel, FileFacts]] = {}


def facts(ctx: RuleContext) -> FileFacts:
    """The facts of the file a rule is checking (shared by all NKI7xx rules)."""
    model = ctx.model
    hit = _CACHE.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    if len(_CACHE) > 4:
        _CACHE.clear()
    out = FileFacts(ctx)
    _CACHE[id(model)] = (model, out)
    return out

