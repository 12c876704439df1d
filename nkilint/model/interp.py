"""The abstract interpreter: evaluates a kernel body once and builds its graph.

Statements are executed over abstract values (values.py). Known branches
are taken, unknown ones are both executed and joined; loop bodies run once
with the iterator as a range and loop-carried variables widened; project
helpers are inlined with call-site arguments (bounded depth); ``assert``
narrows integer symbols. A step budget guarantees termination on any input.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..targets import Target
from ..versions import NkiVersion
from . import api_semantics as api
from .bindings import Gen, Qual, canonicalize
from .graph import KernelGraph, Site, bytes_per_partition
from .project import ModuleInfo
from .values import (
    INF, linear, ApiRef, BufferV, ClassV, Const, DictV, DsV, DType, FuncV, IndexV, Int, ModuleV, ObjectV, ParDimV,
    RangeV, SliceV, Sym, TensorV, TupleV, Unknown, Value, compare, const_int, int_binop, int_bounds, join,
    make_int, truth,
)

MAX_INLINE_DEPTH = 10
MAX_STEPS = 400000
MAX_UNROLL = 16
NKI_DTYPES = {
    "bool_", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "float32", "bfloat16", "tfloat32",
    "float8_e4m3", "float8_e4m3fn", "float8_e5m2", "float8_e5m2_x4", "float8_e4m3fn_x4", "float8_e8m0fnu",
    "float4_e2m1fn_x4", "int64", "uint64", "float64",
}
NUMPY_DTYPES = {"float32", "float16", "bfloat16", "int32", "int8", "int16", "uint8", "uint16", "uint32", "bool_", "float64", "int64"}
BUFFERS = {"sbuf", "psum", "hbm", "shared_hbm", "private_hbm"}


class Budget(Exception):
    """The step budget is spent: stop interpreting this kernel."""


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _Dead(Exception):
    """The rest of this block does not execute (raise / unreachable)."""


@dataclass
class Frame:
    vars: dict[str, Value]
    module: ModuleInfo
    func: str  # qualified function name (for node attributes)
    parent: "Frame | None" = None  # enclosing function (closures)
    returns: list[Value] = field(default_factory=list)


@dataclass(eq=False)
class ParamTensor(Int):
    """A kernel parameter: an unknown integer until it is used as a tensor,
    when it becomes one (``materialize``)."""

    name: str = ""
    node: ast.AST | None = None
    buffer: str = "hbm"
    tensor: TensorV | None = None
    annotation_shape: tuple[Value, ...] | None = None

    def __repr__(self) -> str:
        return f"Param({self.name})"


@dataclass(eq=False)
class ShapeV(Value):
    """The shape of a tensor whose rank may be unknown; dims made on demand."""

    tensor_name: str
    dims: dict[int, Value] = field(default_factory=dict)
    rank: int | None = None
    label: str | None = None

    def dim(self, i: int) -> Value:
        if self.rank is not None and i < 0:
            i += self.rank
            if i < 0:
                return Unknown(f"{self.tensor_name}.shape index out of range")
        if i not in self.dims:
            name = f"{self.tensor_name}.shape[{i}]"
            self.dims[i] = Int(sym=Sym(name, 1, INF), label=name)
        return self.dims[i]

    def fix_rank(self, n: int) -> tuple[Value, ...]:
        if self.rank is None:
            self.rank = n
            # Dims first reached from the end (shape[-1]) are the same dims.
            for neg in [k for k in self.dims if k < 0]:
                pos = neg + n
                if pos >= 0 and pos not in self.dims:
                    self.dims[pos] = self.dims[neg]
        return tuple(self.dim(i) for i in range(self.rank))


@dataclass
class InterpStats:
    steps: int = 0
    unknown_reasons: dict[str, int] = field(default_factory=dict)
    functions_visited: set[int] = field(default_factory=set)
    inline_failures: int = 0


class Interpreter:
    """Evaluates one kernel (or a module's top level) abstractly."""

    def __init__(
        self,
        module: ModuleInfo,
        target: Target,
        version: NkiVersion,
        graph: KernelGraph | None,
        legacy: bool,
        stats: InterpStats | None = None,
    ) -> None:
        self.module = module
        self.target = target
        self.version = version
        self.graph = graph
        self.legacy = legacy
        self.stats = stats or InterpStats()
        self.loops: list[str] = []  # current loop nest (graph loop ids)
        self.chain: list[tuple[str, ast.AST]] = []  # call sites of inlined helpers
        self.depth = 0
        self.budget = MAX_STEPS
        self.initial_budget = MAX_STEPS
        # Buffer of a root's tensor parameters: HBM for kernels launched from
        # the host, unknown for helpers and sub-kernels analysed on their own.
        self.param_buffer = "hbm"
        self._tensor_params: set[str] = set()
        self._program_syms: dict[str, Sym] = {}
        # Narrowings of symbols, undone when a branch ends (facts are scoped).
        self.trail: list[tuple[Sym, float, float]] = []

    # ------------------------------------------------------------------ utils
    def _step(self) -> None:
        self.budget -= 1
        if self.budget <= 0:
            if self.graph is not None:
                self.graph.truncated = True
            raise Budget()

    def site(self, node: ast.AST, module: ModuleInfo | None = None) -> Site:
        mod = module or self._current_module
        return Site(str(mod.path), node, tuple(self.chain))

    @property
    def _current_module(self) -> ModuleInfo:
        return self._frame.module if getattr(self, "_frame", None) is not None else self.module

    def unknown(self, reason: str, label: str | None = None) -> Unknown:
        self.stats.unknown_reasons[reason] = self.stats.unknown_reasons.get(reason, 0) + 1
        return Unknown(reason, label=label)

    @staticmethod
    def text(node: ast.AST) -> str:
        """Source text of a node, for labels (cached: unparse is costly)."""
        return _TEXT_CACHE.get(node, _node_text)

    # ------------------------------------------------------------- module env
    def module_env(self, module: ModuleInfo) -> dict[str, Value]:
        """Module-level values of a project module (evaluated once)."""
        if module.env_state == "done" and module.env is not None:
            return module.env
        if module.env_state == "running":
            return module.env or {}
        module.env_state = "running"
        module.env = {}
        sub = Interpreter(module, self.target, self.version, None, self.legacy, InterpStats())
        sub.budget = MAX_STEPS // 2
        frame = Frame(module.env, module, "<module>")
        try:
            sub.exec_block(module.tree.body, frame)
        except (Budget, _Return, _Dead, RecursionError):
            pass
        module.env_state = "done"
        return module.env

    # ---------------------------------------------------------------- entry
    def run_function(self, func: FuncV, args: list[Value], kwargs: dict[str, Value], root: bool = False) -> Value:
        """Evaluate a function body with the given abstract arguments."""
        node = func.node
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        self.stats.functions_visited.add(id(node))
        module = func.module
        frame_vars: dict[str, Value] = {}
        self._bind_params(node, func, args, kwargs, frame_vars, module, root)
        parent = None
        if func.closure is not None:
            parent = Frame(func.closure, module, "<closure>")
        frame = Frame(frame_vars, module, func.qualname or getattr(node, "name", "<lambda>"), parent)
        saved = getattr(self, "_frame", None)
        saved_evidence = self._tensor_params
        self._tensor_params = _cached_evidence(node)
        self._frame = frame
        try:
            if isinstance(node, ast.Lambda):
                return self.eval(node.body, frame)
            try:
                self.exec_block(node.body, frame)
            except _Return as ret:
                frame.returns.append(ret.value)
            except _Dead:
                pass
        finally:
            self._frame = saved
            self._tensor_params = saved_evidence
        if not frame.returns:
            return Const(None)
        out = frame.returns[0]
        for value in frame.returns[1:]:
            out = join(out, value)
        return out

    def _bind_params(self, node, func: FuncV, args, kwargs, out: dict[str, Value], module: ModuleInfo, root: bool) -> None:
        a = node.args
        positional = list(a.posonlyargs) + list(a.args)
        args = list(func.partial_args) + list(args)
        kwargs = {**dict(func.partial_kwargs), **kwargs}
        if func.bound_self is not None:
            args = [func.bound_self] + args
        defaults = list(a.defaults)
        first_default = len(positional) - len(defaults)
        env_frame = Frame(self.module_env(module) if module.env is None or module.env_state != "running" else module.env, module, "<defaults>")
        for i, param in enumerate(positional):
            if i < len(args):
                out[param.arg] = args[i]
            elif param.arg in kwargs:
                out[param.arg] = kwargs.pop(param.arg)
            elif i >= first_default and not root:
                out[param.arg] = self._safe_eval(defaults[i - first_default], env_frame)
            else:
                default = self._safe_eval(defaults[i - first_default], env_frame) if i >= first_default else None
                out[param.arg] = self._param_value(param, default, root)
        if a.vararg is not None:
            extra = args[len(positional):]
            out[a.vararg.arg] = TupleV(tuple(extra)) if not root else self.unknown("*args of a kernel")
        for j, param in enumerate(a.kwonlyargs):
            if param.arg in kwargs:
                out[param.arg] = kwargs.pop(param.arg)
            elif a.kw_defaults[j] is not None and not root:
                out[param.arg] = self._safe_eval(a.kw_defaults[j], env_frame)
            else:
                default = self._safe_eval(a.kw_defaults[j], env_frame) if a.kw_defaults[j] is not None else None
                out[param.arg] = self._param_value(param, default, root)
        if a.kwarg is not None:
            out[a.kwarg.arg] = DictV({k: v for k, v in kwargs.items()}) if not root else self.unknown("**kwargs of a kernel")

    def _safe_eval(self, node: ast.AST, frame: Frame) -> Value:
        try:
            return self.eval(node, frame)
        except (Budget, RecursionError):
            raise
        except Exception:
            return self.unknown("default value")

    def _param_value(self, param: ast.arg, default: Value | None, root: bool) -> Value:
        """The value of a kernel parameter: unknown, tensor-on-use."""
        if isinstance(default, Const) and default.value is None:
            default = None  # `bias=None`: an optional tensor (or config), tensor on use
        if default is not None and not isinstance(default, Unknown):
            # A kernel's keyword default may be overridden by the caller: keep
            # it only as a hint; the value itself is unknown.
            if isinstance(default, Const) and isinstance(default.value, bool):
                return Unknown(f"parameter {param.arg}", label=param.arg, default=default)
            b = int_bounds(default)
            if b is not None:
                return Int(label=param.arg, reason=f"parameter {param.arg}", sym=Sym(param.arg))
            return Unknown(f"parameter {param.arg}", label=param.arg, default=default)
        shape = None
        if param.annotation is not None:
            shape = self._annotation_shape(param.annotation)
        return ParamTensor(sym=Sym(param.arg), label=param.arg, reason=f"parameter {param.arg}", name=param.arg,
                           node=param, buffer=self.param_buffer if root else "unknown", annotation_shape=shape)

    def _annotation_shape(self, ann: ast.AST, module: ModuleInfo | None = None, frame: Frame | None = None) -> tuple[Value, ...] | None:
        module = module or self.module
        if isinstance(ann, ast.Subscript):
            base = module.bindings.resolve(ann.value)
            if base is not None and base.name in ("nki.typing.tensor", "nki.typing.mutable_tensor"):
                frame = frame or Frame(self.module_env(module), module, "<annotation>")
                sl = ann.slice
                elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
                try:
                    return tuple(self.eval(e, frame) for e in elts)
                except (Budget, RecursionError):
                    raise
                except Exception:
                    return None
        return None

    # -------------------------------------------------------------- statements
    def exec_block(self, body: list[ast.stmt], frame: Frame) -> None:
        for stmt in body:
            self.exec_stmt(stmt, frame)

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        self.budget -= 1
        if self.budget <= 0:
            self._step()
        method = _STMT_DISPATCH.get(type(stmt))
        if method is None:
            method = _STMT_DISPATCH[type(stmt)] = getattr(Interpreter, f"_stmt_{type(stmt).__name__}", _stmt_ignored)
        method(self, stmt, frame)

    def _stmt_Expr(self, stmt: ast.Expr, frame: Frame) -> None:
        self.eval(stmt.value, frame)

    def _stmt_Assign(self, stmt: ast.Assign, frame: Frame) -> None:
        value = self.eval(stmt.value, frame)
        for target in stmt.targets:
            self.assign(target, value, frame, stmt)

    def _stmt_AnnAssign(self, stmt: ast.AnnAssign, frame: Frame) -> None:
        if stmt.value is None:
            return
        value = self.eval(stmt.value, frame)
        if isinstance(value, TensorV) and value.shape is None and self.graph is not None and value.node_id:
            # t: nt.tensor[128, 512] = ... states the shape.
            shape = self._annotation_shape(stmt.annotation, frame.module, frame)
            if shape is not None:
                value.shape = shape
                data = self.graph.attrs(value.node_id)
                if data.get("shape_v") is None:
                    data["shape_v"] = shape
                    data["bytes_v"] = bytes_per_partition(shape, value.dtype, data.get("partition_axis") or 0)
        self.assign(stmt.target, value, frame, stmt)

    def _stmt_AugAssign(self, stmt: ast.AugAssign, frame: Frame) -> None:
        right = self.eval(stmt.value, frame)
        if isinstance(stmt.target, ast.Subscript):
            # t[...] += x: a tensor read-modify-write (legacy PSUM accumulation).
            dest = self.eval(stmt.target, frame)
            if isinstance(dest, TensorV):
                self._record_op(
                    "nki.language." + _BINOP_NAMES.get(type(stmt.op), "add"), stmt, frame,
                    reads=[("dst", dest), ("value", right)], writes=[("dst", dest)], engine=api.ENGINE_ANY,
                    extra={"augmented": True},
                )
            return
        left = self.eval(stmt.target, frame)
        if isinstance(left, TensorV):
            # t += x on a tile updates it in place (legacy PSUM accumulation:
            # psum += nisa.nc_matmul(...)); the name keeps the same tensor.
            self._record_op(
                "nki.language." + _BINOP_NAMES.get(type(stmt.op), "add"), stmt, frame,
                reads=[("dst", left), ("value", right)], writes=[("dst", left)], engine=api.ENGINE_ANY,
                extra={"augmented": True},
            )
            return
        result = self.binop(stmt.op, left, right, stmt, frame)
        self.assign(stmt.target, result, frame, stmt)

    def _stmt_Return(self, stmt: ast.Return, frame: Frame) -> None:
        value = self.eval(stmt.value, frame) if stmt.value is not None else Const(None)
        raise _Return(value)

    def _stmt_Raise(self, stmt: ast.Raise, frame: Frame) -> None:
        raise _Dead()

    def _stmt_Assert(self, stmt: ast.Assert, frame: Frame) -> None:
        self.learn(stmt.test, frame, True)

    def _stmt_FunctionDef(self, stmt: ast.FunctionDef, frame: Frame) -> None:
        closure = None if frame.func == "<module>" else frame.vars
        value = FuncV(stmt, frame.module, closure=closure, qualname=stmt.name)
        frame.vars[stmt.name] = value

    _stmt_AsyncFunctionDef = _stmt_FunctionDef

    def _stmt_ClassDef(self, stmt: ast.ClassDef, frame: Frame) -> None:
        cls = ClassV(stmt, frame.module)
        cls.bases = tuple(self._safe_eval(b, frame) for b in stmt.bases)
        class_frame = Frame(dict(frame.vars) if frame.func == "<module>" else {}, frame.module, "<class>", frame)
        body_vars: dict[str, Value] = {}
        for item in stmt.body:
            try:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    body_vars[item.name] = FuncV(item, frame.module, qualname=f"{stmt.name}.{item.name}")
                elif isinstance(item, ast.Assign):
                    v = self._safe_eval(item.value, class_frame)
                    for t in item.targets:
                        if isinstance(t, ast.Name):
                            body_vars[t.id] = v
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    body_vars[item.target.id] = self._safe_eval(item.value, class_frame) if item.value else _FIELD
            except (Budget, RecursionError):
                raise
            except Exception:
                continue
        cls.attrs = body_vars
        frame.vars[stmt.name] = cls

    def _stmt_If(self, stmt: ast.If, frame: Frame) -> None:
        test = self.eval(stmt.test, frame)
        decided = truth(test)
        if decided is True:
            self.learn(stmt.test, frame, True)
            self.exec_block(stmt.body, frame)
            return
        if decided is False:
            self.learn(stmt.test, frame, False)
            self.exec_block(stmt.orelse, frame)
            return
        self._branches([(stmt.body, stmt.test, True), (stmt.orelse, stmt.test, False)], frame)

    def merge(self, a: Value, b: Value, name: str) -> Value:
        """Join two values after a branch. Two different tensors become one
        view of both (a phi node), so later reads and writes reach each."""
        if isinstance(a, TensorV) and isinstance(b, TensorV) and a.node_id != b.node_id and self.graph is not None:
            sa, sb = self.shape_of(a), self.shape_of(b)
            shape = None
            if sa is not None and sb is not None and len(sa) == len(sb):
                shape = tuple(join(x, y) for x, y in zip(sa, sb))
            buffer = a.buffer if a.buffer == b.buffer else "unknown"
            dtype = join(a.dtype, b.dtype)
            view_id = self.graph.add_node(
                "v", "view", self.graph.attrs(a.node_id).get("site"), tuple(self.loops), name=name, buffer=buffer,
                dtype=dtype.name if isinstance(dtype, DType) else None, index="(either branch)", shape_v=shape,
                function=getattr(getattr(self, "_frame", None), "func", ""), phi=True,
            )
            self.graph.add_edge(view_id, a.node_id, "view_of")
            self.graph.add_edge(view_id, b.node_id, "view_of")
            return TensorV(view_id, a.tensor_id, shape, dtype, buffer, label=name)
        return join(a, b)

    def narrow_sym(self, sym: Sym, lo: float | None, hi: float | None) -> None:
        new_lo = sym.lo if lo is None else max(sym.lo, lo)
        new_hi = sym.hi if hi is None else min(sym.hi, hi)
        if new_lo > new_hi or (new_lo, new_hi) == (sym.lo, sym.hi):
            return  # contradictory facts (dead code) or nothing new
        self.trail.append((sym, sym.lo, sym.hi))
        sym.lo, sym.hi = new_lo, new_hi

    def _undo(self, mark: int) -> dict[Sym, tuple[float, float]]:
        """Undo narrowings back to ``mark``; return the bounds they had."""
        final: dict[Sym, tuple[float, float]] = {}
        while len(self.trail) > mark:
            sym, lo, hi = self.trail.pop()
            final.setdefault(sym, (sym.lo, sym.hi))
            sym.lo, sym.hi = lo, hi
        return final

    def _branches(self, branches: list[tuple[list[ast.stmt], ast.AST | None, bool]], frame: Frame) -> None:
        """Run alternative blocks from the same state and join the results.

        Facts learnt inside a branch (its condition, its asserts) are undone
        after it; facts common to every branch that falls through are kept.
        """
        before = dict(frame.vars)
        outcomes: list[dict[str, Value]] = []
        facts: list[dict[Sym, tuple[float, float]]] = []
        returned: list[Value] = []
        if self.graph is not None:
            self.graph.conditional_depth += 1
        try:
            self._run_branches(branches, frame, before, outcomes, facts, returned)
        finally:
            if self.graph is not None:
                self.graph.conditional_depth -= 1
        if facts:
            common = set(facts[0])
            for f in facts[1:]:
                common &= set(f)
            for sym in common:
                lo = min(f[sym][0] for f in facts)
                hi = max(f[sym][1] for f in facts)
                self.narrow_sym(sym, lo, hi)
        if not outcomes:
            frame.vars = before
            if returned:
                raise _Return(_join_all(returned))
            raise _Dead()
        self._merge_outcomes(outcomes, frame, returned)

    def _run_branches(self, branches, frame: Frame, before, outcomes, facts, returned) -> None:
        for body, test, polarity in branches:
            frame.vars = dict(before)
            mark = len(self.trail)
            try:
                if test is not None:
                    self.learn(test, frame, polarity)
                self.exec_block(body, frame)
                # Values computed under this branch's facts keep their bounds.
                for key, value in frame.vars.items():
                    if before.get(key) is not value:
                        frame.vars[key] = _freeze(value)
                outcomes.append(frame.vars)
                facts.append(self._undo(mark))
            except _Return as ret:
                returned.append(ret.value)
                self._undo(mark)
            except _Dead:
                self._undo(mark)

    def _merge_outcomes(self, outcomes, frame: Frame, returned) -> None:
        merged = dict(outcomes[0])
        for other in outcomes[1:]:
            for key in set(merged) | set(other):
                if key in merged and key in other:
                    merged[key] = self.merge(merged[key], other[key], key)
                else:
                    merged[key] = merged.get(key) or other[key]
        frame.vars = merged
        frame.returns.extend(returned)

    def _stmt_For(self, stmt: ast.For, frame: Frame) -> None:
        iterable = self.eval(stmt.iter, frame)
        # Unroll a short explicit sequence (a tuple of configs): per-element values.
        if isinstance(iterable, TupleV) and 0 < len(iterable.items) <= MAX_UNROLL and not any(
            isinstance(x, TensorV) for x in iterable.items
        ) and self.graph is None:
            for item in iterable.items:
                self.assign(stmt.target, item, frame, stmt)
                try:
                    self.exec_block(stmt.body, frame)
                except _Dead:
                    break
            return
        kind, trip, element = self._iteration(iterable, stmt.iter, frame)
        self._loop(stmt, frame, kind, trip, element, stmt.target, stmt.body, stmt.orelse)

    _stmt_AsyncFor = _stmt_For

    def _stmt_While(self, stmt: ast.While, frame: Frame) -> None:
        test = self.eval(stmt.test, frame)
        if truth(test) is False:
            self.exec_block(stmt.orelse, frame)
            return
        self._loop(stmt, frame, "while", self.unknown("while-loop trip count"), None, None, stmt.body, [], test_node=stmt.test)

    def _iteration(self, iterable: Value, node: ast.AST, frame: Frame) -> tuple[str, Value, Value]:
        """(loop kind, trip count, abstract element) of an iterable."""
        if isinstance(iterable, RangeV):
            trip = _trip_count(iterable)
            if isinstance(trip, Int) and node is not None:
                trip.label = f"trip count of {self.text(node)}"
            start_b = int_bounds(iterable.start)
            stop_b = int_bounds(iterable.stop)
            step = const_int(iterable.step) or 1
            if start_b is not None and stop_b is not None:
                if step > 0:
                    lo, hi = start_b[0], stop_b[1] - 1
                else:
                    lo, hi = stop_b[0] + 1, start_b[1]
            else:
                lo, hi = -INF, INF
            if lo > hi:
                lo = hi = max(lo, 0) if lo != INF else 0
            name = self.text(node) if node is not None else "i"
            sym = Sym(f"index of {name}", lo, hi)
            element = Int(sym=sym, reason="loop index")
            if lo == hi:
                element = Const(int(lo))
            return iterable.kind, trip, element
        if isinstance(iterable, TupleV):
            element: Value = iterable.items[0] if iterable.items else self.unknown("empty sequence")
            for item in iterable.items[1:]:
                element = join(element, item)
            return "python", Const(len(iterable.items)), element
        if isinstance(iterable, ObjectV) and iterable.attrs.get("__iter_elem__") is not None:
            elem = iterable.attrs["__iter_elem__"]
            return "tile_range", iterable.attrs.get("__trip__", self.unknown("trip count")), elem
        if isinstance(iterable, _Enumerate):
            kind, trip, elem = self._iteration(iterable.inner, node, frame)
            return kind, trip, TupleV((make_int(0, _hi_minus_one(trip), reason="enumerate index"), elem))
        if isinstance(iterable, _Zip):
            parts = [self._iteration(x, node, frame) for x in iterable.inners]
            trips = [p[1] for p in parts]
            trip = trips[0] if trips else Const(0)
            return parts[0][0] if parts else "python", trip, TupleV(tuple(p[2] for p in parts))
        return "python", self.unknown("iteration count"), self.unknown("loop element")

    def _loop(self, stmt, frame: Frame, kind: str, trip: Value, element: Value | None, target, body, orelse, test_node=None) -> None:
        loop_id = None
        if self.graph is not None:
            loop_id = self.graph.add_node(
                "l", "loop", self.site(stmt), tuple(self.loops),
                loop_kind=kind, trip_v=trip, iterator=self.text(target) if target is not None else None,
                function=frame.func, parent=self.loops[-1] if self.loops else None,
            )
        # Widen variables the body changes (loop-carried) before running it once.
        assigned = _assigned_names(body)
        before = dict(frame.vars)
        lengths = {v: len(v.items) for v in _visible_lists(frame)}
        attr_before: list[tuple[ObjectV, str, Value]] = []
        for base_name, attr in _assigned_attrs(body):
            owner = self.lookup(base_name, frame) if base_name else None
            if isinstance(owner, ObjectV) and attr in owner.attrs:
                attr_before.append((owner, attr, owner.attrs[attr]))
                owner.attrs[attr] = _widen(owner.attrs[attr], f"{base_name}.{attr}")
        for name in assigned:
            if name in frame.vars:
                frame.vars[name] = _widen(frame.vars[name], name)
        if target is not None and element is not None:
            self.assign(target, element, frame, stmt)
            if loop_id is not None and isinstance(element, Int) and element.sym is not None:
                self.graph.attrs(loop_id)["index_sym"] = element.sym
        if loop_id is not None:
            self.loops.append(loop_id)
        try:
            if test_node is not None:
                self.learn(test_node, frame, True)
            self.exec_block(body, frame)
        except _Dead:
            pass
        finally:
            if loop_id is not None:
                self.loops.pop()
        for name in assigned:
            if name in before and name in frame.vars:
                frame.vars[name] = join(before[name], frame.vars[name])
        for owner, attr, old_value in attr_before:
            if attr in owner.attrs:
                owner.attrs[attr] = join(old_value, owner.attrs[attr])
        # Lists the body appended to: one iteration's items, not all of them.
        if const_int(trip) != 1:
            for lst, length in lengths.items():
                if len(lst.items) != length:
                    lst.inexact = True
        if orelse:
            self.exec_block(orelse, frame)

    def _stmt_With(self, stmt: ast.With, frame: Frame) -> None:
        for item in stmt.items:
            value = self.eval(item.context_expr, frame)
            if item.optional_vars is not None:
                self.assign(item.optional_vars, value, frame, stmt)
        self.exec_block(stmt.body, frame)

    _stmt_AsyncWith = _stmt_With

    def _stmt_Try(self, stmt: ast.Try, frame: Frame) -> None:
        try:
            self.exec_block(stmt.body, frame)
        except _Dead:
            pass
        self.exec_block(stmt.finalbody, frame)

    _stmt_TryStar = _stmt_Try

    def _stmt_Import(self, stmt: ast.Import, frame: Frame) -> None:
        for alias in stmt.names:
            if alias.asname:
                frame.vars[alias.asname] = self._external(alias.name, frame.module)
            else:
                top = alias.name.split(".")[0]
                frame.vars[top] = self._external(top, frame.module, chain_root=True)

    def _stmt_ImportFrom(self, stmt: ast.ImportFrom, frame: Frame) -> None:
        module_name = stmt.module or ""
        project = frame.module.project
        target = project.find_module(frame.module, stmt.level, module_name) if (stmt.level or _maybe_project(module_name)) else None
        for alias in stmt.names:
            local = alias.asname or alias.name
            if alias.name == "*":
                if target is not None:
                    env = self.module_env(target)
                    for key, value in env.items():
                        if not key.startswith("_"):
                            frame.vars[key] = value
                continue
            if target is not None:
                env = self.module_env(target)
                if alias.name in env:
                    frame.vars[local] = env[alias.name]
                    continue
                sub = project.is_package_module(frame.module, stmt.level, module_name, alias.name)
                if sub is not None:
                    frame.vars[local] = ModuleV(sub, label=local)
                    continue
                frame.vars[local] = self.unknown(f"{alias.name} not found in {module_name or '.'}", label=local)
                continue
            if stmt.level:
                sub = project.is_package_module(frame.module, stmt.level, module_name, alias.name)
                frame.vars[local] = ModuleV(sub, label=local) if sub else self.unknown(f"unresolved import {alias.name}", label=local)
                continue
            frame.vars[local] = self._external(f"{module_name}.{alias.name}", frame.module)

    def _external(self, dotted: str, module: ModuleInfo, chain_root: bool = False) -> Value:
        """A library name: NKI names canonical, project modules as ModuleV."""
        qual = canonicalize(dotted)
        if qual.gen is Gen.OTHER and _maybe_project(dotted):
            found = module.project.find_module(module, 0, dotted)
            if found is not None:
                return ModuleV(found, label=dotted)
        return self._api_value(qual)

    # ---------------------------------------------------------------- assignment
    def assign(self, target: ast.AST, value: Value, frame: Frame, stmt: ast.AST) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, TensorV) and self.graph is not None and not self.graph.attrs(value.node_id).get("name"):
                self.graph.attrs(value.node_id)["name"] = target.id
            if isinstance(value, Int) and value.label is None:
                value.label = target.id
            frame.vars[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            items = self._unpack(value, len(target.elts), target)
            star = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)), None)
            if star is None:
                for t, v in zip(target.elts, items):
                    self.assign(t, v, frame, stmt)
            else:
                for t in target.elts:
                    self.assign(t.value if isinstance(t, ast.Starred) else t, self.unknown("starred unpacking"), frame, stmt)
            return
        if isinstance(target, ast.Starred):
            self.assign(target.value, value, frame, stmt)
            return
        if isinstance(target, ast.Attribute):
            obj = self.eval(target.value, frame)
            if isinstance(obj, ObjectV):
                obj.attrs[target.attr] = value
            return
        if isinstance(target, ast.Subscript):
            container = self.eval(target.value, frame)
            if isinstance(container, (TensorV, ParamTensor)):
                dest = self.eval(target, frame)
                if isinstance(dest, TensorV):
                    # t[...] = value: a copy into the tensor (legacy idiom).
                    self._record_op("nki.language.copy", stmt, frame, reads=[("value", value)], writes=[("dst", dest)],
                                    engine=api.ENGINE_ANY, extra={"assignment": True})
                return
            if isinstance(container, DictV):
                key = self.eval(target.slice, frame)
                if isinstance(key, Const):
                    try:
                        container.items[key.value] = value
                    except TypeError:
                        pass
                return
            if isinstance(container, TupleV) and container.is_list:
                idx = const_int(self.eval(target.slice, frame))
                if idx is not None and -len(container.items) <= idx < len(container.items):
                    items = list(container.items)
                    items[idx] = value
                    container.items = tuple(items)
                elif container.items:
                    container.items = tuple(join(x, value) for x in container.items)
            return

    def _unpack(self, value: Value, n: int, node: ast.AST) -> list[Value]:
        if isinstance(value, TupleV):
            if len(value.items) == n:
                return list(value.items)
            return [self.unknown("unpacking length mismatch") for _ in range(n)]
        if isinstance(value, ShapeV):
            return list(value.fix_rank(n))
        if isinstance(value, TensorV) and value.shape is not None and len(value.shape) >= 1:
            return [self.unknown("unpacking a tensor") for _ in range(n)]
        if isinstance(value, (Unknown, ParamTensor)):
            base = getattr(value, "label", None) or self.text(node)
            return [self.opaque(value, f"[{i}]", f"{base}[{i}]") for i in range(n)]
        return [self.unknown("unpacking an unknown value", label=f"{self.text(node)}[{i}]") for i in range(n)]

    # ---------------------------------------------------------------- facts
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

    # --------------------------------------------------------------- expressions
    def eval(self, node: ast.AST | None, frame: Frame) -> Value:
        if node is None:
            return Const(None)
        # Hot path: the step budget inline, dispatch through a per-class table.
        self.budget -= 1
        if self.budget <= 0:
            self._step()
        method = _EVAL_DISPATCH.get(type(node))
        if method is None:
            method = _EVAL_DISPATCH[type(node)] = getattr(Interpreter, f"_ev_{type(node).__name__}", _ev_unsupported)
        return method(self, node, frame)

    def _ev_Constant(self, node: ast.Constant, frame: Frame) -> Value:
        return Const(node.value, label=None)

    def _ev_Name(self, node: ast.Name, frame: Frame) -> Value:
        value = self.lookup(node.id, frame)
        return value

    def lookup(self, name: str, frame: Frame) -> Value:
        f: Frame | None = frame
        while f is not None:
            if name in f.vars:
                return f.vars[name]
            f = f.parent
        env = self.module_env(frame.module) if frame.func != "<module>" else frame.vars
        if name in env:
            return env[name]
        qual = frame.module.bindings.names.get(name)
        if qual is not None:
            return self._api_value(qual)
        if name in _BUILTINS:
            return ApiRef(Qual(f"builtins.{name}", Gen.OTHER), label=name)
        for star in frame.module.bindings.star_modules:
            if star.is_nki:
                from .apitable import api_for, legacy_api

                table = legacy_api() if star.gen is Gen.LEGACY else api_for(self.version)
                if name in table.member_names(star.name):
                    return self._api_value(star.child(name))
        return self.unknown(f"name '{name}' is not known statically", label=name)

    def _api_value(self, qual: Qual) -> Value:
        """Constants of the NKI API as concrete values (dtypes, buffers, tile sizes)."""
        name = qual.name
        if qual.is_nki:
            module, _, short = name.rpartition(".")
            if module == "nki.language":
                if short in NKI_DTYPES:
                    return DType(short, label=f"nl.{short}")
                if short in BUFFERS:
                    return BufferV(short, label=f"nl.{short}")
            if module == "nki.language.tile_size":
                value = self._tile_size(short)
                if value is not None:
                    return Const(value, label=f"nl.tile_size.{short}")
        elif qual.gen is Gen.OTHER:
            module, _, short = name.rpartition(".")
            if module in ("numpy", "np", "ml_dtypes", "jax.numpy", "torch") and short in NUMPY_DTYPES | {"bfloat16"}:
                return DType(short, label=name)
            if name in ("math.pi", "numpy.pi"):
                return Const(math.pi)
        return ApiRef(qual, label=name)

    def _tile_size(self, short: str) -> int | None:
        t = self.target
        return {
            "pmax": t.partitions,
            "psum_fmax": t.psum_bank_fp32,
            "psum_bank_fmax": t.psum_bank_fp32,
            "psum_bank_fmax_bytes": t.psum_bank_bytes,
            "psum_num_banks": t.psum_banks,
            "gemm_stationary_fmax": t.gemm_stationary_fmax,
            "gemm_moving_fmax": 512,
            "bn_stats_fmax": t.bn_stats_fmax,
            "sbuf_fmax_bytes": t.sbuf_usable_bytes_per_partition,
            "total_available_sbuf_size": t.sbuf_usable_bytes_per_partition,
            "sbuf_fmax": t.sbuf_usable_bytes_per_partition // 4,
            "sbuf_size_bytes": t.sbuf_usable_bytes_per_partition * t.partitions,
        }.get(short)

    def _ev_Attribute(self, node: ast.Attribute, frame: Frame) -> Value:
        base = self.eval(node.value, frame)
        return self.attribute(base, node.attr, node, frame)

    def opaque(self, parent: Value, key: str, name: str) -> "ParamTensor":
        """A stable unknown for ``parent.key`` (an attribute or constant index
        of an unknown value): asserts on it narrow every later use."""
        memo = _OPAQUE_ATTRS.setdefault(id(parent), (parent, {}))[1]
        if key not in memo:
            memo[key] = ParamTensor(sym=Sym(name), label=name, reason=f"{name} is not known statically", name=name,
                                    node=None, buffer="unknown")
        return memo[key]

    def attribute(self, base: Value, attr: str, node: ast.AST, frame: Frame) -> Value:
        if isinstance(base, ParamTensor):
            if base.tensor is not None or attr in ("shape", "dtype", "buffer", "reshape", "ap", "view", "ndim", "T", "__getitem__"):
                base = self.materialize(base, node)
            else:
                return self.opaque(base, attr, f"{base.name}.{attr}")
        if isinstance(base, Unknown) and not attr.startswith("__"):
            return self.opaque(base, attr, f"{base.label or 'value'}.{attr}")
        if isinstance(base, ApiRef):
            return self._api_value(base.qual.child(attr))
        if isinstance(base, TensorV):
            if attr == "shape":
                if base.shape is None:
                    if isinstance(base, _TensorWithShapeObj) and base.shape_obj is not None:
                        return base.shape_obj
                    return self.unknown("shape of unknown rank", label=f"{base.label}.shape")
                return TupleV(base.shape, label=f"{base.label or 'tensor'}.shape")
            if attr == "dtype":
                return base.dtype
            if attr == "buffer":
                return BufferV(base.buffer) if base.buffer != "unknown" else self.unknown("buffer")
            if attr == "ndim":
                return Const(len(base.shape)) if base.shape is not None else self.unknown("rank")
            if attr in ("reshape", "ap", "view", "bitcast", "reinterpret_cast", "indirect", "broadcast_to", "T", "with_dtype"):
                return _TensorMethod(base, attr)
            return self.unknown(f"tensor attribute {attr}")
        if isinstance(base, ObjectV):
            if attr in base.attrs:
                value = base.attrs[attr]
                if isinstance(value, Unknown) and value is not _FIELD:
                    # Stable from now on, so asserts on obj.attr stick.
                    value = base.attrs[attr] = self.opaque(base, attr, f"{base.label or 'obj'}.{attr}")
                return value
            cls_attr = _class_attr(base.cls, attr)
            if isinstance(cls_attr, FuncV):
                if _is_property(cls_attr.node):
                    return self.call_function(FuncV(cls_attr.node, cls_attr.module, bound_self=base, qualname=cls_attr.qualname), [], {}, node)
                return FuncV(cls_attr.node, cls_attr.module, bound_self=base, qualname=cls_attr.qualname)
            if cls_attr is not None:
                return cls_attr
            return self.unknown(f"attribute {attr} of an object", label=self.text(node))
        if isinstance(base, ClassV):
            value = _class_attr(base, attr)
            return value if value is not None else self.unknown(f"class attribute {attr}")
        if isinstance(base, ModuleV):
            env = self.module_env(base.module)
            if attr in env:
                return env[attr]
            sub = base.module.project.find_module(base.module, 1, attr) if base.module.path.name == "__init__.py" else None
            if sub is not None:
                return ModuleV(sub, label=attr)
            return self.unknown(f"{attr} not found in module", label=self.text(node))
        if isinstance(base, ShapeV):
            return self.unknown("shape attribute")
        if isinstance(base, TupleV) and attr in ("p", "x") and base.items and all(isinstance(i, IndexV) for i in base.items):
            # grid = nl.mgrid[0:128, 0:512]; grid.p / grid.x
            return base.items[0] if attr == "p" else base.items[-1]
        if isinstance(base, TupleV) and base.is_list and attr in ("append", "extend", "insert", "pop", "copy", "index"):
            return _ListMethod(base, attr)
        if isinstance(base, DictV) and attr in ("get", "items", "keys", "values"):
            return _DictMethod(base, attr)
        if isinstance(base, DType) and attr == "itemsize":
            from .graph import DTYPE_BYTES

            size = DTYPE_BYTES.get(base.name)
            return Const(size) if size else self.unknown("dtype size")
        if isinstance(base, RangeV) and attr in ("start", "stop"):
            return base.start if attr == "start" else base.stop
        return self.unknown(f"attribute {attr}", label=self.text(node))

    def _ev_Subscript(self, node: ast.Subscript, frame: Frame) -> Value:
        base = self.eval(node.value, frame)
        index = self.eval(node.slice, frame)
        if isinstance(base, ParamTensor):
            if base.tensor is not None or _has_slice(index) or base.name in self._tensor_params or const_int(index) is None:
                base = self.materialize(base, node)
            else:
                # p[0] on a parameter with no sign of being a tensor: a tuple
                # or config entry as likely as a tensor row.
                key = const_int(index)
                if key is not None:
                    return self.opaque(base, f"[{key}]", f"{base.name}[{key}]")
                return self.unknown(f"subscript of parameter {base.name}")
        return self.subscript(base, index, node, frame)

    def subscript(self, base: Value, index: Value, node: ast.AST, frame: Frame) -> Value:
        if isinstance(base, TensorV):
            return self.view(base, index, node, frame)
        if isinstance(base, TupleV) and base.inexact and base.items:
            out = base.items[0]
            for x in base.items[1:]:
                out = join(out, x)
            return out if not isinstance(index, SliceV) else TupleV(base.items, is_list=base.is_list, inexact=True)
        if isinstance(base, TupleV):
            i = const_int(index)
            if i is not None:
                if -len(base.items) <= i < len(base.items):
                    return base.items[i]
                return self.unknown("index out of range")
            if base.items and not isinstance(index, SliceV) and all(isinstance(x, TensorV) for x in base.items):
                out = base.items[0]
                for x in base.items[1:]:
                    out = self.merge(out, x, getattr(node, "value", None) and self.text(node.value) or "tiles")
                return out
            if isinstance(index, SliceV):
                try:
                    start = None if _is_none(index.start) else const_int(index.start)
                    stop = None if _is_none(index.stop) else const_int(index.stop)
                    step = None if _is_none(index.step) else const_int(index.step)
                    if (start is None and not _is_none(index.start)) or (stop is None and not _is_none(index.stop)):
                        raise ValueError
                    return TupleV(base.items[start:stop:step], is_list=base.is_list)
                except (ValueError, TypeError):
                    return self.unknown("slice of a sequence")
            if base.items:
                out = base.items[0]
                for x in base.items[1:]:
                    out = join(out, x)
                return out
            return self.unknown("index into empty sequence")
        if isinstance(base, ShapeV):
            i = const_int(index)
            if i is not None:
                return base.dim(i)
            if isinstance(index, SliceV):
                return self.unknown("slice of a shape of unknown rank")
            return self.unknown("dynamic shape index")
        if isinstance(base, DictV):
            if isinstance(index, Const):
                try:
                    if index.value in base.items:
                        return base.items[index.value]
                except TypeError:
                    pass
            return self.unknown("dict lookup")
        if isinstance(base, ApiRef):
            name = base.qual.name
            if name in ("nki.language.mgrid",):
                return self._mgrid(index)
            if name.startswith("nki.typing"):
                return _TypeSpec(index)
            return self.unknown("subscript of an API object")
        if isinstance(base, IndexV):
            # nl.arange(n)[:, None], [None, :], [None, :, None], ...: the slice
            # position is the axis the index varies along.
            items = index.items if isinstance(index, TupleV) else (index,)
            if len(items) >= 2 and sum(1 for x in items if isinstance(x, SliceV)) == 1 and all(
                isinstance(x, SliceV) or (isinstance(x, Const) and x.value is None) for x in items
            ):
                shape = tuple(base.extent if isinstance(x, SliceV) else Const(1) for x in items)
                return IndexV(base.extent, shape, base.offset, label=base.label)
            return base
        if isinstance(base, FuncV):
            # kernel[grid](...) SPMD launch: same function.
            return base
        if isinstance(base, (Unknown, ParamTensor)) and isinstance(index, Const) and isinstance(index.value, (int, str)):
            return self.opaque(base, f"[{index.value!r}]", f"{getattr(base, 'label', None) or 'value'}[{index.value!r}]")
        return self.unknown("subscript of an unknown value", label=self.text(node))

    def _mgrid(self, index: Value) -> Value:
        items = index.items if isinstance(index, TupleV) else (index,)
        out = []
        n = len(items)
        for axis, item in enumerate(items):
            if isinstance(item, SliceV):
                extent = int_binop(ast.Sub, item.stop, item.start if not _is_none(item.start) else Const(0))
                shape = tuple(extent if a == axis else Const(1) for a in range(n))
                out.append(IndexV(extent, shape, item.start if not _is_none(item.start) else Const(0)))
            else:
                out.append(self.unknown("mgrid index"))
        return TupleV(tuple(out))

    def _ev_Slice(self, node: ast.Slice, frame: Frame) -> Value:
        return SliceV(
            self.eval(node.lower, frame) if node.lower else Const(None),
            self.eval(node.upper, frame) if node.upper else Const(None),
            self.eval(node.step, frame) if node.step else Const(None),
            label=self.text(node),
        )

    def _ev_Tuple(self, node: ast.Tuple, frame: Frame) -> Value:
        return TupleV(self._elements(node.elts, frame), label=self.text(node))

    def _ev_List(self, node: ast.List, frame: Frame) -> Value:
        return TupleV(self._elements(node.elts, frame), label=self.text(node), is_list=True)

    def _ev_Set(self, node: ast.Set, frame: Frame) -> Value:
        return TupleV(self._elements(node.elts, frame))

    def _elements(self, elts: list[ast.expr], frame: Frame) -> tuple[Value, ...]:
        out: list[Value] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value, frame)
                if isinstance(v, TupleV):
                    out.extend(v.items)
                elif isinstance(v, ShapeV) and v.rank is not None:
                    out.extend(v.fix_rank(v.rank))
                else:
                    return (self.unknown("starred element"),) if not out else tuple(out) + (self.unknown("starred element"),)
            else:
                out.append(self.eval(e, frame))
        return tuple(out)

    def _ev_Dict(self, node: ast.Dict, frame: Frame) -> Value:
        items: dict[Any, Value] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                other = self.eval(v, frame)
                if isinstance(other, DictV):
                    items.update(other.items)
                continue
            key = self.eval(k, frame)
            if isinstance(key, Const):
                try:
                    items[key.value] = self.eval(v, frame)
                except TypeError:
                    pass
        return DictV(items)

    def _ev_JoinedStr(self, node, frame) -> Value:
        return self.unknown("f-string")

    def _ev_Lambda(self, node: ast.Lambda, frame: Frame) -> Value:
        return FuncV(node, frame.module, closure=dict(frame.vars), qualname="<lambda>")

    def _ev_NamedExpr(self, node: ast.NamedExpr, frame: Frame) -> Value:
        value = self.eval(node.value, frame)
        self.assign(node.target, value, frame, node)
        return value

    def _ev_IfExp(self, node: ast.IfExp, frame: Frame) -> Value:
        test = truth(self.eval(node.test, frame))
        if test is True:
            return self.eval(node.body, frame)
        if test is False:
            return self.eval(node.orelse, frame)
        results = []
        if self.graph is not None:
            self.graph.conditional_depth += 1
        try:
            for branch, polarity in ((node.body, True), (node.orelse, False)):
                mark = len(self.trail)
                saved = dict(frame.vars)
                self.learn(node.test, frame, polarity)
                results.append(_freeze(self.eval(branch, frame)))
                frame.vars = saved
                self._undo(mark)
        finally:
            if self.graph is not None:
                self.graph.conditional_depth -= 1
        return self.merge(results[0], results[1], self.text(node))

    def _ev_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Value:
        values = [self.eval(v, frame) for v in node.values]
        truths = [truth(v) for v in values]
        if isinstance(node.op, ast.And):
            for v, t in zip(values, truths):
                if t is False:
                    return v
                if t is None:
                    return self.unknown("boolean expression")
            return values[-1]
        for v, t in zip(values, truths):
            if t is True:
                return v
            if t is None:
                return self.unknown("boolean expression")
        return values[-1]

    def _ev_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Value:
        v = self.eval(node.operand, frame)
        if isinstance(node.op, ast.Not):
            t = truth(v)
            return Const(not t) if t is not None else self.unknown("not of unknown")
        if isinstance(node.op, ast.USub):
            if isinstance(v, Const) and isinstance(v.value, (int, float)):
                return Const(-v.value)
            b = int_bounds(v)
            if b is not None:
                return make_int(-b[1], -b[0])
            if isinstance(v, TensorV):
                return self._elementwise("nki.language.negative", [v], node, frame)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert) and isinstance(v, Const) and isinstance(v.value, int):
            return Const(~v.value)
        return self.unknown("unary operator")

    def _ev_Compare(self, node: ast.Compare, frame: Frame) -> Value:
        left = self.eval(node.left, frame)
        result: bool | None = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, frame)
            if isinstance(op, (ast.In, ast.NotIn)):
                r = _contains(right, left)
                r = None if r is None else (r if isinstance(op, ast.In) else not r)
            else:
                r = compare(type(op), left, right)
            if r is False:
                return Const(False)
            if r is None:
                result = None
            left = right
        # An undecided comparison is still 0 or 1 in arithmetic (n + (r > 0)).
        return Const(True) if result else Int(0, 1, label=self.text(node), reason="comparison")

    def _ev_BinOp(self, node: ast.BinOp, frame: Frame) -> Value:
        left = self.eval(node.left, frame)
        right = self.eval(node.right, frame)
        return self.binop(node.op, left, right, node, frame)

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST, frame: Frame) -> Value:
        # A parameter next to a tensor is a tensor; next to a number, a number.
        if isinstance(left, ParamTensor) and (isinstance(right, TensorV) or left.tensor is not None):
            left = self.materialize(left, node)
        if isinstance(right, ParamTensor) and (isinstance(left, TensorV) or right.tensor is not None):
            right = self.materialize(right, node)
        if isinstance(left, TensorV) or isinstance(right, TensorV):
            name = _BINOP_NAMES.get(type(op), "add")
            return self._elementwise(f"nki.language.{name}", [left, right], node, frame)
        if isinstance(left, IndexV) or isinstance(right, IndexV):
            return _index_arith(op, left, right)
        if isinstance(left, Const) and isinstance(right, Const):
            out = _py_binop(op, left.value, right.value)
            if out is not _NOPE:
                return Const(out)
        if isinstance(left, TupleV) and isinstance(right, TupleV) and isinstance(op, ast.Add):
            return TupleV(left.items + right.items, is_list=left.is_list)
        if isinstance(left, TupleV) and isinstance(op, ast.Mult):
            n = const_int(right)
            if n is not None and 0 <= n * len(left.items) <= 4096:
                return TupleV(left.items * n, is_list=left.is_list)
        if isinstance(op, ast.Div):
            lb, rb = int_bounds(left), int_bounds(right)
            if lb is not None and rb is not None and rb[0] > 0 and lb[0] >= 0:
                return _FloatRange(lb[0] / rb[1] if rb[1] != INF else 0.0, lb[1] / rb[0] if lb[1] != INF else INF)
            return self.unknown("division")
        return int_binop(type(op), left, right, label=self.text(node))

    def _ev_ListComp(self, node: ast.ListComp, frame: Frame) -> Value:
        return self._comprehension(node, frame, is_list=True)

    def _ev_GeneratorExp(self, node, frame) -> Value:
        return self._comprehension(node, frame, is_list=True)

    def _ev_SetComp(self, node, frame) -> Value:
        return self._comprehension(node, frame, is_list=False)

    def _ev_DictComp(self, node, frame) -> Value:
        return self.unknown("dict comprehension")

    def _comprehension(self, node, frame: Frame, is_list: bool) -> Value:
        if len(node.generators) != 1 or node.generators[0].ifs:
            return self.unknown("complex comprehension")
        gen = node.generators[0]
        iterable = self.eval(gen.iter, frame)
        if isinstance(iterable, TupleV) and len(iterable.items) <= MAX_UNROLL and self.graph is None:
            inner = Frame(dict(frame.vars), frame.module, frame.func, frame.parent)
            out = []
            for item in iterable.items:
                self.assign(gen.target, item, inner, node)
                out.append(self.eval(node.elt, inner))
            return TupleV(tuple(out), is_list=is_list)
        kind, trip, element = self._iteration(iterable, gen.iter, frame)
        loop_id = None
        if self.graph is not None:
            loop_id = self.graph.add_node(
                "l", "loop", self.site(node), tuple(self.loops), loop_kind="comprehension", trip_v=trip,
                iterator=self.text(gen.target), function=frame.func, parent=self.loops[-1] if self.loops else None,
            )
            self.loops.append(loop_id)
        inner = Frame(dict(frame.vars), frame.module, frame.func, frame.parent)
        try:
            self.assign(gen.target, element, inner, node)
            elt = self.eval(node.elt, inner)
        finally:
            if loop_id is not None:
                self.loops.pop()
        n = const_int(trip)
        if n is not None and 0 <= n <= 256:
            return TupleV((elt,) * n, is_list=is_list)
        return _SeqV(elt, trip)

    def _ev_Starred(self, node, frame) -> Value:
        return self.eval(node.value, frame)

    def _ev_Await(self, node, frame) -> Value:
        return self.eval(node.value, frame)

    # -------------------------------------------------------------------- calls
    def _ev_Call(self, node: ast.Call, frame: Frame) -> Value:
        func = self.eval(node.func, frame)
        args: list[Value] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value, frame)
                if isinstance(v, TupleV):
                    args.extend(v.items)
                elif isinstance(v, ShapeV) and v.rank is not None:
                    args.extend(v.fix_rank(v.rank))
                else:
                    args.append(self.unknown("*args"))
            else:
                args.append(self.eval(a, frame))
        kwargs: dict[str, Value] = {}
        for kw in node.keywords:
            v = self.eval(kw.value, frame)
            if kw.arg is None:
                if isinstance(v, DictV):
                    kwargs.update({str(k): x for k, x in v.items.items()})
                continue
            kwargs[kw.arg] = v
        return self.call(func, args, kwargs, node, frame)

    def call(self, func: Value, args: list[Value], kwargs: dict[str, Value], node: ast.Call, frame: Frame) -> Value:
        if isinstance(func, ApiRef):
            qual = func.qual
            if qual.is_nki:
                return self.nki_call(qual, args, kwargs, node, frame)
            return self.library_call(qual, args, kwargs, node, frame)
        if isinstance(func, FuncV):
            fname = (func.qualname or getattr(func.node, "name", "")).rsplit(".", 1)[-1].lower()
            if "assert" in fname and isinstance(node, ast.Call) and node.args:
                # kernel_assert(cond, msg): a fact, not code to inline.
                self.learn(node.args[0], frame, True)
                return Const(None)
            if fname in _LOGGING_NAMES or "logger" in (func.qualname or "").lower():
                return Const(None)
            return self.call_function(func, args, kwargs, node)
        if isinstance(func, ClassV):
            if "logger" in func.node.name.lower():
                return self.unknown("logger object")
            return self.instantiate(func, args, kwargs, node)
        if isinstance(func, _TensorMethod):
            return self.tensor_method(func, args, kwargs, node, frame)
        if isinstance(func, _ListMethod):
            return func.call(args, self)
        if isinstance(func, _DictMethod):
            return func.call(args, self)
        if isinstance(func, (Unknown, ParamTensor)):
            # Unknown callee: arguments that are tensors may be read/written.
            return self.unknown("call of an unknown function", label=self.text(node.func))
        return self.unknown("call of a non-function", label=self.text(node.func))

    def call_function(self, func: FuncV, args, kwargs, node: ast.AST) -> Value:
        key = _memo_key(func, args, kwargs)
        memo = func.module.project.pure_memo
        if key is not None and key in memo:
            return memo[key]
        if self.depth >= MAX_INLINE_DEPTH:
            self.stats.inline_failures += 1
            return self.unknown("helper call too deep to inline")
        fnode = func.node
        if isinstance(fnode, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            self._is_recursive(fnode) for _ in (0,)
        ):
            self.stats.inline_failures += 1
            return self.unknown("recursive helper")
        self.depth += 1
        self._active.append(id(fnode))
        if self.graph is not None and isinstance(fnode, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = func.qualname or fnode.name
            if name not in self.graph.helpers:
                self.graph.helpers.append(name)
        self.chain.append((str(self._current_module.path), node))
        try:
            result = self.run_function(func, args, kwargs)
            if key is not None and isinstance(result, Const) and _is_pure(func.node):
                memo[key] = result
            return result
        finally:
            self.chain.pop()
            self._active.pop()
            self.depth -= 1

    @property
    def _active(self) -> list[int]:
        if not hasattr(self, "_active_list"):
            self._active_list: list[int] = []
        return self._active_list

    def _is_recursive(self, fnode) -> bool:
        return id(fnode) in self._active

    def instantiate(self, cls: ClassV, args, kwargs, node) -> Value:
        obj = ObjectV(cls, {}, label=cls.node.name)
        init = _class_attr(cls, "__init__")
        if isinstance(init, FuncV):
            self.call_function(FuncV(init.node, init.module, bound_self=obj, qualname=f"{cls.node.name}.__init__"), args, kwargs, node)
            return obj
        # Dataclass-style: fields from annotations, in order.
        fields = [
            item.target.id for item in cls.node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        ]
        for i, name in enumerate(fields):
            if i < len(args):
                obj.attrs[name] = args[i]
            elif name in kwargs:
                obj.attrs[name] = kwargs[name]
            elif name in cls.attrs and cls.attrs[name] is not _FIELD:
                obj.attrs[name] = cls.attrs[name]
            else:
                obj.attrs[name] = self.unknown(f"field {name}")
        post = _class_attr(cls, "__post_init__")
        if isinstance(post, FuncV):
            self.call_function(FuncV(post.node, post.module, bound_self=obj), [], {}, node)
        return obj

    # ----------------------------------------------------------- library calls
    def library_call(self, qual: Qual, args, kwargs, node, frame) -> Value:
        name = qual.name
        short = name.rsplit(".", 1)[-1]
        if name.startswith("builtins."):
            return self.builtin(short, args, kwargs, node, frame)
        if name in ("math.ceil", "math.floor", "numpy.ceil", "numpy.floor", "np.ceil", "np.floor"):
            if args:
                v = args[0]
                if isinstance(v, Const) and isinstance(v.value, (int, float)):
                    return Const(math.ceil(v.value) if short == "ceil" else math.floor(v.value))
                if isinstance(v, _FloatRange):
                    lo = math.ceil(v.lo) if short == "ceil" else math.floor(v.lo)
                    hi = v.hi if v.hi == INF else (math.ceil(v.hi) if short == "ceil" else math.floor(v.hi))
                    return make_int(lo, hi)
                b = int_bounds(v)
                if b is not None:
                    return make_int(*b)
            return self.unknown(f"{name} of unknown")
        if name in ("math.prod", "numpy.prod", "np.prod") and args:
            seq = args[0]
            if isinstance(seq, TupleV):
                out: Value = Const(1)
                for x in seq.items:
                    out = int_binop(ast.Mult, out, x)
                return out
            return self.unknown("product of unknown")
        if name in ("math.log2", "math.sqrt", "math.exp", "math.log") and args and isinstance(args[0], Const):
            try:
                return Const(getattr(math, short)(args[0].value))
            except (TypeError, ValueError, OverflowError):
                return self.unknown(name)
        if name in ("functools.partial",) and args and isinstance(args[0], FuncV):
            f = args[0]
            return FuncV(f.node, f.module, f.closure, f.bound_self, f.qualname, tuple(args[1:]), tuple(kwargs.items()))
        if name in ("functools.reduce",):
            return self.unknown("reduce")
        if name.startswith(("numpy.", "np.")) and short in ("identity", "eye", "zeros", "ones", "full", "empty", "arange", "array", "asarray"):
            return self._numpy_array(short, args, kwargs)
        if name in ("numpy.dtype", "np.dtype") and args:
            if isinstance(args[0], Const) and isinstance(args[0].value, str):
                return DType(args[0].value)
            return args[0] if isinstance(args[0], DType) else self.unknown("dtype")
        return self.unknown(f"call of {name}", label=self.text(node.func))

    def _numpy_array(self, short: str, args, kwargs) -> Value:
        """Shape of a host-side numpy constant (for nl.shared_constant)."""
        dtype = kwargs.get("dtype", self.unknown("numpy dtype"))
        if isinstance(dtype, Const) and isinstance(dtype.value, str):
            dtype = DType(dtype.value)
        if short in ("identity", "eye") and args:
            n = args[0]
            m = args[1] if short == "eye" and len(args) > 1 else n
            return ArrayV((n, m), dtype)
        if short in ("zeros", "ones", "full", "empty") and args:
            shape, _ = self._shape_tuple(args[0])
            if shape is not None:
                return ArrayV(shape, dtype)
        if short == "arange" and args:
            return ArrayV((args[0] if len(args) == 1 else int_binop(ast.Sub, args[1], args[0]),), dtype)
        return self.unknown(f"numpy.{short}")

    def builtin(self, short: str, args, kwargs, node, frame) -> Value:
        if short == "range":
            if not args:
                return self.unknown("range()")
            if len(args) == 1:
                return RangeV("range", Const(0), args[0], Const(1))
            return RangeV("range", args[0], args[1], args[2] if len(args) > 2 else Const(1))
        if short in ("min", "max"):
            items = list(args)
            if len(items) == 1 and isinstance(items[0], TupleV):
                items = list(items[0].items)
            if not items:
                return self.unknown(short)
            if all(isinstance(x, Const) and isinstance(x.value, (int, float)) for x in items):
                return Const((min if short == "min" else max)(x.value for x in items))
            bounds = [int_bounds(x) for x in items]
            if all(b is not None for b in bounds):
                if short == "min":
                    lo, hi = min(b[0] for b in bounds), min(b[1] for b in bounds)
                else:
                    lo, hi = max(b[0] for b in bounds), max(b[1] for b in bounds)
                if lo == hi and lo not in (INF, -INF):
                    return Const(int(lo), label=self.text(node))
                # min/max of independent quantities reach both ends of the range.
                label = self.text(node)
                return Int(sym=Sym(label, lo, hi, derived=True), label=label, reason=short)
            # min(x, 128) with x unknown is still at most 128.
            known = [b for b in bounds if b is not None]
            if short == "min" and known:
                return make_int(-INF, min(b[1] for b in known), label=self.text(node))
            if short == "max" and known:
                return make_int(max(b[0] for b in known), INF, label=self.text(node))
            return self.unknown(short)
        if short == "len":
            if args and isinstance(args[0], TupleV):
                if args[0].inexact:
                    return Int(0, INF, reason="length of a list grown in a loop")
                return Const(len(args[0].items))
            if args and isinstance(args[0], ShapeV) and args[0].rank is not None:
                return Const(args[0].rank)
            if args and isinstance(args[0], DictV):
                return Const(len(args[0].items))
            if args and isinstance(args[0], _SeqV):
                return args[0].length
            return Int(0, INF, reason="len of unknown")
        if short == "abs" and args:
            b = int_bounds(args[0])
            if isinstance(args[0], Const) and isinstance(args[0].value, (int, float)):
                return Const(abs(args[0].value))
            if b is not None:
                lo, hi = b
                if lo >= 0:
                    return args[0]
                return make_int(0 if hi >= 0 else -hi, max(-lo, hi))
            return self.unknown("abs")
        if short in ("int", "round"):
            if args:
                v = args[0]
                if isinstance(v, Const) and isinstance(v.value, (int, float, bool)):
                    try:
                        return Const(int(v.value) if short == "int" else round(v.value))
                    except (ValueError, OverflowError):
                        return self.unknown(short)
                if isinstance(v, _FloatRange):
                    return make_int(math.floor(v.lo), v.hi if v.hi == INF else math.ceil(v.hi))
                if int_bounds(v) is not None:
                    return v
            return self.unknown(short)
        if short == "float" and args and isinstance(args[0], Const):
            try:
                return Const(float(args[0].value))
            except (TypeError, ValueError):
                return self.unknown("float")
        if short in ("tuple", "list"):
            if not args:
                return TupleV((), is_list=short == "list")
            v = args[0]
            if isinstance(v, TupleV):
                return TupleV(v.items, is_list=short == "list")
            if isinstance(v, ShapeV) and v.rank is not None:
                return TupleV(v.fix_rank(v.rank), is_list=short == "list")
            if isinstance(v, RangeV):
                n = const_int(_trip_count(v))
                s, st = const_int(v.start), const_int(v.step)
                if n is not None and s is not None and st is not None and n <= 4096:
                    return TupleV(tuple(Const(s + i * st) for i in range(n)), is_list=short == "list")
            if isinstance(v, ShapeV):
                return v
            return self.unknown(short)
        if short == "enumerate" and args:
            return _Enumerate(args[0])
        if short == "zip":
            return _Zip(tuple(args))
        if short == "sum" and args and isinstance(args[0], TupleV):
            out: Value = Const(0)
            for x in args[0].items:
                out = int_binop(ast.Add, out, x)
            return out
        if short == "isinstance":
            return self.unknown("isinstance")
        if short in ("print", "setattr", "hasattr", "getattr", "callable", "id", "type", "str", "repr", "sorted", "reversed", "all", "any", "bool", "dict", "set", "divmod", "iter", "next", "map", "filter", "super", "object", "vars", "frozenset", "format", "hash", "ord", "chr"):
            if short == "getattr" and len(args) >= 2 and isinstance(args[1], Const) and isinstance(args[1].value, str):
                return self.attribute(args[0], args[1].value, node, frame)
            if short == "bool" and args:
                t = truth(args[0])
                return Const(t) if t is not None else self.unknown("bool")
            if short == "reversed" and args and isinstance(args[0], (TupleV, RangeV)):
                return args[0]
            return self.unknown(f"builtin {short}")
        return self.unknown(f"builtin {short}")

    # ------------------------------------------------------------ NKI calls
    def nki_call(self, qual: Qual, args, kwargs, node: ast.Call, frame: Frame) -> Value:
        name = qual.name
        module, _, short = name.rpartition(".")
        info = api.classify(name)
        if name in ("nki.jit", "nki.trace", "nki.baremetal", "nki.benchmark", "nki.profile", "nki.simulate", "nki.simulate_kernel"):
            # nki.jit(f) inside device code: the function itself.
            if args and isinstance(args[0], FuncV):
                if name in ("nki.simulate_kernel",):
                    return self.call_function(args[0], args[1:], kwargs, node)
                return args[0]
            return _Decorator(qual)
        if module == "nki.language":
            if short == "ds" and len(args) >= 2:
                return DsV(args[0], args[1], label=self.text(node))
            if short == "ds" and args:
                return DsV(args[0], kwargs.get("size", self.unknown("ds size")), label=self.text(node))
            if short == "arange":
                return self._arange(args)
            if short == "par_dim":
                return ParDimV(args[0] if args else self.unknown("par_dim"), label=self.text(node))
            if short in ("program_id",):
                # One symbol per axis, so `pid * 128` is a known affine form
                # (invariant in loops, comparable between uses).
                axis = const_int(args[0]) if args else 0
                key = f"program_id({axis if axis is not None else '?'})"
                sym = self._program_syms.get(key)
                if sym is None:
                    hi = max(self.target.lnc_max - 1, 0) if not self.legacy else INF
                    sym = self._program_syms[key] = Sym(key, 0, hi)
                return Int(sym=sym, reason="program id", label=key)
            if short in ("num_programs", "program_ndim"):
                return Int(1, INF, reason=short, label=short)
            if short in api.LOOPS:
                return self._range(api.LOOPS[short], args, kwargs)
            if short in ("fori_loop",):
                return self._fori(args, kwargs, node, frame)
            if short == "while_loop":
                return self._while_loop(args, kwargs, node, frame)
            if short == "no_reorder":
                return Const(None)
            if short == "tile_range":
                return self._range("tile_range", args, kwargs)
        if module in ("nki.compiler.sbuf", "nki.compiler.psum") or name in ("nki.compiler.sbuf", "nki.compiler.psum"):
            return _Placement("psum" if "psum" in module or name.endswith("psum") else "sbuf", short,
                              dict(kwargs), tuple(args), label=self.text(node))
        if info is None:
            return self.unknown(f"{name}")
        if info.kind == "alloc":
            return self.allocate(info, args, kwargs, node, frame)
        if info.kind == "meta" or info.kind == "loop":
            return self.unknown(f"{name} value")
        return self.operation(info, args, kwargs, node, frame)

    def _arange(self, args) -> Value:
        if len(args) == 1:
            return IndexV(args[0], (args[0],), Const(0))
        if len(args) >= 2:
            extent = int_binop(ast.Sub, args[1], args[0])
            return IndexV(extent, (extent,), args[0])
        return self.unknown("arange")

    def _range(self, kind: str, args, kwargs) -> Value:
        args = list(args)
        if "start" in kwargs and not args:
            args.append(kwargs["start"])
        if "stop" in kwargs:
            args.append(kwargs["stop"])
        if not args:
            return self.unknown(f"{kind}()")
        if len(args) == 1:
            return RangeV(kind, Const(0), args[0], Const(1))
        step = args[2] if len(args) > 2 else kwargs.get("step", Const(1))
        return RangeV(kind, args[0], args[1], step)

    def _fori(self, args, kwargs, node, frame) -> Value:
        # nl.fori_loop(lo, hi, body, init...) : body(i, *carry) run once.
        if len(args) >= 3 and isinstance(args[2], FuncV):
            rng = RangeV("fori_loop", args[0], args[1], Const(1))
            trip = _trip_count(rng)
            loop_id = None
            if self.graph is not None:
                loop_id = self.graph.add_node("l", "loop", self.site(node), tuple(self.loops), loop_kind="fori_loop",
                                              trip_v=trip, iterator=None, function=frame.func,
                                              parent=self.loops[-1] if self.loops else None)
                self.loops.append(loop_id)
            try:
                start = int_bounds(args[0]) or (-INF, INF)
                stop = int_bounds(args[1]) or (-INF, INF)
                lo, hi = start[0], stop[1] - 1
                if lo == hi and lo not in (INF, -INF):
                    index: Value = Const(int(lo))
                else:
                    bounds_text = ", ".join(self.text(a) for a in node.args[:2]) if len(node.args) >= 2 else "..."
                    sym = Sym(f"index of fori_loop({bounds_text})", lo, hi)
                    index = Int(sym=sym, reason="loop index")
                    if loop_id is not None:
                        self.graph.attrs(loop_id)["index_sym"] = sym
                return self.call_function(args[2], [index, *args[3:]], {}, node)
            finally:
                if loop_id is not None:
                    self.loops.pop()
        return self.unknown("fori_loop")

    def _while_loop(self, args, kwargs, node, frame) -> Value:
        """nl.while_loop(cond_register, body, ...): the body runs once, in a loop node."""
        body = next((a for a in list(args) + list(kwargs.values()) if isinstance(a, FuncV)), None)
        if body is None:
            return self.unknown("while_loop")
        loop_id = None
        if self.graph is not None:
            loop_id = self.graph.add_node("l", "loop", self.site(node), tuple(self.loops), loop_kind="while_loop",
                                          trip_v=self.unknown("while_loop trip count"), iterator=None,
                                          function=frame.func, parent=self.loops[-1] if self.loops else None)
            self.loops.append(loop_id)
        try:
            params = getattr(body.node, "args", None)
            n = len(params.args) if params is not None else 0
            return self.call_function(body, [self.unknown("while_loop carried value") for _ in range(n)], {}, node)
        finally:
            if loop_id is not None:
                self.loops.pop()

    # --------------------------------------------------------------- tensors
    def materialize(self, param: ParamTensor, node: ast.AST) -> TensorV:
        """Turn a parameter into a tensor node the first time it is used as one."""
        if param.tensor is not None:
            return param.tensor
        shape_obj = ShapeV(param.name)
        shape = param.annotation_shape
        node_id = ""
        if self.graph is not None:
            node_id = self.graph.add_node(
                "t", "tensor", self.site(param.node if param.node is not None else node), (), name=param.name, buffer=param.buffer, dtype=None,
                dtype_v=Unknown(f"dtype of {param.name}"), shape_v=shape, shape_obj=shape_obj, origin="param",
                api=None, partition_axis=0, address=None, function=self._frame.func if getattr(self, "_frame", None) else "",
                bytes_v=Unknown("parameter"),
            )
        param.tensor = TensorV(node_id, node_id, shape, Unknown(f"dtype of {param.name}", label=f"{param.name}.dtype"),
                               param.buffer, label=param.name)
        if shape is None:
            # shape known lazily through ShapeV when unpacked / indexed
            param.tensor = _TensorWithShapeObj(node_id, node_id, None, param.tensor.dtype, param.buffer, label=param.name,
                                               shape_obj=shape_obj)
        return param.tensor

    def _shape_tuple(self, value: Value) -> tuple[tuple[Value, ...] | None, int]:
        """A shape argument as a tuple of dims, and the partition axis (par_dim)."""
        if isinstance(value, TupleV):
            items = list(value.items)
        elif isinstance(value, ShapeV):
            if value.rank is None:
                return None, 0
            items = list(value.fix_rank(value.rank))
        elif int_bounds(value) is not None and not isinstance(value, ParamTensor):
            items = [value]
        else:
            return None, 0
        if isinstance(value, TupleV) and value.inexact:
            return None, 0
        axis = 0
        dims: list[Value] = []
        for i, item in enumerate(items):
            if isinstance(item, ParDimV):
                axis = i
                dims.append(item.size)
            else:
                dims.append(item)
        return tuple(dims), axis

    def _arg(self, info: api.ApiInfo, args, kwargs, name: str, index: int | None = None) -> Value | None:
        """An argument by parameter name (positional index from the API table)."""
        if name in kwargs:
            return kwargs[name]
        pos = self._param_index(info.name, name) if index is None else index
        if pos is not None and pos < len(args):
            return args[pos]
        return None

    def _table(self):
        """The API table that gives this file's call signatures."""
        from .apitable import api_for, legacy_api
        from ..versions import V0_6

        if self.legacy:
            return legacy_api()
        # A current-namespace file checked against --nki-version 0.1 is still
        # written dst-first: bind its calls with the newest table.
        return api_for(V0_6 if self.version.is_legacy else self.version)

    def _param_index(self, canonical: str, param: str) -> int | None:
        from .apitable import api_for, legacy_api

        table = self._table()
        sig = table.signature(canonical)
        if sig is None and not self.legacy:
            sig = legacy_api().signature(canonical)
        if sig is None or sig.params is None:
            return None
        for i, p in enumerate(sig.positional):
            if p.name == param:
                return i
        return None

    def allocate(self, info: api.ApiInfo, args, kwargs, node: ast.Call, frame: Frame) -> Value:
        style = api.ALLOCATIONS[info.short]
        like: Value | None = None
        dtype: Value | None = None
        # The rank comes from a parameter's use (x.shape unpacked somewhere),
        # not from the code that allocates: not exact.
        rank_inferred = False
        if style == "like":
            like = args[0] if args else kwargs.get("a", kwargs.get("x"))
            if isinstance(like, ParamTensor):
                like = self.materialize(like, node)
            shape = self.shape_of(like) if isinstance(like, TensorV) else None
            axis = like.partition_axis if isinstance(like, TensorV) else 0
            rank_inferred = isinstance(like, _TensorWithShapeObj)
            dtype = self._arg(info, args, kwargs, "dtype")
            if dtype is None or (isinstance(dtype, Const) and dtype.value is None):
                dtype = like.dtype if isinstance(like, TensorV) else self.unknown("dtype")
        elif style == "identity":
            n = args[0] if args else kwargs.get("n", self.unknown("identity size"))
            shape, axis = (n, n), 0
            dtype = kwargs.get("dtype", args[1] if len(args) > 1 else self.unknown("dtype"))
        elif style == "const":
            # shared_constant(array_or_file): an HBM tensor (aws-neuron-sdk stub).
            const = args[0] if args else kwargs.get("constant")
            shape = const.shape if isinstance(const, ArrayV) else None
            axis = 0
            dtype = kwargs.get("dtype", const.dtype if isinstance(const, ArrayV) else self.unknown("dtype"))
        else:
            shape_arg = self._arg(info, args, kwargs, "shape", 0)
            shape, axis = self._shape_tuple(shape_arg) if shape_arg is not None else (None, 0)
            rank_inferred = isinstance(shape_arg, ShapeV)
            dtype = self._arg(info, args, kwargs, "dtype")
            if dtype is None and info.short == "full":
                dtype = self._arg(info, args, kwargs, "dtype", 2)
        if dtype is None:
            dtype = self.unknown("dtype")
        buffer_v = self._arg(info, args, kwargs, "buffer")
        buffer = _buffer_name(buffer_v)
        if buffer_v is None or (isinstance(buffer_v, Const) and buffer_v.value is None):
            # Every allocation API defaults to SBUF (nki.language stubs), except
            # shared_constant, which lives in shared HBM.
            buffer = "shared_hbm" if style == "const" or (style == "identity" and self.legacy) else "sbuf"
        shape_obj = None
        if shape is None and style != "const":
            shape_arg = like.shape_obj if isinstance(like, _TensorWithShapeObj) else (
                self._arg(info, args, kwargs, "shape", 0) if style == "shape" else None)
            if isinstance(shape_arg, ShapeV):
                shape_obj = shape_arg  # rank unknown yet: shares the source's dims
        address = kwargs.get("address")
        if isinstance(buffer_v, _Placement):
            address = buffer_v
        if isinstance(dtype, Const) and isinstance(dtype.value, str):
            dtype = DType(dtype.value)
        node_id = ""
        if self.graph is not None:
            node_id = self.graph.add_node(
                "t", "tensor", self.site(node), tuple(self.loops), name=None, buffer=buffer,
                dtype=dtype.name if isinstance(dtype, DType) else None, dtype_v=dtype, shape_v=shape,
                origin="alloc", api=info.name, partition_axis=axis, address=address, function=frame.func,
                bytes_v=bytes_per_partition(shape, dtype, axis), call=node, shape_obj=shape_obj,
                rank_inferred=rank_inferred or shape_obj is not None,
                fill_v=(self._arg(info, args, kwargs, "fill_value", 1) if info.short == "full"
                        else Const(0) if info.short == "zeros" else Const(1) if info.short == "ones" else None),
            )
        if shape_obj is not None:
            return _TensorWithShapeObj(node_id, node_id, None, dtype, buffer, label=None, shape_obj=shape_obj)
        return TensorV(node_id, node_id, shape, dtype, buffer, label=None, partition_axis=axis)

    def view(self, base: TensorV, index: Value, node: ast.AST, frame: Frame) -> Value:
        items = list(index.items) if isinstance(index, TupleV) and not index.is_list else [index]
        shape = base.shape
        if shape is None and isinstance(base, _TensorWithShapeObj) and base.shape_obj is not None:
            obj = base.shape_obj
            if obj.rank is not None:
                shape = obj.fix_rank(obj.rank)
            elif all(isinstance(x, (SliceV, DsV, IndexV)) for x in items) or (
                len(items) >= 2 and not any(isinstance(x, Const) and x.value is Ellipsis for x in items)
            ):
                # Rank unknown: ranges name the leading dims; a multi-item index
                # is taken to name every dim (a single integer index, `x[i]` on
                # a batch of tiles, leaves the rest unknown).
                shape = tuple(obj.dim(i) for i in range(len(items)))
        new_shape: list[Value] | None = []
        on_chip = base.buffer in ("sbuf", "psum")
        if shape is None:
            new_shape = None
        else:
            ellipsis = next((i for i, x in enumerate(items) if isinstance(x, Const) and x.value is Ellipsis), None)
            if ellipsis is not None:
                fill = len(shape) - (len(items) - 1)
                items = items[:ellipsis] + [SliceV(Const(None), Const(None), Const(None))] * max(fill, 0) + items[ellipsis + 1:]
            axis = 0
            index_shapes: list[tuple[Value, ...]] = []
            for item in items:
                if isinstance(item, Const) and item.value is None:
                    new_shape.append(Const(1))
                    continue
                if axis >= len(shape):
                    new_shape.append(self.unknown("index past the tensor's rank"))
                    axis += 1
                    continue
                dim = shape[axis]
                if isinstance(item, SliceV):
                    new_shape.append(_slice_size(item, dim))
                elif isinstance(item, DsV):
                    new_shape.append(item.size)
                elif isinstance(item, IndexV):
                    index_shapes.append(item.axis_shape)
                    new_shape.append(item.extent)
                elif int_bounds(item) is not None:
                    if on_chip and axis == base.partition_axis:
                        new_shape.append(Const(1))
                    # an integer index drops the dimension
                elif isinstance(item, (TensorV, ParamTensor)):
                    new_shape.append(self.unknown("indirect index"))
                else:
                    new_shape.append(self.unknown("dynamic index", label=self.text(node)))
                axis += 1
            for rest in shape[axis:]:
                new_shape.append(rest)
            scalars = [x for x in items if not isinstance(x, IndexV)]
            if index_shapes and all(int_bounds(x) is not None for x in scalars) and len(index_shapes) + len(scalars) == len(items):
                # Legacy advanced indexing: the broadcast shape of the index
                # tensors (an integer next to them is a 0-d index: NumPy rules).
                rank = max(len(s) for s in index_shapes)
                broadcast: list[Value] = []
                for d in range(rank):
                    dim_v: Value = Const(1)
                    for s in index_shapes:
                        if d < len(s) and const_int(s[d]) != 1:
                            dim_v = s[d]
                    broadcast.append(dim_v)
                new_shape = broadcast + list(shape[axis:])
        view_id = ""
        if self.graph is not None:
            view_id = self.graph.add_node(
                "v", "view", self.site(node), tuple(self.loops), name=base.label, buffer=base.buffer,
                dtype=self.graph.attrs(base.tensor_id).get("dtype"), index=self.text(getattr(node, "slice", node)),
                shape_v=tuple(new_shape) if new_shape is not None else None, function=frame.func, index_v=items,
            )
            self.graph.add_edge(view_id, base.node_id, "view_of")
        return TensorV(view_id, base.tensor_id, tuple(new_shape) if new_shape is not None else None, base.dtype,
                       base.buffer, label=base.label, partition_axis=0 if base.partition_axis and new_shape is not None else base.partition_axis)

    def tensor_method(self, method: "_TensorMethod", args, kwargs, node, frame) -> Value:
        base = method.tensor
        if method.name == "reshape":
            shape_arg = args[0] if len(args) == 1 else TupleV(tuple(args))
            shape, _ = self._shape_tuple(shape_arg)
            return self._derived_view(base, shape, node, frame, "reshape")
        if method.name in ("view", "bitcast", "reinterpret_cast", "with_dtype"):
            dtype = args[0] if args else kwargs.get("dtype", base.dtype)
            out = self._derived_view(base, base.shape, node, frame, method.name)
            if isinstance(out, TensorV):
                out.dtype = dtype
            return out
        if method.name == "ap":
            # .ap(pattern=[[stride, count], ...]): the counts are the view's shape.
            pattern = kwargs.get("pattern", args[0] if args else None)
            shape = None
            if isinstance(pattern, TupleV) and not pattern.inexact and all(
                isinstance(p, TupleV) and len(p.items) == 2 for p in pattern.items
            ):
                shape = tuple(p.items[1] for p in pattern.items)
            out = self._derived_view(base, shape, node, frame, "ap")
            if isinstance(out, TensorV) and "dtype" in kwargs:
                out.dtype = kwargs["dtype"]
            if self.graph is not None and isinstance(out, TensorV) and out.node_id:
                self.graph.attrs(out.node_id)["ap_v"] = {k: v for k, v in kwargs.items()}
                if args:
                    self.graph.attrs(out.node_id)["ap_v"].setdefault("pattern", args[0])
            return out
        return self._derived_view(base, None, node, frame, method.name)

    def _derived_view(self, base: TensorV, shape, node, frame, what: str) -> Value:
        view_id = ""
        if self.graph is not None:
            view_id = self.graph.add_node(
                "v", "view", self.site(node), tuple(self.loops), name=base.label, buffer=base.buffer,
                dtype=self.graph.attrs(base.tensor_id).get("dtype"), index=f".{what}(...)",
                shape_v=tuple(shape) if shape is not None else None, function=frame.func,
            )
            self.graph.add_edge(view_id, base.node_id, "view_of")
        return TensorV(view_id, base.tensor_id, tuple(shape) if shape is not None else None, base.dtype, base.buffer, label=base.label)

    @staticmethod
    def shape_of(t: TensorV) -> tuple[Value, ...] | None:
        """A tensor's shape, including a parameter's once its rank is known."""
        if t.shape is None and isinstance(t, _TensorWithShapeObj) and t.shape_obj is not None and t.shape_obj.rank is not None:
            return t.shape_obj.fix_rank(t.shape_obj.rank)
        return t.shape

    def _elementwise(self, name: str, operands: list[Value], node, frame) -> Value:
        info = api.classify(name) or api.ApiInfo(name, "nki.language", name.rsplit(".", 1)[-1], "compute", api.ENGINE_ANY)
        return self.operation(info, operands, {}, node, frame, operator=True)

    def operation(self, info: api.ApiInfo, args, kwargs, node, frame: Frame, operator: bool = False) -> Value:
        """One op node: reads every tensor argument, writes dst-like ones; a
        legacy call (or an nl.* call without dst) returns a new tile."""
        params = self._bind_call(info, args, kwargs)
        reads: list[tuple[str, Value]] = []
        writes: list[tuple[str, Value]] = []
        for pname, value in params:
            if isinstance(value, ParamTensor):
                if pname in _SCALAR_PARAMS or pname.endswith("_op") or pname.startswith(("op", "is_", "comp_op")):
                    continue  # an op, dtype, flag... never a tensor operand
                if (pname not in _TENSOR_ONLY_PARAMS and value.tensor is None
                        and value.name not in self._tensor_params):
                    continue  # y / scale / operand0 may be a Python scalar
                value = self.materialize(value, node)
            if isinstance(value, TupleV):
                tensors = [v for v in value.items if isinstance(v, (TensorV, ParamTensor))]
                for t in tensors:
                    t = self.materialize(t, node) if isinstance(t, ParamTensor) else t
                    (writes if pname in api.OUTPUT_PARAMS else reads).append((pname, t))
                continue
            if not isinstance(value, TensorV):
                continue
            if pname in api.OUTPUT_PARAMS or (info.short == "store" and pname == "dst"):
                writes.append((pname, value))
                if info.short == "dma_compute" or pname == "dst" and info.short in ("tensor_copy_predicated",):
                    reads.append((pname, value))
            else:
                reads.append((pname, value))
        # A legacy call returns its result tile; so do nl.* calls without dst.
        # Current nki.isa calls write dst and return nothing.
        returns_tile = (
            not writes
            and info.kind in ("compute", "matmul", "transpose", "dma")
            and info.short not in ("store", "dma_copy", "dma_compute", "dma_transpose", "sendrecv")
            and (self.legacy or info.module == "nki.language")
        )
        engine = info.engine
        engine_arg = kwargs.get("engine")
        if isinstance(engine_arg, ApiRef):
            engine_name = engine_arg.qual.name.rsplit(".", 1)[-1]
            if engine_name.endswith("_engine"):
                engine_name = engine_name[: -len("_engine")]
            if engine_name in ("tensor", "vector", "scalar", "gpsimd", "sync", "dma"):
                engine = engine_name
        result: Value = Const(None)
        extra = {"operator": True} if operator else {}
        op_id = self._record_op(info.name, node, frame, reads=reads, writes=writes, engine=engine, extra=extra,
                                params=params)
        if returns_tile:
            result = self._result_tile(info, params, reads, node, frame, engine)
            if self.graph is not None and isinstance(result, TensorV):
                self.graph.add_edge(op_id, result.node_id, "writes", param="result")
                self.graph.attrs(op_id)["legacy_result"] = result.node_id
        return result

    def _bind_call(self, info: api.ApiInfo, args, kwargs) -> list[tuple[str, Value]]:
        from .apitable import api_for, legacy_api

        table = self._table()
        sig = table.signature(info.name) or (legacy_api().signature(info.name) if not self.legacy else api_for(self.version).signature(info.name))
        out: list[tuple[str, Value]] = []
        positional = sig.positional if sig is not None and sig.params is not None else []
        for i, value in enumerate(args):
            name = positional[i].name if i < len(positional) else f"arg{i}"
            out.append((name, value))
        out.extend(kwargs.items())
        return out

    def _record_op(self, api_name: str, node, frame: Frame, reads, writes, engine: str, extra=None, params=None) -> str:
        if self.graph is None:
            return ""
        op_id = self.graph.add_node(
            "o", "op", self.site(node), tuple(self.loops), api=api_name, engine=engine, function=frame.func,
            params_v=dict(params or []), call=node, **(extra or {}),
        )
        for pname, value in reads:
            if isinstance(value, TensorV) and value.node_id:
                self.graph.add_edge(value.node_id, op_id, "reads", param=pname)
        for pname, value in writes:
            if isinstance(value, TensorV) and value.node_id:
                self.graph.add_edge(op_id, value.node_id, "writes", param=pname)
        return op_id

    def _result_tile(self, info: api.ApiInfo, params, reads, node, frame, engine) -> Value:
        """The tile a legacy call returns: shape and buffer by the op's kind."""
        named = dict(params)
        tensors = [v for _, v in reads if isinstance(v, TensorV)]
        shape: tuple[Value, ...] | None = None
        dtype: Value = named.get("dtype") if isinstance(named.get("dtype"), DType) else (tensors[0].dtype if tensors else self.unknown("dtype"))
        buffer = api.legacy_result_buffer(info, engine)
        tensors_shapes = [self.shape_of(t) for t in tensors]
        if info.short in ("load", "load_transpose2d"):
            src = named.get("src") or (tensors[0] if tensors else None)
            src_shape = self.shape_of(src) if isinstance(src, TensorV) else None
            if src_shape is not None:
                shape = src_shape if info.short == "load" else tuple(reversed(src_shape)) if len(src_shape) == 2 else src_shape
            buffer = "sbuf"
            if isinstance(src, TensorV):
                dtype = named.get("dtype") if isinstance(named.get("dtype"), DType) else src.dtype
        elif info.kind == "matmul":
            if info.short == "matmul":
                x, y = named.get("x"), named.get("y")
                transpose_x = truth(named.get("transpose_x", Const(False)))
                if isinstance(x, TensorV) and isinstance(y, TensorV) and x.shape and y.shape and len(x.shape) >= 2 and len(y.shape) >= 2:
                    m = x.shape[1] if transpose_x else x.shape[0]
                    shape = (m, y.shape[-1])
            else:
                st, mv = named.get("stationary"), named.get("moving")
                if isinstance(st, TensorV) and isinstance(mv, TensorV) and st.shape and mv.shape and len(st.shape) >= 2 and len(mv.shape) >= 2:
                    shape = (st.shape[-1], mv.shape[-1])
            dtype = DType("float32")
        elif info.kind == "transpose":
            src = named.get("data") or named.get("x") or (tensors[0] if tensors else None)
            if isinstance(src, TensorV) and src.shape is not None and len(src.shape) == 2:
                shape = (src.shape[1], src.shape[0])
        elif info.short in api.LANGUAGE_REDUCTIONS or info.short in ("tensor_reduce",):
            src = named.get("x") or named.get("data") or (tensors[0] if tensors else None)
            axis = named.get("axis")
            keep = truth(named.get("keepdims", Const(False)))
            if isinstance(src, TensorV) and src.shape is not None:
                axes = _axes(axis, len(src.shape))
                if axes is not None:
                    shape = tuple(
                        (Const(1) if keep else None) if i in axes else d for i, d in enumerate(src.shape)
                    )
                    shape = tuple(d for d in shape if d is not None)
                    if len(shape) == 1:
                        shape = shape + (Const(1),)
        elif info.short == "memset" and named.get("shape") is not None:
            shape, _ = self._shape_tuple(named["shape"])  # legacy nisa.memset(shape, value, dtype)
        elif info.short == "iota" and isinstance(named.get("expr"), IndexV):
            shape = named["expr"].axis_shape  # legacy nisa.iota(expr, dtype)
        elif info.short == "broadcast_to":
            target = named.get("shape")
            shape, _ = self._shape_tuple(target) if target is not None else (None, 0)
        elif tensors:
            shape = _broadcast(tensors_shapes)
        explicit = named.get("dtype")
        if explicit is not None and not (isinstance(explicit, Const) and explicit.value is None):
            dtype = explicit  # dtype= given: the result has it, known or not
        node_id = ""
        if self.graph is not None:
            node_id = self.graph.add_node(
                "t", "tensor", self.site(node), tuple(self.loops), name=None, buffer=buffer,
                dtype=dtype.name if isinstance(dtype, DType) else None, dtype_v=dtype, shape_v=shape, origin="result",
                api=info.name, partition_axis=0, address=None, function=frame.func,
                bytes_v=bytes_per_partition(shape, dtype, 0), call=node,
            )
        return TensorV(node_id, node_id, shape, dtype, buffer)


# ----------------------------------------------------------------------- helpers
def _ev_unsupported(self: Interpreter, node: ast.AST, frame: Frame) -> Value:
    return self.unknown(f"{type(node).__name__} expression", label=self.text(node))


def _stmt_ignored(self: Interpreter, stmt: ast.stmt, frame: Frame) -> None:
    return None


# Parameters of NKI calls that never take a tensor.
_SCALAR_PARAMS = {
    "op", "op0", "op1", "axis", "dtype", "engine", "mask", "name", "keepdims", "negate", "reduce_cmd", "perf_mode",
    "dge_mode", "oob_mode", "tile_position", "tile_size", "channel_multiplier", "cmp_op", "on_false_value",
    "fill_value", "pattern", "offset", "priority", "accumulate", "reduce_op", "shape", "transpose_x", "num_channels",
    "replica_groups", "dma_engine", "cores", "indirect_dim", "reverse0", "reverse1", "imm", "src_rank", "dst_rank",
}

# Parameters of NKI calls that only take tensors.
_TENSOR_ONLY_PARAMS = {
    "dst", "src", "data", "data0", "data1", "data2", "stationary", "moving", "in_", "srcs", "x", "reduce_res",
    "dst_scale", "indices", "initial", "on_true_tile", "on_true", "on_false",
}

_EVAL_DISPATCH: dict[type, object] = {}
_STMT_DISPATCH: dict[type, object] = {}
_NOPE = object()
_LOGGING_NAMES = {"log", "debug", "info", "warning", "warn", "error", "trace", "print", "log_info", "log_debug", "dump"}
_PURITY: dict[tuple, bool] = {}
# Caches keyed by node id; each entry keeps its node alive so ids stay unique.
def _node_text(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover
        return "?"
    return text if len(text) <= 80 else text[:77] + "..."


class NodeCache:
    """Results computed from an ast node, keyed by the node's identity.

    Each entry keeps its node alive, so an id cannot be reused by another
    node while the entry exists; the cache empties itself past ``limit``.
    """

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self.entries: dict[int, tuple[ast.AST, object]] = {}

    def get(self, node: ast.AST, compute):
        hit = self.entries.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        value = compute(node)
        if len(self.entries) >= self.limit:
            self.entries.clear()
        self.entries[id(node)] = (node, value)
        return value


_TEXT_CACHE = NodeCache(200_000)
_ASSIGNED_CACHE = NodeCache()
_ATTRS_CACHE = NodeCache()
_EVIDENCE_CACHE = NodeCache()
# Stable unknowns for attributes of unknown values, keyed by the parent's id
# (the parent object is kept alive in the entry so the id cannot be reused).
_OPAQUE_ATTRS: dict[int, tuple[Value, dict[str, Value]]] = {}


def _memo_key(func: FuncV, args, kwargs) -> tuple | None:
    if func.bound_self is not None or func.closure or func.partial_args or func.partial_kwargs:
        return None
    values = list(args) + list(kwargs.values())
    if not all(isinstance(v, Const) and isinstance(v.value, (int, float, str, bool, type(None))) for v in values):
        return None
    node = func.node
    try:
        return (str(func.module.path), getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
                tuple(v.value for v in args), tuple(sorted((k, v.value) for k, v in kwargs.items())))
    except TypeError:
        return None


def _is_pure(node: ast.AST) -> bool:
    """No stores outside locals, no global/nonlocal: safe to memoise on constants."""
    key = (id(node), getattr(node, "lineno", 0), getattr(node, "end_col_offset", 0), type(node).__name__)
    if key not in _PURITY:
        pure = True
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Global, ast.Nonlocal)):
                pure = False
                break
            if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(getattr(sub, "ctx", None), ast.Store):
                pure = False
                break
        _PURITY[key] = pure
    return _PURITY[key]
