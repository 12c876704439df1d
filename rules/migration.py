"""Migration family (NKI6xx): what the target NKI version deprecated,
removed or changed.

Facts: ../shared/NKI-REFERENCE.md section 1 (the table of changes in 1.4 and
the semantic changes below it), the API table nkilint/data/nki_api.json
(every API and parameter per Neuron SDK release, 2.20-2.32, with the change
records), and aws-neuron-sdk nki/migration/index.rst and
release-notes/components/nki.rst at NKI 0.6.

Every rule reports at the level the target version (``--nki-version``,
default the newest) gives the construct: deprecated -> warning, removed or
rejected -> error. In a file that still imports the legacy
``neuronxcc.nki`` namespace, every construct that must change is reported
(the port list): as warnings while the target still compiles legacy
kernels (0.2, 0.3), as errors from 0.4. The classification lives in
``_migration_scan`` / ``_migration_checks``; this module holds the rules
and their documentation.
"""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Edit, Fix, Level
from nkilint.model.bindings import Gen
from nkilint.rule import Rule, invalid, valid
from nkilint.versions import V0_2, V0_4

from . import _migration_api as _api
from ._migration_scan import scan

_MIGRATION = "aws-neuron-sdk nki/migration/index.rst"
_RN = "aws-neuron-sdk release-notes/components/nki.rst"
_REF = "../shared/NKI-REFERENCE.md section 1.4"
_TABLE = "nkilint/data/nki_api.json (API stubs of Neuron SDK 2.20-2.32 and their change records)"


class _ScanRule(Rule):
    """A rule whose findings the migration scan classified."""

    def check(self, ctx: RuleContext) -> None:
        for issue in scan(ctx).issues:
            if issue.rule_id == self.id:
                ctx.report(issue.where, issue.message, level=issue.level, hint=issue.hint, fix=issue.fix,
                           related=list(issue.related))


# =====================================================================
# NKI601
# =====================================================================
def _current_spelling(module: str, node: ast.AST, version=None) -> str | None:
    """The import statement in the nki.* namespace, or None when a rewrite of
    the import alone would break the references (``import neuronxcc.nki.x``
    without an alias binds ``neuronxcc``) or name a module the target does
    not have (``neuronxcc.nki.kernels``, ``neuronxcc.nki.compiler``)."""

    def exists(mod: str) -> bool:
        return version is None or mod == "nki" or mod in _api.modules_in(version)

    if isinstance(node, ast.Import):
        parts = []
        for alias in node.names:
            if not alias.name.startswith("neuronxcc.nki"):
                parts.append(alias.name if not alias.asname else f"{alias.name} as {alias.asname}")
                continue
            if alias.asname is None:
                return None
            name = alias.name.replace("neuronxcc.nki", "nki", 1)
            if not exists(name):
                return None
            parts.append(name if alias.asname == name else f"{name} as {alias.asname}")
        return "import " + ", ".join(parts)
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        return None
    if module == "neuronxcc":
        names = [a for a in node.names if a.name == "nki"]
        if len(names) != len(node.names):
            return None
        asname = names[0].asname
        return "import nki" if not asname or asname == "nki" else f"import nki as {asname}"
    mod = module.replace("neuronxcc.nki", "nki", 1)
    if not exists(mod):
        return None
    names = ", ".join(f"{a.name} as {a.asname}" if a.asname else a.name for a in node.names)
    return f"from {mod} import {names}"


