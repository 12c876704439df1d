"""The model APIs rules query: analyses, scopes, expression facts, the
device-code map, loop nests, guards, symbol origins, dtypes and data flow.

Each test builds a small kernel (current ``nki`` or legacy ``neuronxcc.nki``)
and asserts a fact the API must give for it."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from nkilint.model import dataflow
from nkilint.model.analysis import Analysis, AnalysisCycle
from nkilint.model.device import DeviceCode
from nkilint.model.dtypes import dtype_name, dtype_of
from nkilint.model.exprs import ExprFacts, Holds
from nkilint.model.loops import INV, UNK, VAR, Loops, nest_of
from nkilint.model.project import Project
from nkilint.model.scopes import Scopes
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST


def model_for(tmp_path: Path, code: str, name: str = "kernel.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    source = SourceFile(str(path), path.read_text(encoding="utf-8"), name)
    return analyze_file(source, Project(tmp_path), TRN2, LATEST)


def function(model, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def call_at_line(model, line: int) -> ast.Call:
    return next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.Call) and n.lineno == line)


CURRENT = """
import nki
import nki.language as nl
import nki.isa as nisa

def helper(t, flag):
    if flag:
        nisa.memset(dst=t, value=0.0)
    return t

@nki.jit
def kernel(a, n):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    alias = acc
    mixed = acc if n else 3
    for i in nl.affine_range(4):
        tile = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=a[i * 128:(i + 1) * 128, :])
        if n > 2:
            nisa.tensor_tensor(dst=acc, data1=acc, data2=tile, op=nl.add)
        helper(tile, n)
    nisa.dma_copy(dst=out, src=acc)
    return out
