"""NKI614 unknown-api."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid

from nkilint.model import api_history as api
from ._base import API_TABLE, Issues, MigrationRule, short
from ._index import NameIndex
from ._names import NameFacts


class UnknownApi(MigrationRule):
    id = "NKI614"
    name = "unknown-api"
    family = "migration"
    level = Level.ERROR
    summary = "An NKI name the target version does not have: added in a later version, or never documented (typo?)"
    explanation = """
Every dotted NKI name the file uses is looked up in the API table of the
target version (`nkilint/data/nki_api.json`: the stubs of every Neuron SDK
release from 2.20 to 2.34):

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

A use under a presence test of the name (`if hasattr(nl, "fori_loop"):
...`, the same forms NKI603 accepts) is not reported. Names an earlier
version had and the target removed are NKI603, not this rule. Legacy code is checked against the legacy API (0.1) when the target
is 0.1, otherwise against the target (the port list); since the legacy
package kept growing after its docs froze (SDK 2.26), unknown legacy names
are warnings.

**Fix:** correct the spelling to the suggested name, or target a version
that has the API (`--nki-version`).
"""
    references = (API_TABLE,)
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
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def k(a, reg):
                def body(i):
                    pass
                if hasattr(nl, "fori_loop"):
                    nl.fori_loop(0, reg, body)
            """,
            title="an API from a later version under a presence test",
            nki_version="0.5",
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for f in index.model.analysis(NameFacts).of_kind("namespace-too-new", "gone", "undocumented"):
            if f.kind == "namespace-too-new":
                out.add(f.node, Level.ERROR,
                        f"the nki.* namespace ({f.text}) does not exist in NKI 0.1: it arrives with NKI 0.2 (Neuron SDK "
                        "2.27); the target is NKI 0.1",
                        hint="target NKI 0.2 or later (--nki-version), or write the kernel against neuronxcc.nki")
                continue
            st, v, gen = f.status, f.version, f.gen
            if f.kind == "gone":
                if st.earlier:
                    continue  # removed: NKI603
                shown = f.text if st.name == f.name else f"{f.text}: `{short(st.name)}`"
                out.add(f.node, Level.ERROR if gen is Gen.CURRENT else Level.WARNING,
                        f"{shown} is not in NKI {v}: it was added in NKI {st.later[0]}",
                        hint=f"target NKI {st.later[0]} or later (--nki-version), or avoid it", gen=gen)
                continue
            member = st.name.rsplit(".", 1)[-1]
            close = api.closest(member, api.member_names(st.parent, v))
            suggestion = (f"; did you mean {', '.join('`' + short(st.parent + '.' + c) + '`' for c in close)}?"
                          if close else "")
            out.add(f.node, Level.WARNING,
                    f"{f.text} is not in the documented API of NKI {v} (no release from {api.FIRST_SDK} to {api.LAST_SDK} documents "
                    f"`{short(st.name)}`){suggestion}",
                    hint="check the spelling; if the name works, it is undocumented and may change without notice",
                    gen=gen)
