"""Expression facts: what an expression of device code holds.

The kernel graph says what each *expression* produced (an allocation, a
view, a legacy result tile), not what a *name* holds at a given line. This
analysis maps graph nodes back to the ast expressions that produced them
and combines that with the def-use chains of ``scopes``:

* ``holds(fn, expr)``: ``Holds.TENSOR`` when the expression always
  evaluates to tensor data, ``Holds.PARAM`` when it is a kernel parameter
  used as a tensor elsewhere (a tensor whenever the caller passes one), or
  None (not known to be data);
* a name is a *tensor name* of a function when every definition of it is an
  expression that holds a tensor;
* ``is_index(fn, expr)``: the value depends on a legacy ``nl.arange`` /
  ``nl.mgrid`` index expression, with ``index_origin`` saying which.

All are must-analyses: a name with any other kind of definition is neither,
so rules built on them stay silent rather than guess. Decided on the
syntax plus the calls the interpreter saw return a tile (NKI calls, and
project helpers whose every inlined run returned one); the interpreter's
own guesses for operators and subscripts of unknown objects (which it may
treat as tensors) are not trusted.
"""

from __future__ import annotations

import ast
from enum import Enum
from typing import TYPE_CHECKING

from .. import astwalk
from . import query as q
from .analysis import Analysis
from .api_semantics import ALLOCATIONS
from .scopes import Scope, Scopes, callee_name, mentions
from .trampoline import Step, run

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel, Kernel

# Attributes of a tensor that are specialization-time values, not data.
META_ATTRS = {"shape", "dtype", "buffer", "ndim", "size", "name", "strides", "offset", "itemsize"}
# Index objects of legacy nl.mgrid expose their axes as attributes.
MGRID_ATTRS = {"p", "x", "y", "z", "w"}
# Parameter names of NKI APIs that always take a tensor (for deciding, on the
# syntax, that a kernel parameter passed there is used as a tensor).
# (Not x / y: binary nl ops take scalars there; not bias: a scalar from gen3.)
TENSOR_ARGUMENT_PARAMS = {
    "src", "dst", "data", "data0", "data1", "data2", "stationary", "moving", "in_tensor", "on_true_tile",
    "predicate", "indices", "reduce_res", "dst_scale", "srcs", "dsts",
}
# Tensor methods that return a view of the same data.
VIEW_METHODS = {"reshape", "view", "ap", "bitcast", "reinterpret_cast", "broadcast_to", "permute", "slice", "select",
                "expand_dim", "squeeze_dim", "reshape_dim", "flatten_dims", "rearrange", "broadcast", "with_dtype"}
LOOP_ITERATORS = ("affine_range", "sequential_range", "static_range", "dynamic_range", "tile_range")
# Tensor attributes whose value is not data, as far as ``reads_tensor`` goes.
_DATA_FREE_ATTRS = ("shape", "dtype", "buffer", "ndim", "size")


class Holds(str, Enum):
    """What an expression holds (see ``ExprFacts.holds``)."""

    TENSOR = "tensor"
    PARAM = "param"


