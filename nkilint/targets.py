"""Hardware facts per Trainium generation.

Rules read these tables; no rule hard-codes 128 or 2048. Numbers come from
the NKI architecture guides
(https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/arch/trainium_inferentia2_arch.html,
.../nki/arch/trainium2_arch.html, .../nki/about/trainium3_arch.html) and the
Neuron hardware pages (.../about-neuron/arch/neuron-hardware/). Values the docs do not state for a generation are marked
``assumed`` and can be overridden in ``[tool.nkilint.hardware]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

KIB = 1024


@dataclass(frozen=True)
class Target:
    name: str  # canonical: trn1, trn2, trn3
    generation: int  # NeuronCore version: 2 (trn1/inf2), 3 (trn2), 4 (trn3)
    partitions: int = 128
    sbuf_bytes_per_partition: int = 192 * KIB  # raw SRAM
    sbuf_usable_bytes_per_partition: int = 176 * KIB  # what kernels may allocate
    psum_bytes_per_partition: int = 16 * KIB
    psum_banks: int = 8
    psum_bank_bytes: int = 2 * KIB
    gemm_stationary_fmax: int = 128
    gemm_moving_fmax: int = 512  # fp32 elements (one PSUM bank)
    gemm_moving_fmax_bf16_dst: int = 512
    bn_stats_fmax: int = 512
    tensor_transpose_max: int = 128
    vector_transpose_max: int = 32
    lnc_max: int = 1
    has_hwdge: bool = False
    matmul_dst_dtypes: tuple[str, ...] = ("float32",)
    native_fp8: tuple[str, ...] = ("float8_e4m3", "float8_e5m2")
    fp8_e4m3_max: float = 240.0
    # Which values were not stated by the docs for this generation.
    assumed: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=())

    @property
    def psum_bank_fp32(self) -> int:
        return self.psum_bank_bytes // 4


TRN1 = Target(
    name="trn1",
    generation=2,
    sbuf_bytes_per_partition=192 * KIB,
    sbuf_usable_bytes_per_partition=176 * KIB,
    lnc_max=1,
    sources=(
        "aws-neuron-sdk general/arch/neuron-hardware/trainium_inferentia2_arch.rst",
        "legacy general/nki/nki_direct_allocation_guide.rst (176 KiB usable SBUF)",
    ),
)

TRN2 = Target(
    name="trn2",
    generation=3,
    sbuf_bytes_per_partition=224 * KIB,
    # nki-library mlp_cte_constants.py: 224*1024 - 16384 - 8 - 256
    sbuf_usable_bytes_per_partition=224 * KIB - 16384 - 8 - 256,
    lnc_max=2,
    has_hwdge=True,
    sources=("aws-neuron-sdk trainium2_arch.rst", "nki-library core/mlp/mlp_cte/mlp_cte_constants.py"),
)

TRN3 = Target(
    name="trn3",
    generation=4,
    sbuf_bytes_per_partition=256 * KIB,
    sbuf_usable_bytes_per_partition=256 * KIB - 16 * KIB,
    lnc_max=2,
    has_hwdge=True,
    gemm_moving_fmax=4096,
    gemm_moving_fmax_bf16_dst=8192,
    matmul_dst_dtypes=("float32", "bfloat16"),
    native_fp8=("float8_e4m3fn", "float8_e5m2"),
    assumed=("sbuf_usable_bytes_per_partition",),
    sources=("aws-neuron-sdk trainium3_arch.rst", "nki.isa nc_matmul stub (gen4 moving free size)"),
)

TARGETS: dict[str, Target] = {"trn1": TRN1, "trn2": TRN2, "trn3": TRN3}
ALIASES: dict[str, str] = {"inf2": "trn1", "gen2": "trn1", "gen3": "trn2", "gen4": "trn3"}
DEFAULT_TARGET = "trn2"

# Keys of [tool.nkilint.hardware] that may override a target's numbers.
OVERRIDABLE = tuple(
    f.name for f in fields(Target) if f.type in ("int", "float") and f.name not in ("generation",)
)


def target_names() -> list[str]:
    return sorted(TARGETS) + sorted(ALIASES)


def resolve_target(name: str, overrides: dict[str, int | float] | None = None) -> Target:
    """The Target for a name (aliases allowed), with config overrides applied."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in TARGETS:
        raise ValueError(f"unknown target {name!r}; valid targets: {', '.join(target_names())}")
    target = TARGETS[key]
    if overrides:
        bad = sorted(set(overrides) - set(OVERRIDABLE))
        if bad:
            raise ValueError(
                f"unknown hardware key(s) {', '.join(bad)}; valid keys: {', '.join(OVERRIDABLE)}"
            )
        target = replace(target, **overrides)
    return target
