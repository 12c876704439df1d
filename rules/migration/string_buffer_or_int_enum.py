"""NKI612 string-buffer-or-int-enum."""

from __future__ import annotations

import ast

from nkilint.findings import Edit, Level
from nkilint.rule import invalid, valid
from nkilint.versions import V0_3, NkiVersion

from nkilint.model import api_history as api
from ._base import API_TABLE, MIGRATION_GUIDE, Issues, MigrationRule, make_fix
from ._calls import NkiCalls
from ._index import NameIndex
from ._kernels import KernelOutputs


class LiteralBufferOrEnum(MigrationRule):
    id = "NKI612"
    name = "string-buffer-or-int-enum"
    family = "migration"
    level = Level.ERROR
    fixable = True
    fix_follows_target = True
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
    references = (f"{MIGRATION_GUIDE} (0.2 -> 0.3)", API_TABLE)
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        if index.version < V0_3:
            return
        outputs = index.model.analysis(KernelOutputs).buffer_nodes
        nl = index.alias_of("nki.language")
        nisa = index.alias_of("nki.isa")
        for site in index.model.analysis(NkiCalls).calls:
            gen = site.gen
            for kw in site.call.keywords:
                value = kw.value
                if kw.arg == "buffer" and isinstance(value, ast.Constant) and value.value in BUFFER_NAMES:
                    if id(value) in outputs:
                        continue  # reported as a kernel output (NKI613)
                    fix = None
                    if nl:
                        fix = make_fix(f"use {nl}.{value.value}", [Edit(index.span(value), f"{nl}.{value.value}")], True)
                    out.add(value, index.level(gen, value),
                            f"string buffer {value.value!r}: from NKI 0.3 buffers are objects, not "
                            f"strings{index.port_note(gen)}",
                            hint=f"buffer=nl.{value.value}", fix=fix, gen=gen)
                elif kw.arg in ENUM_PARAMS and isinstance(value, ast.Constant) and type(value.value) is int:
                    enum = ENUM_PARAMS[kw.arg]
                    member = _enum_member(enum, value.value, index.version)
                    fix = None
                    if member and nisa:
                        fix = make_fix(f"use {nisa}.{enum}.{member}", [Edit(index.span(value), f"{nisa}.{enum}.{member}")],
                                       True)
                    out.add(value, index.level(gen, value),
                            f"raw integer {value.value} for the enum parameter {kw.arg}=: from NKI 0.3 enum parameters "
                            f"need enum members{index.port_note(gen)}",
                            hint=f"use nisa.{enum}.{member}" if member else f"use a member of nisa.{enum}", fix=fix,
                            gen=gen)


# Enum-typed parameters and their enum in nki.isa (raw ints rejected from 0.3).
ENUM_PARAMS = {
    "engine": "engine",
    "dge_mode": "dge_mode",
    "oob_mode": "oob_mode",
    "reduce_cmd": "reduce_cmd",
    "perf_mode": "matmul_perf_mode",
    "dma_engine": "dma_engine",
}
BUFFER_NAMES = ("sbuf", "psum", "hbm", "private_hbm", "shared_hbm")


def _enum_member(enum: str, value: int, version: NkiVersion) -> str | None:
    cls = (api.api_for(version).modules.get("nki.isa") or {}).get("classes", {}).get(enum) or {}
    for member, literal in (cls.get("members") or {}).items():
        if str(literal).strip() == str(value):
            return member
    return None