"""


# -- analyses ------------------------------------------------------------------
def test_analysis_is_computed_once_per_model_and_kept_with_it(tmp_path):
    calls = []

    class Counting(Analysis):
        def __init__(self, model):
            super().__init__(model)
            calls.append(model)

    model = model_for(tmp_path, CURRENT)
    first = model.analysis(Counting)
    assert model.analysis(Counting) is first and len(calls) == 1
    other = model_for(tmp_path, CURRENT, "other.py")
    assert other.analysis(Counting) is not first and len(calls) == 2


def test_analysis_cycle_is_an_error_not_a_recursion(tmp_path):
    class A(Analysis):
        def __init__(self, model):
            model.analysis(B)

    class B(Analysis):
        def __init__(self, model):
            model.analysis(A)

    model = model_for(tmp_path, CURRENT)
    with pytest.raises(AnalysisCycle):
        model.analysis(A)


def test_analysis_that_raises_is_not_cached(tmp_path):
    attempts = []

    class Flaky(Analysis):
        def __init__(self, model):
            attempts.append(1)
            if len(attempts) == 1:
                raise ValueError("first time")

    model = model_for(tmp_path, CURRENT)
    with pytest.raises(ValueError):
        model.analysis(Flaky)
    assert isinstance(model.analysis(Flaky), Flaky) and len(attempts) == 2


# -- scopes -----------------------------------------------------------------------
def test_scopes_definitions_reaching_and_params(tmp_path):
    model = model_for(tmp_path, CURRENT)
    scopes = model.analysis(Scopes)
    kernel = function(model, "kernel")
    scope = scopes.of(kernel)
    assert {"a", "n"} == scope.params
    assert [d.kind for d in scopes.definitions(kernel, "tile")] == ["assign"]
    assert [d.kind for d in scopes.definitions(kernel, "i")] == ["for"]
    assert scope.is_param("a") and not scope.is_param("acc")
    use = next(n for n in ast.walk(kernel) if isinstance(n, ast.Name) and n.id == "alias" and isinstance(n.ctx, ast.Store))
    assert scopes.enclosing_function(use) is kernel
    # A load of `acc` in the loop body is reached by its one definition.
    load = next(n for n in ast.walk(kernel) if isinstance(n, ast.Name) and n.id == "acc" and isinstance(n.ctx, ast.Load))
    assert [d.value.func.attr for d in scopes.reaching(load)] == ["ndarray"]


def test_scopes_always_follows_names_and_rejects_mixed_definitions(tmp_path):
    model = model_for(tmp_path, CURRENT)
    scopes = model.analysis(Scopes)
    kernel = function(model, "kernel")
    is_ndarray = lambda e: isinstance(e, ast.Call) and getattr(e.func, "attr", "") == "ndarray"  # noqa: E731
    assert scopes.always(kernel, ast.Name("alias", ast.Load()), is_ndarray)
    assert not scopes.always(kernel, ast.Name("mixed", ast.Load()), is_ndarray)
    assert not scopes.always(kernel, ast.Name("a", ast.Load()), is_ndarray)  # a parameter


def test_scopes_derived_names_reach_a_fixed_point(tmp_path):
    model = model_for(tmp_path, """
        def f(x):
            a = tid
            b = a + 1
            c = b * 2
            d = c - 3
            e = 7
            return d
    """)
    scopes = model.analysis(Scopes)
    fn = function(model, "f")
    seed = next(n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == "tid")
    assert scopes.derived(fn, {id(seed)}) == {"a", "b", "c", "d"}
    assert scopes.derived(fn, {id(seed)}, rounds=1) <= {"a", "b", "c", "d"}


def test_scopes_derived_chained_follows_every_plain_name_target(tmp_path):
    model = model_for(tmp_path, """
        def f(x):
            a = b = pid
            c, d = a, 1
            e = c + 1
            return e
    """)
    scopes = model.analysis(Scopes)
    fn = function(model, "f")
    seed = next(n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == "pid")
    # single-target assignments only: `a = b = pid` and the tuple target bind nothing
    assert scopes.derived(fn, {id(seed)}) == set()
    # chained: both names of `a = b = pid`; a tuple target is not a plain name
    assert scopes.derived(fn, {id(seed)}, chained=True) == {"a", "b"}


def test_scopes_assigned_values_file_wide_and_within_a_function(tmp_path):
    model = model_for(tmp_path, """
        WARP = 32

        def f(x):
            WARP = 64
            grid: object = lambda meta: (1,)
            WARP += 1
            return x

        def g(x):
            grid = (2,)
            return x
    """)
    scopes = model.analysis(Scopes)
    values = scopes.assigned_values("WARP")
    assert [v.value for v in values] == [32, 64]  # augmented assignments do not count
    f, g = function(model, "f"), function(model, "g")
    assert [v.value for v in scopes.assigned_values("WARP", f)] == [64]
    assert scopes.assigned_values("WARP", g) == []
    assert [type(v).__name__ for v in scopes.assigned_values("grid")] == ["Lambda", "Tuple"]
    assert [type(v).__name__ for v in scopes.assigned_values("grid", g)] == ["Tuple"]
    assert scopes.assigned_values("missing") == []


def test_scopes_loop_assigned_and_conditions_between(tmp_path):
    model = model_for(tmp_path, CURRENT)
    index = model.analysis(Scopes).file
    loop = next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.For))
    assert {"i", "tile"} <= index.loop_assigned(loop)
    tensor_tensor = call_at_line(model, 21)
    tests = [ast.unparse(t) for t in index.conditions_between(tensor_tensor, loop)]
    assert tests == ["n > 2"]



def test_scopes_loop_carried_names_are_read_before_they_are_bound(tmp_path):
    model = model_for(tmp_path, """
        def f(xs):
            off = 0
            total = 0
            for x in xs:
                y = x + off      # off: read before this iteration binds it
                off = off + 512
                fresh = y * 2    # bound before any read in the body
                z = fresh + 1
                total += z       # x += y reads x first
                sq = [v for v in range(fresh)]  # a comprehension's own names do not count
        """)
    index = model.analysis(Scopes).file
    loop = next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.For))
    assert index.loop_carried(loop) == {"off", "total"}


SOFTMAX_SUMS = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x, eps):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    m = nl.max(t, axis=1)
    e = nl.exp(t - m)
    s = nl.sum(e, axis=1)
    p = nl.divide(e, s)
    raw = nl.sum(nl.exp(t), axis=1)
    shifted = nl.add(p, eps)
    nl.store(out, value=nl.log(s) + nl.log(p) + nl.log(raw) + shifted)
    return out
"""