class LegacyNamespace(Rule):
    id = "NKI601"
    name = "legacy-namespace"
    family = "migration"
    level = Level.ERROR
    precision = "very-high"
    fixable = True
    summary = "The legacy neuronxcc.nki namespace is deprecated (NKI 0.2) and a compile error inside kernels (NKI 0.4+)"
    explanation = """
NKI 0.2 (Neuron SDK 2.27) introduced the `nki.*` namespace and a new
compiler; the legacy `neuronxcc.nki.*` namespace (NKI 0.1) became
deprecated. From NKI 0.4 (Neuron SDK 2.30), using `neuronxcc.nki.*` inside
an NKI kernel is a **compilation error** (aws-neuron-sdk
`nki/migration/index.rst`, "neuronxcc.nki.* inside kernels — now a
compilation error"; `release-notes/components/nki.rst`).

The level follows the target NKI version (`--nki-version`, default the
newest): nothing for 0.1, a warning for 0.2 and 0.3, an error from 0.4 when
device code uses the legacy namespace (a kernel body, a helper it calls, or
a legacy `@nki.jit` decorator). A file that only imports it, uses it in host
code (test harnesses calling `nki.simulate_kernel`) or only in parameter
annotations gets a warning.

**Fix:** import from `nki` instead (`import nki.language as nl`,
`import nki.isa as nisa`) and port the kernel to the current API: ISA calls
take `dst` first, `nl.load`/`nl.store` become `nisa.dma_copy`, `nl.arange`
and `mask=` become slices. The other migration rules (NKI602-NKI615) list
every construct of the file that must change.

Rewriting the import alone is **not** semantics-preserving: the same names
mean different things in the two generations (ISA calls that returned tiles
now need a destination, `affine_range` loops became sequential, loop bodies
are traced with Python semantics). So nkilint offers the import rewrite only
as an unsafe fix (`--fix --unsafe-fixes`), only when no other migration rule
reports anything in the file's legacy code (everything it uses exists
unchanged in the target), and for all legacy imports of the file or none:
an import whose module has no `nki.*` counterpart in the target
(`neuronxcc.nki.kernels`, `neuronxcc.nki.compiler`, `nki.typing` before
0.3) or that binds `neuronxcc` itself (`import neuronxcc.nki.language`)
blocks the rewrite, since a half-rewritten file would mix both namespaces.
"""
    references = (
        f"{_MIGRATION} (Migrating from NKI 0.3.0 to 0.4.0; Migrating from NKI 0.1.0 to 0.2.0)",
        f"{_RN} (NKI 0.4.0)",
        _REF + " row 1",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                tile = nl.load(a)
                nl.store(out, value=tile)
                return out
            """,
            lines=[1, 2],
            title="legacy kernel, target NKI 0.6: an error (nl.load and nl.store exist unchanged in 0.6, so the "
                  "unsafe fix rewrites the imports)",
            nki_version="0.6",
            level=Level.ERROR,
            unsafe_fixes=True,
            fixed="""
            import nki
            import nki.language as nl

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                tile = nl.load(a)
                nl.store(out, value=tile)
                return out
            """,
        ),
        invalid(
            """
            from neuronxcc import nki
            """,
            lines=[1],
            title="deprecated in NKI 0.3 (a warning)",
            nki_version="0.3",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki.typing as nt
            import nki.language as nl

            def router(logits: nt.mutable_tensor, out):
                t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
                return out
            """,
            lines=[1],
            title="only in parameter annotations: a warning even for 0.6",
            nki_version="0.6",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            """,
            title="the target is the legacy API itself",
            nki_version="0.1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa
            """,
            nki_version="0.6",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        version = ctx.nki_version
        if version < V0_2:
            return
        s = scan(ctx)
        legacy = [r for r in s.bindings.legacy_imports() if r.module.startswith("neuronxcc")]
        if not legacy:
            return
        uses = getattr(s, "uses", [])
        roots = getattr(s, "roots", {})
        in_device = any(gen is Gen.LEGACY for gen in roots.values()) or any(
            q.gen is Gen.LEGACY and in_body and s.in_device(node) for node, q, in_body in uses
        )
        port_items = [i for i in s.issues if i.gen is Gen.LEGACY]
        # The rewrite is all or nothing: rewriting some imports only would
        # leave the file mixing both namespaces (NKI602).
        rewrites = {id(r.node): _current_spelling(r.module, r.node, version) for r in legacy}
        rewritable = not port_items and all(text is not None for text in rewrites.values())
        seen: set[int] = set()
        for record in legacy:
            if id(record.node) in seen:
                continue
            seen.add(id(record.node))
            module = record.module
            replacement = rewrites[id(record.node)]
            if version >= V0_4 and in_device:
                level = Level.ERROR
                message = (
                    f"the legacy namespace '{module}' is a compile error inside NKI kernels from NKI 0.4 "
                    f"(Neuron SDK 2.30); the target is NKI {version}"
                )
            else:
                level = Level.WARNING
                message = f"the legacy namespace '{module}' is deprecated since NKI 0.2 (Neuron SDK 2.27)"
                if version >= V0_4:
                    message += "; using it inside a kernel is a compile error from NKI 0.4"
                else:
                    message += " and becomes a compile error inside kernels in NKI 0.4"
            if port_items:
                message += f" ({len(port_items)} construct(s) of the file must change too; see the other NKI6xx findings)"
            fix = None
            if replacement is not None and rewritable:
                fix = Fix(f"rewrite the import as '{replacement}'", (Edit(ctx.span_of(record.node), replacement),), safe=False)
            ctx.report(
                record.node,
                message,
                level=level,
                fix=fix,
                hint=f"use '{replacement or 'import nki...'}' and port the kernel to the nki.* API (dst-first nki.isa "
                "calls, nisa.dma_copy for nl.load/nl.store, slices for arange/mask)",
            )


# =====================================================================
# NKI602
# =====================================================================
class MixedNamespaces(Rule):
    id = "NKI602"
    name = "mixed-namespaces"
    family = "migration"
    level = Level.ERROR
    summary = "A file uses both the legacy neuronxcc.nki and the current nki namespace"
    explanation = """
"A single file cannot utilize both versions of the language"
(aws-neuron-sdk `nki/deep-dives/nki-beta-versions.rst` at commit 337e6041,
NKI Beta 2); from NKI 0.3 mixing 0.2 and 0.3 kernels in one model is not
supported either (0.3 release notes). The two namespaces are compiled by two
different frontends with different semantics for the same names, so a
kernel that mixes them is rejected or silently misinterpreted.

The finding is an error when functions of the file use names of both
namespaces, a warning when one of them is only imported or only appears in
annotations. It is reported at the first import of the namespace the target
does not want (the legacy one for NKI 0.2+, the current one for 0.1).

**Fix:** port the file to one namespace (the `nki.*` one for NKI 0.2+):
replace every `neuronxcc.nki` import and port the constructs the other
migration rules report.
"""
    references = ("aws-neuron-sdk nki/deep-dives/nki-beta-versions.rst at commit 337e6041", f"{_RN} (NKI 0.3.0)")
    examples = (
        invalid(
            """
            import neuronxcc.nki.language as nl
            import nki.isa as nisa

            def kernel(a, out):
                t = nl.load(a)
                nisa.dma_copy(dst=out, src=t)
            """,
            lines=[1],
            nki_version="0.6",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki.typing as nt
            import nki.language as nl

            def helper(x: nt.tensor, out):
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                return t
            """,
            lines=[1],
            title="the legacy name only in an annotation: a warning",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        s = scan(ctx)
        if s.bindings.dialect.value != "both":
            return
        legacy = [r for r in s.bindings.records if r.qual.gen is Gen.LEGACY and r.module.startswith("neuronxcc")]
        current = [r for r in s.bindings.records if r.qual.gen is Gen.CURRENT]
        if not legacy or not current:
            return
        uses = getattr(s, "uses", [])
        # The rule is about kernels: both namespaces used in device code is an
        # error; host code patching one namespace from the other (NXDI model
        # files do) is only a warning.
        used_legacy = any(q.gen is Gen.LEGACY and in_body and s.in_device(node) for node, q, in_body in uses)
        used_current = any(q.gen is Gen.CURRENT and in_body and s.in_device(node) for node, q, in_body in uses)
        level = Level.ERROR if used_legacy and used_current else Level.WARNING
        wrong, other = (legacy, current) if ctx.nki_version >= V0_2 else (current, legacy)
        first, other_first = wrong[0], other[0]
        ctx.report(
            first.node,
            f"this file imports both the legacy neuronxcc.nki namespace and the nki namespace "
            f"('{first.module}' here, '{other_first.module}' on line {other_first.node.lineno}): a single file cannot "
            "use both versions of the language",
            level=level,
            related=[(other_first.node, f"'{other_first.module}' imported here")],
            hint="port the file to the nki.* namespace" if ctx.nki_version >= V0_2 else "use neuronxcc.nki only for NKI 0.1",
        )


# =====================================================================
# NKI603
# =====================================================================
class RemovedApi(_ScanRule):
    id = "NKI603"
    name = "removed-api"
    family = "migration"
    level = Level.ERROR
    summary = "An NKI API the target version removed (legacy-only APIs, nl.arange/mgrid/par_dim, baremetal, nki_jit, ...)"
    explanation = """
The API table (the stubs of every Neuron SDK release from 2.20 to 2.32)
says in which NKI versions each name exists. A name that an earlier
version documented and the target does not is reported with the version
that removed it and its replacement. The main groups
(NKI-REFERENCE.md 1.4 rows 2-4, 12-17, 21, 26, 45-47):

* indexing: `nl.arange`, `nl.mgrid` (0.2) -> integer slices, `nl.ds`,
  `.ap()`; block dimensions `nl.par_dim` (0.2; an error in the legacy API
  itself from SDK 2.25) -> fold them into the free dims or use lists of tiles;
* `nl.load`, `nl.store` and the `nl` compute wrappers in NKI 0.2 (they return,
  experimental, in 0.3; in 0.2 the element-wise names are only `op=` values
  and calling them is an error);
* legacy-only `nl` APIs (`atomic_rmw`, `loop_reduce`, `all_reduce`,
  `static_cast`, `gemm_grid`, `spmd_dim`, `nl.nc`), `nisa.builtin_custom_op`;
* launchers and tools: `nki.baremetal`, `nki.benchmark`, `nki.profile`,
  `nki.simulate_kernel`, `nki.trace` (0.2), `torch_neuronx.nki_jit` (SDK
  2.24), `jax_neuronx.nki_call` (SDK 2.23);
* the `nki.compiler` allocation API (`sbuf.alloc`, `mod_alloc`,
  `psum.*`, `skip_middle_end_transformations`, ...) (0.2) -> `address=`;
* `nisa.tensor_copy_dynamic_src/dst` (deprecated 0.3, removed 0.4) ->
  `nisa.tensor_copy` with `.ap(scalar_offset=...)`.

Level: an error in `nki.*` code; in a legacy file, a warning while the
target still compiles legacy kernels (0.2, 0.3) and an error from 0.4.
Names reported here are never reported as unknown (NKI614).

**Fix:** use the replacement the message names; none of these is a rename,
so there is no automatic fix.
"""
    references = (_MIGRATION, f"{_RN} (2.27-2.30)", _REF + " rows 2-4, 12-17, 21, 26, 45", _TABLE,
                  "aws-neuron-sdk about-neuron/announcements/neuron2.x/announce-no-support-nki-jit-torch.rst")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                t = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8, 9],
            title="legacy indexing in nki.* code (NKI 0.6)",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def tanh_kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                ix = nl.arange(128)[:, None]
                iy = nl.arange(512)[None, :]
                t = nl.load(a[ix, iy])
                nl.store(out[ix, iy], value=nl.tanh(t))
                return out
            """,
            lines=[7, 8, 9, 10],
            title="legacy kernel, target NKI 0.2: arange is gone, and nl.load/nl.store/nl.tanh cannot be called in "
                  "0.2 (warnings: 0.2 still compiles legacy kernels)",
            nki_version="0.2",
            level=Level.WARNING,
        ),
        invalid(
            """
            from torch_neuronx import nki_jit
            import neuronxcc.nki.language as nl

            @nki_jit
            def kernel(a):
                return nl.load(a)
            """,
            lines=[1],
            title="torch_neuronx.nki_jit is unsupported since SDK 2.24, even for the legacy API",
            nki_version="0.1",
        ),
        invalid(
            """
            import nki
            import nki.isa as nisa

            def gather(dst, src, reg):
                nisa.tensor_copy_dynamic_src(dst=dst, src=src, src_offset=reg)
            """,
            lines=[5],
            nki_version="0.4",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                ix = nl.arange(128)[:, None]
                nl.store(out[ix, 0:512], value=nl.load(a[ix, 0:512]))
                return out
            """,
            title="legacy code targeting the legacy API",
            nki_version="0.1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a[0:128, nl.ds(0, 512)])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
        ),
    )


# =====================================================================
# NKI604
# =====================================================================
class RenamedApi(_ScanRule):
    id = "NKI604"
    name = "renamed-api"
    family = "migration"
    level = Level.WARNING
    fixable = True
    summary = "A deprecated or moved NKI name with a one-to-one replacement (engine aliases, tile_size constants, nki.tensor)"
    explanation = """
Names that still mean the same thing under another spelling:

| old | new | since |
|---|---|---|
| `nisa.tensor_engine`, `vector_engine`, `scalar_engine`, `gpsimd_engine`, `unknown_engine` | `nisa.engine.tensor`, ... | deprecated aliases in the 0.2 stubs |
| `nl.tile_size.psum_fmax` | `nl.tile_size.psum_bank_fmax` (512 fp32 elements) | deprecated 0.4 |
| `nl.tile_size.total_available_sbuf_size` | `nl.tile_size.sbuf_fmax_bytes` (per partition) or `sbuf_size_bytes` (whole SBUF) | deprecated 0.4 |
| `nki.tensor` | `nki.meta.tensor` | moved in SDK 2.28 (an error) |

Other names the target's stubs mark deprecated are reported too (a warning
naming the replacement). Deprecated names are warnings; a moved name whose
old spelling is gone (`nki.tensor`) is an error.

**Fix:** use the new spelling. `nkilint check --fix` rewrites the engine
aliases, `psum_fmax` (when the target documents `psum_bank_fmax`, 0.5+) and
`nki.tensor` (same object, safe). `total_available_sbuf_size` ->
`sbuf_fmax_bytes` is offered only with `--unsafe-fixes`: the old name is
misleading (it is per partition, not the whole SBUF), so code that
multiplied it by 128 or compared it with a total size is wrong either way
and must be read by a person (NKI migration guide 0.3 -> 0.4).
"""
    references = (f"{_MIGRATION} (Deprecated APIs, 0.3 -> 0.4)", "aws-neuron-sdk nki/api/nki.language.tile_size.rst",
                  "aws-neuron-sdk nki/api/nki/isa/__init__.py (engine aliases)", _REF + " rows 39-42", _TABLE)
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
            level=Level.WARNING,
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


# =====================================================================
# NKI605
# =====================================================================
class RemovedParameter(_ScanRule):
    id = "NKI605"
    name = "removed-parameter"
    family = "migration"
    level = Level.ERROR
    fixable = True
    summary = "A keyword argument the target version removed, renamed or deprecated (mask=, dtype= on ISA calls, is_moving_zero, ...)"
    explanation = """
Keyword arguments that existed in an earlier version of an API and are
gone or renamed in the target, from the change records and the signature
history of the API table (NKI-REFERENCE.md 1.4 rows 4, 6, 18, 19, 28,
30-33):

* `mask=` on every API (0.2): bound the slices with `min()` instead;
* `dtype=` on ISA calls (0.2): the output dtype is the dtype of `dst`;
* `nc_matmul(is_moving_zero=)` -> `is_moving_onezero=` and
  `psumAccumulateFlag=` removed (SDK 2.28; the flag had no effect);
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
    references = (_MIGRATION, f"{_RN} (2.28, 0.3.0)", _REF + " rows 4, 6, 18, 19, 28, 30-33", _TABLE)
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


# =====================================================================
# NKI606
# =====================================================================
class DeprecatedLoopIterator(_ScanRule):
    id = "NKI606"
    name = "deprecated-loop-iterator"
    family = "migration"
    level = Level.WARNING
    fixable = True
    summary = "nl.affine_range / sequential_range (deprecated 0.3) and static_range (0.6) are aliases of Python range()"
    explanation = """
From NKI 0.3 every static loop (`range`, `nl.affine_range`,
`nl.sequential_range`, `nl.static_range`) is fully unrolled at
specialization time with ordinary sequential Python semantics
(`nki/get-started/nki-language-guide.rst`, "Compilation Model"). The
iterator names survive only as deprecated aliases: `affine_range` and
`sequential_range` are deprecated in 0.3 (the 0.3-0.5 stubs point to
`static_range`), and in 0.6 all three are deprecated aliases of Python
`range()` (the 0.6 stubs).

This is a **semantic change**, not only a rename, for code written for the
legacy API or NKI 0.2: there `affine_range` promised independent
iterations (the compiler could reorder and pipeline them; a loop-carried
dependency was a race) and `sequential_range` forced order. In 0.3+ the
loop runs in order regardless; code that relied on the old parallel
semantics keeps working, and code that had races in `affine_range`
silently becomes correct (and possibly slower).

Nothing is reported for targets 0.1 and 0.2, where these iterators have
their own meaning.

**Fix:** write `for i in range(...)`. `nkilint check --fix` rewrites the
iterator in `nki.*` code when the loop bounds are compile-time integers
(the model knows the trip count); a loop whose bounds may be a runtime
register (a dynamic `sequential_range` loop in 0.3-0.5) is not rewritten.
In legacy files the rewrite is offered only with `--unsafe-fixes`, since the
legacy compiler gives `range` and `affine_range` different schedules.
"""
    references = ("aws-neuron-sdk nki/api/nki/language/__init__.py (affine_range, sequential_range, static_range stubs)",
                  "aws-neuron-sdk nki/get-started/nki-language-guide.rst (Compilation Model)",
                  "aws-neuron-sdk nki/deep-dives/nki-dynamic-loops.rst", _REF + " rows 22-23")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_tiles(a):
                out = nl.ndarray((512, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, 0:512])
                    for j in nl.static_range(1):
                        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=t)
                return out
            """,
            lines=[8, 11],
            title="NKI 0.6: both are aliases of range()",
            level=Level.WARNING,
            fixed="""
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_tiles(a):
                out = nl.ndarray((512, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in range(4):
                    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, 0:512])
                    for j in range(1):
                        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=t)
                return out
            """,
        ),
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def k(a):
                for i in nl.sequential_range(2):
                    pass
                for i in nl.static_range(2):
                    pass
            """,
            lines=[6],
            title="NKI 0.3: sequential_range is deprecated, static_range is not yet",
            nki_version="0.3",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def k(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    nl.store(out, value=nl.load(a))
                return out
            """,
            lines=[7],
            title="legacy code, target 0.6: the rewrite is unsafe (legacy affine_range allowed reordering)",
            nki_version="0.6",
            unsafe_fixes=True,
            fixed="""
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def k(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in range(4):
                    nl.store(out, value=nl.load(a))
                return out
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def k(a):
                for i in nl.affine_range(2):
                    pass
            """,
            title="NKI 0.2: affine_range is the parallel loop",
            nki_version="0.2",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def k(a):
                for i in range(2):
                    pass
            """,
        ),
    )


