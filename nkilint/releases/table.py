"""Every Neuron SDK release nkilint can target (2.20 - 2.34), one row each.

A target is a minor release (``2.24``); its patch releases (``2.24.1``) are
accepted everywhere and mean their minor. Each row says which NKI version
the release ships, which API generations import, which frontend turns a
kernel into NKI IR, which hardware NKI supports, and which versions of the
Python packages identify it (for reading a project's pins).

Sources, cited per row as ``sdk:PATH@TAG`` (a file of the
aws-neuron/aws-neuron-sdk repository, https://github.com/aws-neuron/aws-neuron-sdk)
or ``rtd:PATH`` (a page of https://awsdocs-neuron.readthedocs-hosted.com):

* dates: ``sdk:release-notes/prev/rn.rst@v2.32.0`` and the per-release
  notes; 2.33 and 2.34 from their rtd release-notes pages.
* package versions: ``sdk:src/helperscripts/n2-manifest.json@v2.32.0`` (the
  manifest the docs build the "release content" pages from) for 2.20.0 -
  2.32.0; ``rtd:/en/v2.33.1/release-notes/prev/content.html`` for 2.33.0;
  ``rtd:/en/latest/release-notes/2.33.1.html`` for 2.33.1.
* NKI versions: ``sdk:nki/migration/index.rst`` (version table) and, for
  0.8, ``rtd:/en/latest/about-neuron/announcements/neuron2.x/announce-intent-eos-nki-virtualregister-lnc-apis.html``.

Confidence tags as in the rest of ``nkilint.releases``: D documented, A
announced (not confirmed by the release's own notes), I inferred (the basis
is given), X the docs contradict each other (the choice is explained).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..versions import NkiVersion, V0_1, V0_2, V0_3, V0_4, V0_5, V0_6, V0_7, V0_8

LEGACY_NS = "neuronxcc.nki"
CURRENT_NS = "nki"

PARSER = "parser"
TRACER = "tracer"

MANIFEST = "sdk:src/helperscripts/n2-manifest.json@v2.32.0"
RN_INDEX = "sdk:release-notes/prev/rn.rst@v2.32.0"

# Packages whose pinned version identifies a release, in the order they are
# trusted when a project pins several (the NKI package names the language
# version itself; the compiler ships it; the others only travel with it).
PACKAGES = ("nki", "neuronx-cc", "neuronx-cc-stubs", "torch-neuronx", "jax-neuronx")


@dataclass(frozen=True)
class Note:
    """A fact about a release that is not simply documented, or a conflict."""

    field: str  # date, packages, imports, frontend, targets, nki
    tag: str  # A, I or X
    text: str


@dataclass(frozen=True)
class Patch:
    """One published SDK version (``2.24.0``, ``2.24.1``)."""

    version: str
    date: str  # ISO 8601
    packages: dict[str, tuple[str, ...]] = field(default_factory=dict)  # name -> versions shipped
    source: str = ""  # where the package versions come from


@dataclass(frozen=True, eq=False)
class Release:
    """One minor Neuron SDK release, the unit nkilint targets (equal and
    ordered by its minor version)."""

    minor: str  # "2.24"
    nki: NkiVersion
    nki_label: str
    imports: tuple[str, ...]  # namespaces that import: neuronxcc.nki, nki
    frontend: str  # parser or tracer (the default)
    hardware: tuple[str, ...]  # trn1 (incl. inf2), trn2, trn3 that NKI supports
    patches: tuple[Patch, ...]
    headline: str  # what changed for NKI, one sentence (docs/releases.md)
    source: str  # where the headline comes from
    notes: tuple[Note, ...] = ()

    @property
    def key(self) -> tuple[int, int]:
        major, minor = self.minor.split(".")
        return int(major), int(minor)

    @property
    def date(self) -> str:
        return self.patches[0].date

    @property
    def newest_patch(self) -> Patch:
        return self.patches[-1]

    @property
    def legacy_imports(self) -> bool:
        return LEGACY_NS in self.imports

    @property
    def current_imports(self) -> bool:
        return CURRENT_NS in self.imports

    @property
    def label(self) -> str:
        """``SDK 2.29 (NKI 0.3)``."""
        return f"SDK {self.minor} (NKI {self.nki})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Release) and other.minor == self.minor

    def __hash__(self) -> int:
        return hash(self.minor)

    def __lt__(self, other: "Release") -> bool:
        return self.key < other.key

    def __le__(self, other: "Release") -> bool:
        return self.key <= other.key

    def __gt__(self, other: "Release") -> bool:
        return self.key > other.key

    def __ge__(self, other: "Release") -> bool:
        return self.key >= other.key

    def __str__(self) -> str:
        return self.minor

    def __repr__(self) -> str:
        return f"Release({self.minor!r})"


def _pk(cc: str | None = None, nki: str | None = None, stubs: bool = True, torch: tuple[str, ...] = (),
        jax: str | None = None) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    if nki:
        out["nki"] = (nki,)
    if cc:
        out["neuronx-cc"] = (cc,)
        if stubs:
            out["neuronx-cc-stubs"] = (cc,)  # the stubs package mirrors the compiler build
    if torch:
        out["torch-neuronx"] = torch
    if jax:
        out["jax-neuronx"] = (jax,)
    return out


def _torch(suffix: str, *torch_versions: str) -> tuple[str, ...]:
    """torch-neuronx wheels are ``<torch version>.<neuron build>``."""
    return tuple(f"{t}.{suffix}" for t in torch_versions)


_L = (LEGACY_NS,)
_LN = (LEGACY_NS, CURRENT_NS)
_N = (CURRENT_NS,)
_TRN1 = ("trn1",)
_TRN12 = ("trn1", "trn2")
_TRN123 = ("trn1", "trn2", "trn3")
_TRN23 = ("trn2", "trn3")
_NKI_RN_LEGACY = "sdk:nki/nki_rn.rst@v2.26.1"
_NKI_RN = "sdk:release-notes/components/nki.rst@v2.32.0"
_FAQ_NOTE = Note(
    "hardware", "D",
    "the NKI FAQ says NKI supports Trainium2 and Trainium3 from 2.29 (sdk:nki/nki_faq.rst@v2.29.0); "
    "NEURON_PLATFORM_TARGET_OVERRIDE still accepts trn1/inf2, so a trn1 target is unsupported rather than rejected",
)
_TRACER_OPT_IN = Note(
    "frontend", "I",
    "the tracer exists as a non-default option (the VirtualRegister stub note of "
    "sdk:nki/api/nki/isa/__init__.py@v2.32.0 contrasts the parser and tracer frontends)",
)

RELEASES: tuple[Release, ...] = (
    Release(
        "2.20", V0_1, "legacy NKI Beta (retro-labelled 0.1.0)", _L, PARSER, _TRN1,
        (
            Patch("2.20.0", "2024-09-16", _pk("2.15.128.0", torch=("1.13.1.1.16.0", "2.1.2.2.3.0"), jax="0.1.1"), MANIFEST),
            Patch("2.20.1", "2024-10-25", _pk("2.15.141.0", torch=("1.13.1.1.16.0", "2.1.2.2.3.1"), jax="0.1.1"), MANIFEST),
            Patch("2.20.2", "2024-11-20", _pk("2.15.143.0", torch=("1.13.1.1.16.0", "2.1.2.2.3.2"), jax="0.1.1"), MANIFEST),
        ),
        "NKI beta launch in neuronx-cc: nki.language, nki.isa, nki.jit/baremetal/benchmark/simulate_kernel; Inf2/Trn1.",
        _NKI_RN_LEGACY,
    ),
    Release(
        "2.21", V0_1, "legacy NKI Beta (0.1.0)", _L, PARSER, _TRN12,
        (
            Patch("2.21.0", "2024-12-20", _pk("2.16.345.0", torch=("1.13.1.1.17.0", "2.1.2.2.4.0", "2.5.1.2.4.0"), jax="0.1.2"), MANIFEST),
            Patch("2.21.1", "2025-01-14", _pk("2.16.372.0", torch=("1.13.1.1.17.0", "2.1.2.2.4.0", "2.5.1.2.4.0"), jax="0.1.2"), MANIFEST),
        ),
        "Trn2 support; kernels return their outputs; nki.compiler (direct allocation); new ISA ops (dma_copy, "
        "tensor_copy, activation_reduce, ...); frontend checks on nki.isa operands.",
        _NKI_RN_LEGACY,
        (Note("date", "D", "2.21.0 had a beta on 2024-12-03 (Trn2); the components notes label it '2.20.1'"),),
    ),
    Release(
        "2.22", V0_1, "legacy NKI Beta (0.1.0)", _L, PARSER, _TRN12,
        (
            Patch("2.22.0", "2025-04-03", _pk("2.17.194.0", torch=("2.5.1.2.6.0",), jax="0.1.3"), MANIFEST),
            Patch("2.22.1", "2025-05-12", _pk("2.17.194.0", torch=("2.5.1.2.6.0",), jax="0.1.3"), RN_INDEX),
        ),
        "nki.profile; max8/nc_find_index8/nc_match_replace8/nc_stream_shuffle; nisa.engine enum; "
        "jax_neuronx.nki_call end of support announced.",
        _NKI_RN_LEGACY,
        (Note("packages", "I", "2.22.1 is not in the manifest; its notes describe a driver-only update, "
                               "so its Python packages are taken to be 2.22.0's"),),
    ),
    Release(
        "2.23", V0_1, "legacy NKI Beta (0.1.0)", _L, PARSER, _TRN12,
        (Patch("2.23.0", "2025-05-20", _pk("2.18.121.0", torch=_torch("2.7.5413", "2.5.1", "2.6.0"), jax="0.5.3.1.0.719"), MANIFEST),),
        "Block dimensions in SBUF/PSUM tensors warn; range_select; dma_copy dge_mode/oob_mode; "
        "jax_neuronx.nki_call unsupported.",
        _NKI_RN_LEGACY,
        (Note("date", "X", "the release heading and the NKI notes say 2025-05-20, the release-notes index table "
                           "says 06/10/25 (sdk:release-notes/index.rst@v2.32.0); the heading is used"),),
    ),
    Release(
        "2.24", V0_1, "legacy NKI Beta (0.1.0)", _L, PARSER, _TRN12,
        (
            Patch("2.24.0", "2025-06-24", _pk("2.19.8089.0", torch=_torch("2.8.6734", "2.5.1", "2.6.0", "2.7.0"), jax="0.6.0.1.0.1296"), MANIFEST),
            Patch("2.24.1", "2025-06-30", _pk("2.19.8089.0", torch=_torch("2.8.6734", "2.5.1", "2.6.0", "2.7.0"), jax="0.6.0.1.0.1296"), MANIFEST),
        ),
        "The last release where block dimensions only warn; nl.gather_flattened; torch_neuronx.nki_jit unsupported.",
        _NKI_RN_LEGACY,
    ),
    Release(
        "2.25", V0_1, "legacy NKI Beta (0.1.0)", _L, PARSER, _TRN12,
        (Patch("2.25.0", "2025-07-31", _pk("2.20.9961.0", torch=_torch("2.9.9357", "2.6.0", "2.7.0"), jax="0.6.1.1.0.3499"), MANIFEST),),
        "Block dimensions become errors (announced); select_reduce; dict/list/dataclass kernel arguments.",
        "sdk:release-notes/2.25.0/nki.rst@v2.25.0",
    ),
    Release(
        "2.26", V0_1, "legacy NKI Beta (0.1.0)", _L, PARSER, _TRN12,
        (
            Patch("2.26.0", "2025-09-18", _pk("2.21.18209.0", torch=_torch("2.10.13553", "2.6.0", "2.7.0", "2.8.0"), jax="0.6.2.1.0.6446"), MANIFEST),
            Patch("2.26.1", "2025-10-29", _pk("2.21.33363.0", torch=_torch("2.10.16998", "2.6.0", "2.7.0", "2.8.0"), jax="0.6.2.1.0.6446"), MANIFEST),
        ),
        "The last legacy-only release: gelu_apprx_sigmoid, sequence_bounds, dma_transpose(axes).",
        _NKI_RN_LEGACY,
    ),
    Release(
        "2.27", V0_2, "NKI 0.2.0 (Beta 2)", _LN, PARSER, _TRN123,
        (
            Patch("2.27.0", "2025-12-19", _pk("2.22.12471.0", nki="0.1.0", torch=_torch("2.11.19912", "2.7.0", "2.8.0", "2.9.0"), jax="0.7.0.1.0.7377"), MANIFEST),
            Patch("2.27.1", "2026-01-14", _pk("2.22.12471.0", nki="0.1.0", torch=_torch("2.11.19912", "2.7.0", "2.8.0", "2.9.0"), jax="0.7.0.1.0.7377"), MANIFEST),
        ),
        "The standalone nki package and its new compiler (dst-first ISA calls, no nl.load/store); "
        "neuronxcc.nki deprecated.",
        "sdk:release-notes/prev/2.27.0/nki.rst@v2.32.0",
        (
            Note("nki", "X", "the migration guide maps NKI 0.2.0 to 2.27 and 2.28, the 2.28 notes call 2.27 "
                             "'Beta 2 - 0.1.0', and the manifest ships the nki package as version 0.1.0; "
                             "the language version 0.2 of the migration guide is used"),
            Note("date", "X", "the 2.27.1 notes say 2026-01-14, the release-notes index says 1/26/2026"),
            Note("hardware", "I", "Trn3 first appears as nc_version.gen4 in the 2.27 stubs"),
        ),
    ),
    Release(
        "2.28", V0_2, "NKI 0.2.0 (Beta 2)", _LN, PARSER, _TRN123,
        (
            Patch("2.28.0", "2026-02-26", _pk("2.23.6484.0", nki="0.2.0", torch=_torch("2.12.22436", "2.7.0", "2.8.0", "2.9.0"), jax="0.7.0.1.0.7584"), MANIFEST),
            Patch("2.28.1", "2026-03-13", _pk("2.23.6484.0", nki="0.2.0", torch=_torch("2.12.22436", "2.7.0", "2.8.0", "2.9.0"), jax="0.7.0.1.0.7584"), MANIFEST),
        ),
        "nki.collectives; nki.tensor moves to nki.meta.tensor; is_moving_zero renamed; removal of neuronxcc.nki postponed.",
        _NKI_RN,
    ),
    Release(
        "2.29", V0_3, "NKI 0.3.0 (GA)", _LN, PARSER, _TRN23,
        (
            Patch("2.29.0", "2026-04-09", _pk("2.24.5133.0", nki="0.3.0", torch=("2.9.0.2.13.24727",), jax="0.7.0.1.0.8181"), MANIFEST),
            Patch("2.29.1", "2026-05-01", _pk("2.24.8799.0", nki="0.3.0", torch=("2.9.0.2.13.26312",), jax="0.7.0.1.0.8181"), MANIFEST),
        ),
        "nl.* compute and load/store return (experimental); nki.jit(platform_target=) raises; affine/sequential_range "
        "deprecated; string buffers, integer enums, `is` and list arguments rejected.",
        _NKI_RN,
        (_FAQ_NOTE,),
    ),
    Release(
        "2.30", V0_4, "NKI 0.4.0", _LN, PARSER, _TRN23,
        (Patch("2.30.0", "2026-05-21", _pk("2.25.3371.0", nki="0.4.0", stubs=False, torch=("2.9.0.2.14.27725",), jax="0.10.0.1.0.9913"), MANIFEST),),
        "neuronxcc.nki inside a kernel is a compile error; tensor_copy_dynamic_src/dst removed.",
        _NKI_RN,
        (Note("imports", "X", "the 0.4.0 breaking changes make neuronxcc.nki in kernels an error from 2.30; the "
                              "2.34 removal notice says 'in Neuron 2.28 and later'; the release notes are used"),
         _FAQ_NOTE),
    ),
    Release(
        "2.31", V0_5, "NKI 0.5.0", _LN, PARSER, _TRN23,
        (
            Patch("2.31.0", "2026-07-07", _pk("2.26.6360.0", nki="0.5.0", stubs=False, torch=("2.9.0.2.15.32035",), jax="0.10.0.1.0.10466"), MANIFEST),
            Patch("2.31.1", "2026-08-12", _pk("2.26.6360.0", nki="0.5.0", stubs=False, torch=("2.9.0.2.15.32035",), jax="0.10.0.1.0.10466"), MANIFEST),
        ),
        ".pyi stubs ship in the wheel; nl.rsqrt rejects PSUM; notice that an SPMD grid different from the LNC degree "
        "will become an error.",
        _NKI_RN,
        (Note("date", "X", "the 2.31.0 notes say 2026-07-07, the previous-releases page repeats 2.30's 05/21/2026"),
         _FAQ_NOTE),
    ),
    Release(
        "2.32", V0_6, "NKI 0.6.0", _LN, PARSER, _TRN23,
        (Patch("2.32.0", "2026-08-17", _pk("2.27.5334.0", nki="0.6.0", stubs=False, torch=("2.9.0.2.15.32035",), jax="0.10.0.1.0.11459"),
               MANIFEST + "; torch-neuronx: sdk:setup/pytorch/manual.rst@v2.32.0"),),
        "nl.fori_loop/while_loop; dynamic_range loops and `while reg:` deprecated; static_range deprecated; nisa.topk.",
        _NKI_RN,
        (_TRACER_OPT_IN, _FAQ_NOTE,
         Note("packages", "D", "torch-neuronx is no longer released: the 2.32 install page pins the 2.31 wheel "
                               "('XLA support ended with that release')")),
    ),
    Release(
        "2.33", V0_7, "NKI 0.7.0", _LN, TRACER, _TRN23,
        (
            Patch("2.33.0", "2026-10-19", _pk("2.28.7631.0", nki="0.7.0", stubs=False, torch=("2.9.0.2.15.32035",), jax="0.10.0.1.0.14198"),
                  "rtd:/en/v2.33.1/release-notes/prev/content.html"),
            Patch("2.33.1", "2026-11-11", _pk("2.28.7631.0", nki="0.7.0", stubs=False, torch=("2.9.0.2.15.32035",), jax="0.10.0.1.0.15472"),
                  "rtd:/en/latest/release-notes/2.33.1.html (only jax_neuronx changes)"),
        ),
        "The tracing frontend is the default; dynamic_range loops and `while reg:` removed; LNC degree mismatch is a "
        "compile error; NkiScalar, tile/block grids, prepare/trigger collectives, nki.compiler.CompileConfig.",
        "rtd:/en/v2.33.1/release-notes/components/nki.html",
        (Note("frontend", "D", "the parser stays available behind NKI_COMPILER_FRONTEND=custom, deprecated "
                               "(announce-nki-specialization-change)"),
         Note("imports", "I", "neuronxcc.nki still imports: its removal was first announced for 2.34"),
         _FAQ_NOTE),
    ),
    Release(
        "2.34", V0_8, "NKI 0.8.0", _N, TRACER, _TRN23,
        (Patch("2.34.0", "2026-11-30", _pk("2.29", nki="0.8.0", stubs=False),
               "nki 0.8.0: announce-intent-eos-nki-virtualregister-lnc-apis; neuronx-cc: inferred"),),
        "neuronxcc.nki removed from neuronx-cc (ImportError, announced); nki.lnc; registers and nisa.sendrecv/"
        "core_barrier deprecated; nl.if_else; nki.execute.",
        "rtd:/en/latest/release-notes/2.34.0.html",
        (
            Note("imports", "A", "the removal notice (announce-removal-neuronxcc-nki-2-34) still carries a reviewer "
                                 "comment asking to confirm that the removal ships in 2.34; the 0.8 notes were not read"),
            Note("frontend", "A", "the parser fallback is removed 'in the next Neuron release' after 2.33 "
                                  "(announce-nki-specialization-change)"),
            Note("packages", "I", "the 2.34 release content was not found: neuronx-cc 2.29.* follows the rule "
                                  "every release since 2.20 keeps (neuronx-cc 2.N ships with SDK 2.(N+5)); "
                                  "torch-neuronx and jax-neuronx versions are unknown"),
            _FAQ_NOTE,
        ),
    ),
)

BY_MINOR: dict[str, Release] = {r.minor: r for r in RELEASES}
LATEST_RELEASE: Release = RELEASES[-1]
OLDEST_RELEASE: Release = RELEASES[0]

# --nki-version N means the newest release of NKI N (0.1 -> 2.26, 0.2 -> 2.28).
NEWEST_OF_NKI: dict[NkiVersion, Release] = {}
for _r in RELEASES:
    NEWEST_OF_NKI[_r.nki] = _r
assert set(NEWEST_OF_NKI) == {V0_1, V0_2, V0_3, V0_4, V0_5, V0_6, V0_7, V0_8}


class ReleaseError(ValueError):
    """Text that names no known release."""


def release_names() -> list[str]:
    return [r.minor for r in RELEASES]


def parse_release(text: str | float) -> Release:
    """The release named by ``2.24``, ``2.24.1`` or ``v2.24.1`` (a patch means
    its minor release)."""
    raw = str(text).strip().lower()
    if raw.startswith("v"):
        raw = raw[1:]
    parts = raw.split(".")
    valid = f"{OLDEST_RELEASE.minor} ... {LATEST_RELEASE.minor} (patch releases such as 2.24.1 mean their minor)"
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        raise ReleaseError(f"invalid Neuron SDK release {text!r}; valid releases: {valid}")
    minor = f"{int(parts[0])}.{int(parts[1])}"
    release = BY_MINOR.get(minor)
    if release is None:
        raise ReleaseError(f"unknown Neuron SDK release {text!r}; valid releases: {valid}")
    return release


def release_of_nki(version: NkiVersion) -> Release:
    """The newest release that ships NKI ``version`` (what ``--nki-version`` means)."""
    return NEWEST_OF_NKI[version]


def releases_of_nki(version: NkiVersion) -> list[Release]:
    return [r for r in RELEASES if r.nki == version]
