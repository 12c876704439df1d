"""NKI versions and the newest API table of each.

Rules compare ``ctx.nki_version`` with these constants; the target itself
is a Neuron SDK release (``nkilint.releases``), which maps to its NKI
version. Source of the version table: aws-neuron-sdk
nki/migration/index.rst ("NKI version to Neuron SDK mapping", v2.33.1
build of the docs for 0.7) and the 0.8 deprecation announcement
(announce-intent-eos-nki-virtualregister-lnc-apis: "In Neuron Release
2.34.0, NKI 0.8.0 ...").
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
V0_7 = NkiVersion(0, 7)
V0_8 = NkiVersion(0, 8)

KNOWN_VERSIONS = (V0_1, V0_2, V0_3, V0_4, V0_5, V0_6, V0_7, V0_8)
VERSION_NAMES = tuple(str(v) for v in KNOWN_VERSIONS)
LATEST = V0_8

# Newest SDK release of each NKI version that has its own API table entry
# (the table is keyed by SDK; 2.29.1 and 2.31.1 changed the stubs, 2.33.1
# did not).
SDK_OF = {
    V0_1: "2.26.0",
    V0_2: "2.28.0",
    V0_3: "2.29.1",
    V0_4: "2.30.0",
    V0_5: "2.31.1",
    V0_6: "2.32.0",
    V0_7: "2.33.0",
    V0_8: "2.34.0",
}
