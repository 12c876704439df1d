"""NKI versions and how they map to Neuron SDK releases.

Source: aws-neuron-sdk nki/migration/index.rst (version table), also in
../shared/nki-api/nki-api.json ``nki_version_map``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering


@total_ordering
@dataclass(frozen=True)
class NkiVersion:
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str | float | int) -> "NkiVersion":
        raw = str(text).strip()
        if raw.lower() in ("legacy", "beta1"):
            raw = "0.1"
        parts = raw.split(".")
        try:
            if len(parts) == 3 and parts[2] == "0":
                parts = parts[:2]
            if len(parts) != 2:
                raise ValueError
            version = cls(int(parts[0]), int(parts[1]))
        except ValueError:
            raise ValueError(f"invalid NKI version {text!r}; valid versions: {', '.join(VERSION_NAMES)}") from None
        if version not in KNOWN_VERSIONS:
            raise ValueError(f"unknown NKI version {text!r}; valid versions: {', '.join(VERSION_NAMES)}")
        return version

    def __lt__(self, other: "NkiVersion") -> bool:
        return (self.major, self.minor) < (other.major, other.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def is_legacy(self) -> bool:
        return self == V0_1

    @property
    def sdk(self) -> str:
        return SDK_OF[self]


V0_1 = NkiVersion(0, 1)
V0_2 = NkiVersion(0, 2)
V0_3 = NkiVersion(0, 3)
V0_4 = NkiVersion(0, 4)
V0_5 = NkiVersion(0, 5)
V0_6 = NkiVersion(0, 6)

KNOWN_VERSIONS = (V0_1, V0_2, V0_3, V0_4, V0_5, V0_6)
VERSION_NAMES = tuple(str(v) for v in KNOWN_VERSIONS)
LATEST = V0_6

# Newest SDK release of each NKI version (the API table is keyed by SDK).
SDK_OF = {
    V0_1: "2.26.0",
    V0_2: "2.28.0",
    V0_3: "2.29.1",
    V0_4: "2.30.0",
    V0_5: "2.31.1",
    V0_6: "2.32.0",
}
