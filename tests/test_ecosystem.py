"""scripts/ecosystem.py on a tiny tree: baseline, diff, verdicts, precision."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BAD = """\
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def kernel(a):
    buf = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out
"""

WORSE = BAD.replace("    return out\n", "    other = nl.ndarray((512, 512), dtype=nl.float32, buffer=nl.sbuf)\n    return out\n")


def _script():
    spec = importlib.util.spec_from_file_location("ecosystem", ROOT / "scripts" / "ecosystem.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tree(tmp_path):
    eco = tmp_path / "eco"
    eco.mkdir()
    root = tmp_path / "checkouts"
    repo = root / "tiny"
    repo.mkdir(parents=True)
    (repo / "k.py").write_text(BAD)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    subprocess.run(git + ["add", "k.py"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-qm", "k"], cwd=repo, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    (eco / "repos.toml").write_text(f'[[repo]]\nname = "tiny"\nurl = ""\ncommit = "{commit}"\nargs = []\n')
    return eco, root, repo


def run(eco, *args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "ecosystem.py"), "--dir", str(eco), *args],
                          capture_output=True, text=True)


def test_baseline_then_diff_shows_added_findings_and_verdicts(tree):
    eco, root, repo = tree
    first = run(eco, "run", "--root", str(root), "--write")
    assert first.returncode == 1, first.stdout + first.stderr  # one NKI101 error without a verdict
    assert "tiny: 1 findings (1 added, 0 removed)" in first.stdout and "+ NKI101 k.py:7" in first.stdout
    baseline = (eco / "baseline.json").read_text()
    assert '"NKI101"' in baseline and '"k.py"' in baseline

    # Judge it, then the same run is clean and the precision counts it.
    unjudged = run(eco, "unjudged", "--root", str(root)).stdout.strip().split("\t")
    assert unjudged[:4] == ["tiny", "NKI101", "k.py", "7"]
    (eco / "judged.tsv").write_text(
        "repo\trule\tpath\tline\tmessage_hash\tverdict\twhy\n"
        + "\t".join(unjudged[:5] + ["true", "256 partitions"]) + "\n"
    )
    again = run(eco, "run", "--root", str(root))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "tiny: 1 findings (0 added, 0 removed)" in again.stdout
    assert "errors 100.0 % true (1/1 judged, 0 unjudged)" in again.stdout

    # A new defect shows up as added and unjudged; the judged one stays.
    (repo / "k.py").write_text(WORSE)
    worse = run(eco, "run", "--root", str(root))
    assert worse.returncode == 1
    assert "+ NKI101 k.py:10" in worse.stdout and "(unjudged)" in worse.stdout
    assert "(1 added, 0 removed)" in worse.stdout


def test_message_hash_is_stable_and_distinguishes_messages():
    script = _script()
    assert script.message_hash("x") == script.message_hash("x") != script.message_hash("y")


def test_removed_true_finding_is_flagged_as_lost(tree):
    eco, root, repo = tree
    run(eco, "run", "--root", str(root), "--write")
    row = run(eco, "unjudged", "--root", str(root)).stdout.strip().split("\t")
    (eco / "judged.tsv").write_text("repo\trule\tpath\tline\tmessage_hash\tverdict\twhy\n"
                                    + "\t".join(row[:5] + ["true", "real"]) + "\n")
    (repo / "k.py").write_text(BAD.replace("(256, 512)", "(128, 512)"))
    out = run(eco, "run", "--root", str(root)).stdout
    assert "- NKI101 k.py:7 (true, LOST)" in out


def test_reworded_message_carries_its_verdict_only_when_the_old_one_is_gone():
    script = _script()
    old = ("tiny", "NKI101", "k.py", 7, "aaaaaaaaaaaa")
    judged = {old: ("true", "256 partitions")}
    reworded = {"rule": "NKI101", "path": "k.py", "line": 7, "level": "error", "message_hash": "bbbbbbbbbbbb"}
    elsewhere = dict(reworded, line=9, message_hash="cccccccccccc")
    carried = script.carried_verdicts({"tiny": {"findings": [reworded, elsewhere]}}, judged)
    assert carried == [(("tiny", "NKI101", "k.py", 7, "bbbbbbbbbbbb"), "true", "(reworded) 256 partitions")]
    # The old finding is still reported: the new one is a second finding, to be judged.
    still = dict(reworded, message_hash="aaaaaaaaaaaa")
    assert script.carried_verdicts({"tiny": {"findings": [reworded, still]}}, judged) == []
    # Conflicting verdicts on that line: nothing is guessed.
    judged[("tiny", "NKI101", "k.py", 7, "dddddddddddd")] = ("false", "no")
    assert script.carried_verdicts({"tiny": {"findings": [reworded]}}, judged) == []
