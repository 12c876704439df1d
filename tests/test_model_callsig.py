"""How a call binds to the target release's signature (nkilint.model.callsig)."""

from __future__ import annotations

import ast

from nkilint.model.bindings import Gen, Qual
from nkilint.model.callsig import bind, signature_for
from nkilint.releases import parse_release


def _call(text: str) -> ast.Call:
    node = ast.parse(text).body[0].value
    assert isinstance(node, ast.Call)
    return node


def _bind(text: str, name: str, gen: Gen, release: str):
    found = signature_for(Qual(name, gen), parse_release(release))
    assert found is not None
    sig, sdk = found
    return bind(_call(text), sig, sdk)


def test_missing_axis_of_a_legacy_reduction():
    b = _bind("nl.sum(t)", "nki.language.sum", Gen.LEGACY, "2.24")
    assert b.missing == ("axis",)
    assert b.sdk == "2.24.0"
    assert b.signature.verified


def test_keyword_only_dtype_of_the_legacy_api():
    b = _bind("nl.max(t, 1, nl.float32)", "nki.language.max", Gen.LEGACY, "2.24")
    assert (b.extra_positional, b.max_positional, b.missing) == (1, 2, ())


def test_legacy_code_at_a_current_release_is_read_in_the_newest_legacy_table():
    b = _bind("nl.sum(t, 1)", "nki.language.sum", Gen.LEGACY, "2.30")
    assert b.sdk == "2.26.0" and not b.faulty


def test_current_namespace_before_2_27_has_no_signature():
    assert signature_for(Qual("nki.language.sum", Gen.CURRENT), parse_release("2.24")) is None


def test_doubled_parameter_and_unpacking():
    b = _bind("nisa.dma_copy(t, x, dst=t)", "nki.isa.dma_copy", Gen.CURRENT, "2.30")
    assert b.doubled == ("dst",) and b.faulty
    spread = _bind("nisa.dma_copy(*args)", "nki.isa.dma_copy", Gen.CURRENT, "2.30")
    assert spread.unpacked and not spread.faulty


def test_a_default_the_stubs_dropped_is_not_required():
    # The 2.27 stubs list sequential_range(start, stop, step) without defaults;
    # 2.28 gives stop a default, so one argument is not judged missing.
    b = _bind("nl.sequential_range(n)", "nki.language.sequential_range", Gen.CURRENT, "2.27")
    assert not b.missing


def test_signatures_after_the_newest_stubs_are_not_verified():
    found = signature_for(Qual("nki.isa.tensor_reduce", Gen.CURRENT), parse_release("2.34"))
    assert found is not None and found[0].source == "carried" and not found[0].verified
    found = signature_for(Qual("nki.isa.tensor_reduce", Gen.CURRENT), parse_release("2.32"))
    assert found is not None and found[0].verified
