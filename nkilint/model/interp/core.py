"""The abstract interpreter: evaluates a kernel body once and builds its graph.

Statements are executed over abstract values (values.py). Known branches
are taken, unknown ones are both executed and joined; loop bodies run once
with the iterator as a range and loop-carried variables widened; project
helpers are inlined with call-site arguments (bounded depth); ``assert``
narrows integer symbols. A step budget guarantees termination on any input.

The interpreter is split by concern: expressions, facts, calls and tensors
are mixins (exprs, facts, calls, tensors in this package); its private
value kinds live in state and its pure helpers in helpers. Neither state
nor helpers imports the interpreter: the package's import graph has no
circle.
"""

from __future__ import annotations

import ast

from .. import api_semantics as api
from ..bindings import Gen, canonicalize
from ..graph import Guard, KernelGraph, Site, bytes_per_partition
from .calls import CallsMixin
from .exprs import ExpressionsMixin
from .facts import FactsMixin
from .helpers import (
    tensor_evidence,
    _BINOP_NAMES,
    _FIELD,
    _TEXT_CACHE,
    _assigned_attrs,
    _assigned_names,
    _cached_evidence,
    _freeze,
    _hi_minus_one,
    _join_all,
    _maybe_project,
    _node_text,
    _trip_count,
    _visible_lists,
    _widen,
    register_bound,
)
from .state import (
    Budget,
    Frame,
    InterpStats,
    MAX_STEPS,
    MAX_UNROLL,
    ParamTensor,
    ShapeV,
    _Dead,
    _Enumerate,
    _Return,
    _Zip,
)
from .tensors import TensorsMixin
from .tracer import TracerApisMixin
from ..project import ModuleInfo
from ..values import (
    ClassV,
    Const,
    DType,
    DictV,
    FuncV,
    INF,
    Int,
    ModuleV,
    ObjectV,
    RangeV,
    RegisterV,
    Sym,
    TensorV,
    TupleV,
    Unknown,
    Value,
    const_int,
    int_bounds,
    join,
    make_int,
    truth,
)
from ...targets import Target
from ...versions import NkiVersion