_FIELD = Unknown("dataclass field")
_BINOP_NAMES = {
    ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide", ast.FloorDiv: "divide",
    ast.Mod: "mod", ast.Pow: "power", ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
    ast.LShift: "left_shift", ast.RShift: "right_shift", ast.MatMult: "matmul",
}
_BUILTINS = {
    "range", "min", "max", "len", "abs", "int", "float", "round", "tuple", "list", "enumerate", "zip", "sum",
    "isinstance", "print", "setattr", "hasattr", "getattr", "callable", "id", "type", "str", "repr", "sorted",
    "reversed", "all", "any", "bool", "dict", "set", "divmod", "iter", "next", "map", "filter", "super", "object",
    "vars", "frozenset", "format", "hash", "ord", "chr",
}


@dataclass(eq=False)
class _FloatRange(Value):
    lo: float
    hi: float
    label: str | None = None


@dataclass(eq=False)
class _TensorWithShapeObj(TensorV):
    shape_obj: ShapeV | None = None


@dataclass(eq=False)
class _TensorMethod(Value):
    tensor: TensorV
    name: str
    label: str | None = None


@dataclass(eq=False)
class _ListMethod(Value):
    lst: TupleV
    name: str
    label: str | None = None

    def call(self, args: list[Value], interp: Interpreter) -> Value:
        if self.name == "append" and args:
            self.lst.items = self.lst.items + (args[0],)
            if len(self.lst.items) > 4096:
                self.lst.items = self.lst.items[-4096:]
            return Const(None)
        if self.name == "extend" and args and isinstance(args[0], TupleV):
            self.lst.items = self.lst.items + args[0].items
            return Const(None)
        if self.name == "copy":
            return TupleV(self.lst.items, is_list=True)
        if self.name == "pop" and self.lst.items:
            last = self.lst.items[-1]
            self.lst.items = self.lst.items[:-1]
            return last
        return interp.unknown(f"list.{self.name}")


