"""Reports name files relative to the project root (the configuration
file's directory, else the git checkout, else the cwd), whatever the
working directory; --fix writes the file that was analysed."""

from __future__ import annotations

import json
from pathlib import Path

from nkilint.paths import display_path, git_root, project_root

from conftest import LEGACY_KERNEL, write
from test_fixes import KERNEL_02, KERNEL_02_FIXED

HELPER = """\
import nki.language as nl
import nki.isa as nisa


def copy_through(a, out):
    tile = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=a)
    nisa.dma_copy(dst=out, src=tile)
"""

CALLER = """\
import nki
import nki.language as nl
from pkg.helpers import copy_through


@nki.jit
def kernel(a):
    out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    copy_through(a, out)
    return out
"""


def _checkout(project: Path) -> Path:
    (project / ".git").mkdir()
    write(project / "kernels" / "ops" / "k.py", LEGACY_KERNEL)
    return project


def test_root_is_the_git_checkout_else_the_cwd(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    inner = tmp_path / "repo" / "a" / "b"
    inner.mkdir(parents=True)
    assert git_root(inner) == tmp_path / "repo"
    assert project_root(inner, cwd=tmp_path) == (tmp_path / "repo").resolve()
    assert project_root(tmp_path, cwd=tmp_path) == tmp_path.resolve()
    assert display_path(inner / "k.py", tmp_path / "repo") == "a/b/k.py"
    assert display_path(tmp_path / "x.py", tmp_path / "repo") == (tmp_path / "x.py").as_posix()


def test_json_and_text_paths_from_a_subdirectory(cli, project, monkeypatch):
    _checkout(project)
    monkeypatch.chdir(project / "kernels")
    doc = json.loads(cli("check", "--format", "json", "ops").stdout)
    assert [f["path"] for f in doc["findings"]] == ["kernels/ops/k.py"]
    text = cli("check", "ops/k.py").stdout
    assert "kernels/ops/k.py:1:1: NKI601" in text


def test_sarif_from_a_subdirectory_is_relative_to_the_repository(cli, project, monkeypatch, sarif_log):
    _checkout(project)
    monkeypatch.chdir(project / "kernels" / "ops")
    log = sarif_log(cli("check", "--format", "sarif", ".").stdout)
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "kernels/ops/k.py", "uriBaseId": "%SRCROOT%"}


def test_configuration_directory_is_the_root(cli, project, monkeypatch):
    write(project / "sub" / "pyproject.toml", "[tool.nkilint]\n")
    write(project / "sub" / "pkg" / "k.py", LEGACY_KERNEL)
    monkeypatch.chdir(project / "sub" / "pkg")
    doc = json.loads(cli("check", "--format", "json", "k.py").stdout)
    assert [f["path"] for f in doc["findings"]] == ["pkg/k.py"]


def test_stdin_filename_is_relative_to_the_root(cli, project, monkeypatch):
    _checkout(project)
    monkeypatch.chdir(project / "kernels")
    doc = json.loads(cli("check", "--format", "json", "-", "--stdin-filename", "ops/new.py", input=LEGACY_KERNEL).stdout)
    assert [f["path"] for f in doc["findings"]] == ["kernels/ops/new.py"]


def test_helper_site_is_a_related_location_with_the_repository_path(cli, project, monkeypatch, sarif_log):
    # No checkout marker: the helper is outside the checked tree, so the
    # fault is reported at the call that reaches it.
    write(project / "pkg" / "__init__.py", "")
    write(project / "pkg" / "helpers.py", HELPER)
    write(project / "sub" / "k.py", CALLER)
    doc = json.loads(cli("check", "--format", "json", "--select", "NKI101", "sub/k.py").stdout)
    (finding,) = doc["findings"]
    assert "(in pkg/helpers.py:6, reached from here)" in finding["message"]
    assert [(r["path"], r["range"]["start"]["line"]) for r in finding["related"]] == [("pkg/helpers.py", 6)]
    log = sarif_log(cli("check", "--format", "sarif", "--select", "NKI101", "sub/k.py").stdout)
    (related,) = log["runs"][0]["results"][0]["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"] == {"uri": "pkg/helpers.py", "uriBaseId": "%SRCROOT%"}
    assert related["physicalLocation"]["region"]["startLine"] == 6
    text = cli("check", "--select", "NKI101", "sub/k.py").stdout
    assert "= note: pkg/helpers.py:6:12:" in text


def test_fix_from_a_subdirectory_writes_the_analysed_file(cli, project, monkeypatch):
    (project / ".git").mkdir()
    target = write(project / "kernels" / "k.py", KERNEL_02)
    # What the display path ("kernels/k.py") names when read from the cwd.
    decoy = write(project / "kernels" / "kernels" / "k.py", KERNEL_02)
    monkeypatch.chdir(project / "kernels")
    result = cli("check", "--isolated", "--select", "migration", "--sdk", "2.34", "--fix", "k.py", "--exclude", "kernels/kernels")
    assert target.read_text(encoding="utf-8") == KERNEL_02_FIXED
    assert decoy.read_text(encoding="utf-8") == KERNEL_02
    assert "Fixed 6." in result.stdout


def test_example_fix_is_refused(cli, project):
    result = cli("check", "--example", "--fix")
    assert result.exit_code == 2
    assert "--diff" in result.stderr