def test_dataflow_softmax_sums_and_added_scalars(tmp_path):
    model = model_for(tmp_path, SOFTMAX_SUMS)
    graph = model.kernels[0].graph
    by_line = {}
    for op, data in graph.ops():
        by_line.setdefault((data["site"].line, dataflow.short(data["api"])), op)
    exps = {line: op for (line, s), op in by_line.items() if s == "exp"}
    assert dataflow.max_subtracted(graph, exps[10]) is True
    assert dataflow.max_subtracted(graph, exps[13]) is False
    # The logs' inputs: a sum of exp(x - max) is >= 1; a probability (a
    # division among its producers) or a sum of unshifted exps is not.
    logs = sorted((op for op, data in graph.ops() if dataflow.short(data["api"]) == "log"), key=graph.seq)
    inputs = [next(n for _, n in dataflow.reads(graph, op)) for op in logs]
    assert [dataflow.sum_of_max_subtracted_exps(graph, n) for n in inputs] == [True, False, False]
    (add,) = [op for (line, s), op in by_line.items() if s == "add" and line == 14]
    (eps,) = dataflow.added_scalars(graph, add)
    assert "eps" in str(eps)
    assert dataflow.added_scalars(graph, by_line[(12, "divide")]) == []

VARIANCES = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(x, eps):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(nl.square(t), axis=1)
    a = nl.reciprocal(nl.sqrt(ms))
    b = 1.0 / nl.sqrt(ms * 2.0)
    c = nl.reciprocal(nl.sqrt(ms + eps))
    d = nl.reciprocal(nl.maximum(ms, 1e-6))
    e = nl.divide(t, nl.sum(t, axis=1))
    nl.store(out, value=t * a * b * c * d * e)
    return out
"""


def test_dataflow_variances_and_their_inverse(tmp_path):
    model = model_for(tmp_path, VARIANCES)
    graph = model.kernels[0].graph
    at = {}
    for op, data in graph.ops():
        at.setdefault((data["site"].line, dataflow.short(data["api"])), op)
    assert dataflow.squares(graph, at[(9, "square")])
    assert dataflow.computes_variance(graph, at[(9, "mean")])
    assert not dataflow.computes_variance(graph, at[(14, "sum")])  # a plain sum, no squares
    # The divisor of 1.0 / x and of nl.divide(t, s); the input of nl.reciprocal.
    how, node = dataflow.inverted_operand(graph, at[(11, "divide")])
    assert how == "divide" and node in [n for _, n in dataflow.writes(graph, at[(11, "sqrt")])]
    assert dataflow.inverted_operand(graph, at[(10, "reciprocal")])[0] == "reciprocal"
    assert dataflow.inverted_operand(graph, at[(9, "mean")]) is None
    # Through a square root and a scaling the variance is still eps-free; an add or a clamp ends it.
    found = [dataflow.eps_free_variance(graph, dataflow.inverted_operand(graph, at[key])[1])
             for key in ((10, "reciprocal"), (11, "divide"), (12, "reciprocal"), (13, "reciprocal"))]
    assert found[0] == (at[(9, "mean")], True) and found[1] == (at[(9, "mean")], True)
    assert found[2] is None and found[3] is None
    assert dataflow.eps_free_variance(graph, dataflow.inverted_operand(graph, at[(14, "divide")])[1]) is None


ONES_MATMULS = """
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def kernel(x, w):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    ones = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    half = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=half, value=-0.5)
    wt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=wt, src=w[0:128, 0:128])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=sq, data1=t, data2=t, op=nl.multiply)
    p = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=p[0], stationary=ones, moving=sq)
    nisa.nc_matmul(dst=p[1], stationary=sq, moving=ones[0:128, 0:128])
    nisa.nc_matmul(dst=p[2], stationary=ones, moving=t)
    nisa.nc_matmul(dst=p[3], stationary=wt, moving=sq)
    nisa.nc_matmul(dst=p[0], stationary=half, moving=sq)
