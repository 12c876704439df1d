"""``.gitignore`` matching for directory discovery, without running git.

The patterns follow gitignore(5) (https://git-scm.com/docs/gitignore):
blank lines and ``#`` comments are skipped, ``!`` re-includes, a trailing
``/`` matches directories only, a slash at the start or in the middle
anchors the pattern to the directory of its ``.gitignore`` (otherwise it
matches a name at any depth), ``*`` and ``?`` stay within one path
component, ``**/``, ``/**/`` and a trailing ``/**`` cross directories, and
``\\`` escapes. In one file the last matching pattern wins; a deeper
``.gitignore`` overrides a shallower one; ``.git/info/exclude`` of the
checkout ranks below them all.

Each entry is matched on its own, as git and ruff do while walking: a
directory that is ignored is not entered (so nothing below it can be
re-included), and the contents of a directory named on the command line
are checked even when the directory itself is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .safefs import read_text_capped


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the path from the .gitignore's directory, else the name

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        subject = rel if self.anchored else rel.rsplit("/", 1)[-1]
        return self.regex.fullmatch(subject) is not None


def _strip_trailing_spaces(line: str) -> str:
    # Trailing spaces are dropped unless escaped with a backslash.
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def _char_class(pattern: str, start: int) -> tuple[str, int] | None:
    """A ``[...]`` class starting at ``start``: its regex and the index after it."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    body_start = i
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a ']' first in the class is literal
    while i < len(pattern) and pattern[i] != "]":
        i += 1
    if i >= len(pattern):
        return None  # no closing bracket: a literal '['
    body = pattern[body_start:i]
    for special in ("\\", "^", "[", "]"):
        body = body.replace(special, "\\" + special)
    return ("[^/" if negate else "[") + body + "]", i + 1


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")  # zero or more directories
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.+")  # everything inside
            i += 3
        elif pattern[i] == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            parsed = _char_class(pattern, i)
            if parsed is None:
                out.append(re.escape("["))
                i += 1
            else:
                out.append(parsed[0])
                i = parsed[1]
        elif pattern[i] == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def parse_pattern(line: str) -> Pattern | None:
    """One line of a .gitignore; None for blank lines and comments."""
    line = _strip_trailing_spaces(line.rstrip("\r\n"))
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/") if anchored else line
    if not line:
        return None
    return Pattern(re.compile(_translate(line), re.DOTALL), negated, dir_only, anchored)


def parse_lines(text: str) -> tuple[Pattern, ...]:
    return tuple(p for p in (parse_pattern(line) for line in text.splitlines()) if p is not None)


def decide(patterns: tuple[Pattern, ...], rel: str, is_dir: bool) -> bool | None:
    """True: ignored, False: re-included, None: no pattern matches."""
    for pattern in reversed(patterns):
        if pattern.matches(rel, is_dir):
            return not pattern.negated
    return None


class GitIgnore:
    """The ignore files of one tree, each read once.

    ``top`` is the directory the chain of .gitignore files starts at (the
    git checkout, else the project root): files between it and a walked
    directory apply too.
    """

    def __init__(self, top: Path) -> None:
        self.top = Path(top)
        self._files: dict[Path, tuple[Pattern, ...]] = {}
        exclude = self.top / ".git" / "info" / "exclude"
        self._info_exclude = self._read(exclude)

    @staticmethod
    def _read(path: Path) -> tuple[Pattern, ...]:
        try:
            return parse_lines(read_text_capped(path, errors="replace"))
        except (OSError, ValueError):  # absent, a directory, too large: no patterns
            return ()

    def _patterns(self, directory: Path) -> tuple[Pattern, ...]:
        found = self._files.get(directory)
        if found is None:
            found = self._files[directory] = self._read(directory / ".gitignore")
        return found

    def ignored(self, path: Path, is_dir: bool) -> bool:
        """Whether ``path`` (under ``top``) is ignored, judged on its own
        (its directories were judged when the walk reached them)."""
        try:
            rel = Path(path).relative_to(self.top)
        except ValueError:
            return False
        parts = rel.parts
        if not parts:
            return False
        decision = decide(self._info_exclude, "/".join(parts), is_dir)
        directory = self.top
        for depth in range(len(parts)):
            verdict = decide(self._patterns(directory), "/".join(parts[depth:]), is_dir)
            if verdict is not None:
                decision = verdict
            directory = directory / parts[depth]
        return decision is True
