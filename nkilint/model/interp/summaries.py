"""Summaries of helper calls, reused across call sites (issue 17).

The interpreter inlines a project helper at every call site. Many calls
repeat an earlier one exactly: the same dtype into ``sizeinbytes``, the same
view object into ``get_dim``. A *summary* records what such a call did, so
that a later call whose inputs are equal replays it instead of running the
body again.

A call is summarized only when its whole effect is known and replayable:

* its inputs are fingerprinted: the arguments (and ``self``, partial
  arguments) by structure, symbol identity and current bounds, labels
  included; every module-level name it (or a callee) reads is recorded with
  the fingerprint it had, and checked again before a replay;
* it changed no graph (no node, edge, attribute or side list), learned no
  fact that outlived it (the fact trail is back where it was), made no
  opaque unknown or program-id symbol, and mutated neither its arguments
  nor the module values it read;
* its result is made of constants, integers over symbols that existed
  before the call, tuples, dtypes, buffers, API names, and objects that were
  part of its arguments (which are mapped to the new call's arguments).

A replay rebuilds the result (fresh objects where the call made fresh
objects), spends the same interpreter steps (so the step budget truncates
exactly where it would have), and repeats the bookkeeping the call did
(unknown reasons, functions visited, helper names and helper returns).
Summaries live in one interpreter (one kernel graph) and are keyed by the
inlining depth too, so the depth limit cuts the same calls.
"""

from __future__ import annotations

# Off by default: on nki-library the fingerprints still cost about as much
# CPU as the replays save (the costly helpers build objects and are not yet
# summarized). Tests switch it on; findings are the same either way.
ENABLED = False

from dataclasses import dataclass
from typing import Any

from ..values import (
    ApiRef,
    BufferV,
    ClassV,
    Const,
    DType,
    DictV,
    DsV,
    FuncV,
    Int,
    ModuleV,
    ObjectV,
    RangeV,
    SliceV,
    Sym,
    TensorV,
    TupleV,
    Unknown,
    Value,
)
from ..graph import Site
from .state import ParamTensor, ShapeV

# Fingerprints larger than this are not worth their cost (and bound the walk
# over a large configuration object).
_MAX_PARTS = 400
_PRIMITIVE = (int, float, str, bool, type(None))


# Values no code mutates: a class attribute of these kinds needs no fingerprint.
_IMMUTABLE = (FuncV, ClassV, Const, ApiRef, DType, BufferV, ModuleV)


class _TooBig(Exception):
    pass


class _NotFingerprintable(Exception):
    pass


def _sym_fp(sym: Sym) -> tuple:
    return (sym.ident, sym.lo, sym.hi, sym.multiple_of, sym.derived, sym.origin, sym.name)


