"""NKI610 psum-accumulate-semantics."""

from __future__ import annotations

import ast

from nkilint.findings import Level
from nkilint.model.bindings import Gen
from nkilint.rule import invalid, valid
from nkilint.versions import V0_2

from ._base import Issues, MigrationRule, short
from ._calls import MATMULS
from ._index import NameIndex


class PsumAccumulation(MigrationRule):
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
`... += nisa.nc_matmul(...)` (or `-=`) is an error: the call returns no
tile.

**Fix:** allocate the PSUM tile with `nl.ndarray(..., buffer=nl.psum)`
inside the output-tile loop and call `nisa.nc_matmul(dst=ps, stationary=...,
moving=...)` in the contraction loop (with `accumulate=True` after the first
step if you want it explicit); then copy PSUM to SBUF with
`nisa.tensor_copy`.
"""
    references = ("aws-neuron-sdk nki/api/nki/isa/__init__.py (nc_matmul: accumulate)",
                  "aws-neuron-sdk nki/get-started/about/ (near-memory accumulation)")
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
            level=Level.NOTE,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(a, b, ps):
                for k in range(4):
                    ps[...] -= nisa.nc_matmul(a[k], b[k])
            """,
            lines=[8],
            title="current API: -= of nc_matmul (no tile to subtract)",
            level=Level.ERROR,
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        for node in index.nodes:
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)) and \
                    isinstance(node.value, ast.Call):
                cls._augassign(index, out, node)

    @staticmethod
    def _augassign(index: NameIndex, out: Issues, node: ast.AugAssign) -> None:
        qual = index.bindings.resolve(node.value.func)
        if qual is None or qual.name not in MATMULS or not qual.is_nki:
            return
        gen = qual.gen
        sign = "+=" if isinstance(node.op, ast.Add) else "-="
        if gen is Gen.LEGACY:
            # ``-=`` of a legacy matmul is NKI217's (PSUM only accumulates by adding).
            if index.version < V0_2 or sign == "-=":
                return
            out.add(node, index.level(gen, node),
                    f"`... += {short(qual.name)}(...)` accumulates into PSUM the legacy way; from NKI 0.2 nisa.nc_matmul "
                    "writes into dst and accumulates by itself: the first write to a PSUM location overwrites it, later "
                    f"writes in the same accumulation group add (accumulate= from NKI 0.3 makes it explicit)"
                    f"{index.port_note(gen)}",
                    hint="allocate the PSUM tile with nl.ndarray(..., buffer=nl.psum) and call "
                         "nisa.nc_matmul(dst=ps, stationary=..., moving=...) in the contraction loop "
                         "(accumulate=True after the first step if you need to be explicit)", gen=gen)
        elif qual.name == "nki.isa.nc_matmul" and index.version >= V0_2:
            negate = "" if sign == "+=" else (
                "; PSUM accumulation only adds, so negate one operand once to subtract the product")
            out.add(node, Level.ERROR,
                    f"`... {sign} nisa.nc_matmul(...)`: nc_matmul returns no tile from NKI 0.2; it writes dst and "
                    f"accumulates into PSUM itself (first write overwrites, later writes add){negate}",
                    hint="call nisa.nc_matmul(dst=ps, stationary=..., moving=..., accumulate=True) instead", gen=gen)