# =====================================================================
# NKI607
# =====================================================================
class DynamicLoopForm(_ScanRule):
    id = "NKI607"
    name = "dynamic-loop-form"
    family = "migration"
    level = Level.WARNING
    summary = "for ... in nl.dynamic_range(...) and bare `while reg:` are deprecated in NKI 0.6 (use fori_loop / while_loop)"
    explanation = """
NKI 0.6 deprecates the two ways of writing runtime-driven loops, to be
removed in a future release (aws-neuron-sdk `nki/migration/index.rst`,
"Migrating from NKI 0.5.0 to NKI 0.6.0"): `for i in nl.dynamic_range(...)`
becomes `nl.fori_loop(lo, hi, body)`, and a bare `while reg:` on a
register becomes `nl.while_loop(reg, body)`, where the body function returns
the next condition register.

This is not a rename: the loop body becomes a function, the loop variable
is a read-only register (no Python arithmetic on it; use
`.ap(scalar_offset=...)`), the `fori_loop` body returns nothing, tensors
created in the body are not visible after the loop, and these loops cannot
sit inside `nl.no_reorder()`. So there is no automatic fix. (The 03/31/2026
`nki-dynamic-loops.rst` deep dive still recommends `dynamic_range`; the
0.6 migration guide and release notes deprecate it.)

**Fix:** move the body into `def body(i): ...` and call
`nl.fori_loop(0, n, body)` / `nl.while_loop(reg, body)`.
"""
    references = (f"{_MIGRATION} (0.5 -> 0.6)", f"{_RN} (NKI 0.6.0)", _REF + " rows 24-25")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def count(data, n_sb):
                temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
                reg = nisa.register_alloc(0)
                nisa.register_load(reg, n_sb)
                for i in nl.dynamic_range(reg):
                    nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
                while reg:
                    nisa.register_load(reg, n_sb)
            """,
            lines=[10, 12],
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def count(data, n_sb):
                temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
                reg = nisa.register_alloc(0)
                nisa.register_load(reg, n_sb)
                for i in nl.dynamic_range(reg):
                    nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
            """,
            title="NKI 0.5: dynamic_range is the way to write it",
            nki_version="0.5",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def count(data, n_sb):
                temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
                reg = nisa.register_alloc(0)
                nisa.register_load(reg, n_sb)

                def body(i):
                    nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))

                nl.fori_loop(0, reg, body)
            """,
        ),
    )


# =====================================================================
# NKI608
# =====================================================================
class SpmdLaunchGrid(_ScanRule):
    id = "NKI608"
    name = "spmd-launch-grid"
    family = "migration"
    level = Level.ERROR
    summary = "A multi-dimensional SPMD launch grid (k[4, 2]) or a grid larger than the logical-core count (NKI 0.2+)"
    explanation = """