class _Fingerprinter:
    """A hashable description of values: equal descriptions mean the
    interpreter cannot tell the values apart (aliasing included)."""

    def __init__(self, opaque: dict, paths: dict[int, tuple] | None = None) -> None:
        self.opaque = opaque  # Interpreter.opaque_attrs
        self.seen: dict[int, int] = {}
        self.keep: list[Any] = []  # objects whose ids are in `seen` stay alive
        self.parts = 0
        self.paths = paths

    def _opaque(self, v: Any) -> tuple:
        """The stable unknowns made so far for attributes of ``v``
        (Interpreter.opaque): a call may read them."""
        entry = self.opaque.get(id(v))
        if entry is None or entry[0] is not v:
            return ()
        saved, self.paths = self.paths, None  # not part of the arguments: no path to them
        try:
            return tuple((k, self.fp(x, ())) for k, x in entry[1].items())
        finally:
            self.paths = saved

    def fp(self, v: Any, path: tuple) -> Any:
        self.parts += 1
        if self.parts > _MAX_PARTS:
            raise _TooBig()
        t = type(v)
        if t is Sym:
            return ("S",) + _sym_fp(v)
        if not isinstance(v, Value):
            if isinstance(v, _PRIMITIVE):
                return v
            raise _NotFingerprintable()
        if self.paths is not None and id(v) not in self.paths:
            self.paths[id(v)] = path
        if t is Const:
            if not isinstance(v.value, _PRIMITIVE) and v.value is not Ellipsis:
                raise _NotFingerprintable()
            return ("C", type(v.value).__name__, v.value, v.label)
        if t in (DType, BufferV):
            return (t.__name__, v.name, v.label)
        if t is ApiRef:
            return ("A", v.qual, v.label)
        # Mutable or identity-bearing values: the second occurrence of an
        # object refers to the first, so aliasing is part of the fingerprint.
        seen = self.seen.get(id(v))
        if seen is not None:
            return ("ref", seen)
        self.seen[id(v)] = len(self.seen)
        self.keep.append(v)
        if t is Int:
            meta = None
            if v.meta is not None:
                meta = tuple(self.fp(m, path + (("m", j),)) for j, m in enumerate(v.meta))
            terms = None if v.terms is None else tuple((_sym_fp(s), c) for s, c in v.terms)
            return ("I", v.lo, v.hi, None if v.sym is None else _sym_fp(v.sym), v.label, v.reason, terms,
                    v.offset, meta)
        if t is TupleV:
            return ("T", v.is_list, v.inexact, v.label,
                    tuple(self.fp(x, path + (("i", j),)) for j, x in enumerate(v.items)))
        if t is TensorV:
            shape = None if v.shape is None else tuple(self.fp(x, path + (("s", j),)) for j, x in enumerate(v.shape))
            return ("Tn", v.node_id, v.tensor_id, shape, self.fp(v.dtype, path + (("dt",),)), v.buffer, v.label,
                    v.partition_axis)
        if t is ObjectV:
            cls = None if v.cls is None else id(v.cls)
            if v.cls is not None:
                self.keep.append(v.cls)
            return ("O", cls, v.label, tuple((k, self.fp(x, path + (("at", k),))) for k, x in v.attrs.items()))
        if t is DictV:
            if not all(isinstance(k, _PRIMITIVE) for k in v.items):
                raise _NotFingerprintable()
            return ("Dc", v.label, tuple((k, self.fp(x, path + (("d", k),))) for k, x in v.items.items()))
        if t is FuncV:
            if v.closure is not None:
                raise _NotFingerprintable()
            self.keep.append(v.node)
            return ("F", id(v.node), v.qualname, v.label,
                    None if v.bound_self is None else self.fp(v.bound_self, path + (("self",),)),
                    tuple(self.fp(x, path + (("pa", j),)) for j, x in enumerate(v.partial_args)),
                    tuple((k, self.fp(x, path + (("pk", k),))) for k, x in v.partial_kwargs))
        if t is ClassV:
            # Attributes are never assigned to a class after its definition,
            # but a mutable attribute (a list, an object, an integer whose
            # label an assignment sets) can change: those are its value.
            return ("Cl", id(v), tuple((k, self.fp(x, path + (("ca", k),))) for k, x in v.attrs.items()
                                       if type(x) not in _IMMUTABLE))
        if t is ModuleV:
            return ("M", id(v.module), v.label)
        if t is ParamTensor:
            # A kernel parameter (or opaque attribute): its attributes are
            # memoised by identity, and it becomes a tensor when used as one.
            return ("P", id(v), v.lo, v.hi, None if v.sym is None else _sym_fp(v.sym), v.label,
                    None if v.tensor is None else id(v.tensor), self._opaque(v))
        if isinstance(v, Unknown):
            # Never mutated, but its attributes are memoised by identity:
            # only the same object is the same unknown (with the attributes
            # read so far, whose bounds facts may have narrowed).
            return ("U", t.__name__, id(v), self._opaque(v))
        if t is ShapeV:
            # Grows dimensions on demand: identity and the dimensions so far.
            return ("Sh", id(v), v.rank, v.label,
                    tuple((i, self.fp(d, path + (("sd", i),))) for i, d in sorted(v.dims.items())))
        if t is RangeV:
            return ("R", v.kind, self.fp(v.start, path + (("rs",),)), self.fp(v.stop, path + (("re",),)),
                    self.fp(v.step, path + (("rp",),)), v.label)
        if t is SliceV:
            return ("Sl", self.fp(v.start, path + (("rs",),)), self.fp(v.stop, path + (("re",),)),
                    self.fp(v.step, path + (("rp",),)), v.label)
        if t is DsV:
            return ("Ds", self.fp(v.start, path + (("rs",),)), self.fp(v.size, path + (("sz",),)), v.label)
        # Unknowns (their attributes are memoised by identity), shapes that
        # grow dimensions on demand, interpreter-private kinds: not summarized.
        raise _NotFingerprintable()


