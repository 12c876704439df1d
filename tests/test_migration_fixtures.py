"""The migration fixtures (fixtures/migration/): every finding of the family,
for each target NKI version, exactly as marked; the ported twins are clean;
``nkilint check --fix`` on a copy gives the committed expected output byte
for byte, a second ``--fix`` changes nothing, and every fixed file parses.

Markers: ``# expect[0.2,0.3]: NKI603:warning expect[0.6]: NKI603:error``
lists, per target version, the ids (and levels) reported on that line; a
version that a file checks but a line does not name expects nothing there.
"""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from fixture_markers import lint_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "migration"
EXPECTED = FIXTURES / "expected"

# Each bad fixture and the targets its markers cover.
LEGACY_VERSIONS = ("0.1", "0.2", "0.3", "0.6")
BAD = {
    "legacy_matmul_bad.py": LEGACY_VERSIONS,
    "legacy_softmax_bad.py": LEGACY_VERSIONS,
    "legacy_layernorm_bad.py": LEGACY_VERSIONS,
    "legacy_launch_bad.py": LEGACY_VERSIONS,
    "current02_matmul_bad.py": ("0.2", "0.3", "0.6"),
}
GOOD = ("current_matmul_good.py", "current_softmax_good.py", "current_layernorm_good.py")
_ITEM = r"NKI6[0-9][0-9]:[a-z]+"
_MARK = re.compile(rf"expect\[([0-9.,]+)\]:\s*({_ITEM}(?:\s*,\s*{_ITEM})*)")


def versioned_markers(source: str) -> dict[str, set[tuple[int, str, str]]]:
    """version -> {(line, rule id, level)} from the expect[...] markers."""
    out: dict[str, set[tuple[int, str, str]]] = {}
    for lineno, line in enumerate(source.splitlines(), start=1):
        for versions, items in _MARK.findall(line):
            for version in versions.split(","):
                for item in items.split(","):
                    rule, level = item.strip().split(":")
                    out.setdefault(version, set()).add((lineno, rule, level))
    return out


def reported(path: Path, version: str) -> set[tuple[int, str, str]]:
    return {
        (f.span.start_line, f.rule_id, f.level.label)
        for f in lint_file(path, nki_version=version, select=("NKI6",))
        if f.rule_id.startswith("NKI6")
    }


CASES = [pytest.param(name, v, id=f"{name}-{v}") for name, versions in BAD.items() for v in versions]


@pytest.mark.parametrize("name,version", CASES)
def test_bad_fixture_is_reported_exactly(name, version):
    path = FIXTURES / name
    expected = versioned_markers(path.read_text(encoding="utf-8")).get(version, set())
    got = reported(path, version)
    missing = sorted(expected - got)
    extra = sorted(got - expected)
    assert not missing and not extra, f"NKI {version}: missing {missing}, extra {extra}"


def test_markers_cover_the_required_targets():
    """Every legacy kernel is reported for 0.2, 0.3 and 0.6 (the issue's
    targets); the port list is never empty for them."""
    for name, versions in BAD.items():
        markers = versioned_markers((FIXTURES / name).read_text(encoding="utf-8"))
        for version in ("0.2", "0.3", "0.6"):
            assert version in versions
            assert markers.get(version), f"{name} has no findings marked for NKI {version}"
        if name.startswith("legacy_"):
            # 0.6 rejects legacy code inside kernels: errors; 0.2/0.3 still compile
            # it: warnings only (except torch_neuronx.nki_jit, gone since SDK 2.24).
            lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
            assert any(level == "error" for _, _, level in markers["0.6"])
            for version in ("0.2", "0.3"):
                errors = [line for line, _, level in markers[version] if level == "error"]
                assert all("import nki_jit" in lines[line - 1] for line in errors), (name, version, errors)


@pytest.mark.parametrize("name", GOOD)
@pytest.mark.parametrize("version", ("0.2", "0.3", "0.6"))
def test_ported_twin_is_clean(name, version):
    assert reported(FIXTURES / name, version) == set()


