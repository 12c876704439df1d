"""NKI604 renamed-api."""

from __future__ import annotations

import ast

from nkilint.findings import Edit, Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid
from nkilint.versions import V0_1, V0_2

from nkilint.model import api_history as api
from ._base import API_TABLE, MIGRATION_GUIDE, Issues, MigrationRule, make_fix, short
from ._index import NameIndex
from ._names import RENAMES, NameFact, NameFacts, cached_status


class RenamedApi(MigrationRule):
    id = "NKI604"
    name = "renamed-api"
    family = "migration"
    level = Level.NOTE
    fixable = True
    fix_follows_target = True
    summary = "A deprecated or moved NKI name with a one-to-one replacement (engine aliases, tile_size constants, nki.tensor)"
    explanation = """
Names that still mean the same thing under another spelling:

| old | new | since |
|---|---|---|
| `nisa.tensor_engine`, `vector_engine`, `scalar_engine`, `gpsimd_engine`, `unknown_engine` | `nisa.engine.tensor`, ... | deprecated aliases in the 0.2 stubs |
| `nl.tile_size.psum_fmax` | `nl.tile_size.psum_bank_fmax` (512 fp32 elements) | deprecated 0.4 |
| `nl.tile_size.total_available_sbuf_size` | `nl.tile_size.sbuf_fmax_bytes` (per partition) or `sbuf_size_bytes` (whole SBUF) | deprecated 0.4 |
| `nki.tensor` | `nki.meta.tensor` | moved in SDK 2.28 (an error) |

Other names the target's stubs mark deprecated are reported too, naming the
replacement. Levels come from the release facts (`nkilint releases`): an
alias that still works and has no announced removal is a note; a
deprecation with an announced removal is a warning (NKI 0.8, SDK 2.34:
`nisa.sendrecv` / `nisa.core_barrier` -> `nki.lnc.*`, the `register_*`
APIs -> scalars); a moved name whose old spelling is gone is an error.

**Fix:** use the new spelling. `nkilint check --fix` rewrites the engine
aliases, `psum_fmax` (when the target documents `psum_bank_fmax`, 0.5+) and
`nki.tensor` (same object, safe). `total_available_sbuf_size` ->
`sbuf_fmax_bytes` is offered only with `--unsafe-fixes`: the old name is
misleading (it is per partition, not the whole SBUF), so code that
multiplied it by 128 or compared it with a total size is wrong either way
and must be read by a person (NKI migration guide 0.3 -> 0.4).
"""
    references = (f"{MIGRATION_GUIDE} (Deprecated APIs, 0.3 -> 0.4)", "aws-neuron-sdk nki/api/nki.language.tile_size.rst",
                  "aws-neuron-sdk nki/api/nki/isa/__init__.py (engine aliases)", API_TABLE)
    examples = (
        invalid(
            """
            import nki.isa as nisa
            import nki.language as nl

            def evict(dst, src):
                nisa.tensor_copy(dst=dst, src=src, engine=nisa.vector_engine)
                width = nl.tile_size.psum_fmax
            """,
            lines=[5, 6],
            level=Level.NOTE,
            fixed="""
            import nki.isa as nisa
            import nki.language as nl

            def evict(dst, src):
                nisa.tensor_copy(dst=dst, src=src, engine=nisa.engine.vector)
                width = nl.tile_size.psum_bank_fmax
            """,
        ),
        invalid(
            """
            import nki.language as nl

            def budget():
                return nl.tile_size.total_available_sbuf_size * 128  # per partition, not total!
            """,
            lines=[4],
            title="unsafe fix: the code meant the whole SBUF; a person must decide",
            unsafe_fixes=True,
            fixed="""
            import nki.language as nl

            def budget():
                return nl.tile_size.sbuf_fmax_bytes * 128  # per partition, not total!
            """,
        ),
        invalid(
            """
            import nki

            def spec(shape, dtype):
                return nki.tensor(shape, dtype)
            """,
            lines=[4],
            title="nki.tensor moved to nki.meta.tensor in SDK 2.28 (an error)",
            level=Level.ERROR,
            fixed="""
            import nki

            def spec(shape, dtype):
                return nki.meta.tensor(shape, dtype)
            """,
        ),
        valid(
            """
            import nki.isa as nisa
            import nki.language as nl

            def evict(dst, src):
                nisa.tensor_copy(dst=dst, src=src, engine=nisa.engine.vector)
                width = nl.tile_size.psum_fmax
            """,
            title="psum_fmax is deprecated from NKI 0.4 only",
            nki_version="0.3",
        ),
    )

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for f in index.model.analysis(NameFacts).of_kind("rename", "found"):
            if f.kind == "rename":
                cls._rename(index, out, f)
            else:
                cls._deprecated(index, out, f)

    @staticmethod
    def _deprecated(index: NameIndex, out: Issues, f: NameFact) -> None:
        v = f.version
        if v < V0_2:
            return
        sig = api.signature(f.name, v)
        dep = bool(sig and sig.deprecated)
        repl = sig.replacement if sig else None
        if not dep:
            det = api.api_for(v).constant_details(f.name)
            dep = bool(det.get("deprecated"))
            repl = det.get("replacement")
        if not dep:
            return
        fact = _DEPRECATION_FACTS.get(f.name)
        level = (index.fact_level(fact) if fact else None) or Level.NOTE
        out.add(f.node, level,
                f"{f.text} is deprecated in NKI {v}" + (f"; use `{short(repl)}`" if repl else ""),
                hint=f"replace it with {short(repl)}" if repl else None, gen=f.gen)

    @staticmethod
    def _rename(index: NameIndex, out: Issues, f: NameFact) -> None:
        repl, since, safe, why = RENAMES[f.name]
        gen, v, node = f.gen, f.version, f.node
        removed = f.status.state == "gone"
        # An alias that still works is a note (no removal is announced).
        level = index.level(gen, node) if removed else (index.fact_level(_RENAME_FACTS[f.name]) or Level.NOTE)
        verb = (f"was moved to `{short(repl)}` in NKI {since}" if removed
                else f"is deprecated since NKI {since}; use `{short(repl)}`")
        fix = None
        repl_ok = cached_status(repl, v).state == "found" or repl == "nki.meta.tensor"
        if gen is Gen.LEGACY and repl != "nki.meta.tensor":
            repl_ok = repl_ok and cached_status(repl, V0_1).state == "found"
        elif gen is Gen.LEGACY:
            repl_ok = False  # nki.meta does not exist in the legacy package
        if not f.at_import and isinstance(node, ast.Attribute) and repl_ok:
            replacement = _renamed_text(index, node, f.name, repl)
            if replacement is not None:
                fix = make_fix(f"replace with {replacement}", [Edit(index.span(node), replacement)], safe)
        out.add(node, level, f"{f.text} {verb}" + (index.port_note(gen) if removed else ""),
                hint=f"replace it with {short(repl)} ({why})", fix=fix, gen=gen)


