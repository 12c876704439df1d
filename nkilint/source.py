"""Reading one file: bytes -> text -> syntax tree, and positions.

Decoding follows PEP 263 (BOM, coding cookie, UTF-8 default). The hot path
parses with CPython's ``ast`` (positions on every node, ~10x faster than a
libcst parse); libcst is used where formatting must be kept (fixes), see
``nkilint.fixes``. A syntax error becomes a ``SourceError`` carrying the true
line and column from Python's own parser.
"""

from __future__ import annotations

import ast
import codecs
import re
import tokenize
import warnings
from dataclasses import dataclass
from functools import cached_property

from . import astwalk
from .findings import Span

# The largest file we will analyse; beyond it a file is almost certainly data.
MAX_FILE_BYTES = 8 * 1024 * 1024

_CODING_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split only at \\n, \\r\\n and \\r as Python's
    tokenizer does (``str.splitlines`` also splits at form feeds, U+2028 and
    other characters that are not line breaks in Python source)."""
    return _LINE_RE.findall(text)


@dataclass(frozen=True)
class SourceError(Exception):
    """A file that cannot be analysed: why, and where if known."""

    kind: str  # "syntax", "encoding", "binary", "unreadable", "too-large"
    message: str
    line: int = 1
    col: int = 1
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return self.message


def decode_source(data: bytes) -> str:
    """Decode Python source bytes as the interpreter would (PEP 263).

    Raises SourceError for binary content, unknown codecs and bytes that are
    invalid in the declared (or default UTF-8) encoding.
    """
    if len(data) > MAX_FILE_BYTES:
        raise SourceError("too-large", f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not analysed")
    if b"\x00" in data[:8192]:
        raise SourceError("binary", "file contains NUL bytes: it looks binary, not Python source")
    encoding = "utf-8"
    body = data
    if data.startswith(codecs.BOM_UTF8):
        body = data[len(codecs.BOM_UTF8):]
        encoding = "utf-8"
    else:
        for line in data.splitlines()[:2]:
            match = _CODING_RE.match(line)
            if match:
                encoding = match.group(1).decode("ascii", "replace")
                break
            if line.strip() and not line.lstrip().startswith(b"#"):
                break
    try:
        codec = codecs.lookup(encoding)
    except LookupError:
        raise SourceError("encoding", f"unknown encoding {encoding!r} declared in the coding cookie") from None
    if not getattr(codec, "_is_text_encoding", True):
        # rot13, base64, zlib...: codecs.lookup knows them, but they map bytes
        # to bytes (or str to str); Python refuses them as source encodings.
        raise SourceError(
            "encoding",
            f"the coding cookie declares {encoding!r}, which is not a text encoding; Python cannot read this file "
            "(declare a text encoding such as utf-8)",
        )
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        line = body[: exc.start].count(b"\n") + 1
        raise SourceError(
            "encoding",
            f"file is not valid {encoding}: byte 0x{body[exc.start]:02x} at offset {exc.start} "
            f"cannot be decoded (declare the encoding with a '# -*- coding: ... -*-' line or re-save as UTF-8)",
            line=line,
        ) from None
    except Exception as exc:  # noqa: BLE001 - a codec's own failure (idna, punycode...) is the file's problem
        raise SourceError("encoding", f"file cannot be decoded as {encoding}: {type(exc).__name__}: {exc}") from None
    if not isinstance(text, str):  # pragma: no cover - a codec that returns bytes
        raise SourceError("encoding", f"the coding cookie declares {encoding!r}, which does not decode to text")
    return text


class SourceFile:
    """One decoded file with its syntax tree and position helpers."""

    def __init__(self, path: str, text: str, display_path: str | None = None) -> None:
        self.path = path
        self.display_path = display_path or path
        # Normalise newlines once so that lines/positions agree with ast.
        self.text = text
        self.lines = split_lines(text)

    @cached_property
    def tree(self) -> ast.Module:
        return parse_python(self.text)

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the syntax tree in ast.walk order, computed once and
        shared: rules that scan the whole file iterate this list instead of
        walking the tree again."""
        nodes, depth = astwalk.walk_levels(self.tree)
        self.__dict__.setdefault("depth", depth)
        return nodes

    @cached_property
    def depth(self) -> int:
        """How deep the syntax tree nests (the module alone is 1), found with
        ``nodes`` in one walk."""
        nodes, depth = astwalk.walk_levels(self.tree)
        self.__dict__.setdefault("nodes", nodes)
        return depth

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """id(node) -> parent node, for the whole tree (computed once, shared)."""
        out: dict[int, ast.AST] = {}
        child_nodes = astwalk.child_nodes
        for node in self.nodes:
            for child in child_nodes(node):
                out[id(child)] = node
        return out

    def line_text(self, line: int) -> str:
        """The text of a 1-based line without its newline ('' if absent)."""
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1].rstrip("\r\n")
        return ""

    def byte_col_to_char(self, line: int, byte_col: int) -> int:
        """ast gives columns in UTF-8 bytes; SARIF wants code points."""
        text = self.line_text(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def span_of(self, node: ast.AST) -> Span:
        """The span of an ast node (1-based, code points, end exclusive)."""
        line = getattr(node, "lineno", 1) or 1
        col = getattr(node, "col_offset", 0) or 0
        end_line = getattr(node, "end_lineno", None) or line
        end_col = getattr(node, "end_col_offset", None)
        if end_col is None:
            end_col = col + 1
        start = self.byte_col_to_char(line, col) + 1
        end = self.byte_col_to_char(end_line, end_col) + 1
        if end_line == line and end <= start:
            end = start + 1
        return Span(line, start, end_line, end)

    def text_of(self, span: Span) -> str:
        """The source text inside a span."""
        if span.start_line == span.end_line:
            return self.line_text(span.start_line)[span.start_col - 1 : span.end_col - 1]
        parts = [self.line_text(span.start_line)[span.start_col - 1 :]]
        for line in range(span.start_line + 1, span.end_line):
            parts.append(self.line_text(line))
        parts.append(self.line_text(span.end_line)[: span.end_col - 1])
        return "\n".join(parts)

    def comments(self) -> list[tuple[int, int, str]]:
        """(line, 1-based col, text) of every comment, from the tokenizer."""
        out: list[tuple[int, int, str]] = []
        try:
            # The lines the parser sees: a lone CR ends a line too.
            lines = iter([line.rstrip("\r\n") + "\n" if line.endswith(("\r", "\n")) else line for line in self.lines])
            for tok in tokenize.generate_tokens(lambda: next(lines, "")):
                if tok.type == tokenize.COMMENT:
                    out.append((tok.start[0], tok.start[1] + 1, tok.string))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            pass
        return out


def parse_python(text: str) -> ast.Module:
    """Parse with CPython's parser; raise SourceError with the true position."""
    try:
        with warnings.catch_warnings():
            # Invalid escape sequences etc. are the user's business, not ours.
            warnings.simplefilter("ignore")
            return ast.parse(text, type_comments=False)
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        end_line = getattr(exc, "end_lineno", None)
        end_col = getattr(exc, "end_offset", None)
        # CPython offsets are 1-based and count characters of the line text.
        message = exc.msg or "invalid syntax"
        if end_line is not None and end_col is not None and (end_line, end_col) <= (line, col):
            end_line = end_col = None
        raise SourceError("syntax", f"syntax error: {message}", line, max(col, 1), end_line, end_col) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError: e.g. source with NUL characters after decoding.
        raise SourceError("syntax", f"cannot parse file: {exc}") from None