"""


def test_dataflow_ones_matmul_of_squares(tmp_path):
    model = model_for(tmp_path, ONES_MATMULS)
    graph = model.kernels[0].graph
    matmuls = sorted((op for op, data in graph.ops() if dataflow.short(data["api"]) == "nc_matmul"), key=graph.seq)
    # Ones on either side (a view of them too) over a squared tile is a sum of
    # squares; over the data itself, with a loaded weight, or with a negative
    # fill it is not.
    assert [dataflow.ones_matmul_of_squares(graph, op) for op in matmuls] == [True, True, False, False, False]
    assert [dataflow.computes_variance(graph, op) for op in matmuls] == [True, True, False, False, False]
    tensors = {data.get("name"): nid for nid, data in graph.g.nodes(data=True) if data.get("kind") == "tensor"}
    assert dataflow.uniform_positive(graph, tensors["ones"])
    assert not dataflow.uniform_positive(graph, tensors["half"]) and not dataflow.uniform_positive(graph, tensors["wt"])


# -- expression facts ----------------------------------------------------------------
def test_exprs_holds_tensor_param_and_nothing(tmp_path):
    model = model_for(tmp_path, CURRENT)
    exprs = model.analysis(ExprFacts)
    kernel = function(model, "kernel")
    name = lambda s: ast.Name(s, ast.Load())  # noqa: E731
    assert exprs.holds(kernel, name("acc")) is Holds.TENSOR
    assert exprs.holds(kernel, name("alias")) is Holds.TENSOR
    assert exprs.holds(kernel, name("mixed")) is None  # a tensor or 3
    assert exprs.holds(kernel, name("a")) is Holds.PARAM  # passed to dma_copy(src=...)
    assert exprs.holds(kernel, name("n")) is None
    alloc = call_at_line(model, 13)
    assert exprs.is_alloc_call(alloc) and [r.data["name"] for r in exprs.refs(alloc)] == ["out"]


def test_exprs_legacy_index_names_and_origin(tmp_path):
    model = model_for(tmp_path, """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def kernel(a):
            out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(512)[None, :]
            shifted = i_f + 1
            g_p, g_f = nl.mgrid[0:128, 0:512]
            t = nl.load(a[i_p, i_f])
            nl.store(out[g_p, g_f], value=t)
            return out
    """)
    exprs = model.analysis(ExprFacts)
    kernel = function(model, "kernel")
    assert exprs.is_index_name(kernel, "i_p") and exprs.is_index_name(kernel, "shifted")
    assert exprs.index_origin(kernel, "shifted") == "arange"
    assert exprs.index_origin(kernel, "g_p") == "mgrid"
    assert not exprs.is_index_name(kernel, "t")
    assert exprs.holds(kernel, ast.Name("t", ast.Load())) is Holds.TENSOR


# -- device code ------------------------------------------------------------------------
def test_device_map_owner_and_host_code(tmp_path):
    model = model_for(tmp_path, CURRENT + "\n\ndef host():\n    return kernel(1, 2)\n")
    device = model.analysis(DeviceCode)
    names = {f.name for f in device.functions}
    assert names == {"helper", "kernel"}
    memset = call_at_line(model, 8)
    assert device.contains(memset) and device.owner(memset).name == "helper"
    host = function(model, "host")
    assert not device.contains(host.body[0])


# -- loops, guards, symbol origins ----------------------------------------------------------
def test_loop_nest_variance_and_runs_every_iteration(tmp_path):
    model = model_for(tmp_path, CURRENT)
    kernel = model.kernel("kernel")
    graph = kernel.graph
    nest = nest_of(graph)
    (loop,) = [lp for lp in nest.loops.values() if lp.kind == "affine_range"]
    assert loop.sym is not None and loop.sym.origin == "loop" and loop.may_repeat() and loop.trip_text() == "4"
    copies = [nid for nid, d in graph.ops() if d["api"] == "nki.isa.dma_copy"]
    load = next(o for o in copies if loop.id in graph.attrs(o)["loops"])
    src = next(n for n, d in graph.reads(load) if d.get("param") == "src")
    assert nest.access_variance(src, loop) == VAR  # a[i * 128:...] moves with i
    store = next(o for o in copies if loop.id not in graph.attrs(o)["loops"])
    assert nest.variance(graph.attrs(store).get("params_v", {}).get("dst"), loop) in (INV, UNK)
    loops = model.analysis(Loops)
    assert loops.runs_every_iteration(graph.attrs(load)["site"], loop)
    # `if n > 2` is the same in every iteration: the add still runs every time it runs at all.
    tensor_tensor = next(nid for nid, d in graph.ops() if d["api"] == "nki.isa.tensor_tensor")
    assert loops.runs_every_iteration(graph.attrs(tensor_tensor)["site"], loop)


def test_runs_every_iteration_is_false_under_a_test_on_the_loop_index(tmp_path):
    model = model_for(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a):
            out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
            for i in nl.affine_range(4):
                tile = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                if i == 0:
                    nisa.memset(dst=tile, value=0.0)
                nisa.dma_copy(dst=out, src=tile)
            return out
    """)
    graph = model.kernel("kernel").graph
    (loop,) = nest_of(graph).loops.values()
    loops = model.analysis(Loops)
    memset = next(d for _, d in graph.ops() if d["api"] == "nki.isa.memset")
    copy = next(d for _, d in graph.ops() if d["api"] == "nki.isa.dma_copy")
    assert not loops.runs_every_iteration(memset["site"], loop)
    assert loops.runs_every_iteration(copy["site"], loop)


