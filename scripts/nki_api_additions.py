"""The NKI API of Neuron SDK 2.33 (NKI 0.7) and 2.34 (NKI 0.8), as changes to
the release before, for scripts/build_api_table.py.

The shared table (generated from the aws-neuron-sdk API stubs) stops at
2.32.0: no stubs of 2.33 or 2.34 were available. These entries come from
the readthedocs API pages and deep-dives
(https://awsdocs-neuron.readthedocs-hosted.com, ``/en/v2.33.1/`` for 0.7
where the page exists, ``/en/latest/`` for 0.8), so every added function
records ``signature_source``: ``rst`` (the signature line of its API page)
or ``prose`` (a parameter named only in a deep-dive), and ``doc`` (the
page). Only what changed is listed; everything else is carried over from
the previous release.

Known gaps: signature details that changed on unchanged APIs between the
2.32 stubs and the 2.33/2.34 pages are not re-read (for example the 2.33
``nisa.tensor_scalar`` page shows ``engine=engine.unknown``); enums whose
members the pages do not list completely carry no members, so their
members are not judged.
"""

from __future__ import annotations

RTD = "https://awsdocs-neuron.readthedocs-hosted.com/en"
_NO = object()


def p(name: str, default: object = _NO, kind: str = "positional_or_keyword") -> dict:
    return {"name": name, "kind": kind, "default": None if default is _NO else default, "required": default is _NO}


def k(name: str, default: object = _NO) -> dict:
    return p(name, default, "keyword_only")


def star(name: str) -> dict:
    return {"name": name, "kind": "var_positional", "default": None, "required": False}


def kwargs(name: str = "kwargs") -> dict:
    return {"name": name, "kind": "var_keyword", "default": None, "required": False}


def fn(*params: dict, doc: str, source: str = "rst", **flags) -> dict:
    out = {"params": list(params), "returns": None, "signature_source": source, "doc": doc}
    out.update(flags)
    return out


def api(version: str, name: str) -> str:
    return f"{RTD}/{version}/nki/api/generated/{name}.html"


def cls(*attributes: str, kind: str = "class", init: dict | None = None) -> dict:
    out = {"kind": kind, "bases": [], "attributes": sorted(attributes), "methods": ["__init__"] if init else []}
    if init:
        out["method_signatures"] = {"__init__": init}
    return out


_GRID_ATTRS = ("buffer", "data", "dtype", "element_shape", "index_step_elements", "is_data_representable",
               "is_remainder", "shape", "tile_shape")
_COMPILE_CONFIG_07 = ("address_rotation", "barrier_check", "dead_code_elim", "nki_alloc_fallback",
                      "non_ssa_legalization", "prefetch_auto")
_COMPILE_CONFIG_08 = _COMPILE_CONFIG_07 + (
    "allocation", "scheduling", "experimental_allocation_mode", "experimental_scheduling_heuristic", "opt_level",
    "split_reused_buffers", "tensor_copy_elim", "dma_copy_elim", "element_widening", "engine_balancing",
    "register_load_reuse", "remove_unused_instructions", "remove_overwritten_writes", "sbuf_allocation_fallback",
)
_PREPARE = (p("srcs"), p("dsts"), p("replica_group"), p("metadata_tensor"), p("recv_counts_known", "False"),
            p("has_rdispls", "False"), p("priority", "None"), p("name", "None"))
_EOS_08 = f"{RTD}/latest/about-neuron/announcements/neuron2.x/announce-intent-eos-nki-virtualregister-lnc-apis.html"
_MIGRATION_07 = f"{RTD}/v2.33.1/nki/migration/index.html"

