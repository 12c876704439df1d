"""The fuzzing suite's short, deterministic run (issue 20).

Fixed seeds (``derandomize``) and example budgets sized to finish in about
a minute; scripts/fuzz.py runs the same properties for as long as asked and
writes minimized reproducers. The property is ``harness.problems``: no
internal error, no hang past the bound, and ``--fix`` output that parses, is
idempotent and adds no error.
"""

from __future__ import annotations

import random

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import decoding_problems, fixture_kernels, mutate, problems


def ci(max_examples: int) -> settings:
    return settings(max_examples=max_examples, derandomize=True, database=None, deadline=None, print_blob=True,
                    suppress_health_check=list(HealthCheck))


@ci(60)
@given(index=st.integers(min_value=0), seed=st.integers(min_value=0, max_value=2 ** 32), legacy=st.booleans())
def test_mutated_fixture_kernels(index, seed, legacy):
    kernels = fixture_kernels()
    text = mutate(kernels[index % len(kernels)], random.Random(seed), rounds=1 + seed % 4)
    assert problems(text, legacy=legacy) == []


@ci(25)
@given(source=hypothesmith.from_grammar())
def test_grammar_generated_modules(source):
    assert problems(source, fix=False) == []


@ci(25)
@given(source=hypothesmith.from_node())
def test_syntax_tree_generated_modules(source):
    assert problems(source) == []


@ci(300)
@given(data=st.one_of(
    st.binary(max_size=256),
    st.builds(lambda cookie, body: f"# -*- coding: {cookie} -*-\n".encode() + body,
              st.sampled_from(["rot13", "base64", "zlib", "utf-16", "utf-32", "latin-1", "idna", "punycode", "uu",
                               "hex", "bz2", "quopri", "utf-7", "cp1252", "ascii", "nonsense", "utf-8-sig"]),
              st.binary(max_size=64)),
    st.builds(lambda text, bom: (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"),
              st.text(max_size=64), st.booleans()),
))
def test_decoding_arbitrary_bytes(data):
    assert decoding_problems(data) == []
