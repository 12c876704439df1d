"""NKI725 allocated-kernel-restriction: legacy direct allocation: an activation without bias, or a TensorE transpose."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.api_semantics import ACTIVATIONS
from nkilint.model.graph import KernelGraph
from nkilint.model.kernels import module_aliases, resolve_decorator
from nkilint.model.semantic import FileModel, Kernel
from nkilint.model.values import ApiRef, truth
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC


class AllocatedKernelRestriction(Rule):
    id = "NKI725"
    name = "allocated-kernel-restriction"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy direct allocation: an activation without a bias tensor, or a transpose on TensorE"
    explanation = f"""
Finds, in legacy kernels that place their tensors themselves, an
activation without an explicit `bias` tensor and a transpose on TensorE.
nkilint treats a kernel as allocated when every SBUF/PSUM allocation it
makes is placed by hand (`buffer=ncc.sbuf.mod_alloc(...)`,
`ncc.psum.alloc(...)`) and it is not decorated with
`nki.compiler.enable_stack_allocator` or `force_auto_alloc`.

**Why on Trainium:** such "allocated NKI kernels"
(`general/nki/nki_direct_allocation_guide.rst` @0521004c) cannot rely on
tensors the compiler would create for them. The frontend rejects:

* an activation without an explicit `bias` tensor — `nisa.activation(...)`
  without `bias=`, or an `nl` function that maps to the activation
  instruction such as `nl.exp` (`err_bias_tensor_must_be_specified_in_allocation`);
* a transpose on TensorE: `nisa.nc_transpose` without
  `engine=nisa.vector_engine`, or `nl.matmul` without `transpose_x=True`
  (`err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel`)

({ERRORS_DOC}). (Allocated SBUF/PSUM tensors created with an initial value,
`err_tensor_creation_on_scratchpad_with_init_value_not_supported`, are
reported by the memory family, NKI215.)

**Fix:** allocate a bias tile (zeros via `nisa.memset` into an allocated
tensor) and pass it explicitly; transpose with your own identity matrix and
`nisa.nc_matmul`, or on VectorE for tiles up to 32x32.
"""
    references = (
        f"{ERRORS_DOC} (err_bias_tensor_must_be_specified_in_allocation, "
        f"err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel)",
        "aws-neuron-sdk general/nki/nki_direct_allocation_guide.rst @0521004c",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa
            import neuronxcc.nki.compiler as ncc
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def allocated_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                data = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=0))
                data[...] = nl.load(x)
                exp = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=4096))
                exp[...] = nisa.activation(op=nl.exp, data=data[...])
                tp = nl.ndarray((par_dim(128), 128), dtype=nl.bfloat16, buffer=ncc.psum.mod_alloc(base_bank=0))
                tp[...] = nisa.nc_transpose(data[:, 0:128])
                nl.store(out, value=exp)
                return out
            """,
            lines=[13, 15],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa
            import neuronxcc.nki.compiler as ncc
            from neuronxcc.nki.language import par_dim

            @nki.jit
            def allocated_exp(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                data = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=0))
                data[...] = nl.load(x)
                bias = nl.ndarray((par_dim(128), 1), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=2048))
                bias[...] = nisa.memset((128, 1), 0.0, dtype=nl.float32)
                exp = nl.ndarray((par_dim(128), 512), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=4096))
                exp[...] = nisa.activation(op=nl.exp, data=data[...], bias=bias)
                tp = nl.ndarray((par_dim(32), 32), dtype=nl.bfloat16, buffer=ncc.sbuf.mod_alloc(base_addr=8192))
                tp[...] = nisa.nc_transpose(data[0:32, 0:32], engine=nisa.vector_engine)
                nl.store(out, value=exp)
                return out
            """,
        ),
    )

    _NL_ACTIVATIONS = {"exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_apprx_tanh", "silu", "softplus", "mish",
                       "erf", "sqrt", "rsqrt"}

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel, graph in ctx.model.graphs():
            if not _fully_allocated(ctx.model, kernel, graph):
                continue
            for op_id, op in graph.ops():
                api = str(op.get("api") or "")
                short = api.rpartition(".")[2]
                params = op.get("params_v") or {}
                problem = None
                if api in ACTIVATIONS and "bias" not in params:
                    problem = (f"nisa.{short} without a bias tensor in a kernel with explicit allocation "
                               f"(err_bias_tensor_must_be_specified_in_allocation)", "pass bias= an allocated [N, 1] tile")
                elif api.startswith("nki.language.") and short in self._NL_ACTIVATIONS and not op.get("operator"):
                    problem = (f"nl.{short} maps to the activation instruction, which needs an explicit bias tensor in a "
                               f"kernel with explicit allocation (err_bias_tensor_must_be_specified_in_allocation)",
                               "call nisa.activation with bias= an allocated [N, 1] tile")
                elif api == "nki.isa.nc_transpose" and not _vector_engine(params.get("engine")):
                    problem = ("nisa.nc_transpose on TensorE is not allowed in a kernel with explicit allocation "
                               "(err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel)",
                               "transpose with nisa.nc_matmul and an allocated identity, or pass "
                               "engine=nisa.vector_engine (tiles up to 32x32)")
                elif api == "nki.language.matmul" and not _true(params.get("transpose_x")):
                    problem = ("nl.matmul without transpose_x=True inserts a TensorE transpose, which is not allowed in a "
                               "kernel with explicit allocation "
                               "(err_transpose_on_tensor_engine_not_allowed_in_allocated_kernel)",
                               "pass transpose_x=True with a pre-transposed x")
                if problem is not None:
                    reporter.at_site(op.get("site"), problem[0], hint=problem[1], kernel=kernel.name)


def _fully_allocated(model: FileModel, kernel: Kernel, graph: KernelGraph) -> bool:
    """A direct-allocation kernel: every on-chip allocation is placed by
    hand, and no decorator hands allocation back to the compiler."""
    bindings = model.bindings
    aliases = module_aliases(model.module.tree, bindings)
    for deco in getattr(kernel.node, "decorator_list", []):
        name = resolve_decorator(deco, bindings, aliases) or ""
        qual = bindings.resolve(deco.func if isinstance(deco, ast.Call) else deco)
        full = qual.name if qual is not None else name
        if full.endswith(("enable_stack_allocator", "force_auto_alloc")):
            return False
    allocs = [d for _, d in graph.tensors() if d.get("origin") == "alloc" and d.get("buffer") in q.ON_CHIP]
    return bool(allocs) and all(
        type(d.get("address")).__name__ == "_Placement" and getattr(d.get("address"), "how", "") in ("alloc", "mod_alloc")
        for d in allocs)


def _vector_engine(value) -> bool:
    """``engine=nisa.vector_engine`` (or ``vector``)."""
    if isinstance(value, ApiRef):
        return value.qual.name.rpartition(".")[2] in ("vector_engine", "vector")
    return False


def _true(value) -> bool:
    """A parameter value the model knows to be true."""
    return value is not None and truth(value) is True

