"""Why a run targets the release it does (printed in every report)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TargetOrigin:
    """``kind``: ``default`` (no pin found: the newest release), ``cli``
    (``--sdk`` / ``--nki-version``), ``config`` (``[tool.nkilint]``) or
    ``pin`` (a package version the project pins)."""

    kind: str
    text: str  # "from requirements.txt:4", "from --sdk 2.24", "by default (the newest release; ...)"
    file: str | None = None
    line: int | None = None
    package: str | None = None
    requirement: str | None = None  # the pin as written
    how: str | None = None  # exact, range, nearest, newer
    others: tuple[str, ...] = ()  # other pins that name a different release

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "reason": self.text}
        for key in ("file", "line", "package", "requirement", "how"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.others:
            out["other_pins"] = list(self.others)
        return out


DEFAULT_ORIGIN = TargetOrigin("default", "by default (the newest release; no pin, --sdk or config)")