def fingerprint_value(value: Value, opaque: dict) -> Any | None:
    """The fingerprint of one value (a module-level name's), or None."""
    try:
        return _Fingerprinter(opaque).fp(value, ())
    except (_TooBig, _NotFingerprintable, RecursionError):
        return None


def fingerprint_read(value: Value, opaque: dict) -> tuple[Any, list[Any]] | None:
    """The fingerprint of a module-level value read by a call, and the
    objects reachable from it (which a replayed result shares, not copies)."""
    f = _Fingerprinter(opaque)
    try:
        return f.fp(value, ()), f.keep
    except (_TooBig, _NotFingerprintable, RecursionError):
        return None


def fingerprint_call(func: FuncV, args: list[Value], kwargs: dict[str, Value], opaque: dict
                     ) -> tuple[Any, dict[int, tuple], list[Any]] | None:
    """The fingerprint of a call's inputs; for every object among them, the
    path that reaches it from the call (to map a result that is part of the
    arguments onto another call's arguments); and the objects whose ids the
    fingerprint holds (a summary keeps them alive, so no id is reused while
    it exists). None: not summarizable."""
    paths: dict[int, tuple] = {}
    f = _Fingerprinter(opaque, paths)
    try:
        key = (f.fp(func, ("func",)), tuple(f.fp(a, (("a", i),)) for i, a in enumerate(args)),
               tuple((k, f.fp(v, (("k", k),))) for k, v in kwargs.items()))
    except (_TooBig, _NotFingerprintable, RecursionError):
        return None
    return key, paths, f.keep


