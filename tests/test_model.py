"""The semantic model on fixture kernels: concrete graph facts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nkilint.model.bindings import Dialect, Gen, collect_bindings
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file, partition_size
from nkilint.model.values import const_int, int_bounds
from nkilint.source import SourceFile
from nkilint.targets import TRN1, TRN2
from nkilint.versions import LATEST, V0_1

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "model"


def model_of(rel: str, target=TRN2, version=LATEST, root: Path = FIXTURES):
    path = (root / rel).resolve()
    source = SourceFile(str(path), path.read_text(encoding="utf-8"), rel)
    return analyze_file(source, Project(root), target, version)


def dims(data):
    shape = data.get("shape_v")
    return None if shape is None else [const_int(d) for d in shape]


def by_name(graph, name, kind="tensor"):
    found = [(nid, d) for nid, d in graph.nodes(kind) if d.get("name") == name]
    assert found, f"no {kind} named {name}"
    return found[0]


def ops_by_api(graph, api):
    return [(nid, d) for nid, d in graph.ops() if d.get("api") == api]


# -- bindings ---------------------------------------------------------------

@pytest.mark.parametrize(
    "source,expr,canonical,gen",
    [
        ("import neuronxcc.nki.language as nl", "nl.zeros", "nki.language.zeros", Gen.LEGACY),
        ("from neuronxcc import nki", "nki.isa.nc_matmul", "nki.isa.nc_matmul", Gen.LEGACY),
        ("import neuronxcc.nki.isa as ni", "ni.activation", "nki.isa.activation", Gen.LEGACY),
        ("import neuronxcc\n", "neuronxcc.nki.language.load", "nki.language.load", Gen.LEGACY),
        ("from neuronxcc.nki.language import par_dim", "par_dim", "nki.language.par_dim", Gen.LEGACY),
        ("from torch_neuronx import nki_jit", "nki_jit", "torch_neuronx.nki_jit", Gen.LEGACY),
        ("import nki", "nki.jit", "nki.jit", Gen.CURRENT),
        ("from nki import language as L", "L.ndarray", "nki.language.ndarray", Gen.CURRENT),
        ("import nki.collectives as ncc", "ncc.all_reduce", "nki.collectives.all_reduce", Gen.CURRENT),
        ("import neuronxcc.nki.compiler as ncc", "ncc.sbuf.mod_alloc", "nki.compiler.sbuf.mod_alloc", Gen.LEGACY),
        ("from nki.isa.constants import oob_mode", "oob_mode.skip", "nki.isa.constants.oob_mode.skip", Gen.CURRENT),
        ("import numpy as np", "np.float32", "numpy.float32", Gen.OTHER),
    ],
)
def test_bindings_resolve_aliases_by_module_path(source, expr, canonical, gen):
    b = collect_bindings(ast.parse(source))
    qual = b.resolve(ast.parse(expr, mode="eval").body)
    assert qual is not None and qual.name == canonical and qual.gen is gen


def test_star_import_resolves_only_api_names():
    m = SourceFile("/tmp/star.py", "from neuronxcc.nki.language import *\nimport numpy as np\n"
                   "def k(x):\n    t = zeros((128, 4), dtype=float32)\n    return np.sum(t)\n")
    model = analyze_file(m, Project(Path("/tmp")), TRN2, LATEST)
    kernel = model.kernels[0]
    tensors = [d for _, d in kernel.graph.tensors() if d.get("origin") == "alloc"]
    assert dims(tensors[0]) == [128, 4] and tensors[0]["dtype"] == "float32"


@pytest.mark.parametrize(
    "source,dialect",
    [
        ("import neuronxcc.nki.language as nl\n", Dialect.LEGACY),
        ("import nki.language as nl\n", Dialect.CURRENT),
        ("import nki\nimport neuronxcc.nki.isa as nisa\n", Dialect.BOTH),
        ("import numpy as np\n", Dialect.NONE),
    ],
)
def test_dialect(source, dialect):
    assert collect_bindings(ast.parse(source)).dialect is dialect


# -- legacy kernel ------------------------------------------------------------

def test_legacy_matmul_graph():
    model = model_of("legacy_matmul.py")
    assert model.dialect is Dialect.LEGACY and model.legacy
    kernel = model.kernel("matmul_kernel")
    assert kernel is not None and kernel.kind == "root" and kernel.how == "@nki.jit"
    g = kernel.graph
    loops = {d["iterator"]: d for _, d in g.loops()}
    assert loops["m"]["loop_kind"] == "affine_range" and loops["k"]["loop_kind"] == "sequential_range"
    # M <= 1024 and TILE_M = 128: at most 8 trips.
    assert int_bounds(loops["m"]["trip_v"]) == (0, 8)
    # nl.load returns a tile shaped like the HBM slice, in SBUF.
    tid, tile = by_name(g, "lhsT_tile")
    assert tile["buffer"] == "sbuf" and tile["origin"] == "result" and dims(tile) == [128, 128]
    assert len(tile["loops"]) == 3
    # load -> tile -> nc_matmul
    (load_id, _), = [(u, d) for u, _v, d in g.g.in_edges(tid, data=True) if d["kind"] == "writes"]
    assert g.attrs(load_id)["api"] == "nki.language.load"
    readers = [g.attrs(o)["api"] for o in g.ops_reading(tid)]
    assert readers == ["nki.isa.nc_matmul"]
    # The matmul result is a PSUM tile (stationary free x moving free) accumulated in place.
    (mm_id, mm), = ops_by_api(g, "nki.isa.nc_matmul")
    result = g.attrs(mm["legacy_result"])
    assert result["buffer"] == "psum" and dims(result) == [128, 512] and result["dtype"] == "float32"
    psum_id, psum = by_name(g, "res_psum")
    assert psum["buffer"] == "psum" and dims(psum) == [128, 512]
    acc = [d for _, d in g.ops() if d.get("augmented")]
    assert len(acc) == 1 and acc[0]["api"] == "nki.language.add"
    assert psum_id in [v for v, _ in g.writes([o for o, d in g.ops() if d.get("augmented")][0])]
    # nl.copy(res_psum) reads the same PSUM tensor after the k loop.
    (copy_id, _), = ops_by_api(g, "nki.language.copy")
    assert psum_id in [u for u, _ in g.reads(copy_id)]
    assert model.stats.steps > 0 and not kernel.error


def test_legacy_arange_indexing():
    g = model_of("legacy_matmul.py").kernel("indexed_add").graph
    _, ta = by_name(g, "ta")
    assert dims(ta) == [128, 512] and ta["buffer"] == "sbuf"
    (add_id, add), = ops_by_api(g, "nki.language.add")
    assert add["operator"] is True
    assert dims(g.attrs(add["legacy_result"])) == [128, 512]


# -- current kernel -------------------------------------------------------------

def test_current_softmax_graph():
    model = model_of("current_softmax.py")
    assert model.dialect is Dialect.CURRENT and not model.legacy
    g = model.kernel("softmax_kernel").graph
    (loop_id, loop), = list(g.loops())
    assert loop["loop_kind"] == "static_range"
    tile_id, tile = by_name(g, "tile")
    assert tile["buffer"] == "sbuf" and tile["dtype"] == "float32"
    assert const_int(tile["shape_v"][0]) == 128
    assert int_bounds(tile["shape_v"][1]) == (1, 2048)  # assert cols <= 2048
    assert tile["loops"] == (loop_id,)
    # dma_copy(dst=tile, src=x[...]) writes the tile; reductions read it.
    (dma_id, dma) = ops_by_api(g, "nki.isa.dma_copy")[0]
    assert [v for v, _ in g.writes(dma_id)] == [tile_id]
    src, edge = g.reads(dma_id)[0]
    assert edge["param"] == "src" and g.attrs(src)["kind"] == "view" and g.base_tensor(src) == by_name(g, "x")[0]
    assert dims(g.attrs(src))[0] == 128
    readers = {g.attrs(o)["api"] for o in g.ops_reading(tile_id)}
    assert readers == {"nki.isa.tensor_reduce", "nki.isa.activation"}
    (act_id, act), = ops_by_api(g, "nki.isa.activation")
    assert act["engine"] == "scalar"
    params = {d["param"] for _, d in g.reads(act_id)}
    assert params == {"data", "bias"}


def test_probable_device_code_is_analysed_with_unknown_inputs():
    model = model_of("current_softmax.py")
    helper = model.kernel("probable_helper")
    assert helper is not None and helper.kind == "probable"
    _, buf = by_name(helper.graph, "buf")
    assert const_int(buf["shape_v"][0]) is None and dims(buf)[1] == 64 and buf["dtype"] == "bfloat16"


# -- loops ------------------------------------------------------------------

def test_every_loop_form():
    g = model_of("loops.py").kernel("loops_kernel").graph
    loops = sorted(g.loops(), key=lambda x: x[1]["site"].line)
    kinds = [(d["loop_kind"], const_int(d["trip_v"]) if d.get("trip_v") is not None else None) for _, d in loops]
    assert kinds == [
        ("affine_range", 4),
        ("sequential_range", 4),
        ("range", 3),
        ("dynamic_range", None),
        ("fori_loop", 8),
        ("comprehension", 6),
        ("while", None),
    ]
    # The fori_loop body's allocation sits in the fori loop.
    fori = [nid for nid, d in loops if d["loop_kind"] == "fori_loop"][0]
    _, t = by_name(g, "t")
    assert t["loops"] == (fori,)
    comp = [nid for nid, d in loops if d["loop_kind"] == "comprehension"][0]
    tiles = [d for _, d in g.tensors() if d.get("loops") == (comp,)]
    assert len(tiles) == 1 and dims(tiles[0]) == [128, 128]


REGISTER_LOOPS = """
import nki
import nki.isa as nisa
import nki.language as nl


