"""The NKI calls of a file and what the target's signatures make of them.

``NkiCalls`` (a per-file analysis) lists the calls of NKI APIs that exist in
the version they are checked against (a removed callee is reported for its
name, not for its arguments), with the signature of that version. Two facts
more are shared by several rules:

* ``legacy_result_call``: a legacy ISA call that returns its result tile
  where the target writes ``dst`` (NKI609 reports the whole call, so its
  keywords are not reported one by one);
* ``keyword_kind``: what the target makes of one keyword argument (removed,
  deprecated, no longer a parameter: NKI605; never a parameter: NKI615).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from nkilint.model.analysis import Analysis
from nkilint.model.apitable import Change, Signature
from nkilint.model.bindings import Gen, Qual
from nkilint.versions import V0_1, V0_2, NkiVersion

from nkilint.model import api_history as api
from ._index import NameIndex
from ._names import cached_status, doc_only_op


MATMULS = ("nki.isa.nc_matmul", "nki.language.matmul")


@dataclass(frozen=True)
class NkiCall:
    call: ast.Call
    qual: Qual
    name: str  # normalized
    version: NkiVersion  # the version the call is checked against
    sig: Signature | None

    @property
    def gen(self) -> Gen:
        return self.qual.gen


class NkiCalls(Analysis):
    def __init__(self, model) -> None:
        super().__init__(model)
        index = self.index = model.analysis(NameIndex)
        self.calls: list[NkiCall] = []
        for call in index.calls:
            if isinstance(call.func, ast.Subscript):
                continue
            qual = index.bindings.resolve(call.func)
            if qual is None or not qual.is_nki:
                continue
            name = api.normalize(qual.name)
            if qual.gen is Gen.CURRENT and index.version < V0_2:
                continue
            v = index.lookup_version(qual.gen)
            if not name.startswith("nki") or cached_status(name, v).state != "found":
                continue
            if v == V0_2 and doc_only_op(name, V0_2):
                continue  # the call itself is reported (NKI603): nothing is callable
            self.calls.append(NkiCall(call, qual, name, v, api.signature(name, v)))


def plain_arguments(call: ast.Call) -> bool:
    """No ``*args`` / ``**kwargs``: every argument can be matched to a parameter."""
    return not any(isinstance(a, ast.Starred) for a in call.args) and not any(k.arg is None for k in call.keywords)


def accumulated_matmul(index: NameIndex, site: NkiCall) -> bool:
    """``... += matmul(...)`` (NKI610 explains the accumulation)."""
    parent = index.parents.get(id(site.call))
    return isinstance(parent, ast.AugAssign) and parent.value is site.call and site.name in MATMULS


def legacy_result_call(index: NameIndex, site: NkiCall) -> Signature | None:
    """The target's signature when ``site`` is a legacy ISA call that returns
    its result where the target takes ``dst`` first (and the legacy API had
    no ``dst``); None otherwise."""
    if site.gen is not Gen.LEGACY or not site.name.startswith("nki.isa.") or index.version < V0_2:
        return None
    if not plain_arguments(site.call) or accumulated_matmul(index, site):
        return None
    if site.name == "nki.isa.dma_copy" and site.call.args:
        return None
    target = api.signature(site.name, index.version)
    legacy = api.signature(site.name, V0_1)
    if target is None or not target.params or target.params[0].name != "dst":
        return None
    if legacy is not None and legacy.params and "dst" in {p.name for p in legacy.params}:
        return None
    return target


def _param_changes(name: str, param: str, version: NkiVersion) -> tuple[Change, ...]:
    return api.param_changes_memo(name, param, version)


def param_history(name: str, param: str) -> tuple[NkiVersion, ...]:
    return api.param_history_memo(name, param)


def keyword_kind(site: NkiCall, kw: ast.keyword) -> tuple[str, Change | None] | None:
    """``("removed" | "deprecated", record)``, ``("dropped", None)`` (an
    earlier version had it), ``("unknown", None)`` or None (accepted)."""
    if kw.arg is None:
        return None
    sig = site.sig
    records = _param_changes(site.name, kw.arg, site.version)
    explicit = sig is not None and sig.params is not None and kw.arg in sig.keyword_names()
    deprecated = [r for r in records if r.change == "deprecated"]
    removed = [r for r in records if r.change in ("removed", "renamed")]
    if explicit and not deprecated:
        return None
    if removed and not explicit:
        return "removed", removed[-1]
    if deprecated:
        return "deprecated", deprecated[-1]
    if sig is None or sig.params is None or sig.accepts_any_keyword:
        return None
    if any(x < site.version for x in param_history(site.name, kw.arg)):
        return "dropped", None
    return "unknown", None


def checked_keywords(index: NameIndex, site: NkiCall):
    """The keywords of a call whose kinds are reported one by one (not those
    of a legacy call NKI609 reports as a whole)."""
    if legacy_result_call(index, site) is not None:
        return []
    return site.call.keywords
