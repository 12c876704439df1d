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
from typing import Any

from .safefs import read_text_capped


# Token kinds of a translated pattern.
_LIT, _ONE, _CLASS, _STAR, _DIRS, _REST = range(6)
# Above this many unbounded wildcards a regex can backtrack for ages on a
# long name ('a*a*a*a*a*a*b'); such patterns are matched by _nfa_match in
# time linear in the path instead.
_REGEX_STARS = 2


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the path from the .gitignore's directory, else the name
    tokens: tuple[tuple[int, Any], ...] = ()  # set when the regex could backtrack badly

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        subject = rel if self.anchored else rel.rsplit("/", 1)[-1]
        if self.tokens:
            return _nfa_match(self.tokens, subject)
        return self.regex.fullmatch(subject) is not None


def _nfa_match(tokens: tuple[tuple[int, Any], ...], text: str) -> bool:
    """Whether ``text`` matches the tokens, simulating every position at
    once (no backtracking). A state is (token index, inside): ``inside``
    marks a ``**/`` or trailing ``/**`` that has consumed characters."""
    end = len(tokens)

    def closure(states: set[tuple[int, bool]]) -> set[tuple[int, bool]]:
        todo, seen = list(states), set(states)
        while todo:
            pos, inside = todo.pop()
            if pos == end:
                continue
            kind = tokens[pos][0]
            if kind == _STAR or (kind == _DIRS and not inside) or (kind == _REST and inside):
                nxt = (pos + 1, False)
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    states = closure({(0, False)})
    for char in text:
        following: set[tuple[int, bool]] = set()
        for pos, inside in states:
            if pos == end:
                continue
            kind, value = tokens[pos]
            if kind == _LIT:
                if char == value:
                    following.add((pos + 1, False))
            elif kind in (_ONE, _CLASS):
                if char != "/" and (kind == _ONE or value.fullmatch(char)):
                    following.add((pos + 1, False))
            elif kind == _STAR:
                if char != "/":
                    following.add((pos, False))
            elif kind == _DIRS:  # (?:.*/)? : any characters, ending at a '/'
                following.add((pos, True))
                if char == "/":
                    following.add((pos + 1, False))
            else:  # _REST: one or more characters of anything
                following.add((pos, True))
        if not following:
            return False
        states = closure(following)
    return any(pos == end for pos, _ in states)


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


def _tokens(pattern: str) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append((_DIRS, None))  # zero or more directories
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.extend(((_LIT, "/"), (_REST, None)))  # everything inside
            i += 3
        elif pattern[i] == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append((_STAR, None))
        elif pattern[i] == "?":
            out.append((_ONE, None))
            i += 1
        elif pattern[i] == "[":
            parsed = _char_class(pattern, i)
            if parsed is None:
                out.append((_LIT, "["))
                i += 1
            else:
                out.append((_CLASS, parsed[0]))
                i = parsed[1]
        elif pattern[i] == "\\" and i + 1 < n:
            out.append((_LIT, pattern[i + 1]))
            i += 2
        else:
            out.append((_LIT, pattern[i]))
            i += 1
    return out


_REGEX_OF = {_ONE: "[^/]", _STAR: "[^/]*", _DIRS: "(?:.*/)?", _REST: ".+"}


def _compile(pattern: str) -> tuple[re.Pattern[str], tuple[tuple[int, Any], ...]]:
    """The regex of a pattern, and its tokens when the regex might backtrack
    badly (then the tokens are matched instead)."""
    tokens = _tokens(pattern)
    regex = "".join(
        re.escape(value) if kind == _LIT else value if kind == _CLASS else _REGEX_OF[kind] for kind, value in tokens
    )
    unbounded = sum(1 for kind, _ in tokens if kind in (_STAR, _DIRS, _REST))
    nfa = tuple((kind, re.compile(value) if kind == _CLASS else value) for kind, value in tokens)
    return re.compile(regex, re.DOTALL), nfa if unbounded > _REGEX_STARS else ()


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
    regex, tokens = _compile(line)
    return Pattern(regex, negated, dir_only, anchored, tokens)


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
