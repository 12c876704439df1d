"""NKI506 beyond its embedded examples: the range-reduction check on the
syntax around a ScalarE sin (AST, not source text), eps recognised through
separate instructions, and the inverse-square-root forms of a variance."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fixture_markers import lint_file

SIN = """
import math
import nki
import nki.language as nl
import nki.isa as nisa
{prelude}

@nki.jit
def rope_sin(pos):
    out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    ang = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ang, src=pos)
    {line}
    nisa.activation(dst=ang, op=nl.sin, data=ang)
    nisa.dma_copy(dst=out, src=ang)
    return out
"""


def _lint(tmp_path: Path, code: str, select=("NKI506",)):
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return [f for f in lint_file(path, select=select) if f.rule_id.startswith(select)]


def _sin_lines(tmp_path: Path, line: str, prelude: str = "") -> list[int]:
    return [f.span.start_line for f in _lint(tmp_path, SIN.format(line=line, prelude=prelude))]


def test_sin_without_any_reduction_is_reported(tmp_path):
    assert _sin_lines(tmp_path, "x = 1") == [14]


def test_pi_in_a_comment_or_string_is_not_a_range_reduction(tmp_path):
    # The old text search took "pi" and "%" in comments and strings for a reduction.
    assert _sin_lines(tmp_path, 'name = "pi %d" % 3  # angles mod 2 pi') == [14]


def test_pi_or_modulo_in_the_function_counts(tmp_path):
    assert _sin_lines(tmp_path, "half = math.pi / 2") == []
    assert _sin_lines(tmp_path, "k = 7 % 3") == []


def test_a_module_constant_bound_to_pi_counts(tmp_path):
    assert _sin_lines(tmp_path, "period = TWO_PI", prelude="TWO_PI = 2 * math.pi") == []


def test_pi_after_the_call_does_not_count(tmp_path):
    code = SIN.format(line="x = 1", prelude="").replace(
        "    return out", "    half = math.pi\n    return out")
    assert [f.span.start_line for f in _lint(tmp_path, code)] == [14]
