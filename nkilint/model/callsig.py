"""How a call binds to the target release's signature of an NKI API.

One question, answered from the syntax of the call and the API table: given
``nl.sum(x)`` and the target release, which required parameters are left
unbound, which positional arguments go past the signature, and which
parameters are given twice. Python raises a ``TypeError`` for each of them
before the API even runs (legacy tracer), and the NKI 0.2+ frontend checks
calls against the same signatures.

Which table answers: code written against the current ``nki`` namespace is
looked up in the target release (it does not exist before 2.27); legacy
``neuronxcc.nki`` code in the target release while that documents the
legacy namespace, else in the newest legacy release (2.26), whose API the
legacy package keeps shipping.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from functools import lru_cache

from .apitable import ApiTable, Signature, _data, _sdk_key, api_at, legacy_api
from .bindings import Gen, Qual


@dataclass(frozen=True)
class Binding:
    """What is wrong with one call against one signature."""

    signature: Signature
    sdk: str  # the table entry's SDK release (2.26.0)
    missing: tuple[str, ...] = ()  # required parameters left unbound
    extra_positional: int = 0  # positional arguments past the signature
    max_positional: int = 0
    doubled: tuple[str, ...] = field(default=())  # bound by position and by keyword
    unpacked: bool = False  # *args / **kwargs at the call: nothing is decided

    @property
    def faulty(self) -> bool:
        return bool(self.missing or self.extra_positional or self.doubled)


def signature_for(qual: Qual, release) -> tuple[Signature, str] | None:
    """The signature of a resolved NKI name in the table that judges it for
    ``release`` (a ``nkilint.releases.Release``), with that table's SDK."""
    target = api_at(release.minor)
    legacy_target = target.release.get("namespace") == "neuronxcc.nki"
    if qual.gen is Gen.CURRENT:
        if legacy_target:
            return None  # the nki namespace does not exist yet
        table = target
    elif qual.gen is Gen.LEGACY:
        table = target if legacy_target else legacy_api()
    else:
        return None
    sig = table.signature(qual.name)
    if sig is None or sig.params is None:
        return None
    return sig, table.sdk


def bind(call: ast.Call, sig: Signature, sdk: str) -> Binding:
    """Bind the arguments of ``call`` to ``sig`` as Python would."""
    starred = any(isinstance(a, ast.Starred) for a in call.args)
    spread = any(k.arg is None for k in call.keywords)
    positional = sig.positional
    n_args = len(call.args)
    extra = 0
    if not starred and not sig.accepts_any_positional and n_args > len(positional):
        extra = n_args - len(positional)
    by_position = {p.name for p in positional[:n_args]} if not starred else set()
    keywords = [k.arg for k in call.keywords if k.arg is not None]
    doubled = tuple(sorted({k for k in keywords if k in by_position}))
    missing: tuple[str, ...] = ()
    if not starred and not spread:
        bound = by_position | set(keywords)
        missing = tuple(p.name for p in sig.params or () if p.required and p.kind in ("p", "k", "o")
                        and p.name not in bound and not _optional_later(sig.name, p.name, sdk))
    return Binding(sig, sdk, missing, extra, len(positional), doubled, starred or spread)


@lru_cache(maxsize=None)
def _later_tables(sdk: str) -> tuple[ApiTable, ...]:
    """The tables of the releases after ``sdk`` in the same namespace."""
    releases = _data()["releases"]
    namespace = next((r.get("namespace") for r in releases if r["sdk"] == sdk), None)
    return tuple(api_at(r["sdk"]) for r in releases
                 if r.get("namespace") == namespace and _sdk_key(r["sdk"]) > _sdk_key(sdk))


def _optional_later(api: str, param: str, sdk: str) -> bool:
    """A later release of the same namespace gives ``param`` a default: the
    stubs of the earlier one may have dropped it (the 2.27 stubs list
    ``sequential_range(start, stop, step)`` with no defaults, while every
    range form took one argument), so its being required is not trusted."""
    for table in _later_tables(sdk):
        later = table.signature(api)
        p = later.param(param) if later is not None else None
        if p is not None and not p.required:
            return True
    return False


__all__ = ["Binding", "bind", "signature_for"]