def test_guards_recorded_on_nodes_created_under_undecided_conditions(tmp_path):
    model = model_for(tmp_path, CURRENT)
    graph = model.kernel("kernel").graph
    tensor_tensor = next(d for _, d in graph.ops() if d["api"] == "nki.isa.tensor_tensor")
    (guard,) = tensor_tensor["guards"]
    assert ast.unparse(guard.test) == "n > 2" and guard.branch is True and not guard.in_helper
    assert guard.loops and tensor_tensor["conditional"]
    memset = next(d for _, d in graph.ops() if d["api"] == "nki.isa.memset")
    assert [ast.unparse(g.test) for g in memset["guards"]] == ["flag"] and memset["guards"][0].in_helper
    alloc = next(d for _, d in graph.tensors() if d.get("name") == "acc")
    assert alloc["guards"] == () and not alloc["conditional"]


def test_symbol_origins(tmp_path):
    model = model_for(tmp_path, """
        import nki
        import nki.language as nl

        @nki.jit
        def kernel(a, n):
            K, N = a.shape
            for i in nl.affine_range(n):
                t = nl.ndarray((K, N), dtype=nl.float32, buffer=nl.sbuf)
            return a
    """)
    graph = model.kernel("kernel").graph
    tile = next(d for _, d in graph.tensors() if d.get("name") == "t")
    assert tile["shape_v"][0].sym.origin == "param"
    (loop,) = [d for _, d in graph.loops()]
    assert loop["index_sym"].origin == "loop"


# -- dtypes and data flow -----------------------------------------------------------------
def test_dtype_of_follows_views_and_dataflow_finds_producers(tmp_path):
    model = model_for(tmp_path, CURRENT)
    graph = model.kernel("kernel").graph
    tile_id = next(nid for nid, d in graph.tensors() if d.get("name") == "tile")
    assert dtype_name(graph.attrs(tile_id)) == "bfloat16" and dtype_of(graph, tile_id) == "bfloat16"
    acc_id = next(nid for nid, d in graph.tensors() if d.get("name") == "acc")
    producers = {graph.attrs(op)["api"] for op in dataflow.producers(graph, acc_id)}
    assert "nki.isa.tensor_tensor" in producers and "nki.isa.dma_copy" in producers  # tile was dma'd, then added
    assert graph.seq(acc_id) > graph.seq(next(nid for nid, d in graph.tensors() if d.get("name") == "out"))


