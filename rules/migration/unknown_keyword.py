"""NKI615 unknown-keyword."""

from __future__ import annotations

import ast

from nkilint.findings import Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid
from nkilint.versions import V0_2

from nkilint.model import api_history as api
from ._base import API_TABLE, RELEASE_NOTES, Issues, MigrationRule, short
from ._calls import NkiCall, NkiCalls, checked_keywords, keyword_kind, param_history
from ._index import NameIndex


class UnknownKeyword(MigrationRule):
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
legacy code targeting 0.1, an unknown keyword is a warning (ignored); so
is one in `nki.*` code targeting SDK 2.27, which still drops it without a
word (the call runs without the argument).

**Fix:** use the parameter name the message suggests, or drop the
argument.
"""
    references = (f"{RELEASE_NOTES} (2.28: invalid keyword arguments)", API_TABLE)
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for site in index.model.analysis(NkiCalls).calls:
            for kw in checked_keywords(index, site):
                if keyword_kind(site, kw) == ("unknown", None):
                    cls._unknown(index, out, site, kw)

    @staticmethod
    def _unknown(index: NameIndex, out: Issues, site: NkiCall, kw: ast.keyword) -> None:
        gen, v, sig, name = site.gen, site.version, site.sig, short(site.name)
        later = [x for x in param_history(site.name, kw.arg) if x > v]
        level = Level.WARNING if (gen is Gen.LEGACY and v < V0_2) else index.level(gen, kw)
        if later:
            message = f"`{name}` has no keyword `{kw.arg}` in NKI {v}: it was added in NKI {later[0]}"
            hint = f"target NKI {later[0]} or later, or drop {kw.arg}="
        else:
            close = api.closest(kw.arg, sorted(sig.keyword_names()))
            message = f"`{name}` has no keyword `{kw.arg}` in NKI {v}" + (
                f"; did you mean `{close[0]}`?" if close else "")
            hint = f"its keywords are: {', '.join(sorted(sig.keyword_names()))}"
        if gen is Gen.CURRENT and index.fact_level("unknown-keyword") is Level.WARNING:
            # SDK 2.27 drops unknown keywords without a word (release fact
            # "unknown-keyword"): the kernel compiles without the argument.
            level = Level.WARNING
            message += (f" (Neuron SDK {index.release.minor} ignores it silently, so the call runs without it; "
                        "SDK 2.28 and later raise 'unexpected keyword argument')")
        elif gen is Gen.CURRENT or v >= V0_2:
            message += " (unknown keywords raise 'unexpected keyword argument' since Neuron SDK 2.28)"
        else:
            message += " (the legacy API ignores it silently)"
        out.add(kw, level, message + index.port_note(gen), hint=hint, gen=gen)
