"""NKI608 spmd-launch-grid."""

from __future__ import annotations

import ast

from nkilint.findings import Level
from nkilint.rule import invalid, valid
from nkilint.versions import V0_2

from ._base import Issues, MigrationRule
from ._index import NameIndex
from ._kernels import kernel_target


class SpmdLaunchGrid(MigrationRule):
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
the port list (a note for 0.2/0.3).

**Fix:** launch with `kernel[2](...)` (or no bracket) and iterate over the
former grid inside the kernel (`for i in range(4):`), using
`nl.program_id(0)` only to split work between the two cores of an LNC.
"""
    references = ("aws-neuron-sdk nki/get-started/about/lnc.rst",
                  "aws-neuron-sdk about-neuron/announcements/neuron2.x/announce-intent-eos-nki-spmd-launch-grid.rst",
                  "aws-neuron-sdk nki/test/test_nki_spmd_grid.py (legacy grids)")
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
            title="legacy SPMD grid, target 0.3: a port item (a note)",
            nki_version="0.3",
            level=Level.NOTE,
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

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        if index.version < V0_2:
            return
        for call in index.calls:
            if isinstance(call.func, ast.Subscript):
                cls._grid(index, out, call.func)

    @staticmethod
    def _grid(index: NameIndex, out: Issues, sub: ast.Subscript) -> None:
        gen = kernel_target(index, sub.value)
        if gen is None:
            return
        dims = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
        level = index.port_level(gen)
        note = index.port_note(gen)
        if len(dims) > 1:
            out.add(sub.slice, level,
                    f"SPMD launch grid `[{index.text(sub.slice)}]` has {len(dims)} dimensions: from NKI 0.2 the bracket "
                    f"takes one integer, the number of logical NeuronCores (1 or 2){note}",
                    hint="launch with kernel[2](...) (or no bracket) and loop over the tiles inside the kernel; split "
                         "the work between the cores with nl.program_id(0)", gen=gen)
            return
        dim = dims[0]
        if isinstance(dim, ast.Constant) and type(dim.value) is int and dim.value > 2:
            out.add(dim, level,
                    f"launch grid [{dim.value}]: from NKI 0.2 the bracket is the logical-core count, 1 or 2 on current "
                    f"hardware, and a larger value is an error{note}",
                    hint="launch with kernel[2](...) or kernel(...) and loop over the work inside the kernel", gen=gen)
