"""Index arithmetic of legacy NKI (nkilint.model.indexing): whether an
index or mask expression is an affine form of loop indices, and whether an
arange index is only shifted."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from nkilint.model.indexing import AFFINE, CONST, NONAFFINE, RUNTIME, IndexArithmetic
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import V0_1

LEGACY = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a, n):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    wide = i_f * 2
    for i in nl.affine_range(4):
        base = i * 512 + 3
        square = i * i
        step = i % 4
        bound = min(i, 3)
        data = nl.load(a[i_p, i_f])
        from_data = data + i
        shifted = i_f + n
        nl.store(out[i_p, i_f], value=data)
    return out
"""


def _analysis(tmp_path: Path):
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(LEGACY), encoding="utf-8")
    source = SourceFile(str(path), path.read_text(encoding="utf-8"), "kernel.py")
    model = analyze_file(source, Project(tmp_path), TRN2, V0_1)
    fn = next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.FunctionDef))
    return model.analysis(IndexArithmetic), fn


def _name(text: str) -> ast.Name:
    return ast.parse(text, mode="eval").body


def test_affinity_follows_names_to_their_definitions(tmp_path):
    facts, fn = _analysis(tmp_path)
    loops = {"i"}
    assert facts.affinity(fn, _name("base"), loops)[0] == AFFINE  # i * 512 + 3
    assert facts.affinity(fn, _name("n + 1"), loops)[0] == CONST  # parameters: specialization-time
    assert facts.affinity(fn, _name("i_p + 64"), loops)[0] == AFFINE  # arange indices count as indices
    kind, culprit = facts.affinity(fn, _name("square"), loops)
    assert kind == NONAFFINE and ast.unparse(culprit) == "i * i"
    assert facts.affinity(fn, _name("step"), loops)[0] == NONAFFINE
    assert facts.affinity(fn, _name("bound"), loops)[0] == NONAFFINE  # min(i, 3)
    kind, culprit = facts.affinity(fn, _name("from_data"), loops)
    assert kind == RUNTIME and ast.unparse(culprit) == "from_data"  # a tensor: data, not an index
    # The caller decides which loops are index loops: without `i`, `i * i` is a constant.
    assert facts.affinity(fn, _name("square"), set())[0] == CONST


def test_only_shifted_rejects_products_of_indices_also_through_names(tmp_path):
    facts, fn = _analysis(tmp_path)
    assert facts.only_shifted(fn, _name("i_f + 3"))
    assert facts.only_shifted(fn, _name("shifted"))  # i_f + n
    assert not facts.only_shifted(fn, _name("i_f * 2"))
    assert not facts.only_shifted(fn, _name("wide"))  # defined as i_f * 2
    assert not facts.only_shifted(fn, _name("-i_f"))
