"""NKI609 isa-calling-convention."""

from __future__ import annotations

import ast

from nkilint.findings import Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid
from nkilint.versions import V0_1, V0_2, V0_3

from nkilint.model import api_history as api
from ._base import API_TABLE, MIGRATION_GUIDE, RELEASE_NOTES, Issues, MigrationRule, short
from ._calls import NkiCall, NkiCalls, accumulated_matmul, legacy_result_call, plain_arguments
from ._index import NameIndex


class IsaCallingConvention(MigrationRule):
    id = "NKI609"
    name = "isa-calling-convention"
    family = "migration"
    level = Level.ERROR
    summary = "An nki.isa call in the legacy convention: returns its tile instead of taking dst first, or uses a changed positional order"
    explanation = """
From NKI 0.2 "all ISA functions require a destination parameter": every
`nki.isa` call takes the output tile as its first argument (`dst`) and
returns no tile (only an instruction handle for scheduling); `dtype=` and
`mask=` are gone (aws-neuron-sdk `nki/migration/index.rst`, 0.1 -> 0.2).
Several positional orders changed as well, which is silent when arguments
are passed by position:

* `nisa.dma_copy`: `(src, dst)` in SDK 2.21, keyword-only in the rest of
  the legacy API, `(dst, src)` in `nki.*`;
* `nisa.nc_stream_shuffle(src, dst, mask)` -> `(dst, src, shuffle_mask)` (0.2);
* `nisa.memset(shape, value, dtype)` -> `memset(dst, value)`,
  `nisa.iota(expr, dtype)` -> `iota(dst, pattern, ...)` (0.2);
* `nisa.dma_compute(dst, srcs, scales, reduce_op)` ->
  `(dst, srcs, reduce_op, scales=None, unique_indices=True)` (0.3);
* `nisa.affine_select`: `offset` left the third position for a keyword (0.3).

These are semantic changes, so they are explained and never auto-fixed.
In a legacy file each legacy-style ISA call is part of the port list; in
`nki.*` code a call without `dst` (or with missing required arguments and
its result used as a tile), the shape-first `memset`/`iota` forms, and the
0.2 orders of `dma_compute` / `affine_select` are errors.

**Fix:** allocate the destination (`nl.ndarray(shape, dtype=...,
buffer=nl.sbuf)`, or `nl.psum` for matmul results) and pass it as `dst=`;
pass arguments whose position changed by keyword.
"""
    references = (f"{MIGRATION_GUIDE} (0.1 -> 0.2; 0.2 -> 0.3 API breaking changes)", f"{RELEASE_NOTES} (2.27)",
                  API_TABLE)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                u = nisa.activation(op=nl.exp, data=t)
                z = nisa.memset((128, 512), 0.0, nl.float32)
                nisa.dma_copy(dst=out, src=u)
                return out
            """,
            lines=[10, 11],
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def mm(a_t, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.load(a_t)
                y = nl.load(b)
                ps = nisa.nc_matmul(x, y)
                nisa.dma_copy(out, ps)
                nisa.nc_stream_shuffle(x, y, [0] * 32)
                nisa.nc_stream_shuffle(src=x, dst=y, shuffle_mask=[0] * 32)
                return out
            """,
            lines=[10, 11, 12],
            title="legacy kernel, target 0.6: the ISA calls must be ported (keywords keep their meaning)",
            nki_version="0.6",
            level=Level.ERROR,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(t, a)
                u = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                ins = nisa.activation(dst=u, op=nl.exp, data=t)
                nisa.memset(u, 0.0)
                nisa.dma_copy(dst=out, src=u)
                return out
            """,
            title="dst-first calls; the instruction handle may be kept",
        ),
    )

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for site in index.model.analysis(NkiCalls).calls:
            if not site.name.startswith("nki.isa.") or not plain_arguments(site.call):
                continue
            if accumulated_matmul(index, site):
                continue
            if site.gen is Gen.LEGACY:
                _legacy_call(index, out, site)
            else:
                _current_call(index, out, site)


def _legacy_call(index: NameIndex, out: Issues, site: NkiCall) -> None:
    call, gen, name = site.call, site.gen, site.name
    name_short = short(name)
    positional = call.args
    if name == "nki.isa.dma_copy" and positional:
        level = Level.WARNING if index.version < V0_2 else index.level(gen, call)
        out.add(call, level,
                f"positional `{name_short}(...)`: the legacy order was (src, dst) (Neuron SDK 2.21) and dst/src became "
                f"keyword-only in 2.22; in nki.* the order is (dst, src){index.port_note(gen)}",
                hint="write nisa.dma_copy(dst=..., src=...) with keywords", gen=gen)
        return
    if index.version < V0_2:
        return
    target = legacy_result_call(index, site)
    if target is None:
        target = api.signature(name, index.version)
        legacy = api.signature(name, V0_1)
        if target is None or not target.params or target.params[0].name != "dst":
            return
        # The legacy API already wrote into dst (nc_stream_shuffle,
        # tensor_copy_predicated, select_reduce): only positional
        # arguments can change meaning.
        old = [p.name for p in legacy.positional][: len(positional)]
        new = [p.name for p in target.positional][: len(positional)]
        if positional and old != new:
            out.add(call, index.level(gen, call),
                    f"positional `{name_short}({', '.join(old)}, ...)`: in nki.* the same positions mean "
                    f"({', '.join(new)}, ...) (NKI 0.2 put dst first){index.port_note(gen)}",
                    hint=f"pass the arguments of {name_short} by keyword", gen=gen)
        return
    accepted = target.keyword_names()
    dropped = [k.arg for k in call.keywords if k.arg not in accepted]
    extra = ""
    if dropped:
        extra = "; its keyword(s) " + ", ".join(f"{k}=" for k in dropped) + f" do not exist in NKI {index.version}"
    out.add(call, index.level(gen, call),
            f"legacy `{name_short}(...)` returns its result tile; from NKI 0.2 every nki.isa call takes the destination "
            f"as its first argument (dst) and returns no tile{extra}{index.port_note(gen)}",
            hint=f"allocate the result (nl.ndarray(shape, dtype=..., buffer=nl.sbuf or nl.psum)) and call "
                 f"{name_short}(dst=result, ...) with the NKI {index.version} parameters "
                 f"({', '.join(p.name for p in target.params if p.kind in ('p', 'k', 'o'))}); "
                 "the output dtype is dst's dtype and masks become bounded slices", gen=gen)


def _current_call(index: NameIndex, out: Issues, site: NkiCall) -> None:
    call, gen, name = site.call, site.gen, site.name
    positional = call.args
    sig = api.signature(name, index.version)
    if sig is None or not sig.params or sig.accepts_any_positional:
        return
    params = [p for p in sig.params if p.kind in ("p", "o", "k")]
    order = [p.name for p in sig.params if p.kind in ("p", "o")]
    bound = set(order[: len(positional)]) | {k.arg for k in call.keywords}
    missing = [p.name for p in params if p.required and p.name not in bound]
    result_used = not isinstance(index.parents.get(id(call)), ast.Expr)
    first_is_dst = order[:1] == ["dst"]
    shape_first = name in ("nki.isa.memset", "nki.isa.iota") and positional and isinstance(positional[0], (ast.Tuple, ast.List))
    if first_is_dst and ("dst" in missing or (missing and result_used) or shape_first):
        why = "the shape-first legacy form" if shape_first else ("missing " + ", ".join(missing) if missing else "")
        out.add(call, Level.ERROR,
                f"`{short(name)}(...)` uses the legacy calling convention ({why}): from NKI 0.2 ISA calls take the "
                "destination tile first (dst) and return no tile",
                hint=f"allocate the destination with nl.ndarray and call {short(name)}(dst=..., ...)", gen=gen)
        return
    if index.version >= V0_3 and name == "nki.isa.dma_compute" and len(positional) >= 4:
        third, fourth = positional[2], positional[3]
        q4 = index.bindings.resolve(fourth)
        if isinstance(third, (ast.List, ast.Tuple, ast.Constant)) or (q4 is not None and q4.name.startswith("nki.language.")):
            out.add(call, Level.ERROR,
                    "positional `nisa.dma_compute(dst, srcs, scales, reduce_op)` is the NKI 0.2 order: NKI 0.3 moved "
                    "reduce_op to the third position (dst, srcs, reduce_op, scales=None, unique_indices=True)",
                    hint="pass reduce_op= and scales= by keyword", gen=gen)
    if index.version >= V0_3 and name == "nki.isa.affine_select" and len(positional) >= 6 and \
            isinstance(positional[5], ast.Constant) and isinstance(positional[5].value, (int, float)):
        out.add(call, Level.ERROR,
                "six positional arguments with a number in sixth place is the NKI 0.2 order "
                "(dst, pattern, offset, channel_multiplier, on_true, on_false): NKI 0.3 made offset a keyword with "
                "default 0, so every later argument shifts",
                hint="write nisa.affine_select(dst, pattern, channel_multiplier, on_true, on_false, offset=...)", gen=gen)
