"""Graph and review output never depend on PYTHONHASHSEED (issue 16).

Joining two branches makes one phi view per name the branches bind; the
names used to be visited as a set of strings, so the views' node ids (and
which ids the sendrecv operands got) changed from run to run. Findings did
not change, but `nkilint graph` and the review JSON must be reproducible."""

from __future__ import annotations

import json
import textwrap

from conftest import run_nkilint

# Six tensors bound on both sides of a branch the model cannot decide; with
# set order the chance of matching source order by luck is 1 in 720.
BRANCHED_SENDRECV = """
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k(x, flag):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    if flag:
{both}
    else:
{both}
    nisa.dma_copy(dst=send, src=x)
    nisa.sendrecv(send, out, 1, 0)
    return out
"""
NAMES = ("acc", "mean", "squares", "gate", "up", "send")
BOTH = "\n".join(f"        {n} = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)" for n in NAMES)
SEEDS = ("0", "1", "2")


def _kernel(tmp_path):
    (tmp_path / "kernel.py").write_text(textwrap.dedent(BRANCHED_SENDRECV).format(both=BOTH), encoding="utf-8")


def test_branch_join_views_follow_the_source_order(tmp_path):
    _kernel(tmp_path)
    graph = json.loads(run_nkilint("graph", "kernel.py", cwd=tmp_path).stdout)
    nodes = graph["kernels"][0]["nodes"]
    phis = [n for n in nodes if n.get("index") == "(either branch)"]
    assert [n["name"] for n in phis] == list(NAMES)
    # Ids are handed out in creation order, so they ascend with the names.
    ids = [int(n["id"][1:]) for n in phis]
    assert ids == sorted(ids) and len(set(ids)) == len(NAMES)


def test_graph_and_review_are_identical_under_three_hash_seeds(tmp_path):
    _kernel(tmp_path)
    commands = {
        "graph json": ("graph", "kernel.py"),
        "graph dot": ("graph", "--format", "dot", "kernel.py"),
        "review json": ("review", "--format", "json", "kernel.py"),
    }
    for label, args in commands.items():
        outputs = {}
        for seed in SEEDS:
            proc = run_nkilint(*args, cwd=tmp_path, env_extra={"PYTHONHASHSEED": seed})
            assert proc.returncode == 0, (label, proc.stderr)
            outputs[seed] = proc.stdout
        assert "sendrecv" in outputs["0"], label
        assert len(set(outputs.values())) == 1, f"{label} differs between hash seeds"
