"""NKI605 removed-parameter."""

from __future__ import annotations

import ast

from nkilint.findings import Edit, Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid

from ._base import API_TABLE, MIGRATION_GUIDE, RELEASE_NOTES, Issues, MigrationRule, keyword_name_span, make_fix, short
from ._calls import NkiCall, NkiCalls, checked_keywords, keyword_kind, param_history
from ._index import NameIndex


class RemovedParameter(MigrationRule):
    id = "NKI605"
    name = "removed-parameter"
    family = "migration"
    level = Level.ERROR
    fixable = True
    fix_follows_target = True
    summary = "A keyword argument the target version removed, renamed or deprecated (mask=, dtype= on ISA calls, is_moving_zero, ...)"
    explanation = """
Keyword arguments that existed in an earlier version of an API and are
gone or renamed in the target, from the change records and the signature
history of the API table:

* `mask=` on every API (0.2): bound the slices with `min()` instead;
* `dtype=` on ISA calls (0.2): the output dtype is the dtype of `dst`
  (a warning at SDK 2.27, which still ignores unknown keywords silently;
  an error from 2.28); `mask=` on ISA calls is the same: at 2.27 the
  ignored mask makes the instruction write the masked-off elements too;
* `nc_matmul(is_moving_zero=)` -> `is_moving_onezero=` and
  `psumAccumulateFlag=` removed (SDK 2.28; the flag had no effect; at SDK
  2.27 both are still the accepted names, and are not reported);
* `dma_copy(dst_rmw_op=, unique_indices=)` (0.3) -> `nisa.dma_compute`;
* `sendrecv(use_gpsimd_dma=)` -> `dma_engine=nisa.dma_engine.gpsimd_dma /
  .dma` (0.3); `register_move(imm=)` -> `src=` taking a register (0.3);
* `collective_permute_implicit_current_processing_rank_id(num_channels=)` (0.3);
* `nki.jit(platform_target=)` raises from 0.3 (an error);
  `nki.jit(mode=)` is deprecated and ignored from 0.3 (a warning).

Unknown keywords are rejected since SDK 2.28 ("unexpected keyword
argument"), so a removed keyword is an error in `nki.*` code; in legacy
code it is part of the port list.

**Fix:** the message names the replacement. `nkilint check --fix` renames
`is_moving_zero=`, deletes `psumAccumulateFlag=` (it had no effect),
rewrites `use_gpsimd_dma=True/False` and deletes `nki.jit(mode=)` in `nki.*`
code (ignored since 0.3; `@nki.jit(mode=...)` becomes `@nki.jit`). With `--unsafe-fixes` it also deletes
`platform_target=` (select the target with `NEURON_PLATFORM_TARGET_OVERRIDE`
instead), rewrites `imm=x` as `src=nisa.register_alloc(x)` (allocates a
register) and deletes `mode=` in legacy code (where it still selects how
the kernel runs). `mask=` and `dtype=` need a person.
"""
    references = (MIGRATION_GUIDE, f"{RELEASE_NOTES} (2.28, 0.3.0)", API_TABLE)
    examples = (
        invalid(
            """
            import nki
            import nki.isa as nisa

            @nki.jit(mode="jax")
            def mm(ps, a, b):
                nisa.nc_matmul(dst=ps, stationary=a, moving=b, is_moving_zero=False, psumAccumulateFlag=3)
            """,
            lines=[4, 6],
            fixed="""
            import nki
            import nki.isa as nisa

            @nki.jit
            def mm(ps, a, b):
                nisa.nc_matmul(dst=ps, stationary=a, moving=b, is_moving_onezero=False)
            """,
        ),
        invalid(
            """
            import nki.isa as nisa

            def send(src, dst, peer):
                nisa.sendrecv(src=src, dst=dst, send_to_rank=peer, recv_from_rank=peer, pipe_id=0,
                              use_gpsimd_dma=True)
            """,
            lines=[5],
            level=Level.ERROR,
            fixed="""
            import nki.isa as nisa

            def send(src, dst, peer):
                nisa.sendrecv(src=src, dst=dst, send_to_rank=peer, recv_from_rank=peer, pipe_id=0,
                              dma_engine=nisa.dma_engine.gpsimd_dma)
            """,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def masked(a, n):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                t = nl.load(a[i_p, 0:512], mask=(i_p < n))
                nl.store(out[i_p, 0:512], value=t, mask=(i_p < n))
                return out
            """,
            lines=[8, 9],
            title="legacy kernel, target 0.6: mask= is part of the port list",
            nki_version="0.6",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.isa as nisa

            @nki.jit(platform_target="trn2")
            def bump(counter):
                r = nisa.register_alloc(0)
                nisa.register_move(r, imm=42)
            """,
            lines=[4, 7],
            title="unsafe fixes: the target moves to NEURON_PLATFORM_TARGET_OVERRIDE; the move allocates a register",
            level=Level.ERROR,
            unsafe_fixes=True,
            fixed="""
            import nki
            import nki.isa as nisa

            @nki.jit
            def bump(counter):
                r = nisa.register_alloc(0)
                nisa.register_move(r, src=nisa.register_alloc(42))
            """,
        ),
        valid(
            """
            import nki
            import nki.isa as nisa

            @nki.jit
            def mm(ps, a, b):
                nisa.nc_matmul(dst=ps, stationary=a, moving=b, is_moving_onezero=False)
            """,
        ),
        valid(
            """
            import nki.isa as nisa

            def send(src, dst, peer):
                nisa.sendrecv(src=src, dst=dst, send_to_rank=peer, recv_from_rank=peer, pipe_id=0,
                              use_gpsimd_dma=True)
            """,
            title="use_gpsimd_dma existed in NKI 0.2 (migration guide)",
            nki_version="0.2",
        ),
    )

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for site in index.model.analysis(NkiCalls).calls:
            for kw in checked_keywords(index, site):
                kind = keyword_kind(site, kw)
                if kind is None:
                    continue
                what, record = kind
                if what == "removed" and _not_yet(record, index):
                    continue
                if what == "removed":
                    _removed_keyword(index, out, site, kw, record)
                elif what == "deprecated":
                    _deprecated_keyword(index, out, site, kw, record)
                elif what == "dropped":
                    v, gen, name = site.version, site.gen, short(site.name)
                    earlier = [x for x in param_history(site.name, kw.arg) if x < v]
                    out.add(kw, index.level(gen, kw),
                            f"`{name}(..., {kw.arg}=)` is not a parameter of `{name}` in NKI {v} (last documented in "
                            f"NKI {max(earlier)}){index.port_note(gen)}",
                            hint=f"drop {kw.arg}= and use the NKI {v} parameters: "
                                 f"{', '.join(sorted(site.sig.keyword_names()))}", gen=gen)


