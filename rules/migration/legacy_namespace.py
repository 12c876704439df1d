"""NKI601 legacy-namespace."""

from __future__ import annotations

import ast

from nkilint.findings import Edit, Fix, Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid

from nkilint.model import api_history as _api
from ._base import MIGRATION_GUIDE, RELEASE_NOTES, Issues, MigrationRule, legacy_items
from ._index import NameIndex
from .deprecated_loop_iterator import DeprecatedLoopIterator
from .dynamic_loop_form import DynamicLoopForm
from .isa_calling_convention import IsaCallingConvention
from .kernel_language_restriction import KernelLanguageRestriction
from .output_not_shared_hbm import OutputNotSharedHbm
from .psum_accumulate_semantics import PsumAccumulation
from .removed_api import RemovedApi
from .removed_parameter import RemovedParameter
from .renamed_api import RenamedApi
from .spmd_launch_grid import SpmdLaunchGrid
from .string_buffer_or_int_enum import LiteralBufferOrEnum
from .unknown_api import UnknownApi
from .unknown_keyword import UnknownKeyword
from .version_behavior_change import BehaviorChange


class LegacyNamespace(MigrationRule):
    id = "NKI601"
    name = "legacy-namespace"
    family = "migration"
    level = Level.ERROR
    precision = "very-high"
    fixable = True
    fix_follows_target = True
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
annotations gets a warning. Neuron SDK 2.34 (NKI 0.8) removes the
namespace: from that release every `neuronxcc.nki` import is an error
(ImportError), in host code too (release fact `legacy-namespace-import`).

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
        f"{MIGRATION_GUIDE} (Migrating from NKI 0.3.0 to 0.4.0; Migrating from NKI 0.1.0 to 0.2.0)",
        f"{RELEASE_NOTES} (NKI 0.4.0)",
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
            from neuronxcc import nki
            """,
            lines=[1],
            title="host code at NKI 0.7 (SDK 2.33): still only a deprecation",
            nki_version="0.7",
            level=Level.WARNING,
        ),
        invalid(
            """
            from neuronxcc import nki
            """,
            lines=[1],
            title="host code at NKI 0.8 (SDK 2.34): the namespace is gone (ImportError)",
            nki_version="0.8",
            level=Level.ERROR,
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        version = index.version
        import_level = index.fact_level("legacy-namespace-import")
        if import_level is None:
            return  # the target is the legacy API itself
        in_kernel_rejected = index.fact_level("legacy-namespace-in-kernel") is Level.ERROR
        legacy = [r for r in index.bindings.legacy_imports() if r.module.startswith("neuronxcc")]
        if not legacy:
            return
        in_device = any(gen is Gen.LEGACY for gen in index.roots.values()) or any(
            u.qual.gen is Gen.LEGACY and u.in_body and index.in_device(u.node) for u in index.uses
        )
        port_items = sum(len(list(legacy_items(_found(index, rule)))) for rule in PORT_RULES)
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
            if import_level is Level.ERROR:
                level = Level.ERROR
                message = (
                    f"the legacy namespace '{module}' no longer imports: Neuron SDK {index.release.minor} (NKI {version}) removed the legacy "
                    "neuronxcc.nki namespace (ImportError)"
                )
            elif in_kernel_rejected and in_device:
                level = Level.ERROR
                message = (
                    f"the legacy namespace '{module}' is a compile error inside NKI kernels from NKI 0.4 "
                    f"(Neuron SDK 2.30); the target is NKI {version}"
                )
            else:
                level = Level.WARNING
                message = f"the legacy namespace '{module}' is deprecated since NKI 0.2 (Neuron SDK 2.27)"
                if in_kernel_rejected:
                    message += "; using it inside a kernel is a compile error from NKI 0.4"
                else:
                    message += " and becomes a compile error inside kernels in NKI 0.4"
            if port_items:
                message += f" ({port_items} construct(s) of the file must change too; see the other NKI6xx findings)"
            fix = None
            if replacement is not None and rewritable:
                fix = Fix(f"rewrite the import as '{replacement}'", (Edit(index.span(record.node), replacement),),
                          safe=False)
            out.add(record.node, level, message, fix=fix,
                    hint=f"use '{replacement or 'import nki...'}' and port the kernel to the nki.* API (dst-first "
                         "nki.isa calls, nisa.dma_copy for nl.load/nl.store, slices for arange/mask)")


def _found(index: NameIndex, rule: type[MigrationRule]):
    return index.model.analysis(rule.Found).items


# The rules whose findings in legacy code are the port list NKI601 counts.
PORT_RULES: tuple[type[MigrationRule], ...] = (
    RemovedApi, RenamedApi, RemovedParameter, DeprecatedLoopIterator, DynamicLoopForm, SpmdLaunchGrid,
    IsaCallingConvention, PsumAccumulation, KernelLanguageRestriction, LiteralBufferOrEnum, OutputNotSharedHbm,
    UnknownApi, UnknownKeyword, BehaviorChange,
)


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
