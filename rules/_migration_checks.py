"""The checks of the migration scan: each site of a file is classified once.

Rule ids (see rules/migration.py for the documentation of each):
NKI601 legacy namespace, NKI602 mixed namespaces, NKI603 removed API,
NKI604 renamed/deprecated API, NKI605 removed or renamed parameter, NKI606
deprecated loop iterator, NKI607 dynamic loop form, NKI608 SPMD launch grid,
NKI609 ISA calling convention, NKI610 PSUM += accumulation, NKI611 kernel
language restrictions (0.3), NKI612 string buffers and raw-int enums, NKI613
kernel output not in shared_hbm, NKI614 unknown API, NKI615 unknown keyword.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from nkilint.findings import Edit, Fix, Level, Span
from nkilint.model import query as q
from nkilint.model.bindings import Gen, Qual
from nkilint.model.values import Const, Int
from nkilint.versions import KNOWN_VERSIONS, V0_1, V0_2, V0_3, V0_4, V0_6, NkiVersion

from . import _migration_api as api
from ._migration_scan import (
    ALLOC_APIS, BUFFER_NAMES, ENUM_PARAMS, FUNCS, LOOP_ITERATORS, MATMULS, REMOVED_HINTS, RENAMES, ROOT_DECORATORS,
    Scan, cached_status, module_aliases, resolve_decorator,
)

W = Level.WARNING
E = Level.ERROR


def run(s: Scan) -> None:
    s.uses = []  # (node, qual, in a function body)
    s.roots = _root_kernels(s)
    s.range_shadowed = _range_shadowed(s)
    _imports(s)
    outputs = {}
    if s.version >= V0_3:
        for fn, gen in s.roots.items():
            outputs.update(_kernel_outputs(s, fn, gen))
    s.output_buffer_nodes = outputs
    for node in s.nodes:
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            _name(s, node)
        elif isinstance(node, ast.Call):
            _call(s, node)
        elif isinstance(node, ast.AugAssign):
            _augassign(s, node)
        elif isinstance(node, ast.Compare):
            _compare(s, node)
        elif isinstance(node, ast.While):
            _while(s, node)
    if s.version >= V0_3:
        for fn, gen in s.roots.items():
            _kernel_signature(s, fn, gen)
        if s.bindings.dialect.value in ("current", "both"):
            from . import _migration_behavior

            _migration_behavior.run(s)


# -- shared helpers -----------------------------------------------------------
def show(s: Scan, node: ast.AST, qual: Qual) -> str:
    text = s.text(node)
    if qual.gen is Gen.LEGACY and qual.name.startswith("nki") and text not in (qual.name, "neuronxcc." + qual.name):
        return f"`{text}` (neuronxcc.{qual.name})"
    return f"`{text}`"


def _short(name: str) -> str:
    for prefix, alias in (("nki.language.", "nl."), ("nki.isa.", "nisa."), ("nki.collectives.", "ncc.")):
        if name.startswith(prefix):
            return alias + name[len(prefix):]
    if name == "builtins.range":
        return "range"
    return name


def _first_missing_version(earlier: tuple[NkiVersion, ...], version: NkiVersion) -> NkiVersion:
    order = list(KNOWN_VERSIONS)
    after = order.index(max(earlier)) + 1
    return order[min(after, order.index(version))]


def _call_parent(s: Scan, node: ast.AST) -> ast.Call | None:
    parent = s.parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return parent
    return None


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _keyword_name_span(s: Scan, kw: ast.keyword) -> Span:
    start = s.span(kw)
    return Span(start.start_line, start.start_col, start.start_line, start.start_col + len(kw.arg or ""))


def _fix(description: str, edits: list[Edit], safe: bool) -> Fix:
    return Fix(description, tuple(edits), safe)


def _is_from_import_member(s: Scan, local: str) -> bool:
    """A local name bound by ``from X import name`` to a non-module member."""
    for rec in s.bindings.records:
        if rec.local == local and isinstance(rec.node, ast.ImportFrom):
            return rec.qual.name not in api._all_modules() and rec.qual.name != "nki"
    return False


@lru_cache(maxsize=None)
def _param_changes(name: str, param: str, version: NkiVersion):
    return tuple(api.param_changes(name, param, version))


@lru_cache(maxsize=None)
def _param_history(name: str, param: str):
    return tuple(api.param_history(name, param))


def _doc_only_op(name: str, version: NkiVersion) -> bool:
    module, _, member = name.rpartition(".")
    table = api.api_for(version)
    mod = table.modules.get(module) or {}
    if member in mod.get("doc_only_ops", ()):
        return True
    sig = table.signature(name)
    return bool(sig and sig.call_unsupported and version < V0_3)


def _name_loads(s: Scan) -> dict[str, list[ast.Name]]:
    cached = getattr(s, "_loads", None)
    if cached is None:
        cached = {}
        for node in s.nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                cached.setdefault(node.id, []).append(node)
        s._loads = cached
    return cached


def _locally_assigned(s: Scan) -> set[str]:
    cached = getattr(s, "_assigned", None)
    if cached is None:
        cached = set()
        for node in s.nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                cached.add(node.id)
            elif isinstance(node, FUNCS + (ast.ClassDef,)):
                cached.add(node.name)
            elif isinstance(node, ast.arg):
                cached.add(node.arg)
        s._assigned = cached
    return cached


def _range_shadowed(s: Scan) -> bool:
    return "range" in _locally_assigned(s) or "range" in s.bindings.names


# -- imports ------------------------------------------------------------------
def _imports(s: Scan) -> None:
    for rec in s.bindings.records:
        qual = rec.qual
        if not qual.is_nki:
            continue
        if qual.gen is Gen.CURRENT and s.version < V0_2:
            s.add("NKI614", rec.node, E,
                  f"the nki.* namespace (`{rec.module}`) does not exist in NKI 0.1: it arrives with NKI 0.2 (Neuron SDK 2.27); "
                  "the target is NKI 0.1",
                  hint="target NKI 0.2 or later (--nki-version), or write the kernel against neuronxcc.nki")
            continue
        if not isinstance(rec.node, ast.ImportFrom) or rec.local == "*":
            continue
        if qual.name in api._all_modules() or qual.name == "nki":
            continue
        alias = next((a for a in rec.node.names if (a.asname or a.name) == rec.local), None)
        where = alias if alias is not None and hasattr(alias, "lineno") else rec.node
        device = None
        if s.is_legacy_port(qual.gen) and s.version >= V0_4:
            device = any(s.in_device(n) for n in _name_loads(s).get(rec.local, ()))
        _classify(s, where, qual, at_import=True, display=f"`{rec.module}.{alias.name if alias else rec.local}`",
                  device=device)


# -- names ----------------------------------------------------------------------
def _name(s: Scan, node: ast.AST) -> None:
    parent = s.parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return  # not the whole dotted name
    qual = s.bindings.resolve(node)
    if qual is None or not qual.is_nki:
        return
    in_body = s.function_of(node) is not None
    s.uses.append((node, qual, in_body))
    if isinstance(node, ast.Name):
        if node.id in s.bindings.names:
            if qual.name in api._all_modules() or qual.name == "nki":
                return
            if _is_from_import_member(s, node.id):
                # Reported at the import; loop iterators at their use (fixable).
                if api.normalize(qual.name) in LOOP_ITERATORS or qual.name == "nki.language.dynamic_range":
                    _classify(s, node, qual, loops_only=True)
                return
        else:
            # Star import: only names some release documents, never local names.
            if node.id in _locally_assigned(s) or not api.ranges(api.normalize(qual.name)):
                return
    _classify(s, node, qual)


def _classify(s: Scan, node: ast.AST, qual: Qual, at_import: bool = False, loops_only: bool = False,
              display: str | None = None, device: bool | None = None) -> None:
    name = api.normalize(qual.name)
    gen = qual.gen
    if gen is Gen.CURRENT and s.version < V0_2:
        return
    text = display or show(s, node, qual)
    if name in ("torch_neuronx.nki_jit", "jax_neuronx.nki_call"):
        if loops_only:
            return
        since = "2.24" if name.startswith("torch") else "2.23"
        s.add("NKI603", node, E,
              f"{text} is unsupported since Neuron SDK {since} (before NKI 0.1 was frozen); the target is NKI {s.version}",
              hint=REMOVED_HINTS[name], gen=gen)
        return
    v = s.lookup_version(gen)
    call = None if at_import else _call_parent(s, node)
    if name in LOOP_ITERATORS and not at_import:
        _loop_iterator(s, node, qual, name, call, text)
        return
    if name == "nki.language.dynamic_range" and not at_import:
        if s.version >= V0_6 and gen is Gen.CURRENT:
            s.add("NKI607", node, W,
                  f"{text} loops are deprecated since NKI 0.6 and scheduled for removal",
                  hint="move the loop body into a function and call nl.fori_loop(lo, hi, body); the loop variable is a "
                       "read-only register (use it through .ap(scalar_offset=...)), tensors created in the body are not "
                       "visible after the loop")
            return
    if loops_only:
        return
    if name in RENAMES and _rename(s, node, qual, name, text, at_import):
        return
    st = cached_status(name, v)
    if st.state == "found":
        if call is not None and gen is Gen.CURRENT and s.version == V0_2 and _doc_only_op(name, V0_2):
            s.add("NKI603", node, s.level(gen, node),
                  f"{text} cannot be called in NKI 0.2: there it names an operator for op= only (nisa.activation(op=...), "
                  "nisa.tensor_tensor(op=...)); the nl.* compute wrappers return in NKI 0.3",
                  hint="call the ISA instruction with op=, e.g. nisa.activation(dst=t, op=nl.exp, data=x)", gen=gen)
        elif call is not None and gen is Gen.LEGACY and s.version == V0_2 and _doc_only_op(name, V0_2):
            s.add("NKI603", node, s.level(gen, node),
                  f"{text} returns a tile in the legacy API, but NKI 0.2 has no callable nl compute wrappers (only op= "
                  f"values; they return in NKI 0.3){s.port_note(gen)}",
                  hint="use the ISA instruction with a destination, e.g. nisa.activation(dst=t, op=nl.exp, data=x)", gen=gen)
        else:
            _generic_deprecation(s, node, qual, name, v, text)
        return
    if st.state == "gone":
        gone = st.name
        shown = text if gone == name else f"{text}: `{_short(gone)}`"
        if st.earlier:
            since = _first_missing_version(st.earlier, v)
            back = f"; it is back in NKI {st.later[0]}" if st.later else ""
            if gen is Gen.LEGACY and v >= V0_2:
                message = f"{shown} does not exist in the nki.* API of NKI {v} (removed in NKI {since}{back})"
            else:
                message = f"{shown} was removed in NKI {since}{back}; the target is NKI {v}"
            hint = _removed_hint(gone, v)
            s.add("NKI603", node, s.level(gen, node, device=device), message + s.port_note(gen), hint=hint, gen=gen)
        else:
            level = E if gen is Gen.CURRENT else W
            s.add("NKI614", node, level,
                  f"{shown} is not in NKI {v}: it was added in NKI {st.later[0]}",
                  hint=f"target NKI {st.later[0]} or later (--nki-version), or avoid it", gen=gen)
        return
    if st.state == "unknown":
        member = st.name.rsplit(".", 1)[-1]
        candidates = api.member_names(st.parent, v)
        close = api.closest(member, candidates)
        suggestion = f"; did you mean {', '.join('`' + _short(st.parent + '.' + c) + '`' for c in close)}?" if close else ""
        s.add("NKI614", node, W,
              f"{text} is not in the documented API of NKI {v} (no release from 2.20 to 2.32 documents "
              f"`{_short(st.name)}`){suggestion}",
              hint="check the spelling; if the name works, it is undocumented and may change without notice", gen=gen)


def _removed_hint(name: str, version: NkiVersion) -> str | None:
    if name in REMOVED_HINTS:
        return "use " + REMOVED_HINTS[name] if not REMOVED_HINTS[name].startswith(("no ", "drop", "decorate", "index", "launch", "pass", "plain", "an ", "allocate")) else REMOVED_HINTS[name]
    for prefix, hint in REMOVED_HINTS.items():
        if name.startswith(prefix + "."):
            return hint
    repl = api.replacement_of(name, version)
    if repl:
        return f"use {_short(repl)}"
    return None


def _generic_deprecation(s: Scan, node: ast.AST, qual: Qual, name: str, v: NkiVersion, text: str) -> None:
    if v < V0_2:
        return
    sig = api.signature(name, v)
    dep = bool(sig and sig.deprecated)
    repl = sig.replacement if sig else None
    if not dep:
        det = api.api_for(v).constant_details(name)
        dep = bool(det.get("deprecated"))
        repl = det.get("replacement")
    if not dep:
        return
    s.add("NKI604", node, W,
          f"{text} is deprecated in NKI {v}" + (f"; use `{_short(repl)}`" if repl else ""),
          hint=f"replace it with {_short(repl)}" if repl else None, gen=qual.gen)


def _rename(s: Scan, node: ast.AST, qual: Qual, name: str, text: str, at_import: bool) -> bool:
    repl, since, safe, why = RENAMES[name]
    gen = qual.gen
    v = s.lookup_version(gen)
    if v < since:
        return False
    st = cached_status(name, v)
    removed = st.state == "gone"
    level = s.level(gen, node) if removed else W
    verb = f"was moved to `{_short(repl)}` in NKI {since}" if removed else f"is deprecated since NKI {since}; use `{_short(repl)}`"
    fix = None
    repl_ok = cached_status(repl, v).state == "found" or repl == "nki.meta.tensor"
    if gen is Gen.LEGACY and repl != "nki.meta.tensor":
        repl_ok = repl_ok and cached_status(repl, V0_1).state == "found"
    elif gen is Gen.LEGACY:
        repl_ok = False  # nki.meta does not exist in the legacy package
    if not at_import and isinstance(node, ast.Attribute) and repl_ok:
        replacement = _renamed_text(s, node, name, repl)
        if replacement is not None:
            fix = _fix(f"replace with {replacement}", [Edit(s.span(node), replacement)], safe)
    s.add("NKI604", node, level, f"{text} {verb}" + (s.port_note(gen) if removed else ""),
          hint=f"replace it with {_short(repl)} ({why})", fix=fix, gen=gen)
    return True


def _renamed_text(s: Scan, node: ast.Attribute, old: str, new: str) -> str | None:
    old_parts, new_parts = old.split("."), new.split(".")
    common = 0
    while common < min(len(old_parts), len(new_parts)) and old_parts[common] == new_parts[common]:
        common += 1
    strip = len(old_parts) - common
    base: ast.AST = node
    for _ in range(strip):
        if not isinstance(base, ast.Attribute):
            return None
        base = base.value
    if base is node:
        return None
    return s.text(base) + "." + ".".join(new_parts[common:])


# -- loops --------------------------------------------------------------------
_LOOP_DEPRECATED = {
    "nki.language.affine_range": V0_3,
    "nki.language.sequential_range": V0_3,
    "nki.language.static_range": V0_6,
}


def _loop_iterator(s: Scan, node: ast.AST, qual: Qual, name: str, call: ast.Call | None, text: str) -> None:
    v = s.version
    since = _LOOP_DEPRECATED[name]
    if v < since:
        return  # 0.1/0.2: affine_range is the parallel loop, not an alias
    gen = qual.gen
    short = _short(name)
    if v >= V0_6:
        what = f"{text} is deprecated since NKI {since} and is an alias of Python range() in NKI {v}"
    else:
        what = (f"{text} is deprecated since NKI {since}: from NKI 0.3 every static loop is unrolled in program order, "
                "so range() behaves the same")
    if gen is Gen.LEGACY and name != "nki.language.static_range":
        what += (f"; note that legacy {short} " + ("promised independent iterations that the compiler could reorder"
                 if name.endswith("affine_range") else "forced in-order iterations")
                 + ", while from NKI 0.3 loops run in order with Python semantics")
    fix = None
    if call is not None and not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args) \
            and not s.range_shadowed and 1 <= len(call.args) <= 3:
        static = _static_trip(s, call)
        if static is not None:
            safe = gen is Gen.CURRENT and static
            fix = _fix(f"replace {s.text(node)} with range", [Edit(s.span(node), "range")], safe)
    s.add("NKI606", node, W, what, hint="write `for i in range(...)`", fix=fix, gen=gen)


def _static_trip(s: Scan, call: ast.Call) -> bool | None:
    """Whether the loop's bounds are compile-time integers (True), unknown to
    the model (False: the fix is unsafe), or not a for-loop iterator (None:
    e.g. a register-bounded dynamic loop would change meaning)."""
    parent = s.parents.get(id(call))
    if not isinstance(parent, ast.For) or parent.iter is not call:
        return False
    try:
        loops = q.loops_at(s.model, parent)
    except Exception:  # pragma: no cover - the model never blocks a fix decision
        return False
    if any(data.get("register_bound") or not isinstance(data.get("trip_v"), (Const, Int)) for data in loops):
        return None
    return bool(loops)


# -- calls ---------------------------------------------------------------------
def _call(s: Scan, call: ast.Call) -> None:
    func = call.func
    if isinstance(func, ast.Subscript):
        _grid(s, call)
        _kernel_call_site(s, call, func.value)
        return
    qual = s.bindings.resolve(func)
    if qual is None or not qual.is_nki:
        _kernel_call_site(s, call, func)
        return
    name = api.normalize(qual.name)
    gen = qual.gen
    if gen is Gen.CURRENT and s.version < V0_2:
        return
    v = s.lookup_version(gen)
    if not name.startswith("nki"):
        return
    if cached_status(name, v).state != "found":
        return
    if v == V0_2 and _doc_only_op(name, V0_2):
        return  # the call itself is reported (NKI603): nothing is callable
    sig = api.signature(name, v)
    if not (name.startswith("nki.isa.") and _isa_convention(s, call, qual, name, sig)):
        _keywords(s, call, qual, name, sig, v)
    if s.version >= V0_3:
        _literals(s, call, qual, name)


def _keywords(s: Scan, call: ast.Call, qual: Qual, name: str, sig, v: NkiVersion) -> None:
    gen = qual.gen
    short = _short(name)
    for kw in call.keywords:
        if kw.arg is None:
            continue
        records = _param_changes(name, kw.arg, v)
        explicit = sig is not None and sig.params is not None and kw.arg in sig.keyword_names()
        deprecated = [r for r in records if r.change == "deprecated"]
        removed = [r for r in records if r.change in ("removed", "renamed")]
        if explicit and not deprecated:
            continue
        if removed and not explicit:
            _removed_keyword(s, call, kw, qual, name, removed[-1], v)
            continue
        if deprecated:
            _deprecated_keyword(s, call, kw, qual, name, deprecated[-1], v)
            continue
        if sig is None or sig.params is None or sig.accepts_any_keyword:
            continue
        history = _param_history(name, kw.arg)
        earlier = [x for x in history if x < v]
        later = [x for x in history if x > v]
        if earlier:
            s.add("NKI605", kw, s.level(gen, kw),
                  f"`{short}(..., {kw.arg}=)` is not a parameter of `{short}` in NKI {v} (last documented in NKI "
                  f"{max(earlier)}){s.port_note(gen)}",
                  hint=f"drop {kw.arg}= and use the NKI {v} parameters: {', '.join(sorted(sig.keyword_names()))}", gen=gen)
            continue
        level = W if (gen is Gen.LEGACY and v < V0_2) else s.level(gen, kw)
        if later:
            message = f"`{short}` has no keyword `{kw.arg}` in NKI {v}: it was added in NKI {later[0]}"
            hint = f"target NKI {later[0]} or later, or drop {kw.arg}="
        else:
            close = api.closest(kw.arg, sorted(sig.keyword_names()))
            message = f"`{short}` has no keyword `{kw.arg}` in NKI {v}" + (
                f"; did you mean `{close[0]}`?" if close else "")
            hint = f"its keywords are: {', '.join(sorted(sig.keyword_names()))}"
        if gen is Gen.CURRENT or v >= V0_2:
            message += " (unknown keywords raise 'unexpected keyword argument' since Neuron SDK 2.28)"
        else:
            message += " (the legacy API ignores it silently)"
        s.add("NKI615", kw, level, message + s.port_note(gen), hint=hint, gen=gen)


def _removed_keyword(s: Scan, call: ast.Call, kw: ast.keyword, qual: Qual, name: str, record, v: NkiVersion) -> None:
    gen = qual.gen
    short = _short(name)
    since = record.since_nki.rsplit(".0", 1)[0] if record.since_nki else "?"
    if record.since_sdk:
        since += f" (Neuron SDK {record.since_sdk.rsplit('.0', 1)[0]})"
    fix = None
    nisa = s.alias_of("nki.isa")
    repl = record.replacement
    if kw.arg == "is_moving_zero" and repl:
        new = "is_moving_onezero"
        fix = _fix(f"rename is_moving_zero= to {new}=", [Edit(_keyword_name_span(s, kw), new)], True)
        what = f"`{short}(is_moving_zero=)` was renamed `is_moving_onezero` in NKI {since}"
    elif kw.arg == "psumAccumulateFlag":
        fix = _fix("delete psumAccumulateFlag=", [Edit(s.span(kw), "")], True)
        what = f"`{short}(psumAccumulateFlag=)` was removed in NKI {since} (it had no effect)"
        repl = None
    elif kw.arg == "use_gpsimd_dma" and nisa and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
        member = "gpsimd_dma" if kw.value.value else "dma"
        fix = _fix(f"use dma_engine={nisa}.dma_engine.{member}",
                   [Edit(s.span(kw), f"dma_engine={nisa}.dma_engine.{member}")], True)
        what = f"`{short}(use_gpsimd_dma=)` was replaced by `dma_engine=` (an enum) in NKI {since}"
    elif kw.arg == "imm" and nisa:
        fix = _fix(f"pass src={nisa}.register_alloc(...)",
                   [Edit(s.span(kw), f"src={nisa}.register_alloc({s.text(kw.value)})")], False)
        what = (f"`{short}(imm=)` was renamed `src=` in NKI {since} and now takes a VirtualRegister, not a constant")
    elif kw.arg == "platform_target":
        fix = _fix("delete platform_target=", [Edit(s.span(kw), "")], False)
        what = f"`{short}(platform_target=)` raises an error since NKI {since}"
    elif kw.arg == "mask":
        what = f"`{short}(..., mask=)` was removed in NKI {since}: no API takes a mask any more"
    elif kw.arg == "dtype" and name.startswith("nki.isa."):
        what = f"`{short}(..., dtype=)` was removed in NKI {since}: the output dtype is the dtype of dst"
    else:
        what = f"`{short}({kw.arg}=)` was removed in NKI {since}"
        if record.note:
            what += f" ({record.note})"
    hint = {
        "mask": "bound the slices instead: compute r = min(128, n - p0) and index t[0:r, ...]; the masked-off part of "
                "an output stays unwritten",
        "dtype": "allocate dst with the wanted dtype (nl.ndarray(shape, dtype=...)) and drop dtype=",
        "platform_target": "select the target with NEURON_PLATFORM_TARGET_OVERRIDE=trn1|trn2|trn3 in the environment",
        "dst_rmw_op": "use nisa.dma_compute(dst, [src, dst], reduce_op=...) for read-modify-write DMA",
        "unique_indices": "pass unique_indices= to nisa.dma_compute instead",
        "num_channels": "pass channel_ids=[...] to ncc.collective_permute_implicit instead",
        "psumAccumulateFlag": "delete the argument: accumulation into PSUM is automatic",
    }.get(kw.arg) or (f"use {_short(repl)}" if repl else None)
    s.add("NKI605", kw, s.level(gen, kw), f"{what}; the target is NKI {v}{s.port_note(gen)}", hint=hint, fix=fix, gen=gen)


def _deprecated_keyword(s: Scan, call: ast.Call, kw: ast.keyword, qual: Qual, name: str, record, v: NkiVersion) -> None:
    gen = qual.gen
    since = record.since_nki.rsplit(".0", 1)[0] if record.since_nki else "?"
    fix = None
    if kw.arg == "mode" and name == "nki.jit":
        safe = gen is Gen.CURRENT
        fix = _fix("delete mode=", [Edit(s.span(kw), "")], safe)
        what = (f"`nki.jit(mode=)` is deprecated and ignored since NKI {since}: the framework is detected from the "
                "argument types")
        if gen is Gen.LEGACY:
            what += "; in legacy code mode= still selects the execution mode, so deleting it changes how the kernel runs"
        hint = "delete mode=; to simulate, set NKI_SIMULATOR=1 or call nki.simulate(kernel)(...)"
    else:
        what = f"`{_short(name)}({kw.arg}=)` is deprecated since NKI {since}"
        hint = record.note or None
    s.add("NKI605", kw, W, what, hint=hint, fix=fix, gen=gen)


# -- ISA calling convention (dst first) -------------------------------------------
def _isa_convention(s: Scan, call: ast.Call, qual: Qual, name: str, sig) -> bool:
    """Report a legacy-style ISA call; True when the whole call is reported
    as a legacy call to port (its keywords are then named in that finding)."""
    gen = qual.gen
    short = _short(name)
    positional = call.args
    if any(isinstance(a, ast.Starred) for a in positional) or any(k.arg is None for k in call.keywords):
        return False
    parent = s.parents.get(id(call))
    if isinstance(parent, ast.AugAssign) and parent.value is call and name in MATMULS:
        return False  # NKI610 explains the accumulation
    if gen is Gen.LEGACY:
        if name == "nki.isa.dma_copy" and positional:
            level = W if s.version < V0_2 else s.level(gen, call)
            s.add("NKI609", call, level,
                  f"positional `{short}(...)`: the legacy order was (src, dst) (Neuron SDK 2.21) and dst/src became "
                  f"keyword-only in 2.22; in nki.* the order is (dst, src){s.port_note(gen)}",
                  hint="write nisa.dma_copy(dst=..., src=...) with keywords", gen=gen)
            return False
        if s.version < V0_2:
            return False
        target = api.signature(name, s.version)
        legacy = api.signature(name, V0_1)
        if target is None or not target.params or target.params[0].name != "dst":
            return False
        if legacy is not None and legacy.params and "dst" in {p.name for p in legacy.params}:
            # The legacy API already wrote into dst (nc_stream_shuffle,
            # tensor_copy_predicated, select_reduce): only positional
            # arguments can change meaning.
            old = [p.name for p in legacy.positional][: len(positional)]
            new = [p.name for p in target.positional][: len(positional)]
            if positional and old != new:
                s.add("NKI609", call, s.level(gen, call),
                      f"positional `{short}({', '.join(old)}, ...)`: in nki.* the same positions mean "
                      f"({', '.join(new)}, ...) (NKI 0.2 put dst first){s.port_note(gen)}",
                      hint=f"pass the arguments of {short} by keyword", gen=gen)
            return False
        accepted = target.keyword_names()
        dropped = [k.arg for k in call.keywords if k.arg not in accepted]
        extra = ""
        if dropped:
            extra = "; its keyword(s) " + ", ".join(f"{k}=" for k in dropped) + f" do not exist in NKI {s.version}"
        s.add("NKI609", call, s.level(gen, call),
              f"legacy `{short}(...)` returns its result tile; from NKI 0.2 every nki.isa call takes the destination "
              f"as its first argument (dst) and returns no tile{extra}{s.port_note(gen)}",
              hint=f"allocate the result (nl.ndarray(shape, dtype=..., buffer=nl.sbuf or nl.psum)) and call "
                   f"{short}(dst=result, ...) with the NKI {s.version} parameters "
                   f"({', '.join(p.name for p in target.params if p.kind in ('p', 'k', 'o'))}); "
                   "the output dtype is dst's dtype and masks become bounded slices", gen=gen)
        return True
    sig = api.signature(name, s.version)
    if sig is None or not sig.params or sig.accepts_any_positional:
        return False
    params = [p for p in sig.params if p.kind in ("p", "o", "k")]
    order = [p.name for p in sig.params if p.kind in ("p", "o")]
    bound = set(order[: len(positional)]) | {k.arg for k in call.keywords}
    missing = [p.name for p in params if p.required and p.name not in bound]
    parent = s.parents.get(id(call))
    result_used = not isinstance(parent, ast.Expr)
    first_is_dst = order[:1] == ["dst"]
    shape_first = name in ("nki.isa.memset", "nki.isa.iota") and positional and isinstance(positional[0], (ast.Tuple, ast.List))
    if first_is_dst and ("dst" in missing or (missing and result_used) or shape_first):
        why = "the shape-first legacy form" if shape_first else ("missing " + ", ".join(missing) if missing else "")
        s.add("NKI609", call, E,
              f"`{short}(...)` uses the legacy calling convention ({why}): from NKI 0.2 ISA calls take the destination "
              "tile first (dst) and return no tile",
              hint=f"allocate the destination with nl.ndarray and call {short}(dst=..., ...)", gen=gen)
        return False
    if s.version >= V0_3 and name == "nki.isa.dma_compute" and len(positional) >= 4:
        third, fourth = positional[2], positional[3]
        q4 = s.bindings.resolve(fourth)
        if isinstance(third, (ast.List, ast.Tuple, ast.Constant)) or (q4 is not None and q4.name.startswith("nki.language.")):
            s.add("NKI609", call, E,
                  "positional `nisa.dma_compute(dst, srcs, scales, reduce_op)` is the NKI 0.2 order: NKI 0.3 moved "
                  "reduce_op to the third position (dst, srcs, reduce_op, scales=None, unique_indices=True)",
                  hint="pass reduce_op= and scales= by keyword", gen=gen)
    if s.version >= V0_3 and name == "nki.isa.affine_select" and len(positional) >= 6 and \
            isinstance(positional[5], ast.Constant) and isinstance(positional[5].value, (int, float)):
        s.add("NKI609", call, E,
              "six positional arguments with a number in sixth place is the NKI 0.2 order "
              "(dst, pattern, offset, channel_multiplier, on_true, on_false): NKI 0.3 made offset a keyword with "
              "default 0, so every later argument shifts",
              hint="write nisa.affine_select(dst, pattern, channel_multiplier, on_true, on_false, offset=...)", gen=gen)
    return False


# -- literals (0.3) ---------------------------------------------------------------
def _literals(s: Scan, call: ast.Call, qual: Qual, name: str) -> None:
    gen = qual.gen
    nl = s.alias_of("nki.language")
    nisa = s.alias_of("nki.isa")
    for kw in call.keywords:
        value = kw.value
        if kw.arg == "buffer" and isinstance(value, ast.Constant) and value.value in BUFFER_NAMES:
            if id(value) in s.output_buffer_nodes:
                continue  # reported as a kernel output (NKI613)
            fix = _fix(f"use {nl}.{value.value}", [Edit(s.span(value), f"{nl}.{value.value}")], True) if nl else None
            s.add("NKI612", value, s.level(gen, value),
                  f"string buffer {value.value!r}: from NKI 0.3 buffers are objects, not strings{s.port_note(gen)}",
                  hint=f"buffer=nl.{value.value}", fix=fix, gen=gen)
        elif kw.arg in ENUM_PARAMS and isinstance(value, ast.Constant) and type(value.value) is int:
            enum = ENUM_PARAMS[kw.arg]
            member = _enum_member(enum, value.value, s.version)
            fix = None
            if member and nisa:
                fix = _fix(f"use {nisa}.{enum}.{member}", [Edit(s.span(value), f"{nisa}.{enum}.{member}")], True)
            s.add("NKI612", value, s.level(gen, value),
                  f"raw integer {value.value} for the enum parameter {kw.arg}=: from NKI 0.3 enum parameters need "
                  f"enum members{s.port_note(gen)}",
                  hint=f"use nisa.{enum}.{member}" if member else f"use a member of nisa.{enum}", fix=fix, gen=gen)


def _enum_member(enum: str, value: int, version: NkiVersion) -> str | None:
    cls = (api.api_for(version).modules.get("nki.isa") or {}).get("classes", {}).get(enum) or {}
    for member, literal in (cls.get("members") or {}).items():
        if str(literal).strip() == str(value):
            return member
    return None


# -- PSUM accumulation ----------------------------------------------------------
def _augassign(s: Scan, node: ast.AugAssign) -> None:
    if not isinstance(node.op, ast.Add) or not isinstance(node.value, ast.Call):
        return
    qual = s.bindings.resolve(node.value.func)
    if qual is None or qual.name not in MATMULS or not qual.is_nki:
        return
    gen = qual.gen
    short = _short(qual.name)
    if gen is Gen.LEGACY:
        if s.version < V0_2:
            return
        s.add("NKI610", node, s.level(gen, node),
              f"`... += {short}(...)` accumulates into PSUM the legacy way; from NKI 0.2 nisa.nc_matmul writes into "
              "dst and accumulates by itself: the first write to a PSUM location overwrites it, later writes in the "
              f"same accumulation group add (accumulate= from NKI 0.3 makes it explicit){s.port_note(gen)}",
              hint="allocate the PSUM tile with nl.ndarray(..., buffer=nl.psum) and call "
                   "nisa.nc_matmul(dst=ps, stationary=..., moving=...) in the contraction loop "
                   "(accumulate=True after the first step if you need to be explicit)", gen=gen)
    elif qual.name == "nki.isa.nc_matmul" and s.version >= V0_2:
        s.add("NKI610", node, E,
              "`... += nisa.nc_matmul(...)`: nc_matmul returns no tile from NKI 0.2; it writes dst and accumulates "
              "into PSUM itself (first write overwrites, later writes add)",
              hint="call nisa.nc_matmul(dst=ps, stationary=..., moving=..., accumulate=True) instead", gen=gen)


# -- is / is not (0.3) ------------------------------------------------------------
def _compare(s: Scan, node: ast.Compare) -> None:
    if s.version < V0_3 or s.bindings.dialect.value == "none":
        return
    if not any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
        return
    left = node.left
    pairs = []
    for op, right in zip(node.ops, node.comparators):
        pairs.append((op, left, right))
        left = right
    bad = [(op, a, b) for op, a, b in pairs if isinstance(op, (ast.Is, ast.IsNot)) and not (_is_none(a) or _is_none(b))]
    if not bad or not s.in_device(node):
        return
    gen = Gen.LEGACY if s.bindings.dialect.value == "legacy" else Gen.CURRENT
    fix = None
    if len(node.ops) == 1 and node.lineno == node.end_lineno:
        op = "==" if isinstance(node.ops[0], ast.Is) else "!="
        fix = _fix(f"use {op}", [Edit(s.span(node), f"{s.text(node.left)} {op} {s.text(node.comparators[0])}")], False)
    # A warning, not an error: the 0.3 migration guide says `is` is unsupported,
    # but nki-library's own trace-tested kernels compare objects with `is`
    # (test_tensor_view.py), so some uses evidently compile.
    s.add("NKI611", node, W,
          f"`{s.text(node)}` in a kernel: the NKI 0.3 migration guide says the compiler does not support `is` / "
          f"`is not` (comparisons with None are accepted){s.port_note(gen)}",
          hint="use == / != (they compare values, not identity)", fix=fix, gen=gen)


# -- while on a register (0.6) ------------------------------------------------------
def _while(s: Scan, node: ast.While) -> None:
    if s.version < V0_6:
        return
    try:
        loops = q.loops_at(s.model, node)
    except Exception:  # pragma: no cover - a model crash is reported once, by the engine
        return
    if any(data.get("register_bound") for data in loops):
        reg = s.text(node.test)
        s.add("NKI607", node.test, W,
              f"`while {reg}:` on a register is deprecated since NKI 0.6 and scheduled for removal",
              hint="move the body into a function that returns the next condition register and call "
                   f"nl.while_loop({reg}, body)")


# -- kernels: roots, signatures, outputs, launch grids ----------------------------
def _root_kernels(s: Scan) -> dict[ast.AST, Gen]:
    """Decorated kernels of this file that are launched from the host: a
    decorated function that another function of the file calls is a
    sub-kernel (its signature and return values are not the kernel's
    interface; nki-library's all_expert_mx_impl.py does this)."""
    aliases = module_aliases(s.ctx.tree, s.bindings)
    called_in_functions = {
        n.func.id for n in s.nodes
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and s.function_of(n) is not None
    }
    out: dict[ast.AST, Gen] = {}
    for node in s.nodes:
        if not isinstance(node, FUNCS):
            continue
        for deco in node.decorator_list:
            name = resolve_decorator(deco, s.bindings, aliases)
            if name in ROOT_DECORATORS:
                if node.name in called_in_functions and _called_from_device(s, node.name):
                    break
                target = deco.func if isinstance(deco, ast.Call) else deco
                qual = s.bindings.resolve(target)
                out[node] = qual.gen if qual is not None and qual.is_nki else _file_gen(s)
                break
    return out


def _called_from_device(s: Scan, name: str) -> bool:
    for n in _name_loads(s).get(name, ()):
        call = s.parents.get(id(n))
        if isinstance(call, ast.Call) and call.func is n and s.in_device(call):
            return True
    return False


def _file_gen(s: Scan) -> Gen:
    return Gen.LEGACY if s.bindings.dialect.value == "legacy" else Gen.CURRENT


def _kernel_signature(s: Scan, fn: ast.FunctionDef, gen: Gen) -> None:
    if gen is Gen.LEGACY and s.version < V0_2:
        return
    args = fn.args
    if args.kwonlyargs and args.vararg is None:
        first = args.kwonlyargs[0]
        star = _bare_star_span(s, fn, first)
        fix = None
        defaults_before = bool(args.defaults)
        all_kw_defaults = all(d is not None for d in args.kw_defaults)
        if star is not None and (not defaults_before or all_kw_defaults):
            fix = _fix("remove the * separator", [Edit(star, "")], True)
        s.add("NKI611", star or fn, s.level(gen, fn, device=True),
              f"kernel `{fn.name}` has a keyword-only `*` separator: the NKI 0.3 compiler rejects `*` in kernel "
              f"signatures{s.port_note(gen)}",
              hint="remove `*,` and keep the parameters with defaults at the end", fix=fix, gen=gen)
    for default in list(args.defaults) + [d for d in args.kw_defaults if d is not None]:
        if isinstance(default, ast.List):
            s.add("NKI611", default, s.level(gen, fn, device=True),
                  f"kernel `{fn.name}` has a list default `{s.text(default)}`: the NKI 0.3 compiler rejects list kernel "
                  f"arguments{s.port_note(gen)}",
                  hint="use a tuple", fix=_tuple_fix(s, default), gen=gen)


def _bare_star_span(s: Scan, fn: ast.FunctionDef, first: ast.arg) -> Span | None:
    """The span of ``*, `` before the first keyword-only parameter."""
    line = s.source.line_text(first.lineno)
    col = s.source.byte_col_to_char(first.lineno, first.col_offset)
    before = line[:col]
    m = re.search(r"\*\s*,\s*$", before)
    if m is None:
        return None
    return Span(first.lineno, m.start() + 1, first.lineno, col + 1)


def _tuple_fix(s: Scan, node: ast.List) -> Fix | None:
    if node.lineno != node.end_lineno:
        return None
    items = [s.text(e) for e in node.elts]
    text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return _fix("use a tuple", [Edit(s.span(node), text)], False)


def _kernel_outputs(s: Scan, fn: ast.FunctionDef, gen: Gen) -> dict[int, bool]:
    """Report returned tensors allocated outside shared_hbm; returns the ids
    of the buffer= value nodes it reported."""
    reported: dict[int, bool] = {}
    body_nodes = [n for n in ast.walk(fn) if s.function_of(n) is fn]
    returned: set[str] = set()
    for n in body_nodes:
        if isinstance(n, ast.Return) and n.value is not None:
            values = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value]
            returned |= {v.id for v in values if isinstance(v, ast.Name)}
    if not returned:
        return reported
    allocs: dict[str, list[ast.Call]] = {}
    for n in body_nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            allocs.setdefault(n.targets[0].id, []).append(n.value)
    nl = s.alias_of("nki.language")
    for name in sorted(returned):
        values = allocs.get(name, [])
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            continue
        call = values[0]
        qual = s.bindings.resolve(call.func)
        if qual is None or qual.name not in ALLOC_APIS:
            continue
        buffer = next((k.value for k in call.keywords if k.arg == "buffer"), None)
        if buffer is None and qual.name == "nki.language.ndarray" and len(call.args) >= 3:
            buffer = call.args[2]
        if buffer is None:
            continue
        bq = s.bindings.resolve(buffer)
        kind = bq.name.rsplit(".", 1)[-1] if bq is not None and bq.name.startswith("nki.language.") else None
        if isinstance(buffer, ast.Constant) and isinstance(buffer.value, str):
            kind = buffer.value
        if kind not in ("hbm", "private_hbm"):
            continue
        fix = None
        if nl:
            fix = _fix(f"use {nl}.shared_hbm", [Edit(s.span(buffer), f"{nl}.shared_hbm")], True)
        reported[id(buffer)] = True
        s.add("NKI613", buffer, s.level(gen, buffer, ),
              f"kernel `{fn.name}` returns `{name}`, allocated in {kind}: from NKI 0.3 every returned tensor must be "
              f"allocated with buffer=nl.shared_hbm{s.port_note(gen)}",
              hint="allocate the output with buffer=nl.shared_hbm", fix=fix, gen=gen)
    return reported