_HINTS = {
    "mask": "bound the slices instead: compute r = min(128, n - p0) and index t[0:r, ...]; the masked-off part of "
            "an output stays unwritten",
    "dtype": "allocate dst with the wanted dtype (nl.ndarray(shape, dtype=...)) and drop dtype=",
    "platform_target": "select the target with NEURON_PLATFORM_TARGET_OVERRIDE=trn1|trn2|trn3 in the environment",
    "dst_rmw_op": "use nisa.dma_compute(dst, [src, dst], reduce_op=...) for read-modify-write DMA",
    "unique_indices": "pass unique_indices= to nisa.dma_compute instead",
    "num_channels": "pass channel_ids=[...] to ncc.collective_permute_implicit instead",
    "psumAccumulateFlag": "delete the argument: accumulation into PSUM is automatic",
}


def _not_yet(record, index: NameIndex) -> bool:
    """A change recorded for a later SDK than the target, within the same
    NKI version: SDK 2.27 and 2.28 both ship NKI 0.2.0, and 2.27 still
    takes `nc_matmul(is_moving_zero=)` (its known issues: "is_moving_onezero
    was incorrectly named is_moving_zero in this release") and
    `psumAccumulateFlag=` (removed in 2.28)."""
    since = getattr(record, "since_sdk", None)
    if not since:
        return False
    major, minor = since.split(".")[:2]
    return index.release.key < (int(major), int(minor))