def drain(reg: nisa.VirtualRegister, flags):
    while reg:
        nisa.register_load(reg, flags)


def count_down(n):
    for i in nl.sequential_range(n):
        pass


@nki.jit
def k(flags, n_sb):
    reg = nisa.register_alloc(0)
    nisa.register_load(reg, n_sb)
    for i in nl.dynamic_range(reg):
        pass
    count_down(reg)
    drain(reg, flags)
    for j in nl.sequential_range(4):
        pass
    plain = 1
    while plain:
        plain = 0
"""


def test_loops_driven_by_a_runtime_register_are_marked():
    """A register from nisa.register_alloc (or a VirtualRegister parameter)
    that bounds or conditions a loop makes it a dynamic loop, also through
    helpers the kernel calls."""
    source = SourceFile("/tmp/regs.py", REGISTER_LOOPS)
    model = analyze_file(source, Project(Path("/tmp")), TRN2, LATEST)
    marks = {}
    for _, graph in model.graphs():
        for _, d in graph.loops():
            marks.setdefault((d["function"], d["site"].line), set()).add(bool(d.get("register_bound")))
    assert marks[("k", 21)] == {True}  # dynamic_range(reg)
    assert marks[("count_down", 13)] == {True}  # through the helper's parameter
    assert marks[("drain", 8)] == {True}  # VirtualRegister parameter, also when analysed alone
    assert marks[("k", 25)] == {False}  # sequential_range(4)
    assert marks[("k", 28)] == {False}  # while on a Python value


# -- multi-file package --------------------------------------------------------------

def test_package_constants_helpers_and_config_objects_resolve():
    model = model_of("pkg/kernel.py")
    g = model.kernel("scaled_copy").graph
    assert "make_tile" in g.helpers and "Config.__init__" in g.helpers
    _, x = by_name(g, "x")
    assert const_int(x["shape_v"][1]) == 512  # assert cols == FREE (imported constant)
    tile_id, tile = by_name(g, "tile")
    assert dims(tile) == [128, 512] and tile["dtype"] == "float32"
    # The helper's allocation is reported at the call site in kernel.py.
    assert tile["site"].file.endswith("utils.py")
    call = model.report_node(tile["site"])
    assert isinstance(call, ast.Call) and call.lineno == 17
    _, scaled = by_name(g, "scaled")
    assert scaled["dtype"] == "bfloat16"
    (loop_id, loop), = [(n, d) for n, d in g.loops() if d["loop_kind"] == "range"]
    assert int_bounds(loop["trip_v"])[0] == 1  # div_ceil(rows, 128) >= 1
    psum_loops = [d for n, d in g.loops() if d["loop_kind"] == "comprehension"]
    assert const_int(psum_loops[0]["trip_v"]) == 2  # div_ceil(512, 256)


def test_stdin_like_source_without_disk_path():
    source = SourceFile("<stdin>", "import nki.language as nl\n\ndef f(n):\n    return nl.zeros((n, 4), dtype=nl.float32)\n", "-")
    model = analyze_file(source, None, TRN2, LATEST)
    assert [k.name for k in model.kernels] == ["f"]


# -- values ----------------------------------------------------------------------

KERNEL_TEMPLATE = """
import nki
import nki.language as nl

