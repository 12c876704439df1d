"""Deep valid code under a low recursion limit (issue 20).

On Python 3.10 the engine cannot give the rules more recursion room (its
calls use the C stack), so every walk the model does over syntax must be
iterative or depth-guarded. The test simulates 3.10 on 3.11: in a child
process the file is parsed with a high limit (as CPython 3.10's parser
would accept it), then the rules run with the limit lowered to 3.10's
default of 1,000 frames, on 3,000-deep expressions, the deepest statement
nesting CPython compiles, and 190-deep calls.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from nkilint.model.trampoline import run

N = 3000
OPS = " + ".join(["a"] * N)
SHAPES = {
    "sum": f"y = {OPS}",
    "tiles": "t2 = " + " + ".join(["t"] * N),
    "if_tensor": "if " + " + ".join(["t"] * N) + ":\n    y = 1",
    "not": "y = " + "not " * N + "a",
    "neg": "y = " + "-" * N + "a",
    "ternary": "y = " + " if c else ".join(["a"] * N),
    "subscript": "y = a" + "[0]" * N,
    "attr": "y = a" + ".b" * N,
    "call_chain": "y = f" + "()" * N,
    "calls": "t2 = " + "nl.exp(" * 190 + "t" + ")" * 190,
    "index": "t[" + " + ".join(["i"] * N) + ", 0] = 1",
    "shape": "t3 = nl.ndarray((128, " + " * ".join(["2"] * N) + "), dtype=nl.float32, buffer=nl.sbuf)",
    "assert": "assert " + " < ".join(["a"] * N) + " and " + OPS,
    "walrus": f"if (w := {OPS}):\n    y = w",
    "names": "u0 = t\n" + "\n".join(f"u{k + 1} = u{k}" for k in range(N)) + f"\nif u{N}:\n    y = 1",
    "ifs": "\n".join("    " * k + "if a:" for k in range(90)) + "\n" + "    " * 90 + "y = 1",
    "withs": "\n".join("    " * k + "with f():" for k in range(19)) + "\n" + "    " * 19 + "y = 1",
}
CURRENT = ("import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n\n@nki.jit\ndef kernel(a, c, f, i):\n"
           "    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)\n")
LEGACY = ("import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef kernel(a, c, f, i):\n"
          "    ip = nl.arange(128)[:, None]\n    t = nl.load(a[ip, 0])\n")
LEGACY_SHAPES = {
    "l_load": "t2 = nl.load(a[" + " + ".join(["ip"] * N) + ", 0])",
    "l_index": "j = " + " + ".join(["ip"] * N) + "\nnl.store(c[j, 0], value=t)",
    "l_names": "j0 = ip\n" + "\n".join(f"j{k + 1} = j{k}" for k in range(N)) + f"\nnl.store(c[j{N}, 0], value=t)",
}

CHILD = textwrap.dedent("""
    import contextlib, json, sys
    from pathlib import Path
    sys.setrecursionlimit(40_000)  # parsing: what CPython 3.10's parser accepts
    sys.path.insert(0, sys.argv[1])
    import nkilint.engine as engine
    from hostile_support import check_one

    @contextlib.contextmanager
    def python310(tree):  # the rules run with 3.10's default limit
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(1000)
        try:
            yield
        finally:
            sys.setrecursionlimit(previous)

    engine._recursion_room = python310
    out = {}
    for path in sys.argv[2:]:
        result = check_one(Path(path))
        out[Path(path).stem] = {
            "crashes": sorted({(n.rule_id or "") + ": " + n.message[:160] for n in result.notifications}),
            "rules": sorted({f.rule_id for f in result.findings}),
        }
    print(json.dumps(out))
""")


def _kernel(head: str, body: str) -> str:
    return head + textwrap.indent(body, "    ") + "\n    return a\n\n" + body + "\n"


def test_deep_valid_code_needs_no_recursion_room(tmp_path):
    paths = []
    for shapes, head in ((SHAPES, CURRENT), (LEGACY_SHAPES, LEGACY)):
        for name, body in shapes.items():
            path = tmp_path / f"{name}.py"
            path.write_text(_kernel(head, body), encoding="utf-8")
            paths.append(str(path))
    proc = subprocess.run([sys.executable, "-c", CHILD, str(Path(__file__).parent), *paths],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert set(results) == set(SHAPES) | set(LEGACY_SHAPES)
    crashed = {name: r["crashes"] for name, r in results.items() if r["crashes"]}
    assert not crashed, crashed
    assert not any({"NKI001", "NKI003"} & set(r["rules"]) for r in results.values()), results
    # The rules looked through the deep code instead of giving up on it:
    # a branch on a 3,000-term tensor sum, and on a tensor reached through
    # 3,000 names, is still control flow on a tensor.
    assert "NKI701" in results["if_tensor"]["rules"], results["if_tensor"]
    assert "NKI701" in results["names"]["rules"], results["names"]


def test_trampoline_answers_a_deep_question_in_order():
    seen = []

    def depth(n):
        seen.append(n)
        if n == 0:
            return 0
        return 1 + (yield depth(n - 1))

    assert run(depth(20_000)) == 20_000
    assert seen[:3] == [20_000, 19_999, 19_998]

    def first_true(values):
        for v in values:
            if (yield leaf(v)):
                return v
        return None

    def leaf(v):
        seen.append(("leaf", v))
        return v > 1
        yield  # a generator that asks nothing

    seen.clear()
    assert run(first_true([0, 1, 2, 3])) == 2
    assert seen == [("leaf", 0), ("leaf", 1), ("leaf", 2)]  # short-circuits like the recursive version