class Interpreter(ExpressionsMixin, FactsMixin, CallsMixin, TensorsMixin, TracerApisMixin):
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
        # A launch-site specialization: the root kernel's parameters that a
        # launch decides (name -> launches.ArgSpec).
        self.param_overrides: dict = {}
        self._program_syms: dict[str, Sym] = {}
        self.active_functions: list[int] = []  # functions being inlined (recursion guard)
        # Stable unknowns for attributes of unknown values (see opaque()).
        self.opaque_attrs: dict[int, tuple[Value, dict[str, Value]]] = {}
        # Narrowings of symbols, undone when a branch ends (facts are scoped).
        self.trail: list[tuple[Sym, float, float]] = []
        # Call summaries (summaries.py): key -> Summary, the number of calls
        # being recorded, and their bookkeeping log (what a replay repeats).
        self.summaries: dict = {}
        self._rec = 0
        self._log: list[tuple] = []
        self._opaque_made = 0
        self._summary_tries: dict[int, int] = {}  # id(function node) -> failed recordings, -1: one succeeded

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
        if self._rec:
            self._log.append(("u", reason))
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
        if self._rec:
            self._log.append(("v", id(node)))
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
        spec = self.param_overrides.get(param.arg) if root else None
        if spec is not None:
            if spec.shape is None:
                return Const(spec.value)
            return ParamTensor(sym=Sym(param.arg, origin="param"), label=param.arg, reason=f"parameter {param.arg}",
                               name=param.arg, node=param, buffer=self.param_buffer,
                               annotation_shape=tuple(Const(d) for d in spec.shape),
                               annotation_dtype=DType(spec.dtype) if spec.dtype else None)
        if isinstance(default, Const) and default.value is None:
            default = None  # `bias=None`: an optional tensor (or config), tensor on use
        if default is not None and not isinstance(default, Unknown):
            # A kernel's keyword default may be overridden by the caller: keep
            # it only as a hint; the value itself is unknown.
            if isinstance(default, Const) and isinstance(default.value, bool):
                return Unknown(f"parameter {param.arg}", label=param.arg, default=default)
            b = int_bounds(default)
            if b is not None:
                return Int(label=param.arg, reason=f"parameter {param.arg}", sym=Sym(param.arg, origin="param"))
            return Unknown(f"parameter {param.arg}", label=param.arg, default=default)
        shape = None
        if param.annotation is not None:
            qual = self.module.bindings.resolve(param.annotation)
            if qual is not None and qual.name == "nki.isa.VirtualRegister":
                return RegisterV(label=param.arg)
            shape = self._annotation_shape(param.annotation)
        return ParamTensor(sym=Sym(param.arg, origin="param"), label=param.arg, reason=f"parameter {param.arg}", name=param.arg,
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
                    self.graph.version += 1
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
        self.scalar_condition(test, stmt.test)
        decided = truth(test)
        if decided is True:
            self.learn(stmt.test, frame, True)
            self.exec_block(stmt.body, frame)
            return
        if decided is False:
            self.learn(stmt.test, frame, False)
            self.exec_block(stmt.orelse, frame)
            return
        self._branches([(stmt.body, stmt.test, True), (stmt.orelse, stmt.test, False)], frame, test)

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

    def _branches(self, branches: list[tuple[list[ast.stmt], ast.AST | None, bool]], frame: Frame,
                  test_value: Value | None = None) -> None:
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
            self._run_branches(branches, frame, before, outcomes, facts, returned, test_value)
        finally:
            if self.graph is not None:
                self.graph.conditional_depth -= 1
        if facts:
            # In facts[0]'s order, not a set's: the narrowing order is the trail's.
            common = [sym for sym in facts[0] if all(sym in f for f in facts[1:])]
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

    def _run_branches(self, branches, frame: Frame, before, outcomes, facts, returned, test_value=None) -> None:
        for body, test, polarity in branches:
            frame.vars = dict(before)
            mark = len(self.trail)
            guarded = self.push_guard(test, test_value, polarity)
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
            finally:
                if guarded:
                    self.graph.guard_stack.pop()

    def push_guard(self, test: ast.AST | None, value: Value | None, branch: bool) -> bool:
        """Record that what follows runs only when ``test`` is ``branch``
        (the caller pops ``graph.guard_stack`` when the branch ends)."""
        if test is None or self.graph is None:
            return False
        self.graph.guard_stack.append(
            Guard(test, value if value is not None else Unknown("condition"), branch, self.site(test), tuple(self.loops))
        )
        return True

    def _merge_outcomes(self, outcomes, frame: Frame, returned) -> None:
        merged = dict(outcomes[0])
        for other in outcomes[1:]:
            # Names in first-seen order, not a set of strings: the order makes
            # phi view node ids, which must not depend on PYTHONHASHSEED.
            for key in list(merged) + [k for k in other if k not in merged]:
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
        self._loop(stmt, frame, kind, trip, element, stmt.target, stmt.body, stmt.orelse,
                   register=register_bound(iterable))

    _stmt_AsyncFor = _stmt_For

    def _stmt_While(self, stmt: ast.While, frame: Frame) -> None:
        test = self.eval(stmt.test, frame)
        self.scalar_condition(test, stmt.test)
        if truth(test) is False:
            self.exec_block(stmt.orelse, frame)
            return
        self._loop(stmt, frame, "while", self.unknown("while-loop trip count"), None, None, stmt.body, [],
                   test_node=stmt.test, register=isinstance(test, RegisterV))

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
            sym = Sym(f"index of {name}", lo, hi, origin="loop")
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

    def _loop(self, stmt, frame: Frame, kind: str, trip: Value, element: Value | None, target, body, orelse,
              test_node=None, register: bool = False) -> None:
        loop_id = None
        if self.graph is not None:
            loop_id = self.graph.add_node(
                "l", "loop", self.site(stmt), tuple(self.loops),
                loop_kind=kind, trip_v=trip, iterator=self.text(target) if target is not None else None,
                function=frame.func, parent=self.loops[-1] if self.loops else None, register_bound=register,
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
                self.graph.version += 1
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


# ----------------------------------------------------------------------- helpers


def _stmt_ignored(self: Interpreter, stmt: ast.stmt, frame: Frame) -> None:
    return None




_STMT_DISPATCH: dict[type, object] = {}

# Re-exported for other model modules and rule packs.
__all__ = ["Budget", "Interpreter", "InterpStats", "ParamTensor", "ShapeV", "tensor_evidence"]