@dataclass(eq=False)
class _DictMethod(Value):
    dct: DictV
    name: str
    label: str | None = None

    def call(self, args: list[Value], interp: Interpreter) -> Value:
        if self.name == "get" and args and isinstance(args[0], Const):
            try:
                if args[0].value in self.dct.items:
                    return self.dct.items[args[0].value]
            except TypeError:
                pass
            return args[1] if len(args) > 1 else Const(None)
        if self.name == "items":
            return TupleV(tuple(TupleV((Const(k), v)) for k, v in self.dct.items.items()))
        if self.name == "keys":
            return TupleV(tuple(Const(k) for k in self.dct.items))
        if self.name == "values":
            return TupleV(tuple(self.dct.items.values()))
        return interp.unknown(f"dict.{self.name}")


@dataclass(eq=False)
class _Enumerate(Value):
    inner: Value
    label: str | None = None


@dataclass(eq=False)
class _Zip(Value):
    inners: tuple[Value, ...]
    label: str | None = None


@dataclass(eq=False)
class _SeqV(Value):
    """A homogeneous sequence of unknown or large length (comprehension)."""

    element: Value
    length: Value
    label: str | None = None


@dataclass(eq=False)
class _TypeSpec(Value):
    index: Value
    label: str | None = None


@dataclass(eq=False)
class ArrayV(Value):
    """A host-side numpy array of known shape (constants for the kernel)."""

    shape: tuple[Value, ...]
    dtype: Value
    label: str | None = None


