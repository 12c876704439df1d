"""NKI607 dynamic-loop-form."""

from __future__ import annotations

import ast

from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.rule import invalid, valid

from ._base import MIGRATION_GUIDE, RELEASE_NOTES, Issues, MigrationRule
from ._index import NameIndex
from ._names import NameFacts


class DynamicLoopForm(MigrationRule):
    id = "NKI607"
    name = "dynamic-loop-form"
    family = "migration"
    level = Level.WARNING
    summary = ("for ... in nl.dynamic_range(...) and bare `while reg:`: deprecated in NKI 0.6, removed in 0.7 (use "
               "fori_loop / while_loop)")
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

NKI 0.7 (Neuron SDK 2.33) removes both: its tracing frontend runs the
kernel as Python, and `dynamic_range` or `bool()` of a register raises a
TypeError (the 0.7 migration guide). So the finding is a warning at SDK
2.32 and an error from 2.33 (release facts `dynamic-range-loop`,
`while-register`).

**Fix:** move the body into `def body(i): ...` and call
`nl.fori_loop(0, n, body)` / `nl.while_loop(reg, body)`.
"""
    references = (f"{MIGRATION_GUIDE} (0.5 -> 0.6)", f"{RELEASE_NOTES} (NKI 0.6.0)")
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
            title="NKI 0.6 (SDK 2.32): deprecated, a warning",
            nki_version="0.6",
            level=Level.WARNING,
        ),
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
            """,
            lines=[10],
            title="NKI 0.7 (SDK 2.33): removed, an error",
            nki_version="0.7",
            level=Level.ERROR,
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for f in index.model.analysis(NameFacts).of_kind("dynamic-range"):
            level = index.retired_level("dynamic-range-loop")
            if level is Level.ERROR:
                message = (f"{f.text} loops were removed in NKI 0.7 (Neuron SDK 2.33): the tracing frontend raises a "
                           f"TypeError; the target is NKI {index.version}")
            else:
                message = f"{f.text} loops are deprecated since NKI 0.6 and scheduled for removal"
            out.add(f.node, level, message,
                    hint="move the loop body into a function and call nl.fori_loop(lo, hi, body); the loop variable is "
                         "a read-only register (use it through .ap(scalar_offset=...)), tensors created in the body are "
                         "not visible after the loop", gen=f.gen)
        level = index.retired_level("while-register")
        if level is None:
            return
        for node in index.nodes:
            if isinstance(node, ast.While):
                cls._while(index, out, node, level)

    @staticmethod
    def _while(index: NameIndex, out: Issues, node: ast.While, level: Level) -> None:
        try:
            loops = q.loops_at(index.model, node)
        except Exception:  # pragma: no cover - a model crash is reported once, by the engine
            return
        if any(data.get("register_bound") for data in loops):
            reg = index.text(node.test)
            if level is Level.ERROR:
                message = (f"`while {reg}:` on a register was removed in NKI 0.7 (Neuron SDK 2.33): the tracing "
                           f"frontend raises a TypeError; the target is NKI {index.version}")
            else:
                message = f"`while {reg}:` on a register is deprecated since NKI 0.6 and scheduled for removal"
            out.add(node.test, level, message,
                    hint="move the body into a function that returns the next condition register and call "
                         f"nl.while_loop({reg}, body)")
