"""The NKI API per release: which names exist, their parameters, changes.

Data: nkilint/data/nki_api.json, built by scripts/build_api_table.py from
the shared NKI API table (the API stubs and release notes of every Neuron
SDK release from 2.20 to 2.32) and scripts/nki_api_additions.py (2.33 and
2.34, from the API pages: entries record their ``signature_source``).
Module keys are spelled ``nki.*`` for both generations; legacy
``neuronxcc.nki`` code is looked up in the newest legacy release (2.26.0),
as the table's README recommends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..versions import NkiVersion, V0_1


# The newest release whose API stubs the table was built from; later entries
# come from the API pages (scripts/nki_api_additions.py).
NEWEST_STUBS = (2, 32, 0)


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # p (positional or keyword), k (keyword only), * , **, o
    required: bool
    default: str | None


@dataclass(frozen=True)
class Signature:
    name: str  # canonical dotted name
    params: tuple[Param, ...] | None  # None: parameters unknown (rst-only entry)
    deprecated: bool = False
    deprecated_since: str | None = None
    replacement: str | None = None
    experimental: bool = False
    call_unsupported: bool = False
    doc_only_params: tuple[str, ...] = ()
    # Where the parameters come from: "stubs" (the API stubs of that very
    # release), "carried" (a release after the newest stubs, whose entry was
    # carried over from the release before), "rst" (the signature line of
    # the release's API page) or "prose" (parameters named in a deep-dive).
    source: str = "stubs"

    @property
    def verified(self) -> bool:
        """The parameters were read from this release's own stubs or API page."""
        return self.source in ("stubs", "rst")

    @property
    def positional(self) -> list[Param]:
        return [p for p in self.params or () if p.kind in ("p", "o")]

    @property
    def accepts_any_keyword(self) -> bool:
        return self.params is None or any(p.kind == "**" for p in self.params)

    @property
    def accepts_any_positional(self) -> bool:
        return self.params is None or any(p.kind == "*" for p in self.params)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params or () if p.name == name), None)

    def keyword_names(self) -> set[str]:
        names = {p.name for p in self.params or () if p.kind in ("p", "k", "o")}
        return names | set(self.doc_only_params)

    def bind(self, n_positional: int, keywords: list[str]) -> dict[str, int | str]:
        """Map parameter names to positional indices / keyword names."""
        out: dict[str, int | str] = {}
        for i, p in enumerate(self.positional[:n_positional]):
            out[p.name] = i
        for kw in keywords:
            out[kw] = kw
        return out


@dataclass(frozen=True)
class Change:
    api: str
    change: str  # removed, renamed, deprecated, signature, behavior
    since_sdk: str
    since_nki: str
    severity: str
    note: str = ""
    param: str | None = None
    replacement: str | None = None
    source: str = ""


@lru_cache(maxsize=1)
def _data() -> dict:
    text = resources.files("nkilint.data").joinpath("nki_api.json").read_text(encoding="utf-8")
    return json.loads(text)


def _sdk_key(sdk: str) -> tuple[int, ...]:
    return tuple(int(x) for x in sdk.split("."))


