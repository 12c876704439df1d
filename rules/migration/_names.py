"""What each NKI name the file uses is in the target's API (a per-file analysis).

Every use of a dotted NKI name (and every ``from nki.x import name``) gets
one ``NameFact``: its kind says what the API table makes of it at the target
version, so that a site is one rule's business only (a removed name is not
also an unknown one). The kinds, and the rule that reports each:

* ``namespace-too-new``: an ``nki.*`` import with a target of NKI 0.1 (NKI614);
* ``framework-removed``: ``torch_neuronx.nki_jit`` / ``jax_neuronx.nki_call`` (NKI603);
* ``loop-iterator``: ``affine_range`` / ``sequential_range`` / ``static_range`` (NKI606);
* ``dynamic-range``: ``nl.dynamic_range`` in ``nki.*`` code (NKI607);
* ``rename``: a deprecated alias with a 1:1 replacement, see ``RENAMES`` (NKI604);
* ``doc-only-call``: calling a 0.2 name that is only an ``op=`` value (NKI603);
* ``found``: exists in the target; maybe deprecated there (NKI604);
* ``gone``: the target does not have it; ``status.earlier`` versions did
  (NKI603) or only later ones do (NKI614);
* ``undocumented``: a member of a documented module no release lists (NKI614);
* ``guarded``: a name the target lacks (what would be ``gone``,
  ``undocumented`` or ``framework-removed``) used where a presence test such
  as ``hasattr(nl, "spmd_dim")`` holds (``nkilint.model.guards``): the use
  never runs on a release without the name, so no rule reports it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from nkilint.model.analysis import Analysis
from nkilint.model.bindings import Gen, Qual
from nkilint.model.guards import AttrGuards
from nkilint.versions import V0_2, V0_3, V0_4, NkiVersion

from nkilint.model import api_history as api
from ._base import show
from ._index import NameIndex


LOOP_ITERATORS = ("nki.language.affine_range", "nki.language.sequential_range", "nki.language.static_range")
FRAMEWORK_LAUNCHERS = ("torch_neuronx.nki_jit", "jax_neuronx.nki_call")

# Deprecated aliases with a 1:1 replacement. (replacement, since, fix is safe, why)
RENAMES: dict[str, tuple[str, NkiVersion, bool, str]] = {
    "nki.isa.tensor_engine": ("nki.isa.engine.tensor", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.vector_engine": ("nki.isa.engine.vector", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.scalar_engine": ("nki.isa.engine.scalar", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.gpsimd_engine": ("nki.isa.engine.gpsimd", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.isa.unknown_engine": ("nki.isa.engine.unknown", V0_2, True, "the deprecated alias names the same enum member"),
    "nki.language.tile_size.psum_fmax": (
        "nki.language.tile_size.psum_bank_fmax", V0_4, True, "both are 512 fp32 elements (one PSUM bank per partition)"),
    "nki.language.tile_size.total_available_sbuf_size": (
        "nki.language.tile_size.sbuf_fmax_bytes", V0_4, False,
        "despite its name the old constant is the usable SBUF bytes per partition; check that the code meant per partition"),
    "nki.tensor": ("nki.meta.tensor", V0_2, True, "the class moved to nki.meta in Neuron SDK 2.28"),
}


@dataclass(frozen=True)
class NameFact:
    node: ast.AST
    qual: Qual
    name: str  # normalized
    kind: str
    text: str  # how the message shows the name
    at_import: bool = False
    call: ast.Call | None = None  # the call whose callee the name is
    device: bool | None = None  # device-code override (imports: used in a kernel)
    status: api.NameStatus | None = None
    version: NkiVersion | None = None  # the version the name was looked up in

    @property
    def gen(self) -> Gen:
        return self.qual.gen


def cached_status(name: str, version: NkiVersion) -> api.NameStatus:
    return api.name_status_memo(name, version)


def doc_only_op(name: str, version: NkiVersion) -> bool:
    module, _, member = name.rpartition(".")
    table = api.api_for(version)
    mod = table.modules.get(module) or {}
    if member in mod.get("doc_only_ops", ()):
        return True
    sig = table.signature(name)
    return bool(sig and sig.call_unsupported and version < V0_3)


class NameFacts(Analysis):
    """One fact per NKI name use and per imported member."""

    def __init__(self, model) -> None:
        super().__init__(model)
        index = self.index = model.analysis(NameIndex)
        self.guards = model.analysis(AttrGuards)
        self.facts: list[NameFact] = []
        self._imports()
        for use in index.uses:
            self._use(use.node, use.qual)

    def of_kind(self, *kinds: str) -> list[NameFact]:
        return [f for f in self.facts if f.kind in kinds]

    # -- sites ------------------------------------------------------------
    def _imports(self) -> None:
        index = self.index
        for rec in index.bindings.records:
            qual = rec.qual
            if not qual.is_nki:
                continue
            if qual.gen is Gen.CURRENT and index.version < V0_2:
                self.facts.append(NameFact(rec.node, qual, qual.name, "namespace-too-new", f"`{rec.module}`",
                                           at_import=True))
                continue
            if not isinstance(rec.node, ast.ImportFrom) or rec.local == "*":
                continue
            if qual.name in api._all_modules() or qual.name == "nki":
                continue
            alias = next((a for a in rec.node.names if (a.asname or a.name) == rec.local), None)
            where = alias if alias is not None and hasattr(alias, "lineno") else rec.node
            device = None
            if index.is_legacy_port(qual.gen) and index.version >= V0_4:
                device = any(index.in_device(n) for n in index.loads.get(rec.local, ()))
            self._classify(where, qual, at_import=True, display=f"`{rec.module}.{alias.name if alias else rec.local}`",
                           device=device)

    def _use(self, node: ast.AST, qual: Qual) -> None:
        index = self.index
        if isinstance(node, ast.Name):
            if node.id in index.bindings.names:
                if qual.name in api._all_modules() or qual.name == "nki":
                    return
                if self._is_from_import_member(node.id):
                    # Reported at the import; loop iterators at their use (fixable).
                    if api.normalize(qual.name) in LOOP_ITERATORS or qual.name == "nki.language.dynamic_range":
                        self._classify(node, qual, loops_only=True)
                    return
            else:
                # Star import: only names some release documents, never local names.
                if node.id in index.assigned or not api.ranges(api.normalize(qual.name)):
                    return
        self._classify(node, qual)

    def _is_from_import_member(self, local: str) -> bool:
        """A local name bound by ``from X import name`` to a non-module member."""
        for rec in self.index.bindings.records:
            if rec.local == local and isinstance(rec.node, ast.ImportFrom):
                return rec.qual.name not in api._all_modules() and rec.qual.name != "nki"
        return False

    # -- the classification ---------------------------------------------------
    def _classify(self, node: ast.AST, qual: Qual, at_import: bool = False, loops_only: bool = False,
                  display: str | None = None, device: bool | None = None) -> None:
        index = self.index
        name = api.normalize(qual.name)
        gen = qual.gen
        if gen is Gen.CURRENT and index.version < V0_2:
            return
        text = display or show(index, node, qual)

        def add(kind: str, **extra) -> None:
            self.facts.append(NameFact(node, qual, name, kind, text, at_import=at_import, call=call, device=device,
                                       version=v, **extra))

        call = None if at_import else index.call_of(node)
        v = index.lookup_version(gen)
        guarded = not at_import and self.guards.guarded(node)
        if name in FRAMEWORK_LAUNCHERS:
            if not loops_only:
                add("guarded" if guarded else "framework-removed")
            return
        if name in LOOP_ITERATORS and not at_import:
            add("loop-iterator")
            return
        if name == "nki.language.dynamic_range" and not at_import:
            if gen is Gen.CURRENT and index.retired_level("dynamic-range-loop") is not None:
                add("dynamic-range")
                return
        if loops_only:
            return
        if name in RENAMES and v >= RENAMES[name][1]:
            st = cached_status(name, v)
            add("guarded" if guarded and st.state == "gone" else "rename", status=st)
            return
        st = cached_status(name, v)
        if st.state == "found":
            if call is not None and v == V0_2 and doc_only_op(name, V0_2):
                add("doc-only-call", status=st)
            else:
                add("found", status=st)
        elif st.state == "gone":
            add("guarded" if guarded else "gone", status=st)
        elif st.state == "unknown":
            add("guarded" if guarded else "undocumented", status=st)
