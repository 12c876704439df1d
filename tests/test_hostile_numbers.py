"""Big integers and numeric edge cases in the model (issue 20).

Constant folding used to compute whatever the code asked for: twenty lines
of ``x = x * x`` or ``(10 ** 256) ** 256`` took minutes, and an integer past
a float's range crashed the interval arithmetic (``int * inf``). The model
folds integers up to MAX_INT_BITS and makes bigger ones unknown integers.
"""

from __future__ import annotations

import ast

import pytest

from hostile_support import check_one, deadline
from nkilint.model.interp.helpers import _NOPE, _py_binop
from nkilint.model.values import MAX_INT_BITS, Const, Int, Sym, const_int, folded_bits, int_binop


def _kernel(body: list[str]) -> str:
    head = ["import nki", "import nki.language as nl", "", "", "@nki.jit", "def kernel(a):"]
    tail = ["    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)", "    return out", ""]
    return "\n".join(head + [f"    {line}" for line in body] + tail)


@pytest.mark.parametrize(
    "body",
    [
        ["x = 10 ** 100"] + ["x = x * x"] * 24,
        ["y = (10 ** 256) ** 256", "z = y ** y", "w = z * z"],
        ["x = 1 << 63"] + ["x = x << 63"] * 40,
        ["n = 7"] + ["n = n ** 9"] * 12,
        ["s = 12345678901234567890"] + ["s = s * s + s"] * 30,
        ["t = nl.ndarray((128, 2 ** 4000), dtype=nl.float32, buffer=nl.sbuf)"],
        ["t = nl.ndarray((128, 10 ** 300), dtype=nl.float32, buffer=nl.sbuf)", "u = t[0:128, 0:10 ** 300]"],
        ["for i in range(10 ** 400):", "    a = i * 2 ** 900"],
    ],
    ids=["square-chain", "tower", "shift-chain", "power-chain", "affine-growth", "huge-shape", "float-edge", "huge-loop"],
)
def test_big_integer_kernels_finish_without_crashing(tmp_path, body):
    path = tmp_path / "big.py"
    path.write_text(_kernel(body))
    with deadline(60):
        result = check_one(path)
    assert not result.crashed, [n.message for n in result.notifications]
    assert not any(f.rule_id == "NKI003" for f in result.findings)


def test_module_level_big_integers_finish(tmp_path):
    path = tmp_path / "consts.py"
    path.write_text("x = (10 ** 256) ** 256\ny = x ** 30\nz = 2 ** 100000000\nw = 1 << 10 ** 9\nv = -(10 ** 5000)\n")
    with deadline(60):
        result = check_one(path)
    assert not result.crashed


def test_folding_stops_at_the_bit_budget():
    small = Const(2 ** (MAX_INT_BITS // 2 - 1))
    assert const_int(int_binop(ast.Mult, small, small)) == small.value ** 2
    big = Const(2 ** (MAX_INT_BITS - 10))
    out = int_binop(ast.Mult, big, big)
    assert isinstance(out, Int) and const_int(out) is None and "not folded" in out.reason
    assert const_int(int_binop(ast.Pow, Const(10), Const(60))) == 10 ** 60
    assert _py_binop(ast.Pow(), 10, 256) == 10 ** 256
    assert _py_binop(ast.Pow(), 10 ** 5, 250) is _NOPE


def test_affine_forms_stop_growing_at_the_budget():
    n = Int(sym=Sym("n", lo=1, hi=128))
    big = Const(2 ** (MAX_INT_BITS - 20))
    grown = int_binop(ast.Mult, n, big)  # an affine form n * 2**980
    assert grown.bounds[1] == 128 * big.value
    out = int_binop(ast.Mult, grown, Const(2 ** 32))
    assert isinstance(out, Int) and out.terms is None and "not folded" in out.reason


def test_python_folding_gives_up_before_computing():
    assert _py_binop(ast.Mult(), 2 ** 900, 2 ** 900) is _NOPE
    assert _py_binop(ast.Pow(), 10, 10 ** 9) is _NOPE
    assert _py_binop(ast.LShift(), 2 ** 999, 60) is _NOPE
    assert _py_binop(ast.Mult(), 2 ** 400, 2 ** 400) == 2 ** 800
    assert _py_binop(ast.Add(), "a", "b") == "ab"
    assert _py_binop(ast.Pow(), 2.0, 2000) is _NOPE  # OverflowError: not folded, not raised


def test_folded_bits_is_an_upper_bound():
    for op, a, b in [(ast.Mult, 12345, 6789), (ast.Pow, 7, 33), (ast.LShift, 99, 17), (ast.Add, 2 ** 60, 2 ** 60),
                     (ast.Sub, -(2 ** 70), 2 ** 70), (ast.Pow, 3, -2), (ast.Pow, 10, 300),
                     (ast.Pow, 2, 999), (ast.Pow, -3, 77), (ast.Pow, 1, 10 ** 6)]:
        fn = {ast.Mult: lambda x, y: x * y, ast.Pow: lambda x, y: x ** y, ast.LShift: lambda x, y: x << y,
              ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y}[op]
        result = fn(a, b)
        assert int(abs(result)).bit_length() <= folded_bits(op, a, b), (op, a, b)


def test_labels_of_huge_expressions_are_not_unparsed():
    """Found by scripts/fuzz.py: a 400-deep ternary chain in a loop hung the
    model, every nesting level unparsing everything below it for a label cut
    to 80 characters."""
    from nkilint.model.interp.helpers import _node_text

    small = ast.parse("y = a + b * 2").body[0].value
    assert _node_text(small) == "a + b * 2"
    deep = ast.parse("y = " + " if t else ".join(["t"] * 2000)).body[0].value
    assert _node_text(deep).startswith("<IfExp")
    long_line = ast.parse("y = " + " + ".join(["abc"] * 400)).body[0].value
    assert _node_text(long_line).startswith("<BinOp")