class ExprFacts(Analysis):
    """Expression facts of the checked file (a per-file analysis)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        self.bindings = model.bindings
        self.scopes: Scopes = model.analysis(Scopes)
        # ast expression (in this file) -> graph nodes it produced
        self.produced: dict[int, list[q.NodeRef]] = {}
        self.param_tensors: dict[int, list[q.NodeRef]] = {}  # ast.arg -> param tensor nodes
        for kernel in model.kernels:
            graph = kernel.graph
            for node_id, data in graph.g.nodes(data=True):
                kind = data.get("kind")
                if kind not in ("tensor", "view"):
                    continue
                site = data.get("site")
                if site is None or not model.in_this_file(site):
                    continue
                ref = q.NodeRef(kernel, graph, node_id)
                if kind == "tensor" and data.get("origin") == "param":
                    self.param_tensors.setdefault(id(site.node), []).append(ref)
                    continue
                expr = data.get("call") if kind == "tensor" else site.node
                if expr is None:
                    expr = site.node
                self.produced.setdefault(id(expr), []).append(ref)
        # id(ast.Call) of a project-helper call -> what its inlined runs returned,
        # over every kernel graph (see helper_return)
        self._helper_returns: dict[int, set[str]] = {}
        for kernel in model.kernels:
            for call_id, kinds in kernel.graph.helper_returns.items():
                self._helper_returns.setdefault(call_id, set()).update(kinds)
        self._tensor_names: dict[tuple[int, str], bool] = {}
        self._index_names: dict[tuple[int, str], bool] = {}
        self._roots = {id(k.node): k for k in model.kernels if k.kind == "root"}

    # -- structure shortcuts --------------------------------------------------------
    def scope(self, fn: ast.AST) -> Scope:
        return self.scopes.of(fn)

    def root_kernel(self, fn: ast.AST) -> "Kernel | None":
        """The root kernel whose function is ``fn`` (None for helpers)."""
        return self._roots.get(id(fn))

    # -- graph nodes of expressions ---------------------------------------------------
    def refs(self, expr: ast.AST) -> list[q.NodeRef]:
        """Graph nodes (tensors, views) the expression produced when interpreted."""
        return self.produced.get(id(expr), [])

    def is_alloc_call(self, expr: ast.AST) -> bool:
        """A call of an ``nki.language`` allocation (``nl.ndarray``, ``nl.zeros``, ...)."""
        if not isinstance(expr, ast.Call):
            return False
        qual = self.bindings.resolve_nki(expr.func)
        if qual is None:
            return False
        module, _, short = qual.name.rpartition(".")
        return module == "nki.language" and short in ALLOCATIONS

    def trusted_call(self, expr: ast.Call) -> bool:
        """An NKI call the interpreter saw return a tile (legacy results,
        0.3+ nl.* convenience ops), or an allocation."""
        if self.is_alloc_call(expr):
            return True
        qual = self.bindings.resolve_nki(expr.func)
        if qual is None or not qual.name.startswith(("nki.language.", "nki.isa.")):
            return False
        return any(ref.data.get("kind") == "tensor" and ref.data.get("origin") in ("alloc", "result")
                   for ref in self.refs(expr))

    def helper_return(self, expr: ast.AST) -> str | None:
        """What a call of a project helper (this file or an imported one)
        returns: "tile" when every run the interpreter inlined returned a
        tensor or a view of one (an allocation, a load, a slice, a parameter
        passed through), "tiles" when every run returned a tile or a non-empty
        list/tuple of tiles, None otherwise (not inlined, or some run returned
        anything else). Read from the interpreter's record of the call, so the
        helper's own return paths are decided once, with the call-site
        arguments, and without recursing over the helper's syntax."""
        kinds = self._helper_returns.get(id(expr))
        if not kinds or "other" in kinds:
            return None
        return "tile" if kinds == {"tile"} else "tiles"

    # -- tensors -------------------------------------------------------------------------
    def holds(self, fn: ast.AST, expr: ast.AST) -> Holds | None:
        """Whether an expression evaluates to tensor data (see the module docstring)."""
        return run(self._holds(fn, expr))

    def _holds(self, fn: ast.AST, expr: ast.AST) -> Step:
        # A generator (see trampoline.py): deep expressions need no frames.
        if isinstance(expr, ast.Name):
            if (yield self._is_tensor_name(fn, expr.id)):
                return Holds.TENSOR
            if self.param_used_as_tensor(fn, expr.id) or self.param_declared_tensor(fn, expr.id):
                return Holds.PARAM
            return None
        if isinstance(expr, ast.Call):
            if callee_name(expr) == "scalar":
                return None  # scalar(tile): a runtime scalar (legacy do-while conditions), not a tensor
            if self.trusted_call(expr) or self.helper_return(expr) == "tile":
                return Holds.TENSOR
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in VIEW_METHODS:
                return (yield self._holds(fn, func.value))
            return None
        if isinstance(expr, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in expr.ops):
                return None
            operands = [expr.left, *expr.comparators]
            if any(isinstance(o, ast.Constant) and o.value is None for o in operands):
                return None  # `x == None` is the 0.3+ spelling of a None check
            kinds = []
            for o in operands:
                kinds.append((yield self._holds(fn, o)))
            return _strongest(kinds)
        if isinstance(expr, ast.BinOp):
            left = yield self._holds(fn, expr.left)
            right = yield self._holds(fn, expr.right)
            return _strongest((left, right))
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd, ast.Invert)):
            return (yield self._holds(fn, expr.operand))
        if isinstance(expr, ast.Subscript):
            return (yield self._holds(fn, expr.value))
        return None

    def is_tensor(self, fn: ast.AST, expr: ast.AST | None) -> bool:
        """The expression always produces tensor data."""
        return expr is not None and self.holds(fn, expr) is Holds.TENSOR

    def is_tensor_name(self, fn: ast.AST, name: str) -> bool:
        """Every definition of ``name`` visible in ``fn`` produces a tensor
        (a parameter or a global/nonlocal name is never one)."""
        return run(self._is_tensor_name(fn, name))

    def _is_tensor_name(self, fn: ast.AST, name: str) -> Step:
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
        defs = owner.bindings.get(name, [])
        grounded = False
        ok = bool(defs)
        for d in defs:
            if d.kind == "augassign":
                continue  # `t += x` updates a tensor in place (or rebinds it to a tensor)
            if d.kind not in ("assign", "annassign", "namedexpr") or d.value is None:
                ok = False
                break
            if mentions(d.value, name):
                # x = x + y: a tensor if x is (assumed while deciding x).
                self._tensor_names[key] = True
                kind = yield self._holds(owner.fn, d.value)
                self._tensor_names[key] = False
                if kind is not Holds.TENSOR:
                    ok = False
                    break
            elif (yield self._holds(owner.fn, d.value)) is Holds.TENSOR:
                grounded = True
            else:
                ok = False
                break
        self._tensor_names[key] = ok and grounded
        return ok and grounded

    def param_refs(self, fn: ast.AST, name: str) -> list[q.NodeRef]:
        """Parameter tensor nodes of a kernel parameter ``name`` (never rebound)."""
        owner = self.scope(fn).owner(name)
        if owner is None or not owner.is_param(name):
            return []
        args = owner.fn.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.arg == name:
                return self.param_tensors.get(id(a), [])
        return []

    def tensor_args(self, call: ast.Call, api: str) -> list[ast.AST]:
        """Arguments of an NKI call passed to parameters that always take a tensor."""
        from .apitable import api_for, legacy_api

        table = legacy_api() if self.model.legacy else api_for(self.model.version)
        sig = table.signature(api) or legacy_api().signature(api)
        positional = [p.name for p in sig.positional] if sig is not None and sig.params is not None else []
        out = []
        for i, arg in enumerate(call.args):
            if i < len(positional) and positional[i] in TENSOR_ARGUMENT_PARAMS:
                out.append(arg)
        out.extend(k.value for k in call.keywords if k.arg in TENSOR_ARGUMENT_PARAMS)
        return out

    def param_used_as_tensor(self, fn: ast.AST, name: str) -> bool:
        """A parameter (never rebound) that the function passes to an NKI
        API, directly or sliced. The model does not materialize parameters
        with a ``None`` default, and materializes a parameter passed to any
        NKI argument (even ``program_axes=``), so this is decided on the
        syntax: the parameter is passed where an API always takes a tensor."""
        owner = self.scope(fn).owner(name)
        if owner is None or not owner.is_param(name):
            return False
        key = (id(owner.fn), "param:" + name)
        if key in self._tensor_names:
            return self._tensor_names[key]
        used = False
        for node in self.scopes.file.subtree(owner.fn):
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

    def param_declared_tensor(self, fn: ast.AST, name: str) -> bool:
        """A parameter (never rebound) annotated as an NKI tensor:
        ``nt.tensor``, ``nt.tensor[...]``, ``nt.mutable_tensor``, or one of
        them in ``Optional[...]`` / ``... | None``."""
        owner = self.scope(fn).owner(name)
        if owner is None or not owner.is_param(name) or not isinstance(owner.fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        args = owner.fn.args
        for arg in args.posonlyargs + args.args + args.kwonlyargs:
            if arg.arg == name:
                return _tensor_annotation(self.bindings, arg.annotation)
        return False

    def tensor_refs(self, fn: ast.AST, expr: ast.AST) -> list[q.NodeRef]:
        """Graph nodes behind a tensor expression, following a name to its
        definitions or its parameter (for shapes in messages)."""
        refs = self.refs(expr)
        if refs:
            return refs
        if isinstance(expr, ast.Name):
            owner = self.scope(fn).owner(expr.id)
            if owner is not None:
                out: list[q.NodeRef] = []
                for d in owner.bindings.get(expr.id, []):
                    if d.value is not None:
                        out.extend(self.refs(d.value))
                if out:
                    return out
            return self.param_refs(fn, expr.id)
        return []

    # -- legacy index expressions (nl.arange / nl.mgrid) ------------------------------------
    def is_index_source(self, expr: ast.AST) -> bool:
        """``nl.arange(...)`` or ``nl.mgrid[...]`` (possibly subscripted)."""
        while True:
            if isinstance(expr, ast.Call):
                qual = self.bindings.resolve_nki(expr.func)
                return qual is not None and qual.name == "nki.language.arange"
            if not isinstance(expr, ast.Subscript):
                return False
            qual = self.bindings.resolve_nki(expr.value)
            if qual is not None and qual.name == "nki.language.mgrid":
                return True
            expr = expr.value

    def is_index(self, fn: ast.AST, expr: ast.AST) -> bool:
        """The expression's value depends on an arange/mgrid index (not
        through a call or a specialization-time attribute)."""
        return run(self._is_index(fn, expr))

    def _is_index(self, fn: ast.AST, expr: ast.AST) -> Step:
        if self.is_index_source(expr):
            return True
        if isinstance(expr, ast.Name):
            return (yield self._is_index_name(fn, expr.id))
        if isinstance(expr, ast.Attribute):
            return expr.attr in MGRID_ATTRS and (yield self._is_index(fn, expr.value))
        if isinstance(expr, ast.BinOp):
            return (yield self._is_index(fn, expr.left)) or (yield self._is_index(fn, expr.right))
        if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
            return (yield self._is_index(fn, expr.operand))
        if isinstance(expr, ast.Compare):
            for o in [expr.left, *expr.comparators]:
                if (yield self._is_index(fn, o)):
                    return True
            return False
        if isinstance(expr, ast.Subscript):
            # ix[:, None] keeps an index; x[ix] is a tensor access, not an index
            return self.is_index_source(expr) or (
                (yield self._is_index(fn, expr.value)) and not (yield self._holds(fn, expr.value))
            )
        return False

    def is_index_name(self, fn: ast.AST, name: str) -> bool:
        """Every definition of ``name`` derives from an index expression."""
        return run(self._is_index_name(fn, name))

    def _is_index_name(self, fn: ast.AST, name: str) -> Step:
        scope = self.scope(fn)
        owner = scope.owner(name)
        if owner is None or name in owner.params or name in scope.declared_outer:
            return False
        key = (id(owner.fn), name)
        if key in self._index_names:
            return self._index_names[key]
        self._index_names[key] = False  # cycles (i = i + ...) resolve to "not proven"
        defs = owner.bindings.get(name, [])
        ok = bool(defs)
        for d in defs:
            if d.kind in ("assign", "annassign", "namedexpr", "augassign") and d.value is not None:
                if d.kind == "augassign":
                    continue
                if not (yield self._is_index(owner.fn, d.value)):
                    ok = False
            elif d.kind == "unpack" and isinstance(d.node, ast.Assign) and self.is_index_source(d.node.value):
                continue  # i_p, i_f = nl.mgrid[...]
            else:
                ok = False
        self._index_names[key] = ok
        return ok

    def index_origin(self, fn: ast.AST, name: str) -> str | None:
        """'mgrid' / 'arange' for an index name, following its definitions."""
        if not self.is_index_name(fn, name):
            return None
        owner = self.scope(fn).owner(name)
        origins = set()
        for d in owner.bindings.get(name, []):
            value = d.value if d.value is not None else (d.node.value if isinstance(d.node, ast.Assign) else None)
            if value is None:
                continue
            for sub in astwalk.walk(value):
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

    # -- loops (syntax) -------------------------------------------------------------------
    def loop_kind(self, node: ast.For) -> str | None:
        """range / affine_range / sequential_range / static_range /
        dynamic_range / tile_range of a for loop's iterator, or None (read
        from the syntax, so it also answers in functions no kernel reaches)."""
        it = node.iter
        if isinstance(it, ast.Call):
            if isinstance(it.func, ast.Name) and it.func.id == "range" and "range" not in self.bindings.names:
                return "range"
            qual = self.bindings.resolve_nki(it.func)
            if qual is not None:
                short = qual.name.rpartition(".")[2]
                if qual.name.startswith("nki.language.") and short in LOOP_ITERATORS:
                    return short
        return None

    # -- data reads ---------------------------------------------------------------------
    def reads_tensor(self, fn: ast.AST, expr: ast.AST) -> bool:
        """The expression reads tensor data, not just a tensor's metadata
        (``t.shape``, ``t.dtype``, ``len(t)``, ``isinstance(t, ...)``): some
        name, call or subscript inside it holds a tensor."""
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Attribute) and node.attr in _DATA_FREE_ATTRS:
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("len", "isinstance"):
                continue
            if isinstance(node, (ast.Name, ast.Call, ast.Subscript)) and self.holds(fn, node) is Holds.TENSOR:
                return True
            stack.extend(astwalk.child_nodes(node))
        return False