def _removed_keyword(index: NameIndex, out: Issues, site: NkiCall, kw: ast.keyword, record) -> None:
    gen, name, v = site.gen, site.name, site.version
    name_short = short(name)
    since = record.since_nki.rsplit(".0", 1)[0] if record.since_nki else "?"
    if record.since_sdk:
        since += f" (Neuron SDK {record.since_sdk.rsplit('.0', 1)[0]})"
    fix = None
    nisa = index.alias_of("nki.isa")
    repl = record.replacement
    if kw.arg == "is_moving_zero" and repl:
        new = "is_moving_onezero"
        fix = make_fix(f"rename is_moving_zero= to {new}=", [Edit(keyword_name_span(index, kw), new)], True)
        what = f"`{name_short}(is_moving_zero=)` was renamed `is_moving_onezero` in NKI {since}"
    elif kw.arg == "psumAccumulateFlag":
        fix = make_fix("delete psumAccumulateFlag=", [Edit(index.span(kw), "")], True)
        what = f"`{name_short}(psumAccumulateFlag=)` was removed in NKI {since} (it had no effect)"
        repl = None
    elif kw.arg == "use_gpsimd_dma" and nisa and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
        member = "gpsimd_dma" if kw.value.value else "dma"
        fix = make_fix(f"use dma_engine={nisa}.dma_engine.{member}",
                       [Edit(index.span(kw), f"dma_engine={nisa}.dma_engine.{member}")], True)
        what = f"`{name_short}(use_gpsimd_dma=)` was replaced by `dma_engine=` (an enum) in NKI {since}"
    elif kw.arg == "imm" and nisa:
        fix = make_fix(f"pass src={nisa}.register_alloc(...)",
                       [Edit(index.span(kw), f"src={nisa}.register_alloc({index.text(kw.value)})")], False)
        what = f"`{name_short}(imm=)` was renamed `src=` in NKI {since} and now takes a VirtualRegister, not a constant"
    elif kw.arg == "platform_target":
        fix = make_fix("delete platform_target=", [Edit(index.span(kw), "")], False)
        what = f"`{name_short}(platform_target=)` raises an error since NKI {since}"
    elif kw.arg == "mask":
        what = f"`{name_short}(..., mask=)` was removed in NKI {since}: no API takes a mask any more"
        if gen is Gen.CURRENT and name.startswith("nki.isa.") and index.fact_level("isa-mask-keyword") is Level.WARNING:
            # SDK 2.27 drops unknown keywords silently (release fact
            # "isa-mask-keyword"): the call compiles without its mask, so it
            # writes the masked-off elements too; 2.28 rejects it.
            out.add(kw, Level.WARNING, f"{what}; Neuron SDK {index.release.minor} ignores the keyword silently, so the "
                    "instruction also writes the elements the mask excluded; SDK 2.28 and later reject it "
                    "('unexpected keyword argument')", hint=_HINTS["mask"], gen=gen)
            return
    elif kw.arg == "dtype" and name.startswith("nki.isa."):
        what = f"`{name_short}(..., dtype=)` was removed in NKI {since}: the output dtype is the dtype of dst"
        if gen is Gen.CURRENT and index.fact_level("isa-dtype-keyword") is Level.WARNING:
            # SDK 2.27 drops unknown keywords silently (release fact
            # "isa-dtype-keyword"): the call compiles, 2.28 rejects it.
            out.add(kw, Level.WARNING, f"{what}; Neuron SDK {index.release.minor} ignores the keyword silently, "
                    "SDK 2.28 and later reject it ('unexpected keyword argument')", hint=_HINTS["dtype"], gen=gen)
            return
    else:
        what = f"`{name_short}({kw.arg}=)` was removed in NKI {since}"
        if record.note:
            what += f" ({record.note})"
    hint = _HINTS.get(kw.arg) or (f"use {short(repl)}" if repl else None)
    out.add(kw, index.level(gen, kw), f"{what}; the target is NKI {v}{index.port_note(gen)}", hint=hint, fix=fix,
            gen=gen)


def _deprecated_keyword(index: NameIndex, out: Issues, site: NkiCall, kw: ast.keyword, record) -> None:
    gen, name = site.gen, site.name
    since = record.since_nki.rsplit(".0", 1)[0] if record.since_nki else "?"
    fix = None
    if kw.arg == "mode" and name == "nki.jit":
        safe = gen is Gen.CURRENT
        fix = make_fix("delete mode=", [Edit(index.span(kw), "")], safe)
        what = (f"`nki.jit(mode=)` is deprecated and ignored since NKI {since}: the framework is detected from the "
                "argument types")
        if gen is Gen.LEGACY:
            what += "; in legacy code mode= still selects the execution mode, so deleting it changes how the kernel runs"
        hint = "delete mode=; to simulate, set NKI_SIMULATOR=1 or call nki.simulate(kernel)(...)"
    else:
        what = f"`{short(name)}({kw.arg}=)` is deprecated since NKI {since}"
        hint = record.note or None
    # No deprecated keyword has an announced removal (nki.jit(mode=) is
    # ignored: release fact "jit-mode"): a note.
    level = index.fact_level("jit-mode") if kw.arg == "mode" and name == "nki.jit" else None
    out.add(kw, level or Level.NOTE, what, hint=hint, fix=fix, gen=gen)
