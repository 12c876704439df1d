"""Typed views over the kernel graph (nkilint/model/views.py) and the per-API
classification in nkilint/model/api_semantics.py."""

from __future__ import annotations

import textwrap

from nkilint.model import api_semantics as api
from nkilint.model import views
from nkilint.model.semantic import analyze_file
from nkilint.model.values import const_int
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST


def model_of(code: str):
    source = SourceFile("/virtual/kernel.py", textwrap.dedent(code), "kernel.py")
    return analyze_file(source, None, TRN2, LATEST)


CURRENT = """
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def kernel(a, scale):
        out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[0:128, :])
        r = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=r, op=nl.exp, data=t[32:96, :], scale=scale)
        nisa.dma_copy(dst=out, src=r)
        return out
"""

LEGACY = """
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def kernel(a, b):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a[0:128, 0:512])
        y = nl.broadcast_to(nl.load(b[0:1, 0:512]), shape=(128, 512))
        s = nl.add(x, y)
        z = nl.multiply(x, x)
        nl.store(out, value=s)
        return out
"""


def _only_op(model, api_name: str) -> views.Op:
    (op,) = list(views.ops(model, apis=(api_name,)))
    return op


def test_op_view_reads_api_params_and_operands():
    model = model_of(CURRENT)
    act = _only_op(model, "nki.isa.activation")
    assert (act.api, act.module, act.short, act.label) == ("nki.isa.activation", "nki.isa", "activation",
                                                            "nisa.activation")
    assert act.kernel is not None and act.kernel.name == "kernel"
    assert act.info is not None and act.info.engine == "scalar"
    assert set(act.params) >= {"dst", "op", "data", "scale"}
    by_param = {o.param: o for o in act.operands()}
    assert not by_param["data"].written and by_param["dst"].written
    data = by_param["data"]
    assert isinstance(data.node, views.View)
    assert data.node.label == "t[32:96, :]"
    assert const_int(data.node.partition_size) == 64
    assert const_int(data.node.partition_start) == 32
    assert data.base.name == "t" and data.base.origin == "alloc" and data.base.api == "nki.language.ndarray"
    assert data.node.dtype == "bfloat16" and data.node.on_chip and data.node.shape_trusted
    # prefix filter and model-wide tensors
    assert [op.short for op in views.ops(model, prefix="nki.isa.dma")] == ["dma_copy", "dma_copy"]
    names = {t.name for t in views.tensors(model, buffers=("sbuf",), origins=("alloc",))}
    assert names == {"t", "r"}


def test_operand_buffer_depends_on_the_kernel_role():
    model = model_of(CURRENT)
    (kernel,) = model.kernels
    # a current-API @nki.jit function may be called with on-chip tiles
    assert views.kernel_role(model, kernel) == "maybe"
    copy = next(views.ops(model, apis=("nki.isa.dma_copy",)))
    src = next(o for o in copy.operands(views.kernel_role(model, kernel)) if o.param == "src")
    assert src.buffer in ("hbm", "shared_hbm") and src.assumed
    # the same operand read as a sub-kernel's: its memory is the caller's business
    assert next(o for o in copy.operands("sub") if o.param == "src").buffer == "unknown"
    # the legacy API: a decorated kernel is top-level
    legacy = model_of(LEGACY)
    assert views.kernel_role(legacy, legacy.kernels[0]) == "top"


def test_a_parameter_is_a_tensor_only_with_evidence():
    model = model_of("""
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl
        import neuronxcc.nki.isa as nisa

        @nki.jit
        def kernel(a, bias, gain):
            out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
            t = nl.load(a[0:128, 0:1])
            g = nl.load(gain[0:128, 0:1])
            r = nisa.activation(op=nl.exp, data=t, bias=bias[0:128, 0:1], scale=gain[0:128, 0:1])
            nl.store(out, value=r)
            return out
    """)
    act = _only_op(model, "nki.isa.activation")
    by_param = {o.param: o for o in act.operands("top")}
    # `bias` is only ever subscripted (the model also views tuples that way): not relied on
    assert by_param["bias"].base.origin == "param" and by_param["bias"].buffer == "unknown"
    # `gain` is also loaded from: a tensor, in HBM for a top-level kernel
    assert by_param["scale"].buffer != "unknown" and not by_param["scale"].assumed
    assert by_param["data"].buffer == "sbuf"


def test_shapes_sized_by_broadcasting_are_not_trusted_nor_what_follows_from_them():
    model = model_of(LEGACY)
    graph = model.kernels[0].graph
    by_name = {t.name: t for t in views.tensors(model, origins=("result",))}
    assert by_name["x"].shape_trusted
    assert not by_name["y"].shape_trusted  # nl.broadcast_to's result
    assert not by_name["s"].shape_trusted  # sized from y
    assert by_name["z"].shape_trusted
    # memoized per graph: asking again, or in another order, gives the same answers
    assert [views.shape_trusted(graph, by_name[n].id) for n in ("z", "s", "y", "x")] == [True, False, False, True]


def test_in_place_updates_do_not_blow_up_the_trusted_shape_walk():
    updates = "\n".join(["    nisa.tensor_tensor(dst=t, data1=t, data2=t, op=nl.add)"] * 30)
    model = model_of(
        "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n\n"
        "@nki.jit\ndef kernel(a):\n"
        "    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)\n"
        "    t = nl.load(a[0:128, 0:512])\n" + updates + "\n    nl.store(out, value=t)\n    return out\n"
    )
    (t,) = [t for t in views.tensors(model, origins=("result",)) if t.name == "t"]
    assert t.shape_trusted
    memo = t.graph.memo["views.shape_trusted"]
    # at most one entry per (node, depth): linear in the graph, not in the number of paths
    assert len(memo) <= 9 * t.graph.g.number_of_nodes()