def _kernel_target(s: Scan, target: ast.AST) -> Gen | None:
    """The generation of the kernel ``target`` refers to, or None if it is not
    a kernel: a decorated function of this file, an imported one, or
    ``nki.jit(f)``."""
    if isinstance(target, ast.Call):
        qual = s.bindings.resolve(target.func)
        if qual is not None and qual.name == "nki.jit":
            return qual.gen
        return None
    if not isinstance(target, ast.Name):
        return None
    for fn, gen in s.roots.items():
        if fn.name == target.id and s.function_of(fn) is None:
            return gen
    try:
        model = s.model
        module = model.module
        project = module.project
    except Exception:  # pragma: no cover
        return None
    for rec in s.bindings.records:
        if rec.local == target.id and isinstance(rec.node, ast.ImportFrom):
            return _imported_kernel_gen(project, module, 0, rec.module, target.id, rec.node)
    level_rec = s.bindings.relative.get(target.id)
    if level_rec is not None:
        level, mod, orig = level_rec
        return _imported_kernel_gen(project, module, level, mod, orig or target.id, None)
    return None


def _imported_kernel_gen(project, module, level: int, mod: str, name: str, node) -> Gen | None:
    try:
        other = project.find_module(module, level, mod)
    except Exception:  # pragma: no cover - project lookups never fail a rule
        return None
    if other is None:
        return None
    original = name
    if node is not None:
        original = next((a.name for a in node.names if (a.asname or a.name) == name), name)
    fn = other.functions.get(original)
    if fn is None:
        return None
    aliases = module_aliases(other.tree, other.bindings)
    for deco in fn.decorator_list:
        if resolve_decorator(deco, other.bindings, aliases) in ROOT_DECORATORS:
            target = deco.func if isinstance(deco, ast.Call) else deco
            qual = other.bindings.resolve(target)
            return qual.gen if qual is not None and qual.is_nki else Gen.CURRENT
    return None