@dataclass(eq=False)
class _Placement(Value):
    """Legacy explicit placement: ``ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,))``."""

    buffer: str
    how: str  # alloc, mod_alloc, auto_alloc
    kwargs: dict
    args: tuple
    label: str | None = None


@dataclass(eq=False)
class _Decorator(Value):
    qual: Qual
    label: str | None = None


def _cached_evidence(node: ast.AST) -> set[str]:
    return _EVIDENCE_CACHE.get(node, tensor_evidence)


def _has_slice(index: Value) -> bool:
    items = index.items if isinstance(index, TupleV) and not index.is_list else (index,)
    return any(isinstance(x, (SliceV, DsV, IndexV)) or (isinstance(x, Const) and x.value is Ellipsis) for x in items)


_TENSOR_ATTRS = {"shape", "dtype", "buffer", "reshape", "ap", "view", "T", "ndim", "bitcast", "reinterpret_cast"}


def tensor_evidence(fn: ast.AST) -> set[str]:
    """Parameter names the function body treats as tensors (x.shape,
    x[a:b], x.reshape(...))."""
    params = {a.arg for a in getattr(fn, "args", ast.arguments([], [], None, [], [], None, [])).args}
    out: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in params:
            if node.attr in _TENSOR_ATTRS:
                out.add(node.value.id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in params:
            sl = node.slice
            items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
            if any(isinstance(x, ast.Slice) for x in items) or len(items) > 1:
                out.add(node.value.id)
        elif isinstance(node, ast.Call):
            # nl.load(x[0]) / dma_copy(src=x[0]): an element of a tensor.
            for arg in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Name) and arg.value.id in params:
                    if isinstance(node.func, ast.Attribute):
                        out.add(arg.value.id)
    return out


