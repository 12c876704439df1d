"""Text that is safe to print on a terminal or a CI log.

File names and source lines come from the tree being linted, which may be
hostile: a file named ``"\\x1b]0;pwned\\x07.py"`` or a comment holding
``\\r`` or a right-to-left override would rewrite what the user sees. Every
human-readable output escapes such characters, as Python's ``repr`` does,
so that what is printed is what is there; machine formats (JSON, SARIF)
keep the real text, escaped by their own syntax.
"""

from __future__ import annotations

import unicodedata

# Characters that move the cursor, change colours, or reorder text
# (the bidirectional controls of "Trojan Source", CVE-2021-42574).
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _unsafe(ch: str) -> bool:
    return ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def printable(text: str, keep_tabs: bool = False) -> str:
    """``text`` with every control, format, line/paragraph-separator and
    bidirectional character written as a backslash escape (``\\n``,
    ``\\x1b``, ``\\u202e``); other text, non-ASCII letters included, as is.
    ``keep_tabs`` leaves tab characters alone (source lines keep their
    indentation)."""
    if text.isprintable():
        return text  # the common case: nothing to escape
    return "".join(_escape(ch) if _unsafe(ch) and not (keep_tabs and ch == "\t") else ch for ch in text)
