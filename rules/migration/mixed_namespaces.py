"""NKI602 mixed-namespaces: a file uses both the legacy neuronxcc.nki and the current nki namespace."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid
from nkilint.versions import V0_2

from ._base import RELEASE_NOTES, Issues, MigrationRule
from ._index import NameIndex


class MixedNamespaces(MigrationRule):
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
    references = ("aws-neuron-sdk nki/deep-dives/nki-beta-versions.rst at commit 337e6041", f"{RELEASE_NOTES} (NKI 0.3.0)")
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        bindings = index.bindings
        if bindings.dialect.value != "both":
            return
        legacy = [r for r in bindings.records if r.qual.gen is Gen.LEGACY and r.module.startswith("neuronxcc")]
        current = [r for r in bindings.records if r.qual.gen is Gen.CURRENT]
        if not legacy or not current:
            return
        # The rule is about kernels: both namespaces used in device code is an
        # error; host code patching one namespace from the other (NXDI model
        # files do) is only a warning.
        used_legacy = any(u.qual.gen is Gen.LEGACY and u.in_body and index.in_device(u.node) for u in index.uses)
        used_current = any(u.qual.gen is Gen.CURRENT and u.in_body and index.in_device(u.node) for u in index.uses)
        level = Level.ERROR if used_legacy and used_current else Level.WARNING
        wrong, other = (legacy, current) if index.version >= V0_2 else (current, legacy)
        first, other_first = wrong[0], other[0]
        out.add(first.node, level,
                f"this file imports both the legacy neuronxcc.nki namespace and the nki namespace "
                f"('{first.module}' here, '{other_first.module}' on line {other_first.node.lineno}): a single file "
                "cannot use both versions of the language",
                related=[(other_first.node, f"'{other_first.module}' imported here")],
                hint="port the file to the nki.* namespace" if index.version >= V0_2
                else "use neuronxcc.nki only for NKI 0.1")