def _index_arith(op: ast.operator, left: Value, right: Value) -> Value:
    """Arithmetic on legacy index expressions.

    Two index expressions combine by broadcasting their axis shapes (as
    numpy does: ``i_f1 * 8 + i_f2`` spans both axes); an index and a number
    shift or scale the index's offset.
    """
    if isinstance(left, IndexV) and isinstance(right, IndexV):
        shape = _broadcast([left.axis_shape, right.axis_shape]) or left.axis_shape
        extent = int_binop(ast.Mult, left.extent, right.extent)
        offset = int_binop(type(op), left.offset, right.offset) if isinstance(op, (ast.Add, ast.Sub)) else Unknown("index offset")
        return IndexV(extent, shape, offset)
    idx = left if isinstance(left, IndexV) else right
    other = right if idx is left else left
    if isinstance(op, ast.Add):
        return IndexV(idx.extent, idx.axis_shape, int_binop(ast.Add, idx.offset, other))
    if isinstance(op, ast.Sub) and idx is left:
        return IndexV(idx.extent, idx.axis_shape, int_binop(ast.Sub, idx.offset, other))
    if isinstance(op, ast.Mult):
        return IndexV(idx.extent, idx.axis_shape, int_binop(ast.Mult, idx.offset, other))
    return IndexV(idx.extent, idx.axis_shape, Unknown("index offset"))


