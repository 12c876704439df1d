"""Peak rates of one NeuronCore per target, for the cost estimate.

The numbers are data (``nkilint/data/hardware_perf.json``), each with the
upstream page it comes from; this module only reads them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

SIXTEEN_BIT = ("bfloat16", "float16")


@dataclass(frozen=True)
class Peaks:
    target: str
    neuron_core: str
    cores_per_device: int
    hbm_device_bytes_per_s: float
    dma_bytes_per_s: float
    tensor_flops_per_s: dict[str, float]
    elements_per_cycle: dict[str, int]
    elements_per_cycle_16bit: dict[str, int]
    ghz: dict[str, float]
    sources: dict[str, str]

    @property
    def hbm_share_bytes_per_s(self) -> float:
        """One NeuronCore's share of the device's HBM bandwidth."""
        return self.hbm_device_bytes_per_s / self.cores_per_device

    @property
    def transfer_bytes_per_s(self) -> float:
        """What one core can move between HBM and SBUF: the smaller of its
        DMA engines' aggregate rate and its share of HBM."""
        return min(self.dma_bytes_per_s, self.hbm_share_bytes_per_s)

    def matmul_flops_per_s(self, dtype: str | None) -> tuple[float, float]:
        """(slowest, fastest) TensorE peak for a matmul input dtype; both
        ends of the table when the dtype is not known."""
        table = self.tensor_flops_per_s
        if dtype is None:
            return min(table.values()), max(table.values())
        key = "float8" if dtype.startswith("float8") else dtype
        if key not in table:
            return min(table.values()), max(table.values())
        return table[key], table[key]

    def engine_elements_per_s(self, engine: str, dtype: str | None) -> tuple[float, float]:
        """(slowest, fastest) elements per second of a Vector/Scalar/GpSimd
        op; the wide (16-bit) data path counts only for bfloat16/float16 (the
        one type list every generation's table shares)."""
        ghz = self.ghz.get(engine, self.ghz["vector"]) * 1e9
        base = self.elements_per_cycle.get(engine, self.elements_per_cycle["vector"])
        wide = self.elements_per_cycle_16bit.get(engine, base)
        if dtype is None:
            return base * ghz, wide * ghz
        if dtype in SIXTEEN_BIT:
            return wide * ghz, wide * ghz
        return base * ghz, base * ghz


@lru_cache(maxsize=None)
def _table() -> dict:
    text = resources.files("nkilint.data").joinpath("hardware_perf.json").read_text(encoding="utf-8")
    return json.loads(text)


def peaks(target: str) -> Peaks:
    data = _table()["targets"][target]
    return Peaks(
        target=target,
        neuron_core=data["neuron_core"],
        cores_per_device=data["cores_per_device"],
        hbm_device_bytes_per_s=float(data["hbm_device_bytes_per_s"]),
        dma_bytes_per_s=float(data["dma_bytes_per_s"]),
        tensor_flops_per_s={k: float(v) for k, v in data["tensor_flops_per_s"].items()},
        elements_per_cycle=dict(data["engine_elements_per_cycle"]),
        elements_per_cycle_16bit=dict(data["engine_elements_per_cycle_16bit"]),
        ghz=dict(data["engine_ghz"]),
        sources=dict(data["sources"]),
    )


def notes() -> list[str]:
    return list(_table().get("notes", []))


__all__ = ["Peaks", "peaks", "notes"]