P = 128

def div_ceil(a, b):
    return (a + b - 1) // b

@nki.jit
def k(x, y):
    {body}
"""


def tile_dims(body: str, target=TRN2):
    src = KERNEL_TEMPLATE.format(body=body.strip().replace("\n", "\n    "))
    model = analyze_file(SourceFile("/tmp/v.py", src), Project(Path("/tmp")), target, LATEST)
    g = model.kernels[0].graph
    _, t = by_name(g, "t")
    return partition_size(t)


@pytest.mark.parametrize(
    "body,bounds",
    [
        ("t = nl.ndarray((P, 4), dtype=nl.float32)", (128, 128)),
        ("K, N = x.shape\nassert K <= 96\nt = nl.ndarray((K, N), dtype=nl.float32)", (1, 96)),
        ("K, N = x.shape\nassert K in (64, 128)\nt = nl.ndarray((K, N), dtype=nl.float32)", (64, 128)),
        ("K, N = x.shape\nt = nl.ndarray((min(K, P), N), dtype=nl.float32)", (1, 128)),
        ("K = x.shape[0]\nif K > P:\n    raise ValueError('too big')\nt = nl.ndarray((K, 4), dtype=nl.float32)", (1, 128)),
        ("t = nl.ndarray((nl.tile_size.pmax, 4), dtype=nl.float32)", (128, 128)),
        ("n = div_ceil(1000, P)\nt = nl.ndarray((n * 16, 4), dtype=nl.float32)", (128, 128)),
        ("K = x.shape[0]\nn = div_ceil(K, P)\nt = nl.ndarray((K if n == 1 else P, 4), dtype=nl.float32)", (1, 128)),
        ("for i in nl.affine_range(4):\n    s = x[i * 32:(i + 1) * 32, :]\nt = nl.ndarray(s.shape, dtype=nl.float32)", (32, 32)),
        ("K, N = x.shape\nif N > 4:\n    assert K <= 64\nt = nl.ndarray((K, N), dtype=nl.float32)", (1, float("inf"))),
    ],
    ids=["constant", "assert", "membership", "min", "raise-guard", "tile_size", "helper", "ifexp-facts", "slice", "branch-fact-scoped"],
)
def test_partition_size_bounds(body, bounds):
    size = tile_dims(body)
    assert int_bounds(size) == bounds


def test_tile_size_follows_target():
    assert const_int(tile_dims("t = nl.ndarray((nl.tile_size.pmax, 4), dtype=nl.float32)", TRN1)) == 128


def test_interpreter_terminates_on_pathological_input():
    body = "n = 0\nwhile True:\n    n = n + 1\n    for i in range(10**9):\n        n = n * 2\nt = nl.ndarray((P, n), dtype=nl.float32)"
    size = tile_dims(body)
    assert const_int(size) == 128


def test_recursive_helpers_do_not_hang():
    src = KERNEL_TEMPLATE.format(body="t = f(10)\n    return t") + "\ndef f(n):\n    return f(n - 1)\n"
    model = analyze_file(SourceFile("/tmp/r.py", src), Project(Path("/tmp")), TRN2, LATEST)
    assert model.kernels[0].error is None


def test_legacy_version_flag():
    model = model_of("legacy_matmul.py", version=V0_1)
    assert model.legacy and model.version == V0_1


# -- kernel discovery ------------------------------------------------------------------

DISCOVERY = '''
import nki
import nki.language as nl
import neuronxcc.nki as lnki
from neuronxcc.nki import benchmark
from torch_neuronx import nki_jit
from nki.compiler.kernel_builder import compile_kernel
import numpy as np

nki_trace = lnki.trace


@nki.jit
def bare(x):
    return x


@nki.jit(mode="trace", debug_kernel=True)
def called(x):
    return x


@lnki.compiler.skip_middle_end_transformations
@lnki.jit
def stacked(x):
    return x


@nki_trace
def via_alias(x):
    return x


@benchmark(warmup=2, iters=10)
def benched(x):
    return x


@nki_jit()
def torch_jit(x):
    return x


def launched(x):
    return x


def simulated(x):
    return x


def built(x):
    return x


def helper_that_allocates(n):
    return nl.ndarray((n, 4), dtype=nl.float32, buffer=nl.sbuf)


class Tiles(nl.NKIObject):
    def tile(self, n):
        return n


def host_only(x):
    return np.zeros(4)


kernel = nki.jit(launched)
nki.simulate(simulated)(np.zeros(4))
compile_kernel(built, inputs=None, outputs=None)
'''


def test_kernel_discovery_finds_every_root_form():
    model = analyze_file(SourceFile("/tmp/disc.py", DISCOVERY), Project(Path("/tmp")), TRN2, LATEST)
    kinds = {k.name: (k.kind, k.how) for k in model.kernels}
    assert kinds["bare"] == ("root", "@nki.jit")
    assert kinds["called"] == ("root", "@nki.jit")
    assert kinds["stacked"] == ("root", "@nki.jit")
    assert kinds["via_alias"] == ("root", "@nki.trace")
    assert kinds["benched"] == ("root", "@nki.benchmark")
    assert kinds["torch_jit"] == ("root", "@torch_neuronx.nki_jit")
    assert kinds["launched"] == ("root", "nki.jit(launched)")
    assert kinds["simulated"] == ("root", "nki.simulate(simulated)")
    assert kinds["built"][0] == "root" and "compile_kernel" in kinds["built"][1]
    assert kinds["helper_that_allocates"] == ("probable", "calls nki.language.ndarray")
    assert kinds["Tiles.tile"][0] == "probable" and "NKIObject" in kinds["Tiles.tile"][1]
    assert "host_only" not in kinds


def test_new_text_for_a_file_replaces_its_cached_module(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("import nki.language as nl\n\ndef f():\n    return nl.zeros((64, 4), dtype=nl.float32)\n")
    project = Project(tmp_path)
    first = analyze_file(SourceFile(str(path), path.read_text()), project, TRN2, LATEST)
    (_, t1), = [x for x in first.kernels[0].graph.tensors()]
    assert dims(t1) == [64, 4]
    second_text = "import nki.language as nl\n\ndef f():\n    return nl.zeros((32, 8), dtype=nl.float32)\n"
    second = analyze_file(SourceFile(str(path), second_text), project, TRN2, LATEST)
    (_, t2), = [x for x in second.kernels[0].graph.tensors()]
    assert dims(t2) == [32, 8]


def test_nodes_under_undecided_conditions_are_marked():
    src = KERNEL_TEMPLATE.format(body=(
        "K, N = x.shape\n"
        "a = nl.ndarray((P, 4), dtype=nl.float32)\n"
        "if N > 512:\n"
        "    b = nl.ndarray((P, 8), dtype=nl.float32)\n"
        "if P > 64:\n"
        "    c = nl.ndarray((P, 16), dtype=nl.float32)\n"
        "t = nl.ndarray(x.shape, dtype=nl.float32)"
    ).replace("\n", "\n    "))
    model = analyze_file(SourceFile("/tmp/c.py", src), Project(Path("/tmp")), TRN2, LATEST)
    g = model.kernels[0].graph
    flags = {d["name"]: d["conditional"] for _, d in g.tensors() if d.get("origin") == "alloc"}
    assert flags == {"a": False, "b": True, "c": False, "t": False}
    ranks = {d["name"]: d.get("rank_inferred") for _, d in g.tensors() if d.get("origin") == "alloc"}
    assert ranks["a"] is False and ranks["t"] is True