def _visible_lists(frame: Frame) -> list[TupleV]:
    """Lists reachable from the frame's variables (and object attributes)."""
    out: dict[int, TupleV] = {}
    f: Frame | None = frame
    while f is not None:
        for value in f.vars.values():
            if isinstance(value, TupleV) and value.is_list:
                out[id(value)] = value
            elif isinstance(value, ObjectV):
                for attr in value.attrs.values():
                    if isinstance(attr, TupleV) and attr.is_list:
                        out[id(attr)] = attr
        f = f.parent
    return list(out.values())


def _freeze(value: Value) -> Value:
    """A copy of an integer whose current bounds (facts of the current
    branch) stay attached after the branch's facts are undone."""
    if isinstance(value, ParamTensor):
        return value
    if isinstance(value, Int) and (value.sym is not None or value.terms is not None):
        lo, hi = value.bounds
        if lo == hi and lo not in (INF, -INF):
            return Const(int(lo), label=value.label)
        return Int(lo, hi, value.sym, value.label, value.reason, value.terms, value.offset, value.meta)
    if isinstance(value, TupleV) and not value.is_list:
        items = tuple(_freeze(v) for v in value.items)
        if any(a is not b for a, b in zip(items, value.items)):
            return TupleV(items, label=value.label)
    return value


