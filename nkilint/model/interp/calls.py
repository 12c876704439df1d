"""Calls in the abstract interpreter: inlining project helpers, classes,
builtins, library functions, and NKI API calls (loops, ranges, indices)."""

from __future__ import annotations

import ast
import math

from .. import api_semantics as api
from ..bindings import Qual
from . import summaries
from .summaries import (
    CallContext,
    Summary,
    fingerprint_call,
    fingerprint_read,
    fingerprint_value,
    facts_hold,
    instantiate,
    make_template,
)
from ..values import sym_mark as values_sym_mark
from .helpers import _FIELD, _LOGGING_NAMES, _class_attr, _is_pure, _memo_key, _spread, _trip_count, register_bound
from .state import (
    ArrayV,
    Frame,
    MAX_INLINE_DEPTH,
    ParamTensor,
    ShapeV,
    _Decorator,
    _DictMethod,
    _Enumerate,
    _FloatRange,
    _ListMethod,
    _Placement,
    _SeqV,
    _TensorMethod,
    _Zip,
)
from ..values import (
    ApiRef,
    BufferV,
    TensorV,
    ClassV,
    Const,
    DType,
    DictV,
    DsV,
    FuncV,
    INF,
    IndexV,
    Int,
    ObjectV,
    ParDimV,
    RangeV,
    RegisterV,
    Sym,
    TupleV,
    Unknown,
    Value,
    const_int,
    int_binop,
    int_bounds,
    make_int,
    truth,
)


# Calls of one function recorded without a usable summary, after which the
# interpreter stops trying to summarize it.
_GIVE_UP = 4
# A function whose call ran fewer interpreter steps than this is not
# summarized: its fingerprints would cost more than its replays save.
_MIN_STEPS = 40