def test_partition_start_is_unknown_for_placed_tensors_and_reshapes():
    model = model_of("""
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a):
            out = nl.ndarray((32, 512), dtype=nl.float32, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t[nl.ds(64, 32), :], src=a[0:32, :])
            nisa.dma_copy(dst=out, src=t.reshape((256, 256))[0:32, 0:512])
            return out
    """)
    first, second = views.ops(model, apis=("nki.isa.dma_copy",))
    dst = next(o for o in first.operands() if o.param == "dst")
    assert const_int(dst.node.partition_start) == 64
    src = next(o for o in second.operands() if o.param == "src")
    assert src.node.partition_start is None  # through a reshape
    assert src.node.shape_trusted  # the new shape is written out at the call


def test_one_classification_per_api():
    assert all(api.is_matmul(name) for name in api.MATMUL_APIS)
    assert all(api.is_transpose(name) for name in api.TRANSPOSE_APIS)
    assert not api.is_matmul("nki.isa.nc_transpose") and not api.is_transpose("nki.isa.dma_transpose")
    assert api.is_dma("nki.isa.dma_transpose") and api.is_dma("nki.language.load")
    assert not api.is_dma("nki.isa.activation") and not api.is_matmul("")
    # the DMAs whose endpoints are tensors are DMAs
    assert all(api.is_dma(name) for name in api.DMA_ENDPOINT_APIS)
    assert "in_" in api.TENSOR_OPERAND_PARAMS and "x" not in api.TENSOR_OPERAND_PARAMS


def test_loop_trip_counts_remember_a_ceiling_division():
    from nkilint.model.values import ceil_div_parts

    model = model_of("""
        import math
        import nki
        import nki.language as nl
        import nki.isa as nisa

        def div_ceil(n, d):
            return (n + d - 1) // d

        @nki.jit
        def kernel(x):
            n, d = x.shape
            out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
            for a in range(math.ceil(n / 128)):
                pass
            for b in range((n + 127) // 128):
                pass
            for c in range(div_ceil(n, 512)):
                pass
            for e in range(n // 128):
                pass
            for f in range((n + 128) // 128):
                pass
            for g in range(1, math.ceil(n / 128)):
                pass
            return out
    """)
    (kernel, graph), = model.graphs()
    n = next(d for _, d in graph.tensors() if d.get("name") == "x")["shape_v"][0]
    parts = {d["iterator"]: ceil_div_parts(d["trip_v"]) for _, d in graph.loops()}
    assert parts["a"][1] == 128 and parts["b"][1] == 128 and parts["c"][1] == 512
    from nkilint.model.values import same_int
    assert all(same_int(parts[k][0], n) for k in "abc")
    # A floor division, (n + d) // d and a loop not starting at 0 are not the tile count.
    assert parts["e"] is None and parts["f"] is None and parts["g"] is None


def test_str_of_a_known_dtype_decides_an_element_size_test():
    # nki-library's sizeinbytes(dtype) compares str(dtype) with str(nl.<dtype>):
    # with the dtype known, the branch is decided (its text stays unknown).
    model = model_of("""
        import nki
        import nki.language as nl

        def sizeinbytes(dtype):
            if str(dtype) == str(nl.float32):
                return 4
            elif str(dtype) == str(nl.bfloat16):
                return 2
            return 1

        def is_named_float32(dtype):
            return str(dtype) == "float32"

        @nki.jit
        def kernel(x):
            out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            w = nl.ndarray((128, 512 * sizeinbytes(t.dtype)), dtype=nl.bfloat16, buffer=nl.sbuf)
            u = nl.ndarray((128, 512 * sizeinbytes(x.dtype)), dtype=nl.bfloat16, buffer=nl.sbuf)
            v = nl.ndarray((128, 1 + is_named_float32(t.dtype)), dtype=nl.bfloat16, buffer=nl.sbuf)
            return out
    """)
    (kernel, graph), = model.graphs()
    shapes = {d.get("name"): d.get("shape_v") for _, d in graph.tensors()}
    assert const_int(shapes["w"][1]) == 1024
    assert const_int(shapes["u"][1]) is None  # the parameter's dtype is unknown
    assert const_int(shapes["v"][1]) is None  # the text of str(dtype) differs between generations


def test_a_parameter_annotated_as_a_tensor_holds_one_for_every_rule():
    import ast

    from nkilint.model.exprs import ExprFacts, Holds

    model = model_of("""
        from typing import Optional
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl
        from neuronxcc.nki.typing import tensor

        @nki.jit
        def kernel(a, b: Optional[tensor] = None, c: "tensor | None" = None, flag: bool = False):
            out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(a))
            return out
    """)
    exprs = model.analysis(ExprFacts)
    fn = next(n for n in ast.walk(model.module.tree) if isinstance(n, ast.FunctionDef))
    name = lambda n: ast.Name(id=n, ctx=ast.Load())  # noqa: E731
    assert exprs.holds(fn, name("b")) is Holds.PARAM and exprs.param_declared_tensor(fn, "b")
    assert exprs.holds(fn, name("a")) is Holds.PARAM and not exprs.param_declared_tensor(fn, "a")  # used as one
    assert exprs.holds(fn, name("flag")) is None and exprs.holds(fn, name("c")) is None  # a string annotation: not read