def _strongest(kinds) -> Holds | None:
    kinds = [k for k in kinds if k]
    if Holds.TENSOR in kinds:
        return Holds.TENSOR
    return kinds[0] if kinds else None


def short_text(node: ast.AST, limit: int = 60) -> str:
    """Source text of a node for messages, shortened to ``limit`` characters."""
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - exotic nodes
        return "?"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tensor_annotation(bindings, ann: ast.AST | None) -> bool:
    """An annotation naming an NKI tensor type, possibly Optional or ``| None``."""
    if ann is None:
        return False
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _tensor_annotation(bindings, ann.left) or _tensor_annotation(bindings, ann.right)
    if isinstance(ann, ast.Subscript):
        outer = ann.value
        if (outer.attr if isinstance(outer, ast.Attribute) else getattr(outer, "id", "")) in ("Optional", "Union"):
            items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            return any(_tensor_annotation(bindings, item) for item in items)
        ann = outer
    qual = bindings.resolve_nki(ann)
    return qual is not None and qual.name in ("nki.typing.tensor", "nki.typing.mutable_tensor")


__all__ = ["ExprFacts", "Holds", "LOOP_ITERATORS", "META_ATTRS", "MGRID_ATTRS", "TENSOR_ARGUMENT_PARAMS",
           "VIEW_METHODS", "short_text"]