class CallsMixin:
    """Calls: project functions inlined, classes instantiated, builtins,
    library functions and NKI APIs.

    Part of :class:`~nkilint.model.interp.Interpreter`."""

    def _ev_Call(self, node: ast.Call, frame: Frame) -> Value:
        func = self.eval(node.func, frame)
        args: list[Value] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                items = _spread(self.eval(a.value, frame))
                args.extend(items if items is not None else (self.unknown("*args"),))
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
            result = self.call_function(func, args, kwargs, node)
            if self.graph is not None:
                kind = _return_kind(result)
                self.graph.helper_returns.setdefault(id(node), set()).add(kind)
                if self._rec:
                    self._log.append(("r", id(node), kind))
            return result
        if isinstance(func, ClassV):
            if "logger" in func.node.name.lower():
                return self.unknown("logger object")
            return self.instantiate(func, args, kwargs, node)
        if isinstance(func, _TensorMethod):
            return self.tensor_method(func, args, kwargs, node, frame)
        if isinstance(func, _ListMethod):
            return func.call(args, self.unknown)
        if isinstance(func, _DictMethod):
            return func.call(args, self.unknown)
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
            self._inline_failure()
            return self.unknown("helper call too deep to inline")
        fnode = func.node
        if isinstance(fnode, (ast.FunctionDef, ast.AsyncFunctionDef)) and id(fnode) in self.active_functions:
            self._inline_failure()
            return self.unknown("recursive helper")
        if self.graph is None or not summaries.ENABLED:
            return self._inline(func, args, kwargs, node, key, memo)
        tries = self._summary_tries.get(id(fnode), 0)
        if tries >= _GIVE_UP:
            # Every call so far changed the graph or its inputs: stop paying
            # for fingerprints (only a cost decision; results are the same).
            return self._inline(func, args, kwargs, node, key, memo)
        fingerprint = fingerprint_call(func, args, kwargs, self.opaque_attrs)
        if fingerprint is None:
            if tries >= 0:
                self._summary_tries[id(fnode)] = tries + 1
            return self._inline(func, args, kwargs, node, key, memo)
        skey = (fingerprint[0], self.depth)
        summary = self.summaries.get(skey)
        if summary is not None:
            replayed = self._replay(summary, func, args, kwargs, node)
            if replayed is not None:
                return replayed
        return self._record(skey, fingerprint, func, args, kwargs, node, key, memo)

    def _inline_failure(self) -> None:
        self.stats.inline_failures += 1
        if self._rec:
            self._log.append(("i",))

    def _read_global(self, module, name: str, value: Value) -> None:
        """A module-level name read while a call is recorded: its summary
        holds only while the name keeps this value."""
        read = fingerprint_read(value, self.opaque_attrs)
        self._log.append(("x",) if read is None else ("g", module, name, read[0], read[1]))

    def _effects_mark(self) -> tuple:
        """Everything but the graph's nodes a call may change that no summary
        replays (loop nodes are checked and replayed apart)."""
        g = self.graph
        return (len(g.scalar_misuses), len(g.prepared_collectives), len(g.split_collective_issues),
                id(g.pending_prepare), len(g.grid_alloc_issues), g.truncated, self._opaque_made,
                len(self._program_syms))

    def _record(self, skey, fingerprint, func: FuncV, args, kwargs, node, key, memo) -> Value:
        """Inline the call and keep a summary of it if it can be replayed."""
        _, paths, keep = fingerprint
        graph = self.graph
        mark = self._effects_mark()
        version = graph.version
        sym_mark = values_sym_mark()
        budget = self.budget
        start = len(self._log)
        trail = len(self.trail)
        if graph.journal is None:
            graph.journal = []
        jstart = len(graph.journal)
        outer = CallContext(tuple(self.loops), len(self.chain), tuple(graph.guard_stack), graph.conditional_depth > 0)
        self._rec += 1
        try:
            result = self._inline(func, args, kwargs, node, key, memo)
        finally:
            self._rec -= 1
            log = self._log[start:]
            new_nodes = graph.journal[jstart:]
            if self._rec == 0:
                self._log.clear()
                graph.journal = None
        fnode_id = id(func.node)
        steps = budget - self.budget
        if steps < _MIN_STEPS:
            # Too cheap to be worth its fingerprints (a cost decision only).
            self._summary_tries[fnode_id] = _GIVE_UP
        elif self._summary_tries.get(fnode_id, 0) >= 0:
            self._summary_tries[fnode_id] = self._summary_tries.get(fnode_id, 0) + 1
        if self._effects_mark() != mark or any(e[0] == "x" for e in log) or len(self.trail) < trail:
            return result
        if graph.version - version != sum(2 if graph.attrs(n)["loops"] else 1 for n in new_nodes):
            return result  # edges or attributes besides the new nodes' own
        after = fingerprint_call(func, args, kwargs, self.opaque_attrs)
        if after is None or after[0] != skey[0]:
            return result  # the call changed its arguments
        reads: dict[tuple[int, str], tuple] = {}
        shared: dict[int, object] = {}
        for entry in log:
            if entry[0] == "g":
                reads.setdefault((id(entry[1]), entry[2]), (entry[1], entry[2], entry[3]))
                for obj in entry[4]:
                    shared[id(obj)] = obj
        for module, name, fp in reads.values():
            if fingerprint_value(self.module_env(module).get(name), self.opaque_attrs) != fp:
                return result  # the call changed a module-level value it read
        made = make_template(result, paths, sym_mark, shared, graph, new_nodes, outer, self.trail[trail:])
        if made is None:
            return result
        tmpl, loops, facts, fresh = made
        entered = frozenset(e[1] for e in log if e[0] == "v")
        self.summaries[skey] = Summary(tmpl, fresh, loops, facts, steps, log, entered,
                                       tuple(reads.values()), keep + list(shared.values()))
        self.stats.summaries_recorded += 1
        if steps >= _MIN_STEPS:
            self._summary_tries[fnode_id] = -1  # summarizable: never give up on it
        return result

    def _replay(self, summary, func: FuncV, args, kwargs, node) -> Value | None:
        """The recorded call's result and bookkeeping, or None when this call
        could behave differently (a module value changed, the recursion guard
        or the step budget would cut it)."""
        if self.budget - summary.steps <= 0:
            return None  # the budget runs out inside: inline it, to stop at the same step
        if summary.entered.intersection(self.active_functions):
            return None
        if not facts_hold(summary):
            return None
        for module, name, fp in summary.reads:
            if fingerprint_value(self.module_env(module).get(name), self.opaque_attrs) != fp:
                return None
        self.budget -= summary.steps
        stats, graph = self.stats, self.graph
        for entry in summary.log:
            kind = entry[0]
            if kind == "u":
                self.unknown(entry[1])
                continue
            if kind == "v":
                stats.functions_visited.add(entry[1])
            elif kind == "h":
                if entry[1] not in graph.helpers:
                    graph.helpers.append(entry[1])
            elif kind == "r":
                graph.helper_returns.setdefault(entry[1], set()).add(entry[2])
            elif kind == "i":
                stats.inline_failures += 1
            if self._rec:
                self._log.append(entry)
        stats.summary_hits += 1
        call_site = (str(self._current_module.path), node)
        return instantiate(summary, func, args, kwargs, graph, tuple(self.loops), tuple(self.chain) + (call_site,),
                           self.trail)

    def _inline(self, func: FuncV, args, kwargs, node, key, memo) -> Value:
        fnode = func.node
        self.depth += 1
        self.active_functions.append(id(fnode))
        if self.graph is not None and isinstance(fnode, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = func.qualname or fnode.name
            if name not in self.graph.helpers:
                self.graph.helpers.append(name)
            if self._rec:
                self._log.append(("h", name))
        self.chain.append((str(self._current_module.path), node))
        try:
            result = self.run_function(func, args, kwargs)
            if key is not None and isinstance(result, Const) and _is_pure(func.node):
                memo[key] = result
            return result
        finally:
            self.chain.pop()
            self.active_functions.pop()
            self.depth -= 1


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
                    out = make_int(lo, hi)
                    if short == "ceil" and v.quotient is not None and isinstance(out, Int):
                        out.meta = ("ceildiv", v.quotient[0], Const(v.quotient[1]))
                    return out
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
                return Int(sym=Sym(label, lo, hi, derived=True, origin="derived"), label=label, reason=short)
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
        if short == "isinstance" and len(args) == 2:
            decided = _isinstance(args[0], args[1])
            return Const(decided) if decided is not None else Int(0, 1, reason="isinstance")
        if short in ("print", "setattr", "hasattr", "getattr", "callable", "id", "type", "str", "repr", "sorted", "reversed", "all", "any", "bool", "dict", "set", "divmod", "iter", "next", "map", "filter", "super", "object", "vars", "frozenset", "format", "hash", "ord", "chr"):
            if short == "getattr" and len(args) >= 2 and isinstance(args[1], Const) and isinstance(args[1].value, str):
                return self.attribute(args[0], args[1].value, node, frame)
            if short == "bool" and args:
                self.scalar_condition(args[0], node)
                t = truth(args[0])
                return Const(t) if t is not None else self.unknown("bool")
            if short == "reversed" and args and isinstance(args[0], (TupleV, RangeV)):
                return args[0]
            if short == "str" and len(args) == 1 and not kwargs and isinstance(args[0], DType):
                # str() of a dtype: equal to str() of the same dtype and of no other
                # (`str(t.dtype) == str(nl.float32)`, the usual element-size test), while
                # its text, which differs between generations, stays unknown.
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
        traced = self.tracer_call(qual, args, kwargs, node, frame)  # NKI 0.7/0.8 scalars, grids, if_else, ...
        if traced is not None:
            return traced
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
                if self._rec:
                    self._log.append(("x",))  # a symbol of this interpreter: not replayed
                sym = self._program_syms.get(key)
                if sym is None:
                    hi = max(self.target.lnc_max - 1, 0) if not self.legacy else INF
                    sym = self._program_syms[key] = Sym(key, 0, hi, origin="program")
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
        if name == "nki.isa.register_alloc":
            return RegisterV(label=self.text(node))
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
        self.scalar_int64_use("int64-bound", tuple(args[:2]), node)
        if len(args) >= 3 and isinstance(args[2], FuncV):
            rng = RangeV("fori_loop", args[0], args[1], Const(1))
            trip = _trip_count(rng)
            loop_id = None
            if self.graph is not None:
                loop_id = self.graph.add_node("l", "loop", self.site(node), tuple(self.loops), loop_kind="fori_loop",
                                              trip_v=trip, iterator=None, function=frame.func,
                                              parent=self.loops[-1] if self.loops else None,
                                              register_bound=register_bound(rng))
                self.loops.append(loop_id)
            try:
                start = int_bounds(args[0]) or (-INF, INF)
                stop = int_bounds(args[1]) or (-INF, INF)
                lo, hi = start[0], stop[1] - 1
                if lo == hi and lo not in (INF, -INF):
                    index: Value = Const(int(lo))
                else:
                    bounds_text = ", ".join(self.text(a) for a in node.args[:2]) if len(node.args) >= 2 else "..."
                    sym = Sym(f"index of fori_loop({bounds_text})", lo, hi, origin="loop")
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
                                          function=frame.func, parent=self.loops[-1] if self.loops else None,
                                          register_bound=any(isinstance(a, RegisterV) for a in args[:1]))
            self.loops.append(loop_id)
        try:
            params = getattr(body.node, "args", None)
            n = len(params.args) if params is not None else 0
            return self.call_function(body, [self.unknown("while_loop carried value") for _ in range(n)], {}, node)
        finally:
            if loop_id is not None:
                self.loops.pop()