def _fix_copy(tmp_path: Path, name: str, unsafe: bool, cli) -> Path:
    work = tmp_path / ("unsafe" if unsafe else "safe")
    work.mkdir(exist_ok=True)
    target = work / name
    shutil.copyfile(FIXTURES / name, target)
    args = ["check", "--isolated", "--select", "migration", "--nki-version", "0.6", "--fix", "--exit-zero", str(target)]
    if unsafe:
        args.insert(-1, "--unsafe-fixes")
    result = cli(*args)
    assert result.exit_code == 0, result.stderr
    return target


@pytest.mark.parametrize("unsafe", [False, True], ids=["fix", "unsafe-fix"])
@pytest.mark.parametrize("name", sorted(BAD))
def test_fix_yields_expected_output(cli, tmp_path, name, unsafe):
    target = _fix_copy(tmp_path, name, unsafe, cli)
    suffix = ".unsafe-fixed.py" if unsafe else ".fixed.py"
    expected = EXPECTED / (name[: -len(".py")] + suffix)
    assert target.read_bytes() == expected.read_bytes(), f"--fix output of {name} differs from {expected.name}"
    ast.parse(target.read_text(encoding="utf-8"))
    # Idempotent: a second --fix finds nothing more to change.
    before = target.read_bytes()
    args = ["check", "--isolated", "--select", "migration", "--nki-version", "0.6", "--fix", "--exit-zero", str(target)]
    if unsafe:
        args.insert(-1, "--unsafe-fixes")
    again = cli(*args)
    assert target.read_bytes() == before
    assert "Fixed" not in again.stdout


def test_expected_outputs_differ_where_fixes_exist():
    """The committed outputs really contain fixes (not copies of the input)."""
    changed = {
        name for name in BAD
        if (EXPECTED / (name[:-3] + ".fixed.py")).read_bytes() != (FIXTURES / name).read_bytes()
    }
    assert {"current02_matmul_bad.py", "legacy_matmul_bad.py", "legacy_layernorm_bad.py"} <= changed
    unsafe_more = {
        name for name in BAD
        if (EXPECTED / (name[:-3] + ".unsafe-fixed.py")).read_bytes()
        != (EXPECTED / (name[:-3] + ".fixed.py")).read_bytes()
    }
    # Loop rewrites in legacy code and mode= in legacy @nki.jit are unsafe only.
    assert {"legacy_matmul_bad.py", "legacy_softmax_bad.py", "legacy_layernorm_bad.py"} <= unsafe_more
    safe_fixed = (EXPECTED / "current02_matmul_bad.fixed.py").read_text(encoding="utf-8")
    assert "nl.affine_range" not in safe_fixed and "buffer='sbuf'" not in safe_fixed
    assert "is_moving_onezero=zero_fill)" in safe_fixed and "psumAccumulateFlag" not in safe_fixed
    legacy_fixed = (EXPECTED / "legacy_matmul_bad.fixed.py").read_text(encoding="utf-8")
    assert "nl.affine_range" in legacy_fixed, "legacy loops must not be rewritten by safe fixes"
    assert "import neuronxcc.nki" in legacy_fixed, "the import rewrite alone is never a safe fix"


def test_diff_writes_nothing_and_shows_the_same_change(cli, tmp_path):
    target = tmp_path / "current02_matmul_bad.py"
    shutil.copyfile(FIXTURES / "current02_matmul_bad.py", target)
    before = target.read_bytes()
    result = cli("check", "--isolated", "--select", "migration", "--sdk", "2.34", "--diff", str(target))
    assert target.read_bytes() == before
    assert result.stdout.startswith("--- a/")
    assert "+    for m in range(M // 128):" in result.stdout
    assert "Would fix" in result.stderr
    # The diff's + lines are the lines of the expected fixed file.
    expected_lines = (EXPECTED / "current02_matmul_bad.fixed.py").read_text(encoding="utf-8").splitlines()
    added = [line[1:] for line in result.stdout.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert added and all(line in expected_lines for line in added)