The legacy API launched kernels on N-dimensional SPMD grids
(`kernel[4, 2](a)`, `kernel[nl.nc(2) * 2](a)`, with `nl.program_id(1)` and
`nl.spmd_dim`). From NKI 0.2 the bracket takes exactly one integer: the
number of logical NeuronCores the kernel runs on (1, or 2 on LNC=2
hardware); "the bracket syntax must contain only one number", and a number
too large for the architecture is an error (aws-neuron-sdk
`nki/get-started/about/lnc.rst`). NKI 0.5 also announces that a grid that
differs from the LNC degree in use will become a compile error.

Reported for launches of kernels this file defines or imports (decorated
with `nki.jit`) and for `nki.jit(f)[...]`: a tuple grid is an error, a
literal grid above 2 is an error. In a legacy file the finding is part of
the port list (a warning for 0.2/0.3).

**Fix:** launch with `kernel[2](...)` (or no bracket) and iterate over the
former grid inside the kernel (`for i in range(4):`), using
`nl.program_id(0)` only to split work between the two cores of an LNC.
"""
    references = ("aws-neuron-sdk nki/get-started/about/lnc.rst",
                  "aws-neuron-sdk about-neuron/announcements/neuron2.x/announce-intent-eos-nki-spmd-launch-grid.rst",
                  "aws-neuron-sdk nki/test/test_nki_spmd_grid.py (legacy grids)", _REF + " row 21")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                return out

            def launch(x):
                y = add[4, 2](x)
                return add[8](y)
            """,
            lines=[11, 12],
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                return out

            def launch(x):
                return add[2, 2](x)
            """,
            lines=[10],
            title="legacy SPMD grid, target 0.3: a port item (a warning)",
            nki_version="0.3",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                return out

            def launch(x):
                return add[2, 2](x)
            """,
            title="legacy grids are the legacy API's launch form",
            nki_version="0.1",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def add(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                return out

            def launch(x, table):
                return add[2](x), table[1, 2]
            """,
        ),
    )


# =====================================================================
# NKI609
# =====================================================================
class IsaCallingConvention(_ScanRule):
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
    references = (f"{_MIGRATION} (0.1 -> 0.2; 0.2 -> 0.3 API breaking changes)", f"{_RN} (2.27)",
                  _REF + " rows 5-11, 29", _TABLE)
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


# =====================================================================
# NKI610
# =====================================================================
class PsumAccumulation(_ScanRule):
    id = "NKI610"
    name = "psum-accumulate-semantics"
    family = "migration"
    level = Level.ERROR
    summary = "`psum[...] += matmul(...)` accumulation: from NKI 0.2 nc_matmul writes dst and accumulates by itself"
    explanation = """
Legacy kernels accumulate matrix products into PSUM with
`res_psum[...] += nisa.nc_matmul(a, b)` or `+= nl.matmul(a, b)`. From
NKI 0.2, `nisa.nc_matmul(dst=psum_tile, stationary=..., moving=...)`
writes into its destination and accumulates by itself: the first write to a
PSUM location in an accumulation group overwrites it and later writes add
("near-memory accumulation", `nc_matmul` stub; NKI 0.3 adds
`accumulate=None/True/False` to make it explicit). So the port is not a
rename: a PSUM tile reused across output tiles now keeps accumulating
unless the first matmul of each group starts a new one.

In a legacy file this is part of the port list. In `nki.*` code,
`... += nisa.nc_matmul(...)` is an error: the call returns no tile.

**Fix:** allocate the PSUM tile with `nl.ndarray(..., buffer=nl.psum)`
inside the output-tile loop and call `nisa.nc_matmul(dst=ps, stationary=...,
moving=...)` in the contraction loop (with `accumulate=True` after the first
step if you want it explicit); then copy PSUM to SBUF with
`nisa.tensor_copy`.
"""
    references = ("aws-neuron-sdk nki/api/nki/isa/__init__.py (nc_matmul: accumulate)",
                  "aws-neuron-sdk nki/get-started/about/ (near-memory accumulation)", _REF + " row 34")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(a, b, ps):
                for k in range(4):
                    ps[...] += nisa.nc_matmul(a[k], b[k])
            """,
            lines=[8],
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(a, b):
                res = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(4):
                    res += nl.matmul(a[k], b[k], transpose_x=True)
                return res
            """,
            lines=[8],
            title="legacy accumulation, target 0.3 (a port item)",
            nki_version="0.3",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(a, b, ps):
                for k in range(4):
                    nisa.nc_matmul(dst=ps, stationary=a[k], moving=b[k], accumulate=k > 0)
            """,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(a, b):
                res = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(4):
                    res += nl.matmul(a[k], b[k], transpose_x=True)
                return res
            """,
            title="the legacy idiom, targeting the legacy API",
            nki_version="0.1",
        ),
    )


# =====================================================================
# NKI611
# =====================================================================
class KernelLanguageRestriction(_ScanRule):
    id = "NKI611"
    name = "kernel-language-restriction"
    family = "migration"
    level = Level.ERROR
    fixable = True
    summary = "Python the NKI 0.3 compiler rejects: `is`/`is not`, `*` in a kernel signature, list kernel arguments"
    explanation = """
The NKI 0.3 compiler validates the kernel language more strictly
(aws-neuron-sdk `nki/migration/index.rst`, 0.2 -> 0.3 "Language
restrictions"):

* no keyword-only separator `*` in a kernel's signature (`@nki.jit def
  k(x, *, flag=True)`);
* no `is` / `is not` inside kernels ("object identity is not meaningful
  during tracing"). Comparisons with `None` are not reported: the NKI
  team's own nki-library kernels (targeting 0.6) use `x is None` in about 50
  places, so the compiler evidently accepts them;
* no list kernel arguments (defaults in the signature, or lists passed at
  a call site of the kernel): use tuples, which are immutable and hashable
  (kernel caching).

Reported for targets 0.3+, in `nki.*` code, and as port items in legacy
code.

**Fix:** remove `*,` (parameters with defaults last) — `nkilint check --fix`
does this when the result is valid Python, and it keeps every existing call
working; with `--unsafe-fixes` it also rewrites `a is b` as `a == b`
(equality is not identity) and list literals as tuples (list-only
operations on them would break).
"""
    references = (f"{_MIGRATION} (0.2 -> 0.3, Language restrictions)", _REF + " row 37")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, *, factor=2.0, perm=[0, 1]):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if factor is True:
                    pass
                return out

            def run(x):
                return scale_kernel(x, factor=3.0, perm=[1, 0])
            """,
            lines=[5, 7, 12],
            fixed="""
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, factor=2.0, perm=[0, 1]):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if factor is True:
                    pass
                return out

            def run(x):
                return scale_kernel(x, factor=3.0, perm=[1, 0])
            """,
        ),
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, mode=None, perm=(0, 1)):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if mode is not None and mode is not nl.float32:
                    pass
                return out

            def run(x):
                return scale_kernel(x, perm=[1, 0])
            """,
            lines=[7, 12],
            title="with --unsafe-fixes",
            unsafe_fixes=True,
            fixed="""
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, mode=None, perm=(0, 1)):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if mode is not None and mode != nl.float32:
                    pass
                return out

            def run(x):
                return scale_kernel(x, perm=(1, 0))
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, *, factor=2.0):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if factor is True:
                    pass
                return out
            """,
            title="NKI 0.2 accepted these",
            nki_version="0.2",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def scale_kernel(x, bias=None, factor=2.0, perm=(0, 1)):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                if bias is not None and factor == 2.0:
                    pass
                return out

            def helper(x, *, flag=False):
                return x is flag
            """,
            title="`is None`, and host helpers, are fine",
        ),
    )


# =====================================================================
# NKI612
# =====================================================================
class LiteralBufferOrEnum(_ScanRule):
    id = "NKI612"
    name = "string-buffer-or-int-enum"
    family = "migration"
    level = Level.ERROR
    fixable = True
    summary = "A string buffer (buffer='sbuf') or a raw integer enum (dge_mode=2): rejected from NKI 0.3"
    explanation = """
NKI 0.3 no longer accepts strings for the `buffer` parameter of
`nl.ndarray`, `nl.zeros` and the other creation ops, nor raw integers for
enum parameters (`engine=`, `dge_mode=`, `oob_mode=`, `reduce_cmd=`,
`perf_mode=`, `dma_engine=`) (aws-neuron-sdk `nki/migration/index.rst`,
0.2 -> 0.3 "String buffer names no longer supported", "Integer enum
constants no longer supported").

**Fix:** use the objects: `buffer=nl.sbuf` / `nl.psum` / `nl.hbm` /
`nl.private_hbm` / `nl.shared_hbm`, and enum members such as
`nisa.dge_mode.hwdge` (the integer values come from the enum definitions of
the target's API stubs). `nkilint check --fix` rewrites both (same objects,
safe) when the file imports `nki.language` / `nki.isa` under an alias. A
string buffer of a returned output is reported by NKI613 instead (it must
become `nl.shared_hbm`).
"""
    references = (f"{_MIGRATION} (0.2 -> 0.3)", _REF + " row 36", _TABLE)
    examples = (
        invalid(
            """
            import nki.language as nl
            import nki.isa as nisa

            def stage(x, t):
                buf = nl.ndarray((128, 512), dtype=nl.float16, buffer='sbuf')
                nisa.dma_copy(dst=buf, src=x, dge_mode=2)
                return buf
            """,
            lines=[5, 6],
            level=Level.ERROR,
            fixed="""
            import nki.language as nl
            import nki.isa as nisa

            def stage(x, t):
                buf = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                nisa.dma_copy(dst=buf, src=x, dge_mode=nisa.dge_mode.hwdge)
                return buf
            """,
        ),
        valid(
            """
            import nki.language as nl
            import nki.isa as nisa

            def stage(x, t):
                buf = nl.ndarray((128, 512), dtype=nl.float16, buffer='sbuf')
                nisa.dma_copy(dst=buf, src=x, dge_mode=2)
                return buf
            """,
            title="NKI 0.2 accepted them",
            nki_version="0.2",
        ),
    )


# =====================================================================
# NKI613
# =====================================================================
class OutputNotSharedHbm(_ScanRule):
    id = "NKI613"
    name = "output-not-shared-hbm"
    family = "migration"
    level = Level.ERROR
    fixable = True
    summary = "A kernel returns a tensor allocated in nl.hbm / nl.private_hbm: outputs must be nl.shared_hbm from NKI 0.3"
    explanation = """
"All kernel output (return) tensors must be allocated with
`buffer=nl.shared_hbm`. Using `nl.hbm` for output tensors will cause
compilation failures" (aws-neuron-sdk `nki/migration/index.rst`, 0.2 ->
0.3). NKI 0.2 and the legacy API accepted `nl.hbm` outputs (some tutorials
still show them).

Reported for tensors a kernel (a function decorated with `nki.jit`)
returns directly when their single allocation in the kernel passes
`buffer=nl.hbm`, `nl.private_hbm` or the string `'hbm'`. (The memory
family checks other placement rules of outputs; this rule is the version
change.)

**Fix:** allocate the output with `buffer=nl.shared_hbm`.
`nkilint check --fix` rewrites the buffer (the tensor stays in device HBM;
shared_hbm is the kind the runtime can hand back to the caller).
"""
    references = (f"{_MIGRATION} (0.2 -> 0.3, Output tensors must use nl.shared_hbm)", _REF + " row 35")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[7],
            level=Level.ERROR,
            fixed="""
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="NKI 0.2 accepted hbm outputs",
            nki_version="0.2",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                scratch = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.hbm)
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=scratch, src=a)
                nisa.dma_copy(dst=out, src=scratch)
                return out
            """,
            title="internal HBM scratch tensors may stay in nl.hbm",
        ),
    )


# =====================================================================
# NKI614
# =====================================================================
class UnknownApi(_ScanRule):
    id = "NKI614"
    name = "unknown-api"
    family = "migration"
    level = Level.ERROR
    summary = "An NKI name the target version does not have: added in a later version, or never documented (typo?)"
    explanation = """
Every dotted NKI name the file uses is looked up in the API table of the
target version (`nkilint/data/nki_api.json`: the stubs of every Neuron SDK
release from 2.20 to 2.32):

* a name that only **later** versions document is an error with the
  version that added it (`nl.fori_loop` with `--nki-version 0.5`: added in
  0.6), as is the `nki.*` namespace itself with target 0.1;
* a name that **no** release documents, inside a module or enum whose
  members the docs list (`nki.language`, `nki.isa`, `nki.collectives`,
  `nisa.dge_mode`, ...), is a warning with the closest documented names
  (`nl.zeroes` -> `nl.zeros`). Only a warning: the stubs are the docs'
  view, and the real packages carry a few undocumented names (`nl.range`,
  `nl.bool` appear in nki-library). Names under undocumented modules
  (`nki.meta`, `nki.compiler.kernel_builder`, `nki.isa.constants` is read
  as `nki.isa`) are not judged.

Names an earlier version had and the target removed are NKI603, not this
rule. Legacy code is checked against the legacy API (0.1) when the target
is 0.1, otherwise against the target (the port list); since the legacy
package kept growing after its docs froze (SDK 2.26), unknown legacy names
are warnings.

**Fix:** correct the spelling to the suggested name, or target a version
that has the API (`--nki-version`).
"""
    references = (_TABLE, "../shared/nki-api/README.md (how a linter should use the table)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def k(a):
                t = nl.zeroes((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdgee)
                return u
            """,
            lines=[7, 9],
            title="typos: warnings with a suggestion",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def k(a, reg):
                def body(i):
                    pass
                nl.fori_loop(0, reg, body)
            """,
            lines=[8],
            title="an API from a later version: an error",
            nki_version="0.5",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki.language as nl
            """,
            lines=[1],
            title="the nki.* namespace with target 0.1",
            nki_version="0.1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa
            from nki.isa.constants import oob_mode

            @nki.jit
            def k(a, reg):
                t = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge, oob_mode=oob_mode.skip)
                def body(i):
                    pass
                nl.fori_loop(0, reg, body)
                return t
            """,
        ),
    )


# =====================================================================
# NKI615
# =====================================================================
class UnknownKeyword(_ScanRule):
    id = "NKI615"
    name = "unknown-keyword"
    family = "migration"
    level = Level.ERROR
    summary = "A keyword argument the target's signature of an NKI API does not have (typo, or added later)"
    explanation = """
Since Neuron SDK 2.28 (NKI 0.2) the compiler "validates all keyword
argument names against the function signature and raises an `unexpected
keyword argument` error for unrecognized names" (release notes, 2.28
bug fixes); before, they were silently ignored. The rule checks each
keyword against the target's signature of the API (the API table) and
suggests the closest parameter name. APIs whose signature takes
`**kwargs` (`nki.jit`, most legacy APIs) are not checked. Keywords that an
earlier version had are NKI605 (removed-parameter).

A keyword only later versions have is an error naming the version. In
legacy code targeting 0.1, an unknown keyword is a warning (ignored).

**Fix:** use the parameter name the message suggests, or drop the
argument.
"""
    references = (f"{_RN} (2.28: invalid keyword arguments)", _TABLE)
    examples = (
        invalid(
            """
            import nki.isa as nisa
            import nki.language as nl

            def evict(sb, ps):
                nisa.tensor_copy(dst=sb, src=ps, engin=nisa.engine.vector)
                nisa.activation(dst=sb, op=nl.exp, data=ps, scales=2.0)
            """,
            lines=[5, 6],
            level=Level.ERROR,
        ),
        valid(
            """
            import nki.isa as nisa
            import nki.language as nl

            def evict(sb, ps):
                nisa.tensor_copy(dst=sb, src=ps, engine=nisa.engine.vector)
                nisa.activation(dst=sb, op=nl.exp, data=ps, scale=2.0)
            """,
        ),
    )


# =====================================================================
# NKI616
# =====================================================================
class BehaviorChange(_ScanRule):
    id = "NKI616"
    name = "version-behavior-change"
    family = "migration"
    level = Level.ERROR
    summary = "A call an earlier NKI version accepted and the target rejects (rsqrt on PSUM, dma_transpose rank, memset value dtype)"
    explanation = """
Some calls keep their name and signature but the target version rejects
arguments an earlier one accepted (aws-neuron-sdk `nki/migration/index.rst`
and the release notes):

* **NKI 0.5**: `nl.rsqrt` runs on the GpSimd engine for precision and "no
  longer accepts PSUM inputs";
* **NKI 0.4**: `nisa.dma_transpose` "enforces that `dst.shape` matches the
  transposed `src.shape` exactly, including rank" (a lower-rank `dst` was
  padded silently before);
* **NKI 0.3**: `nisa.memset` requires the value to match the dtype of
  `dst` (an int literal for integer tiles; 0.2 cast `2.0` silently), and x4
  packed dtypes (`float8_e4m3fn_x4`, ...) accept only `value=0`. A float
  zero into an integer tile is not reported: nki-library's 0.6 kernels
  zero-fill `uint32` tiles with `value=0.0`.

Reported from the kernel model, only when it knows the operand's buffer,
shape or dtype, and only for `nki.*` calls (legacy calls are reported for
their calling convention, NKI609). The other semantic changes of these
versions are not decidable from the source: `nisa.tensor_reduce(axis=1)`
meaning the last free dim in 0.2 but dim 1 in 0.3 depends on what the
author meant, so it is documented here, not reported.

**Fix:** the message says how: `nisa.activation(op=nl.rsqrt, ...)` for a
PSUM input, a `dst` of the same rank as `src`, a value of `dst`'s dtype.
"""
    references = (f"{_MIGRATION} (0.2 -> 0.3, 0.3 -> 0.4, 0.4 -> 0.5)", f"{_RN} (2.29-2.31)", _REF + " rows 9, 38, 43, 44")
    examples = (
        invalid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                r = nl.rsqrt(ps)
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2.0)
                d3 = nl.ndarray((128, 4, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                s4 = nl.ndarray((64, 4, 1, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=d3, src=s4)
                return r
            """,
            lines=[8, 10, 13],
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                r = nl.rsqrt(ps)
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2.0)
                return r
            """,
            lines=[10],
            title="NKI 0.3: only the memset value is rejected yet",
            nki_version="0.3",
        ),
        valid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=r, op=nl.rsqrt, data=ps)
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2)
                d4 = nl.ndarray((128, 1, 4, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                s4 = nl.ndarray((64, 4, 1, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=d4, src=s4, axes=(3, 2, 1, 0))
                return r
            """,
        ),
        valid(
            """
            import nki
            import nki.isa as nisa
            import nki.language as nl

            @nki.jit
            def k(a):
                ib = nl.ndarray((128, 512), dtype=nl.int32, buffer=nl.sbuf)
                nisa.memset(dst=ib, value=2.0)
            """,
            title="NKI 0.2 cast the value",
            nki_version="0.2",
        ),
    )
