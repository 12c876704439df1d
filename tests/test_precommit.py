"""The pre-commit hook: its definition, and real pre-commit running it
against a throwaway git repository (slow: pre-commit builds a virtualenv
and installs nkilint from a copy of this project, which needs PyPI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import CLEAN_KERNEL, LEGACY_KERNEL, write

ROOT = Path(__file__).resolve().parents[1]
BUILD_ARTEFACTS = ("__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".pytest_cache", ".venv*", ".git")


def test_hook_definition():
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["id"] == "nkilint"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "pyi"]
    assert hook["require_serial"] is True
    assert hook["entry"].split() == ["nkilint", "check", "--force-exclude"]


def test_readme_documents_the_hook():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = readme[readme.index("# .pre-commit-config.yaml") :]
    snippet = snippet[: snippet.index("```")]
    config = yaml.safe_load(snippet)
    [repo] = config["repos"]
    assert repo["rev"] and repo["repo"].startswith("https://")
    assert repo["hooks"][0]["id"] == "nkilint"


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        PRE_COMMIT_HOME=str(home / "pre-commit-cache"),
    )
    env.pop("PYTHONPATH", None)
    return env


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


def _project_files(env: dict[str, str]) -> list[Path]:
    """The project's files: tracked and new ones (not ignored) when this is
    a git checkout, else the working tree minus build artefacts."""
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    if proc.returncode == 0 and proc.stdout:
        return [ROOT / p for p in proc.stdout.split("\0") if p and (ROOT / p).is_file()]
    ignore = shutil.ignore_patterns(*BUILD_ARTEFACTS)
    out = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in ignore(dirpath, dirnames)]
        out.extend(Path(dirpath) / f for f in filenames if f not in ignore(dirpath, filenames))
    return out


def _pre_commit(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=1200,
    )


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_pre_commit_runs_the_hook(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = _git_env(home)

    # A copy of this project as a git repository with one commit.
    hook_repo = tmp_path / "nkilint-repo"
    for path in _project_files(env):
        target = hook_repo / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    assert (hook_repo / ".pre-commit-hooks.yaml").is_file()
    _git("init", "-q", cwd=hook_repo, env=env)
    _git("add", "-A", cwd=hook_repo, env=env)
    _git("commit", "-q", "-m", "snapshot", cwd=hook_repo, env=env)
    sha = _git("rev-parse", "HEAD", cwd=hook_repo, env=env)

    # A user's repository with a legacy-NKI kernel.
    user = tmp_path / "user"
    write(user / "kernels" / "softmax.py", LEGACY_KERNEL)
    write(
        user / ".pre-commit-config.yaml",
        "repos:\n"
        f"  - repo: {hook_repo.as_posix()}\n"
        f"    rev: {sha}\n"
        "    hooks:\n"
        "      - id: nkilint\n"
        '        args: ["--nki-version", "0.6"]\n',
    )
    _git("init", "-q", cwd=user, env=env)
    _git("add", "-A", cwd=user, env=env)

    failed = _pre_commit(user, env)
    output = failed.stdout + failed.stderr
    assert failed.returncode != 0, output
    assert "nkilint" in output and "Failed" in output
    assert "kernels/softmax.py:1:1: NKI601" in output

    # Fixed kernel, plus a legacy file that the project's config excludes:
    # the hook's --force-exclude applies it to the files pre-commit passes.
    write(user / "kernels" / "softmax.py", CLEAN_KERNEL)
    write(user / "generated" / "old.py", LEGACY_KERNEL)
    write(user / "pyproject.toml", '[tool.nkilint]\nextend-exclude = ["generated"]\n')
    _git("add", "-A", cwd=user, env=env)
    passed = _pre_commit(user, env)
    output = passed.stdout + passed.stderr
    assert passed.returncode == 0, output
    assert "Passed" in output
    assert "NKI601" not in output
