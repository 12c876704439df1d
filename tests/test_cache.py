"""The per-file result cache: reuse, invalidation, and distrust of bad entries."""

from __future__ import annotations

import json
import io
from pathlib import Path

import pytest

from nkilint import engine
from nkilint.cache import FORMAT, decode_result, encode_result
from nkilint.progress import Progress

from conftest import write

SIZES = "TILE = 256\n"

# Current generation: the SBUF tile's partition count comes from a sibling module.
KERNEL = """\
import nki
import nki.language as nl
import nki.isa as nisa
from sizes import TILE


@nki.jit
def add_kernel(a):
    out = nl.ndarray((TILE, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((TILE, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out
"""

# Legacy generation (nl.load / nl.store), same fault.
LEGACY = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
from sizes import TILE


@nki.jit
def copy_kernel(a, out):
    t = nl.load(a[0:TILE, 0:512])
    nl.store(out[0:TILE, 0:512], value=t)
"""


@pytest.fixture
def analysed(monkeypatch):
    """The display paths the engine really analysed (not served by the cache)."""
    seen: list[str] = []
    original = engine.Checker._check_source

    def counting(self, text, display, disk_path=None):
        seen.append(display)
        return original(self, text, display, disk_path)

    monkeypatch.setattr(engine.Checker, "_check_source", counting)
    return seen


def _check(cli, cache: Path, *args: str):
    return cli("check", "--format", "json", "--cache-dir", str(cache), *args)


def _rules(result) -> list[str]:
    return sorted(f["rule"] for f in json.loads(result.stdout)["findings"])


@pytest.mark.parametrize("kernel", [KERNEL, LEGACY], ids=["current", "legacy"])
def test_warm_run_reuses_results_and_an_edited_import_invalidates_its_reader(cli, project, tmp_path, analysed, kernel):
    write(project / "sizes.py", SIZES)
    write(project / "kernel.py", kernel)
    cache = tmp_path / "cache"
    cold = _check(cli, cache, ".")
    assert "NKI101" in _rules(cold)
    assert sorted(analysed) == ["kernel.py", "sizes.py"]
    analysed.clear()
    warm = _check(cli, cache, ".")
    assert analysed == []
    assert warm.stdout == cold.stdout and warm.exit_code == cold.exit_code
    # kernel.py reads sizes.py: editing it re-analyses both, and the finding goes.
    write(project / "sizes.py", "TILE = 128\n")
    after = _check(cli, cache, ".")
    assert sorted(analysed) == ["kernel.py", "sizes.py"]
    assert "NKI101" not in _rules(after)


def test_editing_an_unrelated_file_reanalyses_only_that_file(cli, project, tmp_path, analysed):
    write(project / "sizes.py", SIZES)
    write(project / "kernel.py", KERNEL)
    write(project / "other.py", "X = 1\n")
    cache = tmp_path / "cache"
    _check(cli, cache, ".")
    analysed.clear()
    write(project / "other.py", "X = 2\n")
    _check(cli, cache, ".")
    assert analysed == ["other.py"]


def test_a_new_module_that_shadows_an_import_invalidates(cli, project, tmp_path, analysed):
    # `from sizes import TILE` resolves to lib/sizes.py until ./sizes.py exists.
    write(project / "pyproject.toml", "[tool.nkilint]\n")
    write(project / "kernel.py", KERNEL)
    write(project / "sizes.py", "TILE = 128\n")
    cache = tmp_path / "cache"
    assert "NKI101" not in _rules(_check(cli, cache, "kernel.py"))
    analysed.clear()
    (project / "sizes.py").unlink()
    write(project / "sizes" / "__init__.py", SIZES)
    assert "NKI101" in _rules(_check(cli, cache, "kernel.py"))
    assert analysed == ["kernel.py"]


def test_configuration_and_target_are_part_of_the_key(cli, project, tmp_path, analysed):
    write(project / "sizes.py", SIZES)
    write(project / "kernel.py", KERNEL)
    write(project / "pyproject.toml", "[tool.nkilint]\n")
    cache = tmp_path / "cache"
    assert "NKI101" in _rules(_check(cli, cache, "kernel.py"))
    write(project / "pyproject.toml", '[tool.nkilint]\nignore = ["NKI101"]\n')
    analysed.clear()
    assert "NKI101" not in _rules(_check(cli, cache, "kernel.py"))
    assert analysed == ["kernel.py"]
    analysed.clear()
    _check(cli, cache, "kernel.py", "--sdk", "2.30")
    assert analysed == ["kernel.py"]


def test_a_kernel_mentioned_by_a_new_caller_is_reanalysed(cli, project, tmp_path, analysed):
    # Whether a decorated kernel is launched or only called from other kernels
    # depends on every file of the tree that names it.
    write(project / "pyproject.toml", "[tool.nkilint]\n")
    write(project / "sizes.py", SIZES)
    write(project / "kernel.py", KERNEL)
    write(project / "other.py", "X = 1\n")
    cache = tmp_path / "cache"
    _check(cli, cache, "kernel.py")
    analysed.clear()
    write(project / "other.py", "X = 2\n")
    _check(cli, cache, "kernel.py")
    assert analysed == []  # other.py does not name add_kernel
    write(project / "other.py", "from kernel import add_kernel\n\nadd_kernel(None)\n")
    _check(cli, cache, "kernel.py")
    assert analysed == ["kernel.py"]


@pytest.mark.parametrize("garbage", [b"{not json", b"[]", b'{"format": 1, "key": "x"}', b"\x00\xff" * 10])
def test_corrupt_or_foreign_entries_are_ignored(cli, project, tmp_path, analysed, garbage):
    write(project / "sizes.py", SIZES)
    write(project / "kernel.py", KERNEL)
    cache = tmp_path / "cache"
    cold = _check(cli, cache, ".")
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 2
    for entry in entries:
        entry.write_bytes(garbage)
    analysed.clear()
    again = _check(cli, cache, ".")
    assert sorted(analysed) == ["kernel.py", "sizes.py"]
    assert again.stdout == cold.stdout
    assert all(json.loads(e.read_text())["format"] == FORMAT for e in entries)  # rewritten


def test_an_entry_with_a_tampered_result_for_other_content_is_not_trusted(cli, project, tmp_path, analysed):
    write(project / "sizes.py", SIZES)
    write(project / "kernel.py", KERNEL)
    cache = tmp_path / "cache"
    _check(cli, cache, ".")
    for entry in cache.rglob("*.json"):
        data = json.loads(entry.read_text())
        data["content"] = "0" * 64
        entry.write_text(json.dumps(data))
    analysed.clear()
    assert "NKI101" in _rules(_check(cli, cache, "."))
    assert sorted(analysed) == ["kernel.py", "sizes.py"]


def test_no_cache_reads_and_writes_nothing(cli, project, tmp_path, analysed):
    write(project / "sizes.py", SIZES)
    write(project / "kernel.py", KERNEL)
    cache = tmp_path / "cache"
    _check(cli, cache, ".", "--no-cache")
    assert not cache.exists()
    _check(cli, cache, ".")
    analysed.clear()
    _check(cli, cache, ".", "--no-cache")
    assert sorted(analysed) == ["kernel.py", "sizes.py"]


def test_cache_directory_is_git_ignored_and_clean_removes_it(cli, project, monkeypatch):
    monkeypatch.delenv("NKILINT_CACHE_DIR")
    write(project / "pyproject.toml", "[tool.nkilint]\n")
    write(project / "kernel.py", KERNEL)
    write(project / "sizes.py", SIZES)
    cli("check", ".")
    cache = project / ".nkilint_cache"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert list(cache.rglob("*.json"))
    result = cli("clean")
    assert result.exit_code == 0 and "Removed" in result.stdout
    assert not cache.exists()
    # Never deletes a directory nkilint did not create.
    other = project / "mine"
    write(other / "keep.txt", "x")
    assert "No nkilint cache" in cli("clean", "--cache-dir", str(other)).stdout
    assert (other / "keep.txt").exists()


def test_results_round_trip_through_json(project):
    from nkilint.config import Settings
    from nkilint.discovery import InputFile
    from nkilint.plugins import installed_rules
    from nkilint.selection import resolve_enabled

    fixtures = Path(__file__).resolve().parent.parent / "fixtures"
    settings = Settings(root=project)
    ruleset = installed_rules()
    checker = engine.Checker(settings, ruleset, resolve_enabled(ruleset, None, (), ()))
    seen_fix = seen_related = False
    for path in sorted(fixtures.glob("*/*.py"))[::6]:
        result = checker.check_path(InputFile(path, path.name, True))
        again = decode_result(json.loads(json.dumps(encode_result(result))))
        again.disk_path = result.disk_path
        assert again.findings == result.findings
        assert again.notifications == result.notifications and again.lines == result.lines
        seen_fix |= any(f.fix for f in result.findings)
        seen_related |= any(f.related for f in result.findings)
    assert seen_fix and seen_related


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_only_on_a_terminal_for_long_runs():
    result = engine.FileResult("k.py")
    tty = _Tty()
    progress = Progress(10, tty)
    for _ in range(10):
        progress.update(result)
    progress.finish()
    assert "[10/10] 0 findings" in tty.getvalue() and tty.getvalue().endswith("\r\x1b[K")
    pipe = io.StringIO()
    quiet = Progress(10, pipe)
    quiet.update(result)
    quiet.finish()
    assert pipe.getvalue() == ""
    short = _Tty()
    Progress(2, short).update(result)
    assert short.getvalue() == ""


def test_concurrent_runs_share_a_cache_safely(project, tmp_path):
    import subprocess
    import sys

    for i in range(6):
        write(project / f"k{i}.py", KERNEL if i % 2 else LEGACY)
    write(project / "sizes.py", SIZES)
    cache = tmp_path / "shared-cache"
    cmd = [sys.executable, "-m", "nkilint", "check", ".", "--format", "json", "--exit-zero", "-j", "1",
           "--cache-dir", str(cache)]
    runs = [subprocess.Popen(cmd, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert all(run.returncode == 0 for run in runs)
    findings = [json.loads(out)["findings"] for out in outputs]
    assert findings[0] == findings[1] == findings[2] and findings[0]
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 7 and all(json.loads(e.read_text())["format"] == FORMAT for e in entries)
    assert not list(cache.rglob(".tmp-*"))  # no half-written file left behind
    warm = subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=300)
    assert json.loads(warm.stdout)["findings"] == findings[0]
