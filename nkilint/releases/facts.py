"""What changed when: every versioned NKI fact, by Neuron SDK release.

Rules ask ``FACTS.status("block-dimension", release)`` and get ``allowed``,
``note``, ``warning`` or ``error`` with the step that decided it (the release
it happened in, its source and confidence), instead of comparing versions.
A fact is a timeline of steps; before its first step it has ``before``
(``allowed`` for things that existed, ``error`` for things not yet
introduced).

Confidence tags: D documented in the cited page for that release; A
announced intent, not confirmed by that release's own notes; I inferred
(the note gives the basis); X the docs contradict each other (the note says
which reading is used). Sources: ``sdk:PATH@TAG`` is a file of
https://github.com/aws-neuron/aws-neuron-sdk at that tag, ``rtd:PATH`` a
page of https://awsdocs-neuron.readthedocs-hosted.com.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .table import BY_MINOR, RELEASES, Release


class Status(enum.Enum):
    ALLOWED = "allowed"
    NOTE = "note"  # deprecated, no removal announced; or unsupported but accepted
    WARNING = "warning"  # deprecated with an announced removal, or warned by the compiler
    ERROR = "error"  # rejected by the release (removed, not yet introduced, a compile error)

    def __str__(self) -> str:
        return self.value


ALLOWED, NOTE, WARNING, ERROR = Status.ALLOWED, Status.NOTE, Status.WARNING, Status.ERROR


@dataclass(frozen=True)
class Step:
    since: str  # the minor release it applies from ("2.23")
    status: Status
    event: str  # introduced, deprecated, removed, rejected, accepted, announced
    tag: str  # D, A, I, X
    source: str
    note: str = ""

    @property
    def release(self) -> Release:
        return BY_MINOR[self.since]


@dataclass(frozen=True)
class Fact:
    id: str
    subject: str  # what the user writes, in words
    generation: str  # legacy (neuronxcc.nki), current (nki), any
    steps: tuple[Step, ...]
    before: Status = ALLOWED
    fix: str = ""

    def step_at(self, release: Release) -> Step | None:
        found = None
        for step in self.steps:
            if step.release <= release:
                found = step
        return found

    def next_step(self, release: Release) -> Step | None:
        return next((s for s in self.steps if s.release > release), None)


@dataclass(frozen=True)
class FactStatus:
    """A fact at one release: the status and the step that decided it."""

    fact: Fact
    release: Release
    status: Status
    step: Step | None  # None: before the first step (``fact.before``)

    @property
    def since(self) -> Release | None:
        return self.step.release if self.step else None

    @property
    def citation(self) -> str:
        if self.step is None:
            first = self.fact.steps[0]
            return f"before SDK {first.since}: {first.source} ({first.tag})"
        return f"{self.step.source} ({self.step.tag})"

    @property
    def upcoming(self) -> Step | None:
        """The next change after this release, if one is known."""
        return self.fact.next_step(self.release)

    def describe(self) -> str:
        """``block dimensions: warning since SDK 2.23 (deprecated); error from SDK 2.25``."""
        if self.step is None:
            text = f"{self.fact.subject}: {self.status} before SDK {self.fact.steps[0].since}"
        else:
            text = f"{self.fact.subject}: {self.status} since SDK {self.step.since} ({self.step.event})"
        nxt = self.upcoming
        if nxt is not None:
            text += f"; {nxt.status} from SDK {nxt.since}"
        return text


_NKI_RN = "sdk:release-notes/components/nki.rst@v2.32.0"
_LEGACY_RN = "sdk:nki/nki_rn.rst@v2.26.1"
_MIGRATION = "sdk:nki/migration/index.rst@v2.32.0"
_MIGRATION_07 = "rtd:/en/v2.33.1/nki/migration/index.html"
_RN_07 = "rtd:/en/v2.33.1/release-notes/components/nki.html"
_ANN = "rtd:/en/latest/about-neuron/announcements/neuron2.x/"
_ANN_SDK = "sdk:about-neuron/announcements/neuron2.x/"
_EOS_08 = _ANN + "announce-intent-eos-nki-virtualregister-lnc-apis.html"
_SPECIALIZATION = _ANN + "announce-nki-specialization-change.html"
_API = "rtd:/en/latest/nki/api/generated/"


def _s(since: str, status: Status, event: str, tag: str, source: str, note: str = "") -> Step:
    return Step(since, status, event, tag, source, note)


_FACT_LIST: tuple[Fact, ...] = (
    # -- namespaces --------------------------------------------------------
    Fact("legacy-namespace-import", "importing neuronxcc.nki (any module under it)", "legacy", (
        _s("2.20", ALLOWED, "introduced", "D", _LEGACY_RN),
        _s("2.27", WARNING, "deprecated", "D", _ANN_SDK + "announcement-end-of-support-neuronxcc-nki.rst@v2.32.0",
           "end of support announced for 2.28, then postponed in 2.28 and 2.29"),
        _s("2.34", ERROR, "removed", "A", _ANN + "announce-removal-neuronxcc-nki-2-34.html",
           "ImportError; the notice still asks to confirm that the removal ships in 2.34"),
    ), fix="import nki, nki.language, nki.isa instead (the kernel needs porting, not only the imports)"),
    Fact("legacy-namespace-in-kernel", "neuronxcc.nki APIs used inside a kernel", "legacy", (
        _s("2.20", ALLOWED, "introduced", "D", _LEGACY_RN),
        _s("2.27", WARNING, "deprecated", "D", _ANN_SDK + "announcement-end-of-support-neuronxcc-nki.rst@v2.32.0"),
        _s("2.30", ERROR, "rejected", "X", _NKI_RN + " (0.4.0 breaking changes)",
           "the 2.34 removal notice says 'in Neuron 2.28 and later'; the 0.4.0 release notes are used"),
    ), fix="port the kernel to the nki namespace"),
    Fact("standalone-nki-package", "importing the standalone nki package", "current", (
        _s("2.27", ALLOWED, "introduced", "D", "sdk:release-notes/prev/2.27.0/nki.rst@v2.32.0"),
    ), before=ERROR),
    # -- legacy-era changes ------------------------------------------------
    Fact("block-dimension", "block dimensions (nl.par_dim, dimensions before the partition dimension)", "legacy", (
        _s("2.20", ALLOWED, "introduced", "D", _LEGACY_RN),
        _s("2.23", WARNING, "deprecated", "D", _LEGACY_RN + " [2.23]", "the compiler warns for SBUF and PSUM tensors"),
        _s("2.25", ERROR, "removed", "A", _ANN_SDK + "announce-eos-block-dimension-nki.rst@v2.32.0",
           "the notice names 2.24 as the last release that supports them (its first version said errors from "
           "2.24); the 2.25 release notes are silent; never part of the nki namespace"),
    ), fix="use a Python list of tensors, or fold the block into the free dimensions"),
    Fact("jax-nki-call", "jax_neuronx.nki_call", "legacy", (
        _s("2.20", ALLOWED, "introduced", "D", _LEGACY_RN),
        _s("2.22", WARNING, "deprecated", "D", _ANN_SDK + "announce-eos-jax-neuronx-nki-call.rst@v2.32.0"),
        _s("2.23", ERROR, "removed", "D", _ANN_SDK + "announce-no-support-jax-neuronx-nki-call.rst@v2.32.0"),
    ), fix="call the @nki.jit kernel directly"),
    Fact("torch-nki-jit", "torch_neuronx.nki_jit", "legacy", (
        _s("2.20", ALLOWED, "introduced", "D", _LEGACY_RN),
        _s("2.23", WARNING, "deprecated", "D", _ANN_SDK + "announce-eos-torch-neuronx-nki-jit.rst@v2.32.0"),
        _s("2.24", ERROR, "removed", "D", _ANN_SDK + "announce-no-support-nki-jit-torch.rst@v2.32.0"),
    ), fix="decorate the kernel with @nki.jit"),
    Fact("legacy-compiler-module", "the legacy allocation module neuronxcc.nki.compiler (sbuf/psum allocators, "
         "decorators)", "legacy", (
        _s("2.21", ALLOWED, "introduced", "D", _LEGACY_RN + " [2.21]"),
        _s("2.34", ERROR, "removed", "A", _ANN + "announce-removal-neuronxcc-nki-2-34.html",
           "gone with the namespace; the nki namespace never had it, and reuses the name nki.compiler from 2.33 "
           "for per-kernel configuration"),
    ), before=ERROR),
    # -- the nki package (0.2 - 0.6) ---------------------------------------
    Fact("nl-load-store", "nl.load / nl.store in the nki namespace", "current", (
        _s("2.27", ERROR, "absent", "D", _MIGRATION, "replaced by nisa.dma_copy"),
        _s("2.29", ALLOWED, "introduced", "D", _NKI_RN + " (0.3.0)", "experimental"),
    ), before=ERROR),
    Fact("nki-launchers", "nki.baremetal / benchmark / profile / simulate_kernel in the nki namespace", "current", (
        _s("2.27", ERROR, "absent", "D", "sdk:release-notes/prev/2.27.0/nki.rst@v2.32.0"),
        _s("2.28", ERROR, "rejected", "D", _NKI_RN + " (0.2.0)", "a named 'not available' error"),
    ), before=ERROR, fix="use nki.jit, nki.simulate (2.29+) or nki.execute (2.34+)"),
    Fact("legacy-launchers", "neuronxcc.nki.baremetal / benchmark / profile / simulate_kernel", "legacy", (
        _s("2.20", ALLOWED, "introduced", "D", _LEGACY_RN),
        _s("2.34", ERROR, "removed", "A", _ANN + "announce-removal-neuronxcc-nki-2-34.html",
           "still importable until 2.33 (I); nki-samples#134 reports that baremetal silently returns zeros on 2.32"),
    )),
    Fact("isa-dtype-keyword", "dtype= on nisa calls (nki.isa in the nki namespace)", "current", (
        _s("2.27", WARNING, "removed", "D", "sdk:release-notes/prev/2.27.0/nki.rst@v2.32.0",
           "'all nki.isa APIs removed dtype and mask support'; SDK 2.27 still ignores unknown keyword "
           "arguments silently, so the call compiles and the output dtype is the dtype of dst"),
        _s("2.28", ERROR, "rejected", "D", _NKI_RN + " (0.2.0 bug fixes)",
           "invalid keyword arguments raise 'unexpected keyword argument' instead of being ignored"),
    ), fix="allocate dst with the wanted dtype and drop dtype="),
    Fact("isa-mask-keyword", "mask= on nisa calls (nki.isa in the nki namespace)", "current", (
        _s("2.27", WARNING, "removed", "D", "sdk:release-notes/prev/2.27.0/nki.rst@v2.32.0",
           "'all nki.isa APIs removed dtype and mask support'; SDK 2.27 still ignores unknown keyword "
           "arguments silently, so the call compiles and writes the masked-off elements too"),
        _s("2.28", ERROR, "rejected", "D", _NKI_RN + " (0.2.0 bug fixes)",
           "invalid keyword arguments raise 'unexpected keyword argument' instead of being ignored"),
    ), fix="bound the slices (min()) instead of masking"),
    Fact("unknown-keyword", "a keyword argument the signature of an nki.* API does not have", "current", (
        _s("2.27", WARNING, "ignored", "D", _NKI_RN + " (0.2.0 bug fixes)",
           "'the argument was ignored without warning': the call compiles without it"),
        _s("2.28", ERROR, "rejected", "D", _NKI_RN + " (0.2.0 bug fixes)",
           "'raises an unexpected keyword argument error for unrecognized names'"),
    ), fix="use the parameter name of the signature, or drop the argument"),
    Fact("jit-platform-target", "nki.jit(platform_target=...)", "current", (
        _s("2.27", ALLOWED, "introduced", "D", "sdk:nki/api/nki/__init__.py@v2.27.0"),
        _s("2.29", ERROR, "rejected", "D", _NKI_RN + " (0.3.0)"),
    ), fix="set NEURON_PLATFORM_TARGET_OVERRIDE"),
    Fact("jit-mode", "nki.jit(mode=...)", "current", (
        _s("2.27", ALLOWED, "introduced", "D", "sdk:nki/api/nki/__init__.py@v2.27.0"),
        _s("2.29", NOTE, "deprecated", "D", _NKI_RN + " (0.3.0)", "ignored; the framework is detected"),
    )),
    Fact("jit-on-subkernel", "@nki.jit on a kernel called from another kernel", "current", (
        _s("2.27", ERROR, "rejected", "D", _MIGRATION, "only the top-level kernel may carry @nki.jit"),
        _s("2.33", ALLOWED, "accepted", "D", _API + "nki.compiler.SpecializationConfig.html",
           "nested kernels are inlined; a nested kernel that sets a different compile config is an "
           "NkiValidationError unless SpecializationConfig(allow_nested_config_override=True)"),
    )),
    Fact("is-operator", "`is` / `is not` in kernel code", "current", (
        _s("2.29", ERROR, "rejected", "D", _MIGRATION),
        _s("2.33", ALLOWED, "accepted", "I", _RN_07,
           "the tracer runs kernels as Python; no page lists the lifted parser restrictions"),
    )),
    Fact("kernel-python-constructs", "Python the parser frontend rejects in kernels (generators, closures, "
         "inner functions, class inheritance, arbitrary helper code)", "any", (
        _s("2.33", ALLOWED, "accepted", "D", _SPECIALIZATION,
           "'the full Python language during specialization, including generators and class inheritance'"),
    ), before=ERROR),
    Fact("integer-enum-arguments", "integer values for enum parameters, string buffers", "current", (
        _s("2.29", ERROR, "rejected", "D", _MIGRATION, "API validation: still rejected under the tracer (I)"),
    )),
    Fact("tensor-copy-dynamic", "nisa.tensor_copy_dynamic_src / tensor_copy_dynamic_dst", "any", (
        _s("2.21", ALLOWED, "introduced", "D", _LEGACY_RN + " [2.21]", "tensor_copy_dynamic_dst from 2.22"),
        _s("2.29", WARNING, "deprecated", "D", _NKI_RN + " (0.3.0)"),
        _s("2.30", ERROR, "removed", "D", _NKI_RN + " (0.4.0)"),
    ), before=ERROR, fix="nisa.tensor_copy with .ap(..., scalar_offset=...)"),
    Fact("affine-sequential-range", "nl.affine_range / nl.sequential_range", "current", (
        _s("2.27", ALLOWED, "introduced", "D", "sdk:nki/api/nki/language/__init__.py@v2.27.0"),
        _s("2.29", NOTE, "deprecated", "D", "sdk:nki/api/nki/language/__init__.py@v2.29.0",
           "no removal announced; Python range from 2.32, 'default to Python range' in 0.7 "
           "(rtd:/en/latest/nki/deep-dives/nki-loops.html)"),
    ), fix="range()"),
    Fact("isa-engine-aliases", "nisa.tensor_engine / vector_engine / scalar_engine / gpsimd_engine / "
         "unknown_engine", "any", (
        _s("2.27", NOTE, "deprecated", "D", "sdk:nki/api/nki/isa/__init__.py@v2.27.0",
           "aliases of the nisa.engine members; no removal announced up to 2.34"),
    ), fix="nisa.engine.tensor / vector / scalar / gpsimd / unknown"),
    Fact("tile-size-aliases", "nl.tile_size.psum_fmax / total_available_sbuf_size", "any", (
        _s("2.30", NOTE, "deprecated", "D", _MIGRATION + " (0.3 -> 0.4, deprecated APIs)", "no removal announced"),
    ), fix="nl.tile_size.psum_bank_fmax / sbuf_fmax_bytes"),
    Fact("nki-tensor-alias", "nki.tensor (the tensor class)", "current", (
        _s("2.28", NOTE, "deprecated", "I", "sdk:nki/api/nki/__init__.py@v2.28.0",
           "the class moved to nki.meta; no removal announced"),
    ), fix="nki.meta.tensor"),
    Fact("static-range", "nl.static_range", "current", (
        _s("2.27", ALLOWED, "introduced", "D", "sdk:nki/api/nki/language/__init__.py@v2.27.0"),
        _s("2.32", NOTE, "deprecated", "D", "sdk:nki/api/nki/language/__init__.py@v2.32.0", "no removal announced"),
    ), fix="range()"),
    Fact("fori-while-loop", "nl.fori_loop / nl.while_loop", "current", (
        _s("2.32", ALLOWED, "introduced", "D", _NKI_RN + " (0.6.0)"),
    ), before=ERROR),
    Fact("dynamic-range-loop", "for ... in nl.dynamic_range(...)", "current", (
        _s("2.29", ALLOWED, "introduced", "D", _NKI_RN + " (0.3.0)"),
        _s("2.32", WARNING, "deprecated", "D", _MIGRATION, "scheduled for removal"),
        _s("2.33", ERROR, "removed", "D", _MIGRATION_07,
           "TypeError under the tracer; still accepted with NKI_COMPILER_FRONTEND=custom in 2.33"),
    ), before=ERROR, fix="nl.fori_loop(lower, upper, body)"),
    Fact("while-register", "a bare `while reg:` on a register or scalar", "current", (
        _s("2.29", ALLOWED, "introduced", "D", _NKI_RN + " (0.3.0)"),
        _s("2.32", WARNING, "deprecated", "D", _MIGRATION),
        _s("2.33", ERROR, "removed", "D", _MIGRATION_07, "TypeError under the tracer"),
    ), before=ERROR, fix="nl.while_loop(init, body)"),
    Fact("register-python-value", "Python truthiness, int() or range() of a register or scalar", "current", (
        _s("2.33", ERROR, "rejected", "D", "sdk:nki/api/nki/isa/__init__.py@v2.32.0 (VirtualRegister note)",
           "TypeError under the tracer; the parser frontend's treatment is not documented"),
    ), fix="nl.if_else / nl.while_loop / nl.fori_loop"),
    Fact("spmd-grid-lnc-mismatch", "a kernel LNC degree (SPMD grid) different from the compiler's", "current", (
        _s("2.31", WARNING, "announced", "D", _ANN_SDK + "announce-intent-eos-nki-spmd-launch-grid.rst@v2.32.0"),
        _s("2.33", ERROR, "rejected", "D", "rtd:/en/latest/compiler/error-codes/EVRF066.html",
           "NCC_EVRF066; the kernel defaults to LNC=1 while neuronx-cc defaults to LNC=2 on trn2 and later"),
    ), fix="set NEURON_LOGICAL_NC_CONFIG to the compiler's LNC degree"),
    Fact("kernel-lnc-bracket", "kernel[lnc](...) launch syntax", "current", (
        _s("2.33", NOTE, "deprecated", "D", "rtd:/en/latest/compiler/error-codes/EVRF066.html",
           "called 'being deprecated'; no removal release"),
    ), fix="set NEURON_LOGICAL_NC_CONFIG"),
    # -- NKI 0.7 (2.33) ----------------------------------------------------
    Fact("tracer-frontend", "the tracing frontend (kernels run as Python during specialization)", "current", (
        _s("2.32", NOTE, "introduced", "I", "sdk:nki/api/nki/isa/__init__.py@v2.32.0", "opt-in, not the default"),
        _s("2.33", ALLOWED, "default", "D", _RN_07),
    ), before=ERROR),
    Fact("parser-frontend-env", "NKI_COMPILER_FRONTEND=custom (the parser frontend)", "current", (
        _s("2.33", WARNING, "deprecated", "D", _SPECIALIZATION, "removed 'in the next Neuron release'"),
        _s("2.34", ERROR, "removed", "A", _SPECIALIZATION),
    )),
    Fact("nki-scalar", "nisa.NkiScalar, nisa.scalar_load / scalar_store", "current", (
        _s("2.33", ALLOWED, "introduced", "D", _MIGRATION_07, "requires the tracer frontend"),
    ), before=ERROR),
    Fact("tile-grids", "nl.tiles / blocks / alloc_tiles / alloc_blocks", "current", (
        _s("2.33", ALLOWED, "introduced", "D", _RN_07,
           "the notes say 'tiled/blocked on-chip memory layout APIs'; the names are from the API pages (I)"),
    ), before=ERROR),
    Fact("prepare-trigger-collectives", "nki.collectives.all_to_all_v_prepare/_trigger, all_gather_v_prepare/_trigger",
         "current", (
        _s("2.33", ALLOWED, "introduced", "D", _RN_07, "each prepare needs exactly one trigger before the next prepare"),
    ), before=ERROR),
    Fact("compile-config", "nki.compiler.CompileConfig / SpecializationConfig (nki.jit(compile_config=...))",
         "current", (
        _s("2.33", ALLOWED, "introduced", "D", "rtd:/en/v2.33.1/nki/api/nki.compiler.html"),
    ), before=ERROR),
    Fact("isa-sendrecv-compute", "nisa.sendrecv_compute", "current", (
        _s("2.33", ALLOWED, "introduced", "I", _API + "nki.isa.sendrecv_compute.html",
           "absent from the 2.32 stubs; the page predates nki.lnc"),
        _s("2.34", WARNING, "deprecated", "D", _EOS_08),
    ), before=ERROR, fix="nki.lnc.sendrecv_compute"),
    # -- NKI 0.8 (2.34) ----------------------------------------------------
    Fact("lnc-module", "nki.lnc.sendrecv / sendrecv_compute / core_barrier", "current", (
        _s("2.34", ALLOWED, "introduced", "D", "rtd:/en/latest/nki/api/nki.lnc.html"),
    ), before=ERROR),
    Fact("isa-lnc-functions", "nisa.sendrecv / nisa.core_barrier", "current", (
        _s("2.27", ALLOWED, "introduced", "I", "sdk:nki/api/nki/isa/__init__.py@v2.28.0"),
        _s("2.34", WARNING, "deprecated", "D", _EOS_08, "DeprecationWarning; pipe_id is ignored"),
    ), fix="nki.lnc.sendrecv / nki.lnc.core_barrier without pipe_id"),
    Fact("virtual-register", "nisa.register_alloc / register_move / register_load / register_store, "
         "nisa.VirtualRegister", "current", (
        _s("2.27", ALLOWED, "introduced", "D", "sdk:nki/api/nki/isa/__init__.py@v2.27.0",
           "the VirtualRegister class from 2.29"),
        _s("2.34", WARNING, "deprecated", "D", _EOS_08, "DeprecationWarning; removal in 'a future NKI release'"),
    ), before=ERROR, fix="nisa.scalar_load / scalar_store with nisa.NkiScalar (not a mechanical rewrite)"),
    Fact("if-else", "nl.if_else(cond, then_fn, else_fn)", "current", (
        _s("2.34", ALLOWED, "introduced", "I", _API + "nki.language.if_else.html",
           "latest-only page; the control-flow deep-dive is dated 2026-11-13"),
    ), before=ERROR),
    Fact("fori-loop-unroll", "nl.fori_loop(..., unroll=True)", "current", (
        _s("2.34", ALLOWED, "introduced", "I", "rtd:/en/latest/nki/deep-dives/nki-control-flow.html",
           "the 2.33.0 fori_loop page has no unroll"),
    ), before=ERROR),
    Fact("standalone-execution", "nki.execute / multi_rank_execute / multi_rank_simulate", "current", (
        _s("2.34", ALLOWED, "introduced", "I", "rtd:/en/latest/nki/deep-dives/nki-standalone.html",
           "the page is dated 2026-11-13"),
    ), before=ERROR),
    Fact("local-gather-valid-indices", "nisa.local_gather without num_valid_indices", "current", (
        _s("2.34", WARNING, "deprecated", "D", _EOS_08, "undefined results; the default will change"),
    ), fix="pass num_valid_indices"),
    Fact("bitvec-engine", "a bitvec operator with engine=gpsimd (tensor_tensor) or scalar/gpsimd (tensor_scalar)",
         "current", (
        _s("2.34", WARNING, "announced", "D", _EOS_08, "a future release rejects it"),
    ), fix="engine=nisa.engine.vector, or no engine argument"),
)

FACT_IDS = tuple(f.id for f in _FACT_LIST)
assert len(set(FACT_IDS)) == len(FACT_IDS), "duplicate fact id"


class FactTable:
    """The versioned facts, queried by release."""

    def __init__(self, facts: tuple[Fact, ...]) -> None:
        self._facts = {f.id: f for f in facts}

    def __iter__(self):
        return iter(self._facts.values())

    def __contains__(self, fact_id: str) -> bool:
        return fact_id in self._facts

    def get(self, fact_id: str) -> Fact:
        try:
            return self._facts[fact_id]
        except KeyError:
            raise KeyError(f"unknown release fact {fact_id!r}; known: {', '.join(sorted(self._facts))}") from None

    def status(self, fact_id: str, release: Release) -> FactStatus:
        fact = self.get(fact_id)
        step = fact.step_at(release)
        return FactStatus(fact, release, step.status if step else fact.before, step)

    def changes_in(self, release: Release) -> list[tuple[Fact, Step]]:
        """The steps that take effect in ``release`` (for the releases page)."""
        return [(f, s) for f in self._facts.values() for s in f.steps if s.since == release.minor]

    def last_release_accepting(self, fact_id: str) -> Release | None:
        """The newest release at which the fact is not an error."""
        fact = self.get(fact_id)
        ok = [r for r in RELEASES if self.status(fact.id, r).status is not ERROR]
        return ok[-1] if ok else None


FACTS = FactTable(_FACT_LIST)
