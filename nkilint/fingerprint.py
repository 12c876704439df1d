"""``partialFingerprints.primaryLocationLineHash`` as GitHub computes it.

GitHub's upload-sarif action (github/codeql-action, src/fingerprints.ts)
fills in this fingerprint for results that lack it: a rolling hash (base 37,
64-bit wrap-around) over the first 100 non-blank characters from the start of
each line, with CR/CRLF normalised to LF, spaces and tabs skipped, an EOF
marker (65535) after the text and zero padding; a repeated hash gets a
``:n`` occurrence suffix. Computing it ourselves keeps alerts stable across
uploads. Tested against the action's own test vectors.
"""

from __future__ import annotations

BLOCK_SIZE = 100
MOD = 37
MASK = (1 << 64) - 1
EOF = 65535
_FIRST_MOD = pow(MOD, BLOCK_SIZE, 1 << 64)
_TAB, _SPACE, _LF, _CR = 9, 32, 10, 13


def line_hashes(text: str) -> dict[int, str]:
    """Hash of every line (1-based line -> 'hex:count')."""
    window = [0] * BLOCK_SIZE
    line_numbers = [-1] * BLOCK_SIZE
    hash_raw = 0
    index = 0
    line_number = 0
    line_start = True
    prev_cr = False
    counts: dict[str, int] = {}
    out: dict[int, str] = {}

    def output() -> None:
        value = format(hash_raw & MASK, "x")
        counts[value] = counts.get(value, 0) + 1
        out[line_numbers[index]] = f"{value}:{counts[value]}"
        line_numbers[index] = -1

    def update(current: int) -> None:
        nonlocal hash_raw, index
        begin = window[index]
        window[index] = current
        hash_raw = (MOD * hash_raw + current - _FIRST_MOD * begin) & MASK
        index = (index + 1) % BLOCK_SIZE

    def process(current: int) -> None:
        nonlocal prev_cr, line_start, line_number
        if current in (_SPACE, _TAB) or (prev_cr and current == _LF):
            prev_cr = False
            return
        if current == _CR:
            current = _LF
            prev_cr = True
        else:
            prev_cr = False
        if line_numbers[index] != -1:
            output()
        if line_start:
            line_start = False
            line_number += 1
            line_numbers[index] = line_number
        if current == _LF:
            line_start = True
        update(current)

    # JavaScript strings are UTF-16: charCodeAt yields code units.
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        process(data[i] | (data[i + 1] << 8))
    process(EOF)
    for _ in range(BLOCK_SIZE):
        if line_numbers[index] != -1:
            output()
        update(0)
    return out