RELEASES = [
    {
        "sdk": "2.33.0",
        "sdk_aliases": ["2.33.1"],
        "base": "2.32.0",
        "nki": "0.7.0",
        "nki_label": "0.7.0",
        "namespace": "nki",
        "source": f"{RTD}/v2.33.1/release-notes/components/nki.html",
        "functions": {
            "nki": {
                "jit": fn(p("fn", "None"), k("compile_config", "None"), k("specialization_config", "None"), kwargs(),
                          doc=api("v2.33.1", "nki.jit")),
            },
            "nki.isa": {
                "scalar_load": fn(p("src"), doc=api("latest", "nki.isa.scalar_load")),
                "scalar_store": fn(p("dst"), p("value"), doc=api("latest", "nki.isa.scalar_store")),
                "sendrecv_compute": fn(p("src"), p("dst"), p("send_to_rank"), p("recv_from_rank"), p("reduce_op"),
                                       p("name", "None"), doc=api("latest", "nki.isa.sendrecv_compute")),
            },
            "nki.language": {
                "tiles": fn(p("source"), k("tile_shape", "None"), doc=api("latest", "nki.language.tiles")),
                "blocks": fn(p("source"), k("tile_shape", "None"), k("block_shape"),
                             doc=api("latest", "nki.language.blocks")),
                "alloc_tiles": fn(k("tile_shape"), k("element_shape"), k("buffer"), k("dtype"), k("address", "None"),
                                  k("name", "''"), doc=api("latest", "nki.language.alloc_tiles")),
                "alloc_blocks": fn(k("tile_shape"), k("block_shape"), k("element_shape"), k("buffer"), k("dtype"),
                                   k("address", "None"), k("name", "''"), doc=api("latest", "nki.language.alloc_blocks")),
            },
            "nki.collectives": {
                "all_to_all_v_prepare": fn(*_PREPARE, doc=api("latest", "nki.collectives.all_to_all_v_prepare")),
                "all_to_all_v_trigger": fn(p("prepare_instr"), p("name", "None"),
                                           doc=api("latest", "nki.collectives.all_to_all_v_trigger")),
                "all_gather_v_prepare": fn(*_PREPARE, doc=api("latest", "nki.collectives.all_gather_v_prepare")),
                "all_gather_v_trigger": fn(p("prepare_instr"), p("name", "None"),
                                           doc=api("latest", "nki.collectives.all_gather_v_trigger")),
            },
        },
        # nl.int64 is no stub constant before 2.33; the 0.7 scalar pages name
        # it as a scalar_load dtype (NkiScalar, scalar_alu, fori_loop pages).
        "constants": {"nki.language": ["int64"]},
        "classes": {
            "nki.isa": {
                "NkiScalar": cls("dtype", init=fn(p("state"), p("dtype", "None"), p("is_comparison", "False"),
                                                   doc=api("latest", "nki.isa.NkiScalar"))),
            },
            "nki.language": {
                "NkiGrid": cls(*_GRID_ATTRS),
                "NkiTileGrid": cls(*_GRID_ATTRS),
                "NkiBlockGrid": cls(*_GRID_ATTRS, "block_shape"),
            },
        },
        "new_modules": {
            "nki.compiler": {
                "source": f"{RTD}/v2.33.1/_modules/nki/compiler.html",
                "signature_source": "rst",
                "functions": {},
                "constants": [],
                "classes": {
                    "CompileConfig": cls(*_COMPILE_CONFIG_07),
                    "SpecializationConfig": cls("allow_nested_config_override"),
                    "AddressRotation": cls(kind="enum"),
                },
            },
        },
    },
    {
        "sdk": "2.34.0",
        "sdk_aliases": [],
        "base": "2.33.0",
        "nki": "0.8.0",
        "nki_label": "0.8.0",
        "namespace": "nki",
        "source": f"{RTD}/latest/release-notes/2.34.0.html",
        "functions": {
            "nki": {
                "execute": fn(p("kernel"), star("args"), kwargs(), doc=api("latest", "nki.execute")),
                "multi_rank_execute": fn(p("kernel"), k("world_size"), k("per_rank_inputs"),
                                         doc=api("latest", "nki.multi_rank_execute")),
                "multi_rank_simulate": fn(p("kernel"), k("world_size"), k("per_rank_inputs"),
                                          doc=api("latest", "nki.multi_rank_simulate")),
            },
            "nki.language": {
                "if_else": fn(p("cond"), p("then_fn"), p("else_fn", "None"), doc=api("latest", "nki.language.if_else")),
                "fori_loop": fn(p("lower"), p("upper"), p("body_fun"), p("step", "1"), p("unroll", "False"),
                                source="prose", doc=f"{RTD}/latest/nki/deep-dives/nki-control-flow.html"),
            },
        },
        "flags": {
            "nki.isa": {
                "sendrecv": {"deprecated": True, "deprecated_since_nki": "0.8.0", "replacement": "nki.lnc.sendrecv"},
                "sendrecv_compute": {"deprecated": True, "deprecated_since_nki": "0.8.0",
                                     "replacement": "nki.lnc.sendrecv_compute"},
                "core_barrier": {"deprecated": True, "deprecated_since_nki": "0.8.0",
                                 "replacement": "nki.lnc.core_barrier"},
                "register_alloc": {"deprecated": True, "deprecated_since_nki": "0.8.0",
                                   "replacement": "nki.isa.scalar_load"},
                "register_load": {"deprecated": True, "deprecated_since_nki": "0.8.0",
                                  "replacement": "nki.isa.scalar_load"},
                "register_store": {"deprecated": True, "deprecated_since_nki": "0.8.0",
                                   "replacement": "nki.isa.scalar_store"},
                "register_move": {"deprecated": True, "deprecated_since_nki": "0.8.0"},
            },
        },
        "classes": {
            "nki.compiler": {
                "CompileConfig": cls(*_COMPILE_CONFIG_08),
                "Allocation": cls(kind="enum"),
                "AllocationMode": cls(kind="enum"),
                "SchedulingHeuristic": cls(kind="enum"),
                "OptLevel": cls(kind="enum"),
            },
        },
        "new_modules": {
            "nki.lnc": {
                "source": f"{RTD}/latest/nki/api/nki.lnc.html",
                "signature_source": "rst",
                "functions": {
                    "sendrecv": fn(p("src"), p("dst"), p("send_to_rank"), p("recv_from_rank"),
                                   p("dma_engine", "dma_engine.dma"), p("name", "None"), p("priority", "None"),
                                   doc=api("latest", "nki.lnc.sendrecv")),
                    "sendrecv_compute": fn(p("src"), p("dst"), p("send_to_rank"), p("recv_from_rank"), p("reduce_op"),
                                           p("name", "None"), p("priority", "None"),
                                           doc=api("latest", "nki.lnc.sendrecv_compute")),
                    "core_barrier": fn(p("data"), p("cores"), p("engine", "engine.gpsimd"), p("name", "None"),
                                       doc=api("latest", "nki.lnc.core_barrier")),
                },
                "constants": [],
                "classes": {},
            },
        },
    },
]


