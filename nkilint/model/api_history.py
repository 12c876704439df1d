"""What the NKI API table says about a name or keyword in each NKI version.

The migration rules ask one question of the table: in the target version,
does this dotted name (or this keyword of that API) exist, and if not, did
it exist earlier (removed), only later (added after the target), or never
(a typo or an undocumented name)? Facts come from nkilint/data/nki_api.json
(read through nkilint.model.apitable): ``api_index`` ranges per SDK release,
per-release modules and signatures, and the curated change records.

The stubs are docs-build stubs, not the shipped wheel: real packages carry
undocumented names (``nl.range``, ``nki.isa.constants``, ``nki.meta``,
``nki.compiler.kernel_builder``), so a name that no release documents is at
most "unknown" (a warning), never an error, and names under undocumented
modules are not judged at all.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache

from nkilint.model.apitable import Change, Signature, _data, all_changes, api_for
from nkilint.versions import KNOWN_VERSIONS, SDK_OF, V0_1, NkiVersion


# Modules whose member lists the docs give in full (a missing member is
# probably a typo). Members of other modules (``nki`` itself, ``nki.typing``,
# ``nki.compiler``) are not judged: the real packages have many more.
DOCUMENTED_MODULES = ("nki.language", "nki.isa", "nki.collectives")

# Real spellings that the stubs do not document under that path.
ALIASES = {"nki.isa.constants": "nki.isa"}

# Names under these prefixes are never judged (legacy reference kernels that
# left the docs in 2.22 but still ship; compiler internals).
UNJUDGED_PREFIXES = ("nki.kernels", "nki.compiler.kernel_builder", "nki.compiler.frontend", "nki.compiler.ncc_driver")


def _sdk_key(sdk: str) -> tuple[int, ...]:
    return tuple(int(x) for x in sdk.split("."))


@lru_cache(maxsize=1)
def _releases() -> list[dict]:
    return _data()["releases"]


@lru_cache(maxsize=1)
def _sdk_to_nki() -> dict[str, NkiVersion]:
    out = {}
    for rel in _releases():
        out[rel["sdk"]] = NkiVersion.parse(rel["nki"])
    return out


def nki_of_sdk(sdk: str) -> NkiVersion:
    return _sdk_to_nki().get(sdk) or (V0_1 if _sdk_key(sdk) < (2, 27) else NkiVersion.parse("0.2"))


@lru_cache(maxsize=None)
def _modules_at(sdk: str) -> frozenset[str]:
    for rel in _releases():
        if rel["sdk"] == sdk:
            return frozenset(rel["modules"])
    return frozenset()


def modules_in(version: NkiVersion) -> frozenset[str]:
    """The modules some release of ``version`` documents."""
    out: set[str] = set()
    for sdk in _releases_of().get(version, (version.sdk,)):
        out |= _modules_at(sdk)
    return frozenset(out)


@lru_cache(maxsize=1)
def _all_modules() -> frozenset[str]:
    out: set[str] = set()
    for rel in _releases():
        out |= set(rel["modules"])
    return frozenset(out)


def normalize(name: str) -> str:
    for alias, real in ALIASES.items():
        if name == alias or name.startswith(alias + "."):
            return real + name[len(alias):]
    return name


def ranges(name: str) -> list[tuple[str, str]]:
    entry = _data()["api_index"].get(name)
    return [tuple(r) for r in entry["ranges"]] if entry else []


def kind_of(name: str) -> str | None:
    entry = _data()["api_index"].get(name)
    return entry["kind"] if entry else None


def _in_ranges(rs: list[tuple[str, str]], sdk: str) -> bool:
    key = _sdk_key(sdk)
    return any(_sdk_key(lo) <= key <= _sdk_key(hi) for lo, hi in rs)


@lru_cache(maxsize=1)
def _releases_of() -> dict[NkiVersion, tuple[str, ...]]:
    out: dict[NkiVersion, list[str]] = {}
    for rel in _releases():
        out.setdefault(NkiVersion.parse(rel["nki"]), []).append(rel["sdk"])
    return {k: tuple(v) for k, v in out.items()}


def versions_with(name: str) -> list[NkiVersion]:
    """The NKI versions in one of whose releases ``name`` is documented
    (a name dropped from the 2.28 stubs but documented in 2.27 exists in
    0.2), or that a curated deprecated-then-removed pair covers."""
    rs = ranges(name)
    return [
        v for v in KNOWN_VERSIONS
        if any(_in_ranges(rs, sdk) for sdk in _releases_of().get(v, (v.sdk,))) or _deprecated_not_removed(name, v)
    ]


def _deprecated_not_removed(name: str, version: NkiVersion) -> bool:
    """A curated 'deprecated in X, removed in Y' pair covering ``version``
    (e.g. tensor_copy_dynamic_src: deprecated 0.3, removed 0.4, although the
    2.29.1 stubs already dropped it)."""
    dep = [c for c in all_changes() if c.api == name and c.param is None and c.change == "deprecated"]
    rem = [c for c in all_changes() if c.api == name and c.param is None and c.change == "removed"]
    for d in dep:
        if NkiVersion.parse(d.since_nki) <= version:
            later = [r for r in rem if NkiVersion.parse(r.since_nki) > NkiVersion.parse(d.since_nki)]
            if later and all(NkiVersion.parse(r.since_nki) > version for r in later):
                return True
    return False


def fmt_versions(vs: list[NkiVersion]) -> str:
    """'0.3-0.6', 'legacy 0.1', '0.1 and 0.3-0.6' for a list of versions."""
    if not vs:
        return "no documented version"
    groups: list[list[NkiVersion]] = []
    order = list(KNOWN_VERSIONS)
    for v in vs:
        if groups and order.index(v) == order.index(groups[-1][-1]) + 1:
            groups[-1].append(v)
        else:
            groups.append([v])
    parts = []
    for g in groups:
        label = f"{g[0]}" if len(g) == 1 else f"{g[0]}-{g[-1]}"
        if g[0] == V0_1:
            label = "legacy " + label if len(g) == 1 else label
        parts.append(label)
    return " and ".join(parts)


@dataclass(frozen=True)
class NameStatus:
    """What the table says about a dotted name in one version.

    ``state``: ``found``; ``gone`` (documented in other versions only:
    ``earlier``/``later`` tell which); ``unknown`` (a member of a documented
    module or class that no release documents); ``unjudged``.
    ``name`` is the part of the dotted name the state is about (the first
    component that does not exist, e.g. ``nki.language.arange`` for
    ``nl.arange.foo``)."""

    state: str
    name: str
    earlier: tuple[NkiVersion, ...] = ()
    later: tuple[NkiVersion, ...] = ()
    parent: str = ""


def name_status(name: str, version: NkiVersion) -> NameStatus:
    name = normalize(name)
    if name.startswith(UNJUDGED_PREFIXES):
        return NameStatus("unjudged", name)
    parts = name.split(".")
    modules = _all_modules()
    # Walk the dotted name from the left; the first component that does not
    # exist in the target decides.
    for cut in range(2, len(parts) + 1):
        prefix = ".".join(parts[:cut])
        parent = ".".join(parts[: cut - 1])
        if prefix in modules:
            if prefix in _modules_at(version.sdk):
                continue
            vs = [v for v in KNOWN_VERSIONS if prefix in _modules_at(v.sdk)]
            return _gone(prefix, vs, version, parent)
        rs = ranges(prefix)
        if rs:
            vs = versions_with(prefix)
            if version in vs:
                kind = kind_of(prefix)
                if kind in ("class", "enum") and cut < len(parts):
                    continue  # members of classes and enums are listed in the index
                return NameStatus("found", prefix)
            return _gone(prefix, vs, version, parent)
        # Never documented under this path.
        parent_kind = "module" if parent in modules else kind_of(parent)
        if parent_kind == "module" and parent in DOCUMENTED_MODULES:
            return NameStatus("unknown", prefix, parent=parent)
        if parent_kind in ("class", "enum") and _has_listed_members(parent):
            return NameStatus("unknown", prefix, parent=parent)
        return NameStatus("unjudged", prefix, parent=parent)
    return NameStatus("found", name)


def _has_listed_members(cls: str) -> bool:
    index = _data()["api_index"]
    return any(k.startswith(cls + ".") for k in index)


def _gone(prefix: str, vs: list[NkiVersion], version: NkiVersion, parent: str) -> NameStatus:
    earlier = tuple(v for v in vs if v < version)
    later = tuple(v for v in vs if v > version)
    return NameStatus("gone", prefix, earlier, later, parent)


def member_names(parent: str, version: NkiVersion) -> list[str]:
    """Documented member names of a module or class in ``version``."""
    parent = normalize(parent)
    out = set()
    table = api_for(version)
    if table.is_module(parent):
        out |= set(table.member_names(parent))
    for key, entry in _data()["api_index"].items():
        if key.startswith(parent + ".") and "." not in key[len(parent) + 1 :]:
            if _in_ranges([tuple(r) for r in entry["ranges"]], version.sdk):
                out.add(key[len(parent) + 1 :])
    return sorted(out)


def closest(word: str, candidates: list[str], n: int = 2) -> list[str]:
    return difflib.get_close_matches(word, candidates, n=n, cutoff=0.75)


def signature(name: str, version: NkiVersion) -> Signature | None:
    return api_for(version).signature(normalize(name))


def param_history(api: str, param: str) -> list[NkiVersion]:
    """Versions whose signature of ``api`` accepts the keyword ``param``."""
    out = []
    for v in KNOWN_VERSIONS:
        sig = api_for(v).signature(normalize(api))
        if sig is not None and sig.params is not None and param in sig.keyword_names():
            out.append(v)
    return out


def param_changes(api: str, param: str, version: NkiVersion) -> list[Change]:
    """Curated/computed change records for a keyword of an API that apply in
    ``version`` (``*`` and ``nki.isa.*`` records included)."""
    api = normalize(api)
    out = []
    for c in all_changes():
        if c.param != param:
            continue
        if c.api == api or c.api == "*" or (c.api == "nki.isa.*" and api.startswith("nki.isa.")):
            if c.since_nki and NkiVersion.parse(c.since_nki) <= version:
                out.append(c)
    return out


def name_changes(name: str) -> list[Change]:
    return [c for c in all_changes() if c.api == normalize(name) and c.param is None]


def replacement_of(name: str, version: NkiVersion) -> str | None:
    """The replacement the change records name for ``name`` (newest that
    applies to ``version``)."""
    best = None
    for c in name_changes(name):
        if c.replacement and (not c.since_nki or NkiVersion.parse(c.since_nki) <= version):
            best = c.replacement
    return best


def sdk_label(version: NkiVersion) -> str:
    return f"NKI {version} (Neuron SDK {SDK_OF[version].rsplit('.', 1)[0]})"


# Memoised forms for the hot paths of the migration rules (pure functions of
# the shipped API table, so the memo carries no state between files).
@lru_cache(maxsize=None)
def param_changes_memo(name: str, param: str, version: NkiVersion) -> tuple[Change, ...]:
    return tuple(param_changes(name, param, version))


@lru_cache(maxsize=None)
def param_history_memo(name: str, param: str) -> tuple[NkiVersion, ...]:
    return tuple(param_history(name, param))


@lru_cache(maxsize=4096)
def name_status_memo(name: str, version: NkiVersion) -> "NameStatus":
    return name_status(name, version)
