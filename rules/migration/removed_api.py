"""NKI603 removed-api."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.model.bindings import Gen
from nkilint.releases import Status
from nkilint.rule import invalid, valid
from nkilint.versions import V0_2, NkiVersion

from nkilint.model import api_history as api
from ._base import API_TABLE, MIGRATION_GUIDE, RELEASE_NOTES, Issues, MigrationRule, first_missing_version, short
from ._index import LEVEL_OF, NameIndex
from ._names import NameFact, NameFacts


class RemovedApi(MigrationRule):
    id = "NKI603"
    name = "removed-api"
    family = "migration"
    level = Level.ERROR
    summary = "An NKI API the target version removed (legacy-only APIs, nl.arange/mgrid/par_dim, baremetal, nki_jit, ...)"
    explanation = """
The API table (the stubs of every Neuron SDK release from 2.20 to 2.34)
says in which NKI versions each name exists. A name that an earlier
version documented and the target does not is reported with the version
that removed it and its replacement. The main groups:

* indexing: `nl.arange`, `nl.mgrid` (0.2) -> integer slices, `nl.ds`,
  `.ap()`; block dimensions `nl.par_dim` (0.2; an error in the legacy API
  itself from SDK 2.25) -> fold them into the free dims or use lists of tiles;
* `nl.load`, `nl.store` and the `nl` compute wrappers in NKI 0.2 (they return,
  experimental, in 0.3; in 0.2 the element-wise names are only `op=` values
  and calling them is an error);
* legacy-only `nl` APIs (`atomic_rmw`, `loop_reduce`, `all_reduce`,
  `static_cast`, `gemm_grid`, `spmd_dim`, `nl.nc`), `nisa.builtin_custom_op`;
* launchers and tools: `nki.baremetal`, `nki.benchmark`, `nki.profile`,
  `nki.simulate_kernel`, `nki.trace` (0.2), `torch_neuronx.nki_jit` (SDK
  2.24; a warning at 2.23, which deprecated it), `jax_neuronx.nki_call`
  (SDK 2.23; a warning at 2.22);
* the `nki.compiler` allocation API (`sbuf.alloc`, `mod_alloc`,
  `psum.*`, `skip_middle_end_transformations`, ...) (0.2) -> `address=`;
* `nisa.tensor_copy_dynamic_src/dst` (deprecated 0.3, removed 0.4) ->
  `nisa.tensor_copy` with `.ap(scalar_offset=...)`.

Level: an error in `nki.*` code; in a legacy file, a note while the
target still compiles legacy kernels (0.2, 0.3) and an error from 0.4.
Names reported here are never reported as unknown (NKI614). A use under
a presence test of the name (`if hasattr(nl, "spmd_dim"): ...`, the `else`
of `if not hasattr(...)`, the rest of a block after `if not hasattr(...):
return`, `getattr(nl, "name", None)` tests, `and`/`or` chains) is not
reported: it never runs on a release without the name.