def _grid(s: Scan, call: ast.Call) -> None:
    sub = call.func
    gen = _kernel_target(s, sub.value)
    if gen is None or s.version < V0_2:
        return
    dims = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    level = E if (gen is Gen.CURRENT or s.version >= V0_4) else W
    note = s.port_note(gen)
    if len(dims) > 1:
        s.add("NKI608", sub.slice, level,
              f"SPMD launch grid `[{s.text(sub.slice)}]` has {len(dims)} dimensions: from NKI 0.2 the bracket takes "
              f"one integer, the number of logical NeuronCores (1 or 2){note}",
              hint="launch with kernel[2](...) (or no bracket) and loop over the tiles inside the kernel; split the "
                   "work between the cores with nl.program_id(0)", gen=gen)
        return
    dim = dims[0]
    if isinstance(dim, ast.Constant) and type(dim.value) is int and dim.value > 2:
        s.add("NKI608", dim, level,
              f"launch grid [{dim.value}]: from NKI 0.2 the bracket is the logical-core count, 1 or 2 on current "
              f"hardware, and a larger value is an error{note}",
              hint="launch with kernel[2](...) or kernel(...) and loop over the work inside the kernel", gen=gen)


def _kernel_call_site(s: Scan, call: ast.Call, target: ast.AST) -> None:
    if s.version < V0_3:
        return
    values = list(call.args) + [k.value for k in call.keywords]
    lists = [v for v in values if isinstance(v, ast.List)]
    if not lists:
        return
    gen = _kernel_target(s, target)
    if gen is None:
        return
    for value in lists:
        s.add("NKI611", value, E if gen is Gen.CURRENT or s.version >= V0_4 else W,
              f"list argument `{s.text(value)}` passed to kernel `{s.text(target)}`: the NKI 0.3 compiler rejects "
              f"list kernel arguments{s.port_note(gen)}",
              hint="pass a tuple", fix=_tuple_fix(s, value), gen=gen)