_PY_TYPES = {
    "int": (int,), "float": (float, int), "bool": (bool,), "str": (str,), "tuple": (), "list": (), "dict": (),
    "NoneType": (type(None),),
}


def _isinstance(value: Value, cls: Value) -> bool | None:
    """isinstance() when the answer is certain, else None.

    Project classes are decided for project objects (and are never numbers,
    tuples or tensors); builtin types for constants and sequences; NKI tensor
    types for tensors. Parameters and other unknowns stay undecided.
    """
    if isinstance(cls, TupleV):
        answers = [_isinstance(value, c) for c in cls.items]
        if any(a is True for a in answers):
            return True
        return False if all(a is False for a in answers) else None
    if isinstance(value, (ParamTensor, Unknown)):
        return None
    if isinstance(cls, ClassV):
        if isinstance(value, ObjectV):
            return value.cls is not None and _subclass(value.cls, cls)
        if isinstance(value, (Const, Int, TupleV, DictV, TensorV, DType, BufferV)):
            return False
        return None
    if isinstance(cls, ApiRef):
        name = cls.qual.name
        short = name.rsplit(".", 1)[-1]
        if name.startswith("builtins."):
            if short in ("tuple", "list"):
                if isinstance(value, TupleV):
                    return value.is_list == (short == "list")
                return False if isinstance(value, (Const, Int, ObjectV, TensorV, DictV)) else None
            if short == "dict":
                return isinstance(value, DictV) if isinstance(value, (Const, Int, ObjectV, TensorV, TupleV, DictV)) else None
            if short in _PY_TYPES:
                if isinstance(value, Const):
                    return isinstance(value.value, _PY_TYPES[short])
                if isinstance(value, Int):
                    return short in ("int", "float")
                if isinstance(value, (ObjectV, TensorV, TupleV, DictV)):
                    return False
            return None
        if cls.qual.is_nki and short in ("ndarray", "NkiTensor", "tensor", "tile"):
            if isinstance(value, TensorV):
                return True
            if isinstance(value, (Const, Int, TupleV, DictV, ObjectV)):
                return False
    return None


def _subclass(cls: ClassV, parent: ClassV, depth: int = 0) -> bool:
    if cls is parent or cls.node is parent.node:
        return True
    if depth > 8:
        return False
    return any(isinstance(b, ClassV) and _subclass(b, parent, depth + 1) for b in cls.bases)


def _return_kind(value: Value) -> str:
    """What an inlined helper call returned, for ``ExprFacts``: a tile (a
    tensor or a view), a non-empty list/tuple whose items are all tiles, or
    anything else (unknown results included: the fact is a must-fact)."""
    if isinstance(value, TensorV):
        return "tile"
    if isinstance(value, TupleV) and value.items and all(isinstance(v, TensorV) for v in value.items):
        return "tiles"
    if isinstance(value, _SeqV) and isinstance(value.element, TensorV):
        return "tiles"
    return "other"