def resolve(path: tuple, func: FuncV, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """The object at ``path`` in a call whose inputs fingerprint equally."""
    head, rest = path[0], path[1:]
    if head == "func":
        v: Any = func
    elif head[0] == "a":
        v = args[head[1]]
    else:
        v = kwargs[head[1]]
    for step in rest:
        kind = step[0]
        if kind == "i":
            v = v.items[step[1]]
        elif kind == "s":
            v = v.shape[step[1]]
        elif kind == "dt":
            v = v.dtype
        elif kind == "m":
            v = v.meta[step[1]]
        elif kind == "at":
            v = v.attrs[step[1]]
        elif kind == "d":
            v = v.items[step[1]]
        elif kind == "self":
            v = v.bound_self
        elif kind == "pa":
            v = v.partial_args[step[1]]
        elif kind == "pk":
            v = dict(v.partial_kwargs)[step[1]]
        elif kind == "ca":
            v = v.attrs[step[1]]
        elif kind == "rs":
            v = v.start
        elif kind == "re":
            v = v.stop
        elif kind == "rp":
            v = v.step
        elif kind == "sz":
            v = v.size
        elif kind == "sd":
            v = v.dims[step[1]]
        else:  # pragma: no cover - paths are made by _Fingerprinter
            raise KeyError(step)
    return v


# ---------------------------------------------------------------- results

class _NotReplayable(Exception):
    pass


class _Templater:
    """Turns a call's result into a template.

    An object that was part of the arguments becomes its path; an object
    reachable from a module-level name the call read stays itself; any other
    object was made by the call, so a replay makes a new one (aliasing
    kept). Symbols the call made (ident at or above ``sym_mark``) become
    placeholders: a replay makes new ones, in the order the call made them."""

    def __init__(self, paths: dict[int, tuple], sym_mark: int, shared: dict[int, Any]) -> None:
        self.paths = paths
        self.sym_mark = sym_mark
        self.shared = shared  # id -> object reachable from the module values read
        self.fresh: dict[int, Sym] = {}
        self.made: dict[int, int] = {}  # id(object made by the call) -> its index
        self.keep: list[Any] = []

    def sym(self, sym: Sym) -> Any:
        if sym.ident < self.sym_mark:
            return ("same", sym)
        self.fresh.setdefault(sym.ident, sym)
        return ("fresh", sym.ident)

    def fresh_specs(self) -> tuple:
        """(ident, fields) of the symbols the result holds that the call made."""
        return tuple((i, (s.name, s.lo, s.hi, s.multiple_of, s.derived, s.origin))
                     for i, s in sorted(self.fresh.items()))

    def _new(self, value: Any) -> int | None:
        """The index of an object made by the call, None the first time
        (when the caller describes it)."""
        seen = self.made.get(id(value))
        if seen is not None:
            return seen
        self.made[id(value)] = len(self.made)
        self.keep.append(value)
        return None

    def value(self, value: Any) -> Any:
        if isinstance(value, Value):
            if id(value) in self.paths:
                return ("arg", self.paths[id(value)])
            if id(value) in self.shared:
                return ("same", value)
        t = type(value)
        if t is Const:
            if not isinstance(value.value, _PRIMITIVE) and value.value is not Ellipsis:
                raise _NotReplayable()
            return ("C", value.value, value.label)
        if t is Int:
            meta = None if value.meta is None else tuple(self.meta(m) for m in value.meta)
            terms = None if value.terms is None else tuple((self.sym(s), c) for s, c in value.terms)
            return ("I", value.lo, value.hi, None if value.sym is None else self.sym(value.sym), value.label,
                    value.reason, terms, value.offset, meta)
        if t is TupleV and not value.is_list:
            return ("T", tuple(self.value(x) for x in value.items), value.label, value.inexact)
        if t in (DType, BufferV, ApiRef):
            return ("same", value)  # never mutated
        if t is TupleV or t is ObjectV or t is DictV or t is Unknown:
            seen = self._new(value)
            if seen is not None:
                return ("ref", seen)
            index = self.made[id(value)]
            if t is TupleV:
                return ("L", index, tuple(self.value(x) for x in value.items), value.label, value.inexact)
            if t is ObjectV:
                if value.cls is not None and id(value.cls) not in self.shared:
                    raise _NotReplayable()  # a class the call defined
                return ("O", index, value.cls, tuple((k, self.value(x)) for k, x in value.attrs.items()), value.label)
            if t is DictV:
                return ("Dc", index, tuple((k, self.value(x)) for k, x in value.items.items()), value.label)
            return ("U", index, value.reason, value.label,
                    None if value.default is None else self.value(value.default))
        raise _NotReplayable()

    def meta(self, m: Any) -> Any:
        if isinstance(m, Value):
            return self.value(m)
        if isinstance(m, Sym):
            return self.sym(m)
        if isinstance(m, _PRIMITIVE):
            return ("same", m)
        raise _NotReplayable()


class _Builder:
    def __init__(self, specs: tuple, func: FuncV, args: list[Value], kwargs: dict[str, Value]) -> None:
        self.func, self.args, self.kwargs = func, args, kwargs
        self.made: dict[int, Any] = {}
        # New symbols, made in the order the recorded call made them.
        self.syms = {ident: Sym(name, lo, hi, multiple_of, derived=derived, origin=origin)
                     for ident, (name, lo, hi, multiple_of, derived, origin) in specs}

    def sym(self, t: Any) -> Sym | None:
        if t is None:
            return None
        return t[1] if t[0] == "same" else self.syms[t[1]]

    def build(self, tmpl: Any) -> Any:
        kind = tmpl[0]
        if kind == "arg":
            return resolve(tmpl[1], self.func, self.args, self.kwargs)
        if kind == "C":
            return Const(tmpl[1], label=tmpl[2])
        if kind == "I":
            _, lo, hi, sym, label, reason, terms, offset, meta = tmpl
            if meta is not None:
                meta = tuple(self.sym(m) if m[0] == "fresh" else self.build(m) for m in meta)
            if terms is not None:
                terms = tuple((self.sym(s), c) for s, c in terms)
            return Int(lo, hi, self.sym(sym), label, reason, terms, offset, meta)
        if kind == "T":
            return TupleV(tuple(self.build(x) for x in tmpl[1]), label=tmpl[2], inexact=tmpl[3])
        if kind == "ref":
            return self.made[tmpl[1]]
        if kind == "L":
            out = self.made[tmpl[1]] = TupleV((), label=tmpl[3], is_list=True, inexact=tmpl[4])
            out.items = tuple(self.build(x) for x in tmpl[2])
            return out
        if kind == "O":
            obj = self.made[tmpl[1]] = ObjectV(tmpl[2], {}, label=tmpl[4])
            for k, x in tmpl[3]:
                obj.attrs[k] = self.build(x)
            return obj
        if kind == "Dc":
            dct = self.made[tmpl[1]] = DictV({}, label=tmpl[3])
            for k, x in tmpl[2]:
                dct.items[k] = self.build(x)
            return dct
        if kind == "U":
            unknown = self.made[tmpl[1]] = Unknown(tmpl[2], label=tmpl[3])
            if tmpl[4] is not None:
                unknown.default = self.build(tmpl[4])
            return unknown
        return tmpl[1]  # "same"


def instantiate(summary: "Summary", func: FuncV, args: list[Value], kwargs: dict[str, Value], graph: Any,
                loops: tuple[str, ...], chain: tuple, trail: list) -> Any:
    """Replay a summary for a call with these inputs: add its loop nodes
    (under ``loops``, reached through ``chain``, which ends with the new call
    site) and return a new copy of its result."""
    b = _Builder(summary.fresh, func, args, kwargs)
    made: list[str] = []
    for prefix, file, node, suffix, inner, keys, attrs, index_sym in summary.loops:
        nest = loops + tuple(made[j] for j in inner)
        values = dict(attrs)
        kw = {}
        for k in keys:
            if k == "parent":
                kw[k] = nest[-1] if nest else None
            elif k == "trip_v":
                kw[k] = b.build(values[k])
            else:
                kw[k] = values[k][1]
        nid = graph.add_node(prefix, "loop", Site(file, node, chain + suffix), nest, **kw)
        if index_sym is not None:
            graph.attrs(nid)["index_sym"] = b.sym(index_sym)
        made.append(nid)
    for ref, lo, hi, now in summary.facts:
        sym = b.sym(ref)
        trail.append((sym, lo, hi))
        if now is not None:
            sym.lo, sym.hi = now
    return b.build(summary.result)


# ---------------------------------------------------------------- records

@dataclass
class Summary:
    """What one call did, to be replayed by an equal call."""

    result: Any  # a template (_Templater)
    fresh: tuple  # the symbols the call made that its result holds (_Templater.fresh_specs)
    loops: tuple  # the loop nodes it made (_loop_templates)
    facts: tuple  # the narrowings it left on the fact trail (_fact_templates)
    steps: int  # interpreter steps the call spent
    log: list[tuple]  # bookkeeping to repeat (see Interpreter._log)
    entered: frozenset[int]  # functions it inlined (the recursion guard must not cut any)
    reads: tuple[tuple[Any, str, Any], ...]  # (module, name, fingerprint) of module-level names read
    keep: list[Any]  # keeps the objects whose ids are in the key alive


@dataclass(frozen=True)
class CallContext:
    """The interpreter's state at a recorded call: what the graph nodes the
    call made were relative to."""

    loops: tuple[str, ...]  # the loop nest around the call
    chain: int  # the length of the call chain before the call
    guards: tuple  # the undecided conditions around the call
    conditional: bool


# Attributes of a loop node, in the order the interpreter gives them
# (core._loop, calls._fori/_while_loop, exprs comprehensions), besides those
# add_node sets itself (seq, conditional, guards) and index_sym.
_LOOP_ATTRS = ("loop_kind", "trip_v", "iterator", "function", "parent", "register_bound")
_NODE_KEYS = frozenset(("kind", "site", "loops", "seq", "conditional", "guards", "index_sym") + _LOOP_ATTRS)


def _loop_templates(t: _Templater, graph: Any, new_nodes: list[str], outer: CallContext) -> tuple:
    """The loop nodes a call made, relative to its call site: a replay adds
    them under the loops around the new call, with the new call chain.
    Raises _NotReplayable for any other node, or a node under a condition
    the call itself could not decide."""
    index = {nid: j for j, nid in enumerate(new_nodes)}
    out = []
    n_outer = len(outer.loops)
    for nid in new_nodes:
        d = graph.attrs(nid)
        if d["kind"] != "loop" or not _NODE_KEYS.issuperset(d) or not all(k in d for k in _LOOP_ATTRS):
            raise _NotReplayable()
        if d["guards"] != outer.guards or d["conditional"] != outer.conditional:
            raise _NotReplayable()
        loops = d["loops"]
        if loops[:n_outer] != outer.loops or any(x not in index for x in loops[n_outer:]):
            raise _NotReplayable()
        if d["parent"] != (loops[-1] if loops else None):
            raise _NotReplayable()
        site = d["site"]
        if site is None or len(site.chain) <= outer.chain:
            raise _NotReplayable()
        attrs = []
        for k in d:  # the node's own order of attributes
            if k in _LOOP_ATTRS and k != "parent":
                attrs.append((k, t.value(d[k]) if k == "trip_v" else ("same", d[k])))
        if not all(isinstance(v[1], _PRIMITIVE) for k, v in attrs if k != "trip_v"):
            raise _NotReplayable()
        index_sym = t.sym(d["index_sym"]) if "index_sym" in d else None
        keys = tuple(k for k in d if k in _LOOP_ATTRS)
        out.append((nid.rstrip("0123456789"), site.file, site.node, site.chain[outer.chain + 1:],
                    tuple(index[x] for x in loops[n_outer:]), keys, tuple(attrs), index_sym))
    return tuple(out)


def _fact_templates(t: _Templater, trail: list[tuple[Sym, float, float]]) -> tuple:
    """The narrowings a call left on the fact trail (an ``assert`` or
    ``kernel_assert`` outside any branch), in order: each symbol, the bounds
    it had before (what an enclosing branch's undo restores) and, for a
    symbol that existed before the call, the bounds it has now."""
    out = []
    for sym, lo, hi in trail:
        ref = t.sym(sym)
        out.append((ref, lo, hi, (sym.lo, sym.hi) if ref[0] == "same" else None))
    return tuple(out)


def facts_hold(summary: "Summary") -> bool:
    """Every symbol that existed before the recorded call and that it
    narrowed has the bounds it had then (the call would narrow it alike)."""
    first: set[int] = set()
    for ref, lo, hi, _ in summary.facts:
        if ref[0] == "same" and id(ref[1]) not in first:
            first.add(id(ref[1]))
            if (ref[1].lo, ref[1].hi) != (lo, hi):
                return False
    return True


def make_template(value: Any, paths: dict[int, tuple], sym_mark: int, shared: dict[int, Any], graph: Any,
                  new_nodes: list[str], outer: CallContext, trail: list
                  ) -> tuple[Any, tuple, tuple, tuple] | None:
    """The templates of a call's result, of the loop nodes it made and of the
    facts it left, and the symbols it made that they hold; None when they
    cannot be rebuilt faithfully."""
    t = _Templater(paths, sym_mark, shared)
    try:
        loops = _loop_templates(t, graph, new_nodes, outer)
        facts = _fact_templates(t, trail)
        return t.value(value), loops, facts, t.fresh_specs()
    except (_NotReplayable, RecursionError):
        return None