def _join_all(values: list[Value]) -> Value:
    out = values[0]
    for v in values[1:]:
        out = join(out, v)
    return out


def _trip_count(r: RangeV) -> Value:
    step = const_int(r.step)
    if step is None or step == 0:
        return Unknown("loop step unknown")
    if step > 0:
        span = int_binop(ast.Sub, r.stop, r.start)
        trip = int_binop(ast.FloorDiv, int_binop(ast.Add, span, Const(step - 1)), Const(step))
    else:
        span = int_binop(ast.Sub, r.start, r.stop)
        trip = int_binop(ast.FloorDiv, int_binop(ast.Add, span, Const(-step - 1)), Const(-step))
    b = int_bounds(trip)
    if b is not None and b[0] < 0:
        trip = make_int(0, max(b[1], 0))
    return trip


def _hi_minus_one(trip: Value) -> float:
    b = int_bounds(trip)
    return INF if b is None else b[1] - 1


def _assigned_names(body: list[ast.stmt]) -> set[str]:
    """Names stored anywhere in a block (cached by the block's first statement)."""
    if not body:
        return set()
    return _ASSIGNED_CACHE.get(body[0], lambda _first: _compute_assigned(body))


def _assigned_attrs(body: list[ast.stmt]) -> set[tuple[str, str]]:
    """(name, attr) of every ``name.attr = ...`` / ``name.attr += ...`` in a block."""
    if not body:
        return set()
    return _ATTRS_CACHE.get(body[0], lambda _first: _compute_assigned_attrs(body))