# The release facts that give the levels (nkilint.releases).
_RENAME_FACTS = {
    "nki.isa.tensor_engine": "isa-engine-aliases",
    "nki.isa.vector_engine": "isa-engine-aliases",
    "nki.isa.scalar_engine": "isa-engine-aliases",
    "nki.isa.gpsimd_engine": "isa-engine-aliases",
    "nki.isa.unknown_engine": "isa-engine-aliases",
    "nki.language.tile_size.psum_fmax": "tile-size-aliases",
    "nki.language.tile_size.total_available_sbuf_size": "tile-size-aliases",
    "nki.tensor": "nki-tensor-alias",
}
# Deprecations the API table records whose level a release fact gives (a
# removal is announced); any other deprecated name is a note.
_DEPRECATION_FACTS = {
    "nki.isa.sendrecv": "isa-lnc-functions",
    "nki.isa.core_barrier": "isa-lnc-functions",
    "nki.isa.sendrecv_compute": "isa-sendrecv-compute",
    "nki.isa.register_alloc": "virtual-register",
    "nki.isa.register_move": "virtual-register",
    "nki.isa.register_load": "virtual-register",
    "nki.isa.register_store": "virtual-register",
}


def _renamed_text(index: NameIndex, node: ast.Attribute, old: str, new: str) -> str | None:
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
    return index.text(base) + "." + ".".join(new_parts[common:])