def test_line_ref_names_the_file_of_a_site_in_another_module(tmp_path):
    from nkilint.model.graph import Site

    model = model_for(tmp_path, "x = 1\n")
    here = Site(str(tmp_path / "kernel.py"), ast.parse("y = 2\n\n\nz = 3").body[1])
    (tmp_path / "pkg").mkdir()
    there = Site(str(tmp_path / "pkg" / "helpers.py"), here.node)
    assert model.line_ref(here) == "line 4"
    assert model.line_ref(there) == "line 4 of pkg/helpers.py"
    assert model.display_path("/elsewhere/deep/lib/ops.py") == "/elsewhere/deep/lib/ops.py"


HELPERS = """
import nki
import nki.language as nl
import nki.isa as nisa

def make_tile(shape):
    return nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)

def make_tiles(n):
    tiles = []
    for i in range(n):
        tiles.append(nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf))
    return tiles

def tile_or_size(shape, as_tile: bool):
    if as_tile:
        return nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)
    return shape[0]

def size_of(shape):
    return shape[0] * 2

@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = make_tile((128, 512))
    ts = make_tiles(4)
    u = tile_or_size((128, 512), True)
    v = tile_or_size((128, 512), False)
    n = size_of((128, 512))
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out
"""


def test_exprs_helper_returns_are_tiles_only_when_every_run_returns_one(tmp_path):
    model = model_for(tmp_path, HELPERS)
    exprs = model.analysis(ExprFacts)
    kernel = function(model, "kernel")
    # line -> (helper_return, holds) of the call on that line
    want = {26: ("tile", Holds.TENSOR), 27: ("tiles", None), 28: ("tile", Holds.TENSOR),
            29: (None, None), 30: (None, None), 31: (None, None)}
    for line, (kind, held) in want.items():
        call = call_at_line(model, line)
        assert exprs.helper_return(call) == kind, line
        assert exprs.holds(kernel, call) is held, line
    # a name bound to a helper's tile is a tensor name; one bound to its size is not
    assert exprs.is_tensor_name(kernel, "t") and exprs.is_tensor_name(kernel, "u")
    assert not exprs.is_tensor_name(kernel, "n") and not exprs.is_tensor_name(kernel, "ts")


def test_exprs_helper_imported_from_another_project_file(tmp_path):
    (tmp_path / "utils.py").write_text(textwrap.dedent("""
        import nki.language as nl

        def load_tile(src):
            t = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.sbuf)
            return t[0:128, 0:64]
    """), encoding="utf-8")
    model = model_for(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa
        from utils import load_tile

        @nki.jit
        def kernel(a):
            out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
            t = load_tile(a)
            nisa.dma_copy(dst=out, src=t)
            return out
    """)
    exprs = model.analysis(ExprFacts)
    call = call_at_line(model, 10)
    assert exprs.helper_return(call) == "tile"  # a view of an allocation, inlined from utils.py
    assert exprs.holds(function(model, "kernel"), call) is Holds.TENSOR


def test_exprs_helper_chain_deeper_than_inlining_is_not_a_tile(tmp_path):
    from nkilint.model.interp.state import MAX_INLINE_DEPTH

    depth = MAX_INLINE_DEPTH + 5
    lines = ["import nki", "import nki.language as nl", "import nki.isa as nisa", "",
             "def h0():", "    return nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)"]
    for i in range(1, depth + 1):
        lines += [f"def h{i}():", f"    return h{i - 1}()"]
    lines += ["@nki.jit", "def kernel(a):", "    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)",
              "    near = h1()", f"    far = h{depth}()", "    nisa.dma_copy(dst=out, src=a)", "    return out"]
    model = model_for(tmp_path, "\n".join(lines) + "\n")
    exprs = model.analysis(ExprFacts)
    kernel = function(model, "kernel")
    assert exprs.is_tensor_name(kernel, "near")  # inlined through one helper
    assert not exprs.is_tensor_name(kernel, "far")  # past the inlining depth: unknown, so not proven
