"""Which SDK release a pinned package version means.

A pin is a PEP 440 specifier set (``==2.19.8089.0``, ``>=2.24,<2.26``,
``~=0.6``). The releases it allows are those that ship a version of the
package inside the set; a range takes its newest allowed release. An exact
version that no release ships (an internal build) means the newest release
whose version of that package, in the same series, is not newer.

Where a release's version of a package is not documented (jax-neuronx and
torch-neuronx of 2.34), a range still allows that release when it admits a
version newer than every documented one; neuronx-cc of 2.34 is the series
``2.29`` (every release since 2.20 ships neuronx-cc 2.N with SDK 2.(N+5)).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .table import PACKAGES, RELEASES, Release

# How many leading components name a package's series: a build of
# neuronx-cc 2.19.x belongs to 2.19; torch-neuronx 2.7.0.2.8.6734 to torch
# 2.7.0 (the neuron build follows).
_SERIES = {"neuronx-cc": 2, "neuronx-cc-stubs": 2, "nki": 2, "torch-neuronx": 3, "jax-neuronx": 3}


def normalize_name(name: str) -> str:
    """PEP 503: ``Neuronx_CC`` and ``neuronx.cc`` are ``neuronx-cc``."""
    out = name.strip().lower()
    for ch in "_.":
        out = out.replace(ch, "-")
    while "--" in out:
        out = out.replace("--", "-")
    return out


@dataclass(frozen=True)
class Shipped:
    version: Version
    release: Release
    patch: str
    inferred_series: bool = False  # the version is a series floor (2.29 of 2.34), not a build


def _table() -> dict[str, list[Shipped]]:
    out: dict[str, list[Shipped]] = {name: [] for name in PACKAGES}
    for release in RELEASES:
        for patch in release.patches:
            for name, versions in patch.packages.items():
                for text in versions:
                    series = text.count(".") + 1 < _SERIES[name] + 1
                    out[name].append(Shipped(Version(text), release, patch.version, inferred_series=series))
    return out


SHIPPED = _table()


def _series(version: Version, name: str) -> tuple[int, ...]:
    return tuple(version.release[: _SERIES[name]])


def _in_set(spec: SpecifierSet, version: Version) -> bool:
    return spec.contains(version, prereleases=True)


@dataclass(frozen=True)
class Resolution:
    """The release a pin means, and how it was decided."""

    release: Release
    how: str  # "exact", "range", "nearest" (an unlisted build), "newer" (undocumented version)
    bounded: bool  # the pin has an upper bound (an exact version, <, <=, ~=, ==X.*)


def _bounded(spec: SpecifierSet) -> bool:
    for s in spec:
        if s.operator in ("==", "===", "<", "<=", "~="):
            return True
    return False


def _exact(spec: SpecifierSet) -> Version | None:
    items = list(spec)
    if len(items) == 1 and items[0].operator in ("==", "===") and not items[0].version.endswith(".*"):
        try:
            return Version(items[0].version)
        except InvalidVersion:
            return None
    return None


def resolve(name: str, specifier: str) -> Resolution | None:
    """The release a pin of ``name`` means, or None when it names none
    (an unknown package, an invalid specifier, a version no release is near)."""
    name = normalize_name(name)
    shipped = SHIPPED.get(name)
    if not shipped:
        return None
    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    bounded = _bounded(spec)
    allowed: list[Shipped] = []
    for s in shipped:
        if s.inferred_series:
            lo, hi = s.version, Version(f"{s.version}.999999.999999")
            if _in_set(spec, lo) or _in_set(spec, hi):
                allowed.append(s)
        elif _in_set(spec, s.version):
            allowed.append(s)
    if allowed:
        best = max(allowed, key=lambda s: (s.release.key, s.patch))
        how = "exact" if _exact(spec) is not None else "range"
        newer = _newer_release(name, spec, best.release)
        if newer is not None and how == "range":
            return Resolution(newer, "newer", bounded)
        return Resolution(best.release, how, bounded)
    exact = _exact(spec)
    if exact is not None:
        # An internal or unlisted build: the newest release of the same series
        # whose version is not newer.
        same = [s for s in shipped if _series(s.version, name) == _series(exact, name)]
        older = [s for s in same if s.version <= exact or s.inferred_series]
        if older:
            best = max(older, key=lambda s: (s.release.key, s.patch))
            return Resolution(best.release, "nearest", True)
        return None
    newer = _newer_release(name, spec, None)
    if newer is not None:
        return Resolution(newer, "newer", bounded)
    return None


def _newer_release(name: str, spec: SpecifierSet, found: Release | None) -> Release | None:
    """A release after every documented version of ``name`` that the range
    still allows (it admits a version newer than all of them)."""
    shipped = SHIPPED[name]
    last_documented = max(s.release for s in shipped)
    later = [r for r in RELEASES if r > last_documented]
    if not later or (found is not None and found < last_documented):
        return None
    if name in ("neuronx-cc-stubs",):
        return None  # no longer released (the stubs ship in the nki wheel from 2.31)
    newest = max(shipped, key=lambda s: s.version).version
    bumped = Version(".".join(str(x) for x in (*newest.release[:-1], newest.release[-1] + 1)))
    return later[-1] if _in_set(spec, bumped) else None


def package_versions(release: Release) -> dict[str, tuple[str, ...]]:
    """Every documented version of each package across the release's patches."""
    out: dict[str, list[str]] = {}
    for patch in release.patches:
        for name, versions in patch.packages.items():
            for v in versions:
                if v not in out.setdefault(name, []):
                    out[name].append(v)
    return {k: tuple(v) for k, v in out.items()}