def _compute_assigned_attrs(body: list[ast.stmt]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
                out.add((node.value.id, node.attr))
    return out


def _compute_assigned(body: list[ast.stmt]) -> set[str]:
    out: set[str] = set()
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
    return out


def _widen(value: Value, name: str) -> Value:
    """A loop-carried variable's value on an arbitrary iteration."""
    if isinstance(value, Const) and isinstance(value.value, bool):
        return Unknown(f"{name} changes across iterations", label=name)
    if int_bounds(value) is not None:
        return Int(label=name, reason=f"{name} changes across iterations")
    if isinstance(value, (TensorV, TupleV, ObjectV, DictV, FuncV)):
        return value
    if isinstance(value, Const) and value.value is None:
        return value
    return Unknown(f"{name} changes across iterations", label=name)


def _slice_size(item: SliceV, dim: Value) -> Value:
    start = Const(0) if _is_none(item.start) else item.start
    stop = dim if _is_none(item.stop) else item.stop
    step = 1 if _is_none(item.step) else const_int(item.step)
    if step is None:
        return Unknown("slice step unknown")
    cs, ce, cd = const_int(start), const_int(stop), const_int(dim)
    if cs is not None and cs < 0 and cd is not None:
        start = Const(cd + cs)
    if ce is not None and ce < 0 and cd is not None:
        stop = Const(cd + ce)
    # Python clamps the stop to the dimension.
    if cd is not None and ce is not None and ce > cd:
        stop = dim
    size = int_binop(ast.Sub, stop, start)
    if step != 1 and step > 0:
        size = int_binop(ast.FloorDiv, int_binop(ast.Add, size, Const(step - 1)), Const(step))
    b = int_bounds(size)
    if b is not None and b[0] < 0:
        size = make_int(0, max(b[1], 0))
    if isinstance(size, Int) and size.label is None:
        size.label = f"{_describe_v(start)}:{_describe_v(stop)}"
    return size


def _describe_v(v: Value) -> str:
    c = const_int(v)
    return str(c) if c is not None else (v.label or "?")


def _is_none(v: Value) -> bool:
    return isinstance(v, Const) and v.value is None


def _buffer_name(v: Value | None) -> str:
    if isinstance(v, _Placement):
        return v.buffer
    if isinstance(v, BufferV):
        return v.name
    if isinstance(v, Const) and isinstance(v.value, str) and v.value in BUFFERS:
        return v.value
    if isinstance(v, ApiRef):
        short = v.qual.name.rsplit(".", 1)[-1]
        if short in BUFFERS:
            return short
        if v.qual.name.startswith("nki.compiler"):
            # legacy nki.compiler.sbuf.mod_alloc(...) / psum.alloc(...)
            return "psum" if ".psum" in v.qual.name else "sbuf"
    return "unknown" if v is not None else "sbuf"


def _broadcast(shapes: list[tuple[Value, ...] | None]) -> tuple[Value, ...] | None:
    known = [s for s in shapes if s is not None]
    if not known:
        return None
    rank = max(len(s) for s in known)
    out: list[Value] = []
    for i in range(rank):
        dim: Value = Const(1)
        for s in known:
            j = i - (rank - len(s))
            if j >= 0 and const_int(s[j]) != 1:
                dim = s[j]
        out.append(dim)
    return tuple(out)


def _axes(axis: Value | None, rank: int) -> set[int] | None:
    if axis is None:
        return None
    if isinstance(axis, TupleV):
        out = set()
        for a in axis.items:
            c = const_int(a)
            if c is None:
                return None
            out.add(c % rank if rank else c)
        return out
    c = const_int(axis)
    if c is None:
        return None
    return {c % rank if rank else c}


def _contains(container: Value, item: Value) -> bool | None:
    if isinstance(container, TupleV) and isinstance(item, Const):
        values = []
        for x in container.items:
            if not isinstance(x, Const):
                return None
            values.append(x.value)
        try:
            return item.value in values
        except TypeError:
            return None
    if isinstance(container, DictV) and isinstance(item, Const):
        try:
            return item.value in container.items
        except TypeError:
            return None
    return None


def _py_binop(op: ast.operator, a: Any, b: Any) -> Any:
    if not all(isinstance(x, (int, float, str, bool)) or x is None for x in (a, b)):
        return _NOPE
    try:
        if isinstance(op, ast.Add):
            if isinstance(a, str) and isinstance(b, str) and len(a) + len(b) > 4096:
                return _NOPE
            return a + b
        if isinstance(op, ast.Sub):
            return a - b
        if isinstance(op, ast.Mult):
            if isinstance(a, str) or isinstance(b, str):
                return _NOPE
            return a * b
        if isinstance(op, ast.Div):
            return a / b
        if isinstance(op, ast.FloorDiv):
            return a // b
        if isinstance(op, ast.Mod):
            if isinstance(a, str):
                return _NOPE
            return a % b
        if isinstance(op, ast.Pow):
            if isinstance(b, (int, float)) and abs(b) > 256:
                return _NOPE
            return a ** b
        if isinstance(op, ast.LShift):
            return a << b if 0 <= b < 64 else _NOPE
        if isinstance(op, ast.RShift):
            return a >> b
        if isinstance(op, ast.BitAnd):
            return a & b
        if isinstance(op, ast.BitOr):
            return a | b
        if isinstance(op, ast.BitXor):
            return a ^ b
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return _NOPE
    return _NOPE


def _maybe_project(dotted: str) -> bool:
    """Whether an absolute import could be a module of the project itself."""
    top = dotted.split(".")[0]
    return top not in _EXTERNAL_TOPS


_EXTERNAL_TOPS = {
    "nki", "neuronxcc", "torch_neuronx", "jax_neuronx", "numpy", "np", "torch", "jax", "triton", "math", "os", "sys",
    "functools", "itertools", "typing", "dataclasses", "enum", "collections", "abc", "logging", "re", "json", "time",
    "random", "warnings", "pytest", "unittest", "ml_dtypes", "cupy", "numba", "pycuda", "scipy", "operator", "copy",
    "contextlib", "inspect", "pathlib", "argparse", "subprocess", "shutil", "tempfile", "textwrap", "string", "types",
    "torch_xla", "transformers", "neuronx_distributed", "neuronx_distributed_inference", "__future__",
}


def _class_attr(cls: ClassV | None, attr: str, depth: int = 0) -> Value | None:
    if cls is None or depth > 8:
        return None
    if attr in cls.attrs:
        return cls.attrs[attr]
    for base in cls.bases:
        if isinstance(base, ClassV):
            found = _class_attr(base, attr, depth + 1)
            if found is not None:
                return found
    return None


def _is_property(node: ast.AST) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
        or (isinstance(d, ast.Attribute) and d.attr in ("property", "cached_property"))
        for d in getattr(node, "decorator_list", [])
    )


def iter_functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