def change(api_name: str, kind: str, sdk: str, severity: str, note: str, source: str, param: str | None = None,
           replacement: str | None = None) -> dict:
    nki = {"2.33.0": "0.7.0", "2.34.0": "0.8.0"}[sdk]
    out = {"api": api_name, "change": kind, "since_sdk": sdk, "since_nki": nki, "severity": severity, "note": note,
           "source": source, "origin": "docs"}
    if param is not None:
        out["param"] = param
    if replacement is not None:
        out["replacement"] = replacement
    return out


CHANGES = [
    change("syntax:dynamic-range-loop", "removed", "2.33.0", "error",
           "for-loops over nl.dynamic_range fail under the tracing frontend (TypeError); NKI_COMPILER_FRONTEND=custom "
           "keeps them working in 2.33 only", _MIGRATION_07, replacement="nki.language.fori_loop"),
    change("syntax:while-on-register", "removed", "2.33.0", "error",
           "a bare `while reg:` fails under the tracing frontend (TypeError)", _MIGRATION_07,
           replacement="nki.language.while_loop"),
    change("syntax:register-python-value", "behavior", "2.33.0", "error",
           "Python truthiness, int() or range() of a register or scalar raises TypeError under the tracer",
           "sdk:nki/api/nki/isa/__init__.py@v2.32.0 (VirtualRegister note)"),
    change("syntax:spmd-grid-for-lnc2-launch", "behavior", "2.33.0", "error",
           "a kernel LNC degree different from the compiler's is compile error NCC_EVRF066", _MIGRATION_07),
    change("syntax:jit-on-subkernel", "behavior", "2.33.0", "info",
           "@nki.jit kernels called from a kernel are inlined; a different compile config on the nested kernel is an "
           "NkiValidationError unless SpecializationConfig(allow_nested_config_override=True)",
           api("v2.33.1", "nki.compiler.SpecializationConfig")),
    change("nki.compiler", "behavior", "2.33.0", "info",
           "the name nki.compiler now means per-kernel configuration (CompileConfig), unrelated to the legacy "
           "neuronxcc.nki.compiler allocation module", f"{RTD}/v2.33.1/nki/api/nki.compiler.html"),
    change("nki.jit", "signature", "2.33.0", "info", "keyword-only compile_config and specialization_config",
           api("v2.33.1", "nki.jit")),
    change("env:NKI_COMPILER_FRONTEND", "deprecated", "2.33.0", "warning",
           "NKI_COMPILER_FRONTEND=custom selects the deprecated parser frontend",
           f"{RTD}/latest/about-neuron/announcements/neuron2.x/announce-nki-specialization-change.html"),
    change("neuronxcc.nki", "removed", "2.34.0", "error",
           "announced: neuronx-cc no longer ships the namespace, importing it is an ImportError",
           f"{RTD}/latest/about-neuron/announcements/neuron2.x/announce-removal-neuronxcc-nki-2-34.html",
           replacement="nki"),
    change("env:NKI_COMPILER_FRONTEND", "removed", "2.34.0", "error",
           "announced: the parser frontend is removed in the release after 2.33",
           f"{RTD}/latest/about-neuron/announcements/neuron2.x/announce-nki-specialization-change.html"),
    change("nki.isa.sendrecv", "deprecated", "2.34.0", "warning",
           "DeprecationWarning; moved to nki.lnc, where it has no pipe_id (ignored since 0.8)", _EOS_08,
           replacement="nki.lnc.sendrecv"),
    change("nki.isa.sendrecv_compute", "deprecated", "2.34.0", "warning", "DeprecationWarning; moved to nki.lnc",
           _EOS_08, replacement="nki.lnc.sendrecv_compute"),
    change("nki.isa.core_barrier", "deprecated", "2.34.0", "warning", "DeprecationWarning; moved to nki.lnc", _EOS_08,
           replacement="nki.lnc.core_barrier"),
    change("nki.isa.register_alloc", "deprecated", "2.34.0", "warning",
           "DeprecationWarning; no direct equivalent: nisa.memset a 1x1 int32 tile, then nisa.scalar_load", _EOS_08,
           replacement="nki.isa.scalar_load"),
    change("nki.isa.register_load", "deprecated", "2.34.0", "warning", "DeprecationWarning", _EOS_08,
           replacement="nki.isa.scalar_load"),
    change("nki.isa.register_store", "deprecated", "2.34.0", "warning", "DeprecationWarning", _EOS_08,
           replacement="nki.isa.scalar_store"),
    change("nki.isa.register_move", "deprecated", "2.34.0", "warning",
           "DeprecationWarning; scalars are values: assign the NkiScalar", _EOS_08),
    change("nki.isa.VirtualRegister", "deprecated", "2.34.0", "warning", "DeprecationWarning", _EOS_08,
           replacement="nki.isa.NkiScalar"),
    change("nki.isa.local_gather", "behavior", "2.34.0", "warning",
           "without num_valid_indices the result is undefined and NKI warns; the default will become "
           "dst_free_size / num_elem_per_idx", _EOS_08, param="num_valid_indices"),
    change("nki.isa.tensor_tensor", "behavior", "2.34.0", "warning",
           "a future release rejects engine=gpsimd with a bitvec operator", _EOS_08, param="engine"),
    change("nki.isa.tensor_scalar", "behavior", "2.34.0", "warning",
           "a future release rejects engine=scalar or gpsimd with a bitvec operator", _EOS_08, param="engine"),
    change("nki.language.fori_loop", "signature", "2.34.0", "info", "unroll=True traces the body once and unrolls it "
           "at compile time (compile-time bounds)", f"{RTD}/latest/nki/deep-dives/nki-control-flow.html",
           param="unroll"),
]
