""".gitignore files during directory discovery (nkilint/gitignore.py), on
temporary trees without git."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CLEAN_KERNEL, write
from nkilint.discovery import discover
from nkilint.gitignore import GitIgnore, decide, parse_lines, parse_pattern


def _ignored(patterns: str, rel: str, is_dir: bool = False) -> bool | None:
    return decide(parse_lines(patterns), rel, is_dir)


@pytest.mark.parametrize(
    "patterns, rel, is_dir, expected",
    [
        ("*.py", "a.py", False, True),
        ("*.py", "deep/er/a.py", False, True),  # no slash: the name is matched at any depth
        ("gen_*.py", "gen_x.py", False, True),
        ("gen_*.py", "xgen_x.py", False, None),
        ("build/", "build", True, True),
        ("build/", "build", False, None),  # directory-only: not a file named build
        ("/top.py", "top.py", False, True),
        ("/top.py", "sub/top.py", False, None),  # anchored
        ("a/b.py", "a/b.py", False, True),
        ("a/b.py", "x/a/b.py", False, None),  # a middle slash anchors too
        ("a/**/b.py", "a/b.py", False, True),
        ("a/**/b.py", "a/x/y/b.py", False, True),
        ("**/cache", "x/y/cache", True, True),
        ("**/cache", "cache", True, True),
        ("out/**", "out/k.py", False, True),
        ("out/**", "out", True, None),  # everything inside, not the directory
        ("k?.py", "k1.py", False, True),
        ("k?.py", "k10.py", False, None),
        ("k[0-9].py", "k7.py", False, True),
        ("k[!0-9].py", "k7.py", False, None),
        ("k[!0-9].py", "kx.py", False, True),
        ("*.py\n!keep.py", "keep.py", False, False),
        ("!keep.py\n*.py", "keep.py", False, True),  # the last match wins
        ("\\#hash.py", "#hash.py", False, True),
        ("# a comment\n\n   \n", "a.py", False, None),
        ("a.py   ", "a.py", False, True),  # trailing spaces dropped
        ("a\\*.py", "a*.py", False, True),
        ("a\\*.py", "ab.py", False, None),
    ],
)
def test_pattern_semantics(patterns, rel, is_dir, expected):
    # decide() gets the path from the .gitignore's directory.
    assert _ignored(patterns, rel, is_dir) is expected


def test_blank_and_comment_lines_are_no_patterns():
    assert parse_pattern("") is None
    assert parse_pattern("# x") is None
    assert parse_pattern("/") is None
    assert parse_pattern("!") is None


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        write(root / rel, text)


def _found(root: Path, *paths: str, respect: bool = True) -> list[str]:
    files, errors = discover(list(paths) or [str(root)], root, (), respect_gitignore=respect)
    assert errors == []
    return sorted(f.display for f in files)


def test_discovery_honours_nested_gitignore_files(tmp_path):
    _tree(tmp_path, {
        ".gitignore": "generated/\n*_tmp.py\n/scratch.py\n",
        "kernels/a.py": "", "kernels/b_tmp.py": "", "scratch.py": "", "kernels/scratch.py": "",
        "generated/g.py": "", "kernels/generated/g.py": "",
        "legacy/.gitignore": "*.py\n!keep.py\n",
        "legacy/old.py": "", "legacy/keep.py": "", "legacy/sub/deep.py": "",
        "legacy/sub/.gitignore": "!deep.py\n",
    })
    assert _found(tmp_path) == ["kernels/a.py", "kernels/scratch.py", "legacy/keep.py", "legacy/sub/deep.py"]
    everything = _found(tmp_path, respect=False)
    assert len(everything) == 9 and "generated/g.py" in everything and "legacy/old.py" in everything


def test_a_file_in_an_ignored_directory_cannot_be_re_included(tmp_path):
    _tree(tmp_path, {".gitignore": "out/\n!out/keep.py\n", "out/keep.py": "", "k.py": ""})
    assert _found(tmp_path) == ["k.py"]


def test_walking_a_subdirectory_applies_the_gitignore_files_above_it(tmp_path):
    _tree(tmp_path, {".gitignore": "src/gen/\n", "src/k.py": "", "src/gen/g.py": ""})
    assert _found(tmp_path, str(tmp_path / "src")) == ["src/k.py"]


def test_git_info_exclude_and_the_checkout_as_top(tmp_path):
    _tree(tmp_path, {".git/info/exclude": "private.py\n", ".gitignore": "!private.py\nother.py\n",
                     "pkg/private.py": "", "pkg/other.py": "", "pkg/k.py": "", "private.py": ""})
    # The project root is pkg/ (say, its pyproject.toml), but the .gitignore
    # chain starts at the checkout: the root .gitignore still applies, and it
    # re-includes what info/exclude ignores (it ranks above).
    files, _ = discover([str(tmp_path / "pkg")], tmp_path / "pkg", ())
    assert sorted(f.display for f in files) == ["k.py", "private.py"]
    (tmp_path / ".gitignore").unlink()
    files, _ = discover([str(tmp_path / "pkg")], tmp_path / "pkg", ())
    assert sorted(f.display for f in files) == ["k.py", "other.py"]


def test_explicit_files_and_directories_are_checked_even_if_ignored(tmp_path):
    _tree(tmp_path, {".gitignore": "gen/\nskip.py\n", "gen/g.py": "", "gen/sub/h.py": "", "skip.py": "", "k.py": ""})
    assert _found(tmp_path, str(tmp_path / "skip.py")) == ["skip.py"]
    assert _found(tmp_path, str(tmp_path / "gen")) == ["gen/g.py", "gen/sub/h.py"]
    assert _found(tmp_path) == ["k.py"]


def test_the_chain_reads_each_gitignore_once(tmp_path, monkeypatch):
    _tree(tmp_path, {".gitignore": "x.py\n", **{f"d{i}/k{j}.py": "" for i in range(3) for j in range(3)}})
    ignore = GitIgnore(tmp_path)
    reads = []
    original = GitIgnore._read
    monkeypatch.setattr(GitIgnore, "_read", staticmethod(lambda p: reads.append(p) or original(p)))
    for i in range(3):
        for j in range(3):
            assert not ignore.ignored(tmp_path / f"d{i}" / f"k{j}.py", is_dir=False)
    assert sorted(reads) == sorted({tmp_path / ".gitignore", *(tmp_path / f"d{i}" / ".gitignore" for i in range(3))})


# -- the command line and the configuration ----------------------------------
def _files_checked(cli, *args: str) -> int:
    result = cli("check", "-v", "--select", "NKI0", *args)
    assert result.exit_code == 0, result.stdout + result.stderr
    line = next(l for l in result.stderr.splitlines() if l.endswith("to check"))
    return int(line.split()[1])


def test_cli_respects_gitignore_by_default_and_can_turn_it_off(cli, project):
    _tree(project, {".gitignore": "build_out/\n", "k.py": CLEAN_KERNEL, "build_out/k.py": "import neuronxcc.nki.language as nl\n"})
    assert _files_checked(cli) == 1
    assert _files_checked(cli, "--no-respect-gitignore") == 2
    assert _files_checked(cli, "--respect-gitignore") == 1
    # A file named on the command line is checked although it is ignored.
    assert _files_checked(cli, "build_out/k.py") == 1


def test_config_turns_gitignore_off_and_the_cli_wins(cli, project):
    _tree(project, {".gitignore": "gen/\n", "k.py": CLEAN_KERNEL, "gen/k.py": CLEAN_KERNEL,
                    "pyproject.toml": "[tool.nkilint]\nrespect-gitignore = false\n"})
    assert _files_checked(cli) == 2
    assert _files_checked(cli, "--respect-gitignore") == 1


def test_config_rejects_a_non_boolean(cli, project):
    write(project / "pyproject.toml", '[tool.nkilint]\nrespect-gitignore = "no"\n')
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "k.py")
    assert result.exit_code == 2
    assert "'respect-gitignore' must be true or false" in result.stderr


def test_the_linear_matcher_agrees_with_the_regex():
    # Patterns with many wildcards are matched without the regex (which can
    # backtrack for ages); on random patterns and paths both must agree.
    import random
    import re

    from nkilint.gitignore import _CLASS, _compile, _nfa_match, _tokens

    rng = random.Random(18)
    pieces = ["a", "b", "/", "*", "**/", "?", "[ab]", "[!a]"]
    checked = 0
    for _ in range(3000):
        pattern = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7))).strip("/") or "a"
        if rng.random() < 0.2:
            pattern += "/**"
        regex, _ = _compile(pattern)
        tokens = tuple((k, re.compile(v) if k == _CLASS else v) for k, v in _tokens(pattern))
        for _ in range(5):
            path = "".join(rng.choice("ab/") for _ in range(rng.randint(1, 9))).strip("/") or "a"
            assert _nfa_match(tokens, path) == (regex.fullmatch(path) is not None), (pattern, path)
            checked += 1
    assert checked == 15000


def test_a_pathological_pattern_is_matched_quickly(tmp_path):
    import time

    pattern = parse_pattern("a*a*a*a*a*a*a*a*a*a*a*a*b")
    assert pattern.tokens  # not the backtracking regex
    start = time.perf_counter()
    assert not pattern.matches("a" * 400, is_dir=False)
    assert time.perf_counter() - start < 5
    _tree(tmp_path, {".gitignore": "a*a*a*a*a*a*a*a*a*a*a*a*b\n", ("a" * 200) + ".py": "", "k.py": ""})
    assert len(_found(tmp_path)) == 2


def test_unreadable_ignore_files_are_no_patterns(tmp_path):
    import os

    (tmp_path / ".gitignore").mkdir()  # a directory, not a file
    write(tmp_path / "k.py", "")
    sub = tmp_path / "sub"
    sub.mkdir()
    os.mkfifo(sub / ".gitignore")  # never opened for a blocking read
    write(sub / "s.py", "")
    write(tmp_path / "big" / ".gitignore", "*.py\n" + "#" * (4 * 1024 * 1024))  # over the size cap
    write(tmp_path / "big" / "b.py", "")
    write(tmp_path / "bin" / ".gitignore", b"\xff\xfe*.py\n\x00\nb2.py\n")
    write(tmp_path / "bin" / "b2.py", "")
    write(tmp_path / "bin" / "b3.py", "")
    assert _found(tmp_path) == ["big/b.py", "bin/b3.py", "k.py", "sub/s.py"]
