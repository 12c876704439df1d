"""NKI606 deprecated-loop-iterator."""

from __future__ import annotations

import ast

from nkilint.findings import Edit, Level
from nkilint.model import query as q
from nkilint.model.bindings import Gen
from nkilint.model.values import Const, Int
from nkilint.rule import invalid, valid
from nkilint.versions import V0_3, V0_6

from ._base import Issues, MigrationRule, make_fix, short
from ._index import NameIndex
from ._names import NameFact, NameFacts


class DeprecatedLoopIterator(MigrationRule):
    id = "NKI606"
    name = "deprecated-loop-iterator"
    family = "migration"
    level = Level.NOTE
    fixable = True
    fix_follows_target = True
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
their own meaning. The finding is a note: the aliases still work and no
release announces their removal (release facts `affine-sequential-range`,
`static-range`).

**Fix:** write `for i in range(...)`. `nkilint check --fix` rewrites the
iterator in `nki.*` code when the loop bounds are compile-time integers
(the model knows the trip count); a loop whose bounds may be a runtime
register (a dynamic `sequential_range` loop in 0.3-0.5) is not rewritten.
In legacy files the rewrite is offered only with `--unsafe-fixes`, since the
legacy compiler gives `range` and `affine_range` different schedules.
"""
    references = ("aws-neuron-sdk nki/api/nki/language/__init__.py (affine_range, sequential_range, static_range stubs)",
                  "aws-neuron-sdk nki/get-started/nki-language-guide.rst (Compilation Model)",
                  "aws-neuron-sdk nki/deep-dives/nki-dynamic-loops.rst")
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
            level=Level.NOTE,
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for f in index.model.analysis(NameFacts).of_kind("loop-iterator"):
            cls._loop_iterator(index, out, f)

    @staticmethod
    def _loop_iterator(index: NameIndex, out: Issues, f: NameFact) -> None:
        v = index.version
        level = index.fact_level(_FACT[f.name])
        if level is None:
            return  # 0.1/0.2: affine_range is the parallel loop, not an alias
        since = _DEPRECATED_SINCE[f.name]
        gen, text, name, call = f.gen, f.text, f.name, f.call
        what_short = short(name)
        if v >= V0_6:
            what = f"{text} is deprecated since NKI {since} and is an alias of Python range() in NKI {v}"
        else:
            what = (f"{text} is deprecated since NKI {since}: from NKI 0.3 every static loop is unrolled in program "
                    "order, so range() behaves the same")
        if gen is Gen.LEGACY and name != "nki.language.static_range":
            what += (f"; note that legacy {what_short} " + ("promised independent iterations that the compiler could "
                     "reorder" if name.endswith("affine_range") else "forced in-order iterations")
                     + ", while from NKI 0.3 loops run in order with Python semantics")
        fix = None
        if call is not None and not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args) \
                and not index.range_shadowed and 1 <= len(call.args) <= 3:
            static = _static_trip(index, call)
            if static is not None:
                safe = gen is Gen.CURRENT and static
                fix = make_fix(f"replace {index.text(f.node)} with range", [Edit(index.span(f.node), "range")], safe)
        if level is Level.NOTE:
            what += " (no removal is announced)"
        out.add(f.node, level, what, hint="write `for i in range(...)`", fix=fix, gen=gen)


# The release fact that gives each iterator's level (nkilint.releases).
_FACT = {
    "nki.language.affine_range": "affine-sequential-range",
    "nki.language.sequential_range": "affine-sequential-range",
    "nki.language.static_range": "static-range",
}
_DEPRECATED_SINCE = {
    "nki.language.affine_range": V0_3,
    "nki.language.sequential_range": V0_3,
    "nki.language.static_range": V0_6,
}


def _static_trip(index: NameIndex, call: ast.Call) -> bool | None:
    """Whether the loop's bounds are compile-time integers (True), unknown to
    the model (False: the fix is unsafe), or not a for-loop iterator (None:
    e.g. a register-bounded dynamic loop would change meaning)."""
    parent = index.parents.get(id(call))
    if not isinstance(parent, ast.For) or parent.iter is not call:
        return False
    try:
        loops = q.loops_at(index.model, parent)
    except Exception:  # pragma: no cover - the model never blocks a fix decision
        return False
    if any(data.get("register_bound") or not isinstance(data.get("trip_v"), (Const, Int)) for data in loops):
        return None
    return bool(loops)
