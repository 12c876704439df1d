"""Syntax and data-flow facts of the model that rules ask about blocks,
evaluation and stores: call arguments, the nodes of a block, which operands
of ``and``/``or`` Python tests, the names a loop derives from its index,
whether an expression reads tensor data, and which ops store into a tensor.

Each test builds a small kernel (legacy ``neuronxcc.nki`` or current
``nki``) and asserts a fact the API must give for it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from nkilint.model import dataflow
from nkilint.model.exprs import ExprFacts
from nkilint.model.project import Project
from nkilint.model.scopes import Scopes, call_argument
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST, V0_1, NkiVersion


def model_for(tmp_path: Path, code: str, version: NkiVersion = LATEST):
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    source = SourceFile(str(path), path.read_text(encoding="utf-8"), "kernel.py")
    return analyze_file(source, Project(tmp_path), TRN2, version)


def function(model, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def first(model, kind: type, line: int):
    return next(n for n in ast.walk(model.module.tree) if isinstance(n, kind) and getattr(n, "lineno", 0) == line)


LEGACY = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(a, flag):
    out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        row = i * 128
        j, k = row + 1, 7
        with nl.no_reorder() as ctx_name:
            pass
        total = [x + row for x in range(3)]
        def inner(z):
            hidden = i + z
        unrelated = 5
        t = nl.load(a[i])
        nl.store(out[i], value=t)
    ok = flag and a.shape[0] > 64
    if flag and a.shape[0]:
        pass
    n = nl.load(a[0])
    while n.shape[0] > 2:
        break
    while n > 2:
        break
    return out
"""


def test_call_argument_by_keyword_or_position(tmp_path):
    call = ast.parse("f(1, 2, dst=3)").body[0].value
    assert ast.literal_eval(call_argument(call, 0, "src")) == 1
    assert ast.literal_eval(call_argument(call, 5, "dst")) == 3
    assert call_argument(call, 2, "other") is None
    starred = ast.parse("f(*xs, 2)").body[0].value
    assert call_argument(starred, 1, "x") is None  # the position is hidden by *xs


def test_block_nodes_skip_nested_functions_and_loop_dependents_follow_every_binding(tmp_path):
    model = model_for(tmp_path, LEGACY, V0_1)
    index = model.analysis(Scopes).file
    loop = first(model, ast.For, 8)
    nodes = list(index.block_nodes(loop.body))
    names = {n.id for n in nodes if isinstance(n, ast.Name)}
    assert "hidden" not in names and "inner" not in names  # the nested def is yielded, not entered
    assert any(isinstance(n, ast.FunctionDef) and n.name == "inner" for n in nodes)
    deps = index.loop_dependents(loop)
    assert {"i", "row", "j", "k", "total", "t"} <= deps  # tuple targets, comprehensions, calls of i
    assert "unrelated" not in deps and "hidden" not in deps and "ctx_name" not in deps
    assert index.loop_dependents(loop) is deps  # computed once per loop


def test_truth_tested_operands_depend_on_where_the_boolop_is(tmp_path):
    model = model_for(tmp_path, LEGACY, V0_1)
    index = model.analysis(Scopes).file
    assigned = first(model, ast.BoolOp, 19)  # ok = flag and ...: the last operand is the value
    assert [ast.unparse(v) for v in index.truth_tested(assigned)] == ["flag"]
    tested = first(model, ast.BoolOp, 20)  # if flag and ...: every operand is tested
    assert [ast.unparse(v) for v in index.truth_tested(tested)] == ["flag", "a.shape[0]"]


def test_reads_tensor_ignores_metadata(tmp_path):
    model = model_for(tmp_path, LEGACY, V0_1)
    exprs = model.analysis(ExprFacts)
    fn = function(model, "kernel")
    shape_test = first(model, ast.While, 23).test
    data_test = first(model, ast.While, 25).test
    assert not exprs.reads_tensor(fn, shape_test)  # n.shape[0] > 2
    assert exprs.reads_tensor(fn, data_test)  # n > 2


def test_stores_leave_out_the_legacy_call_that_returned_the_tile(tmp_path):
    model = model_for(tmp_path, LEGACY, V0_1)
    graph = model.kernels[0].graph
    out = next(t for t, d in graph.tensors() if d.get("name") == "out")
    tile = next(t for t, d in graph.tensors() if d.get("name") == "t")
    assert [graph.attrs(op).get("api") for op in dataflow.stores(graph, out)] == ["nki.language.store"]
    assert graph.ops_writing(tile)  # nl.load writes the tile it returns ...
    assert dataflow.stores(graph, tile) == []  # ... which is not a store into it


def test_binding_loop_is_the_innermost_loop_whose_target_binds_the_name():
    from nkilint.model.scopes import SyntaxIndex

    tree = ast.parse(textwrap.dedent("""
    def f(a, p):
        for i in range(4):
            for i in range(8):
                a[i] = 0
            a[i, p] = 1
        for j, k in pairs:
            a[k] = 2
        for i in range(i):
            pass
        b = [a[m] for m in range(3)]
        n = 5
        a[n] = 3
    """))
    index = SyntaxIndex(tree)
    fors = [n for n in ast.walk(tree) if isinstance(n, ast.For)]
    outer, inner, pairs, again = sorted(fors, key=lambda n: n.lineno)
    comp = next(n for n in ast.walk(tree) if isinstance(n, ast.ListComp))

    def use(name: str, line: int) -> ast.Name:
        return next(n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
                    and isinstance(n.ctx, ast.Load) and n.lineno == line)

    assert index.binding_loop(use("i", 5)) is inner  # the reused name: the inner loop binds it
    assert index.binding_loop(use("i", 6)) is outer
    assert index.binding_loop(use("p", 6)) is None  # a parameter
    assert index.binding_loop(use("k", 8)) is pairs  # a tuple target
    assert index.binding_loop(use("i", 9)) is None  # its own iterable is evaluated before it binds
    assert index.binding_loop(use("m", 11)) is comp
    assert index.binding_loop(use("n", 13)) is None  # a plain assignment


def test_binding_loops_follow_a_helper_parameter_only_when_asked():
    import ast as _ast

    from nkilint.model.loops import Loops

    source = SourceFile("/virtual/kernel.py", textwrap.dedent("""
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    def load_one(t, row):
        return nl.load(t[row, 0])

    @nki.jit
    def gather_kernel(a):
        out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
        for r in nl.sequential_range(64):
            v = load_one(a, r)
        return out
    """), "kernel.py")
    model = analyze_file(source, None, TRN2, V0_1)
    graph = model.kernels[0].graph
    (view,) = [d for _, d in graph.views() if d.get("index") == "(row, 0)"]
    (loop,) = [d for _, d in graph.loops()]
    site = view["site"]
    assert isinstance(site.node, _ast.Subscript) and site.chain  # reached through the call
    loops = model.analysis(Loops)
    assert loops.binding_loops(site, site.node.slice) == {id(loop["site"].node)}  # row <- r <- the loop
    assert loops.binding_loops(site, site.node.slice, through_calls=False) == set()