class ApiTable:
    """The API of one NKI release."""

    def __init__(self, version: NkiVersion, sdk: str | None = None) -> None:
        self.version = version
        data = _data()
        wanted = _sdk_key(sdk or version.sdk)
        if sdk is not None and len(wanted) == 2:
            wanted = (*wanted, 999)  # a minor release: its newest patch entry
        release = None
        for rel in data["releases"]:
            if _sdk_key(rel["sdk"]) <= wanted:
                release = rel
        assert release is not None
        self.release = release
        self.modules: dict[str, dict] = release["modules"]
        # name -> its Signature (frozen, so shared): the interpreter and the
        # rules ask for the same few hundred names tens of thousands of times.
        self._signatures: dict[str, Signature | None] = {}

    @property
    def sdk(self) -> str:
        return self.release["sdk"]

    def module_names(self) -> list[str]:
        return list(self.modules)

    def _split(self, name: str) -> tuple[str, str, list[str]] | None:
        """(module, member, rest) for a dotted name, longest module first."""
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in self.modules:
                return module, parts[cut], parts[cut + 1 :]
        return None

    def is_module(self, name: str) -> bool:
        return name in self.modules

    def exists(self, name: str) -> bool:
        """Whether a dotted name (module, function, constant, class member) exists."""
        if name in self.modules:
            return True
        split = self._split(name)
        if split is None:
            return False
        module, member, rest = split
        mod = self.modules[module]
        if member in mod["functions"]:
            return not rest
        if member in mod.get("doc_only_ops", []):
            return not rest
        if member in mod.get("classes", {}):
            if not rest:
                return True
            cls = mod["classes"][member]
            names = set(cls.get("attributes", [])) | set(cls.get("methods", [])) | set(cls.get("members", {}) or {})
            return len(rest) == 1 and rest[0] in names
        if member in mod["constants"]:
            if not rest:
                return True
            det = mod.get("constant_details", {}).get(member, {})
            members = det.get("members")
            if members is not None:
                return len(rest) == 1 and rest[0] in members
            return True  # untyped constant: its attributes are not listed
        return False

    def member_names(self, module: str) -> list[str]:
        mod = self.modules.get(module)
        if mod is None:
            return []
        return sorted(
            set(mod["functions"]) | set(mod["constants"]) | set(mod.get("classes", {})) | set(mod.get("doc_only_ops", []))
        )

    def signature(self, name: str) -> Signature | None:
        try:
            return self._signatures[name]
        except KeyError:
            pass
        sig = self._signatures[name] = self._signature(name)
        return sig

    def _signature(self, name: str) -> Signature | None:
        split = self._split(name)
        if split is None:
            return None
        module, member, rest = split
        mod = self.modules[module]
        fn = None
        if not rest:
            fn = mod["functions"].get(member)
        elif len(rest) == 1 and member in mod.get("classes", {}):
            fn = mod["classes"][member].get("method_signatures", {}).get(rest[0])
        if fn is None:
            return None
        params = None
        if fn.get("params") is not None:
            params = tuple(Param(p[0], p[1], p[2], p[3]) for p in fn["params"])
        return Signature(
            name=name,
            params=params,
            deprecated=bool(fn.get("deprecated")),
            deprecated_since=fn.get("deprecated_since_nki"),
            replacement=fn.get("replacement"),
            experimental=bool(fn.get("experimental")),
            call_unsupported=bool(fn.get("call_unsupported")),
            doc_only_params=tuple(fn.get("doc_only_params", ())),
            source=fn.get("signature_source") or ("stubs" if _sdk_key(self.sdk) <= NEWEST_STUBS else "carried"),
        )

    def constant_details(self, name: str) -> dict:
        split = self._split(name)
        if split is None:
            return {}
        module, member, _ = split
        return self.modules[module].get("constant_details", {}).get(member, {})

    def tile_size(self) -> dict[str, int]:
        return {k: v for k, v in self.release.get("tile_size", {}).items() if v is not None}


@lru_cache(maxsize=None)
def api_for(version: NkiVersion) -> ApiTable:
    return ApiTable(version)


def legacy_api() -> ApiTable:
    return api_for(V0_1)


@lru_cache(maxsize=None)
def api_at(sdk: str) -> ApiTable:
    """The API of one SDK release (``2.27``, ``2.29.0``): the newest table
    entry at or before it (patch releases share their entry when the stubs
    did not change)."""
    from ..releases import parse_release

    return ApiTable(parse_release(sdk).nki, sdk)


@lru_cache(maxsize=1)
def all_changes() -> tuple[Change, ...]:
    out = []
    for ch in _data()["changes"]:
        out.append(
            Change(
                api=ch["api"],
                change=ch["change"],
                since_sdk=ch["since_sdk"],
                since_nki=ch.get("since_nki", ""),
                severity=ch.get("severity", "warning"),
                note=ch.get("note", ""),
                param=ch.get("param"),
                replacement=ch.get("replacement"),
                source=ch.get("source", ""),
            )
        )
    return tuple(out)


def changes_for(api: str, param: str | None = None) -> list[Change]:
    return [c for c in all_changes() if c.api == api and (param is None or c.param == param)]


def api_ranges(name: str) -> list[list[str]]:
    """SDK release ranges in which a dotted name exists (from api_index)."""
    entry = _data()["api_index"].get(name)
    return entry["ranges"] if entry else []
