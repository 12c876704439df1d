"""Numbers of the report as ranges: exact when the model derived one value,
``[lo, hi]`` when it derived bounds, open above when it found no upper bound.

The report never prints a number the model did not derive: an unknown size
is the range ``[0, inf)`` and renders as "unknown".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..model.values import Value, const_int, describe, int_bounds

INF = math.inf


@dataclass(frozen=True)
class Qty:
    """A non-negative quantity between ``lo`` and ``hi`` (``hi`` may be inf).

    ``expr`` is the model's description of a symbolic value (``K (<= 256)``),
    kept for the reader; ``known`` is false when nothing at all was derived.
    """

    lo: float
    hi: float
    expr: str | None = None
    known: bool = True

    # -- construction --------------------------------------------------------
    @classmethod
    def exact(cls, n: float) -> "Qty":
        return cls(n, n)

    @classmethod
    def unknown(cls, why: str | None = None) -> "Qty":
        return cls(0, INF, why, known=False)

    @classmethod
    def of(cls, v: Value | None) -> "Qty":
        """The range of an abstract integer value (negative bounds clamp to 0)."""
        if v is None:
            return cls.unknown()
        c = const_int(v)
        if c is not None:
            return cls.exact(max(c, 0))
        b = int_bounds(v)
        if b is None:
            return cls.unknown(describe(v))
        lo, hi = b
        lo = 0 if lo == -INF or lo < 0 else lo
        return cls(lo, hi, describe(v))

    # -- questions -----------------------------------------------------------
    @property
    def is_exact(self) -> bool:
        return self.known and self.lo == self.hi and self.hi != INF

    @property
    def bounded(self) -> bool:
        return self.known and self.hi != INF

    # -- arithmetic (both operands non-negative) -----------------------------
    def __add__(self, other: "Qty") -> "Qty":
        return Qty(self.lo + other.lo, self.hi + other.hi, None, self.known and other.known)

    def __mul__(self, other: "Qty | float") -> "Qty":
        if not isinstance(other, Qty):
            other = Qty.exact(other)
        return Qty(self.lo * other.lo, _mul_hi(self.hi, other.hi, self.lo, other.lo), None,
                   self.known and other.known)

    __rmul__ = __mul__

    def __truediv__(self, rate: float) -> "Qty":
        """Divide by a positive constant (a peak rate)."""
        return Qty(self.lo / rate, self.hi / rate, None, self.known)

    def max_with(self, other: "Qty") -> "Qty":
        return Qty(max(self.lo, other.lo), max(self.hi, other.hi), None, self.known and other.known)

    # -- output --------------------------------------------------------------
    def to_json(self) -> Any:
        """An integer when exact, else ``{"min", "max"?, "expr"?}`` (no
        ``max`` when unbounded), like the graph JSON's dimensions."""
        if self.is_exact:
            return _num(self.lo)
        out: dict[str, Any] = {"min": _num(self.lo)}
        if self.hi != INF:
            out["max"] = _num(self.hi)
        if self.expr:
            out["expr"] = self.expr
        if not self.known:
            out["known"] = False
        return out

    def text(self, unit: str = "", fmt=None) -> str:
        """``2048``, ``128-512``, ``>= 128`` or ``unknown``, with ``fmt``
        (a function of one number) or the unit appended."""
        show = fmt or (lambda n: f"{_short(n)}{(' ' + unit) if unit else ''}")
        if not self.known or (self.hi == INF and self.lo == 0):
            return "unknown"
        if self.is_exact:
            return show(self.lo)
        if self.hi == INF:
            return f">= {show(self.lo)}"
        return f"{show(self.lo)} - {show(self.hi)}"


def _mul_hi(a: float, b: float, alo: float, blo: float) -> float:
    if a == INF or b == INF:
        # inf * 0 is 0 only when the other side is exactly zero.
        if (a == INF and b == 0) or (b == INF and a == 0):
            return 0
        return INF
    return a * b


def _num(n: float) -> int | float:
    if n == int(n) and abs(n) < 1e15:
        return int(n)
    return float(f"{n:.6g}")


def _short(n: float) -> str:
    if n == int(n):
        return str(int(n))
    return f"{n:.3g}"


def fmt_bytes(n: float) -> str:
    """``512 B``, ``2 KiB``, ``1.5 MiB``."""
    if n == INF:
        return "unbounded"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{int(n)} B"


def fmt_seconds(s: float) -> str:
    if s == INF:
        return "unbounded"
    for unit, size in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= size:
            return f"{s / size:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_rate(n: float, unit: str) -> str:
    """A rate in decimal units: ``368 GB/s``, ``79 TFLOP/s``."""
    return f"{fmt_count(n)}{unit}/s"


def fmt_count(n: float) -> str:
    if n == INF:
        return "unbounded"
    for unit, size in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return _short(n) + " "


__all__ = ["Qty", "INF", "fmt_bytes", "fmt_seconds", "fmt_count", "fmt_rate"]
