"""primaryLocationLineHash against GitHub codeql-action's own test vectors
(github/codeql-action, src/fingerprints.test.ts, test 'hash')."""

from __future__ import annotations

import re

import pytest

from nkilint.fingerprint import line_hashes

HELLO = [
    "e9496ae3ebfced30:1",
    "fb7c023a8b9ccb3f:1",
    "ce8ba1a563dcdaca:1",
    "e20e36e16fcb0cc8:1",
    "b3edc88f2938467e:1",
    "c8e28b0b4002a3a0:1",
    "c129715d7a2bc9a3:1",
]

VECTORS = [
    ("", ["c129715d7a2bc9a3:1"]),
    (" a\nb\n  \t\tc\n d", ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]),
    (
        " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
        ["8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1", "b86d3392aea1be30:1", "e6ceba753e1a442:1"],
    ),
    (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n", HELLO),
    (" hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r", HELLO),
    (" hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n", HELLO),
    (" hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n", HELLO),
    (
        "Lorem ipsum dolor sit amet.\n" * 10,
        [f"a7f2ff13bc495cf2:{i}" for i in range(1, 7)]
        + ["a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1", "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1", "c129715d7a2bc9a3:1"],
    ),
    (
        "x = 2\nx = 1\nprint(x)\nx = 3\nprint(x)\nx = 4\nprint(x)\n",
        [
            "e54938cc54b302f1:1",
            "bb609acbe9138d60:1",
            "1131fd5871777f34:1",
            "5c482a0f8b35ea28:1",
            "54517377da7028d2:1",
            "2c644846cb18d53e:1",
            "f1b89f20de0d133:1",
            "c129715d7a2bc9a3:1",
        ],
    ),
]


@pytest.mark.parametrize("text,expected", VECTORS, ids=[repr(t[:20]) for t, _ in VECTORS])
def test_codeql_action_vectors(text, expected):
    hashes = line_hashes(text)
    assert sorted(hashes) == list(range(1, len(expected) + 1))
    assert [hashes[i] for i in sorted(hashes)] == expected
    # As the action's test checks: one hash per line of the input.
    assert len(hashes) == len(re.split(r"\r\n|\r|\n", text))


def test_whitespace_and_line_endings_do_not_change_hashes():
    a = line_hashes("def f():\n    return 1\n")
    b = line_hashes("def f():\r\n\treturn  1\r\n")
    assert a == b


def test_distinct_lines_get_distinct_hashes():
    hashes = line_hashes("import nki\nimport numpy\n")
    assert hashes[1] != hashes[2]
    assert all(re.fullmatch(r"[0-9a-f]{1,16}:1", h) for h in hashes.values())