**Fix:** use the replacement the message names; none of these is a rename,
so there is no automatic fix.
"""
    references = (MIGRATION_GUIDE, f"{RELEASE_NOTES} (2.27-2.30)", API_TABLE,
                  "aws-neuron-sdk about-neuron/announcements/neuron2.x/announce-no-support-nki-jit-torch.rst")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                t = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8, 9],
            title="legacy indexing in nki.* code (NKI 0.6)",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def tanh_kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                ix = nl.arange(128)[:, None]
                iy = nl.arange(512)[None, :]
                t = nl.load(a[ix, iy])
                nl.store(out[ix, iy], value=nl.tanh(t))
                return out
            """,
            lines=[7, 8, 9, 10],
            title="legacy kernel, target NKI 0.2: arange is gone, and nl.load/nl.store/nl.tanh cannot be called in "
                  "0.2 (port-list notes: 0.2 still compiles legacy kernels)",
            nki_version="0.2",
            level=Level.NOTE,
        ),
        invalid(
            """
            from torch_neuronx import nki_jit
            import neuronxcc.nki.language as nl

            @nki_jit
            def kernel(a):
                return nl.load(a)
            """,
            lines=[1],
            title="torch_neuronx.nki_jit is unsupported since SDK 2.24, even for the legacy API",
            nki_version="0.1",
        ),
        invalid(
            """
            from torch_neuronx import nki_jit
            import neuronxcc.nki.language as nl

            @nki_jit
            def kernel(a):
                return nl.load(a)
            """,
            lines=[1],
            title="SDK 2.23 deprecated torch_neuronx.nki_jit (a warning; 2.24 removed it)",
            sdk="2.23",
            level=Level.WARNING,
        ),
        valid(
            """
            from torch_neuronx import nki_jit
            import neuronxcc.nki.language as nl

            @nki_jit
            def kernel(a):
                return nl.load(a)
            """,
            title="SDK 2.22 still supports torch_neuronx.nki_jit",
            sdk="2.22",
        ),
        invalid(
            """
            import nki
            import nki.isa as nisa

            def gather(dst, src, reg):
                nisa.tensor_copy_dynamic_src(dst=dst, src=src, src_offset=reg)
            """,
            lines=[5],
            nki_version="0.4",
        ),
        invalid(
            """
            import nki.language as nl

            def launch_grid(n):
                if hasattr(nl, "spmd_dim"):
                    return (nl.spmd_dim(n, nl.nc(2)),)
                if not hasattr(nl, "nc"):
                    print("no nl.nc")
                return (n, nl.nc(2))
            """,
            lines=[5, 8],
            title="a test of another name, or a branch that does not leave, guards nothing",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                ix = nl.arange(128)[:, None]
                nl.store(out[ix, 0:512], value=nl.load(a[ix, 0:512]))
                return out
            """,
            title="legacy code targeting the legacy API",
            nki_version="0.1",
        ),
        valid(
            """
            import nki.language as nl

            def launch_grid(n):
                if hasattr(nl, "spmd_dim") and hasattr(nl, "nc"):
                    return (nl.spmd_dim(n, nl.nc(2)),)
                return (n,)

            def launch_grid_or_fail(n):
                if not hasattr(nl, "spmd_dim") or not hasattr(nl, "nc"):
                    raise ValueError("this NKI release has no spmd_dim")
                return (nl.spmd_dim(n, nl.nc(2)),)

            def launch_grid_getattr(n):
                spmd = nl.spmd_dim if getattr(nl, "spmd_dim", None) is not None else None
                return spmd
            """,
            title="uses guarded by a presence test never run on a release without the name",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a[0:128, nl.ds(0, 512)])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
        ),
    )

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:
        facts = index.model.analysis(NameFacts)
        for f in facts.of_kind("framework-removed", "doc-only-call", "gone"):
            if f.kind == "framework-removed":
                if "xla_impl" in f.text:
                    # The internal torch_neuronx.xla_impl.ops.nki_jit still ships
                    # (NxDI uses it at SDK 2.31); only the public alias was removed.
                    continue
                fact_id = "torch-nki-jit" if f.name.startswith("torch") else "jax-nki-call"
                status = index.fact_status(fact_id)
                level = LEVEL_OF[status.status]
                if level is None:
                    continue  # the target release still supports it
                removed = next(step for step in status.fact.steps if step.status is Status.ERROR)
                if level is Level.ERROR:
                    message = (f"{f.text} is unsupported since Neuron SDK {removed.since} (before NKI 0.1 was frozen); "
                               f"the target is NKI {index.version}")
                else:
                    message = (f"{f.text} is deprecated since Neuron SDK {status.since.minor} and unsupported from "
                               f"{removed.since}; the target is {index.release.label}")
                out.add(f.node, level, message, hint=REMOVED_HINTS[f.name], gen=f.gen)
            elif f.kind == "doc-only-call":
                cls._doc_only_call(index, out, f)
            elif f.status.earlier and not _legacy_compiler_in_host_code(index, f):
                cls._gone(index, out, f)

    @staticmethod
    def _doc_only_call(index: NameIndex, out: Issues, f: NameFact) -> None:
        if f.gen is Gen.CURRENT:
            out.add(f.node, index.level(f.gen, f.node),
                    f"{f.text} cannot be called in NKI 0.2: there it names an operator for op= only "
                    "(nisa.activation(op=...), nisa.tensor_tensor(op=...)); the nl.* compute wrappers return in NKI 0.3",
                    hint="call the ISA instruction with op=, e.g. nisa.activation(dst=t, op=nl.exp, data=x)", gen=f.gen)
        elif f.gen is Gen.LEGACY:
            out.add(f.node, index.level(f.gen, f.node),
                    f"{f.text} returns a tile in the legacy API, but NKI 0.2 has no callable nl compute wrappers (only "
                    f"op= values; they return in NKI 0.3){index.port_note(f.gen)}",
                    hint="use the ISA instruction with a destination, e.g. nisa.activation(dst=t, op=nl.exp, data=x)",
                    gen=f.gen)

    @staticmethod
    def _gone(index: NameIndex, out: Issues, f: NameFact) -> None:
        st, v, gen = f.status, f.version, f.gen
        gone = st.name
        shown = f.text if gone == f.name else f"{f.text}: `{short(gone)}`"
        since = first_missing_version(st.earlier, v)
        # From NKI 0.7 the name nki.compiler is a different module (compile
        # configuration): the legacy allocation API never comes back.
        later = () if gone.startswith("nki.compiler") else st.later
        back = f"; it is back in NKI {later[0]}" if later else ""
        if gen is Gen.LEGACY and v >= V0_2:
            message = f"{shown} does not exist in the nki.* API of NKI {v} (removed in NKI {since}{back})"
        else:
            message = f"{shown} was removed in NKI {since}{back}; the target is NKI {v}"
        out.add(f.node, index.level(gen, f.node, device=f.device), message + index.port_note(gen),
                hint=removed_hint(gone, v), gen=gen)


def _legacy_compiler_in_host_code(index: NameIndex, f: NameFact) -> bool:
    """Legacy ``neuronxcc.nki.compiler`` in host code (build scripts, compiler
    internals): not a kernel API, so not a removed one (NKI601 reports the
    namespace itself)."""
    if f.gen is not Gen.LEGACY or not f.name.startswith("nki.compiler"):
        return False
    if f.at_import:
        local = getattr(f.node, "asname", None) or getattr(f.node, "name", None)
        return not any(index.in_device(n) for n in index.loads.get(local or "", ()))
    return not index.in_device(f.node)


# Replacements for removed names, in words (the change records often say
# only "not present in the stubs").
REMOVED_HINTS: dict[str, str] = {
    "nki.language.arange": "index with integer slices (t[0:128, 0:512]), nl.ds(start, size) or tensor.ap(...)",
    "nki.language.mgrid": "index with integer slices (t[0:128, 0:512]), nl.ds(start, size) or tensor.ap(...)",
    "nki.language.par_dim": "drop par_dim: the partition dim is always the first; fold block dims into the free dims "
                            "((P, B, F)) or keep a Python list of tiles",
    "nki.language.load": "nisa.dma_copy(dst=tile, src=hbm_view) into a tile allocated with nl.ndarray (nl.load returns in NKI 0.3)",
    "nki.language.store": "nisa.dma_copy(dst=hbm_view, src=tile) (nl.store returns in NKI 0.3)",
    "nki.language.spmd_dim": "launch with one integer (kernel[2]) and split the work with nl.program_id(0)",
    "nki.language.nc": "launch with one integer (kernel[2]) and split the work with nl.program_id(0)",
    "nki.baremetal": "decorate with @nki.jit and call the kernel with numpy arrays",
    "nki.benchmark": "decorate with @nki.jit; profile with neuron-explorer capture",
    "nki.profile": "decorate with @nki.jit; profile with neuron-explorer capture",
    "nki.simulate_kernel": "nki.simulate(kernel)(*args) (NKI 0.3+) or NKI_SIMULATOR=1",
    "nki.trace": "@nki.jit",
    "nki.compiler": "allocate with nl.ndarray(..., address=(partition_offset, byte_offset)) and drop the allocator decorators",
    "nki.isa.tensor_copy_dynamic_src": "nisa.tensor_copy(dst=..., src=t.ap(pattern, scalar_offset=reg))",
    "nki.isa.tensor_copy_dynamic_dst": "nisa.tensor_copy(dst=t.ap(pattern, scalar_offset=reg), src=...)",
    "nki.language.gather_flattened": "nisa.nc_n_gather (NKI 0.2); nl.gather_flattened returns as a wrapper in NKI 0.3",
    "nki.language.atomic_rmw": "nisa.dma_compute(dst, [src, dst], reduce_op=nl.add)",
    "nki.language.loop_reduce": "an explicit loop with nisa.tensor_tensor into an accumulator tile",
    "nki.language.all_reduce": "the nki.collectives API",
    "nki.language.static_cast": "pass the dtype to the allocation or use nisa.tensor_copy into a tile of the new dtype",
    "nki.isa.builtin_custom_op": "no replacement in nki.*",
    "nki.typing.mutable_tensor": "plain parameters: outputs are allocated in the kernel (nl.shared_hbm) and returned",
    "torch_neuronx.nki_jit": "decorate the kernel with @nki.jit and call it directly",
    "jax_neuronx.nki_call": "decorate the kernel with @nki.jit and call it directly",
}
_AS_IS = ("no ", "drop", "decorate", "index", "launch", "pass", "plain", "an ", "allocate")


def removed_hint(name: str, version: NkiVersion) -> str | None:
    if name in REMOVED_HINTS:
        hint = REMOVED_HINTS[name]
        return hint if hint.startswith(_AS_IS) else "use " + hint
    for prefix, hint in REMOVED_HINTS.items():
        if name.startswith(prefix + "."):
            return hint
    repl = api.replacement_of(name, version)
    if repl:
        return f"use {short(repl)}"
    return None
