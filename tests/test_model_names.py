"""Unbound names of device functions (nkilint.model.names.UnboundNames)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from nkilint.model.names import UnboundNames
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST


def _unbound(tmp_path: Path, code: str, fn_name: str = "kernel") -> list[str]:
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    model = analyze_file(SourceFile(str(path), path.read_text(), "kernel.py"), Project(tmp_path), TRN2, LATEST)
    fn = next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.FunctionDef) and n.name == fn_name)
    return [n.id for n in model.analysis(UnboundNames).unbound(fn)]


def test_missing_import_and_helper_local(tmp_path):
    code = """
    import nki.isa as nisa

    def helper():
        rows = 4
        return rows

    def kernel(x):
        t = nl.ndarray((128, 512), dtype=x.dtype)
        for i in range(rows):
            nisa.dma_copy(dst=t, src=np.zeros(1))
        return t
    """
    assert _unbound(tmp_path, code) == ["nl", "rows", "np"]


def test_bound_by_module_globals_closures_and_comprehensions(tmp_path):
    code = """
    import nki.language as nl
    try:
        import numpy as np
    except ImportError:
        np = None
    for LIMIT in (128,):
        pass

    def setup():
        global SCALE
        SCALE = 2

    def outer(y):
        def kernel(x):
            pairs = [[a + b for b in range(2)] for a in range(3)]
            f = [(lambda z: z + 1) for _ in pairs]
            return nl.add(x, y * SCALE * LIMIT * len(f)), np, __file__, print
        return kernel
    """
    assert _unbound(tmp_path, code) == []


def test_a_dynamic_namespace_decides_nothing(tmp_path):
    code = """
    from helpers import *

    def kernel(x):
        return nl.add(x, x)
    """
    assert _unbound(tmp_path, code) == []
    code = """
    def kernel(x):
        try:
            return nl.add(x, x)
        except NameError:
            return x
    """
    assert _unbound(tmp_path, code) == []
