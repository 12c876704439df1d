#!/usr/bin/env python3
"""Snapshot nkilint's findings and compare two snapshots.

A refactoring of the model or the rule pack must not change what any rule
reports. This script records every finding (rule, path, range, level,
message) over the test fixtures, the bundled example and any public kernel
checkouts given, under several targets and NKI versions, and compares two
such records.

    python scripts/compare_findings.py snapshot before.json [--corpus DIR ...]
    ... change the code ...
    python scripts/compare_findings.py snapshot after.json [--corpus DIR ...]
    python scripts/compare_findings.py diff before.json after.json

``diff`` prints the findings only one side has, grouped by rule, and exits 1
when the snapshots differ. Corpora are checked with ``--isolated`` from
their own directory, so paths are relative to the checkout. nkilint runs as
a subprocess of the interpreter running this script (``-m nkilint``), so the
installed package is the one measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

# Option sets the fixtures are checked under: the default target and
# version, and every setting a fixture or rule treats differently.
FIXTURE_RUNS: dict[str, list[str]] = {
    "default": [],
    "nki-0.1": ["--nki-version", "0.1"],
    "nki-0.2": ["--nki-version", "0.2"],
    "nki-0.3": ["--nki-version", "0.3"],
    "nki-0.6": ["--nki-version", "0.6"],  # the default before SDK releases were targets (issue 13)
    "sdk-2.24": ["--sdk", "2.24"],  # a legacy release inside NKI 0.1
    "trn1": ["--target", "trn1"],
    "trn3": ["--target", "trn3"],
}
CORPUS_RUNS: dict[str, list[str]] = {"default": []}
ALL_RULES = ["--select", "ALL", "--extend-select", "NKI433"]


def run_nkilint(args: list[str], cwd: Path) -> list[dict]:
    cmd = [sys.executable, "-m", "nkilint", "check", "--format", "json", "--exit-zero", "--isolated", *args]
    # The result cache goes to a directory of our own, never into a corpus
    # checkout (an older nkilint, which has no cache, ignores the variable).
    with tempfile.TemporaryDirectory(prefix="nkilint-compare-cache-") as cache:
        env = {**os.environ, "NKILINT_CACHE_DIR": cache}
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode not in (0, 1, 2) or not proc.stdout.strip():
        raise SystemExit(f"nkilint failed in {cwd}: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    report = json.loads(proc.stdout)
    return [normalize(f) for f in report["findings"]]


def normalize(finding: dict) -> dict:
    r = finding["range"]
    return {
        "rule": finding["rule"],
        "path": finding["path"],
        "range": [r["start"]["line"], r["start"]["column"], r["end"]["line"], r["end"]["column"]],
        "level": finding["level"],
        "message": finding["message"],
    }


def key(f: dict) -> tuple:
    return (f["rule"], f["path"], tuple(f["range"]), f["level"], f["message"])


def snapshot(out: Path, corpora: list[Path]) -> None:
    data: dict[str, list[dict]] = {}
    for label, opts in FIXTURE_RUNS.items():
        data[f"fixtures:{label}"] = run_nkilint([*ALL_RULES, *opts, "fixtures"], HERE)
        print(f"fixtures:{label}: {len(data[f'fixtures:{label}'])} findings", file=sys.stderr)
    data["example"] = run_nkilint([*ALL_RULES, "--example"], HERE)
    for corpus in corpora:
        for label, opts in CORPUS_RUNS.items():
            name = f"{corpus.name}:{label}"
            data[name] = run_nkilint([*opts, "."], corpus.resolve())
            print(f"{name}: {len(data[name])} findings", file=sys.stderr)
    for findings in data.values():
        findings.sort(key=key)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def diff(a_path: Path, b_path: Path) -> int:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    differs = False
    for run in sorted(set(a) | set(b)):
        if run not in a or run not in b:
            print(f"{run}: only in {'the first' if run in a else 'the second'} snapshot")
            differs = True
            continue
        ka, kb = Counter(map(key, a[run])), Counter(map(key, b[run]))
        removed, added = ka - kb, kb - ka
        total = sum(ka.values())
        if not removed and not added:
            print(f"{run}: identical ({total} findings)")
            continue
        differs = True
        print(f"{run}: {sum(removed.values())} removed, {sum(added.values())} added (of {total})")
        by_rule: dict[str, list[tuple[str, tuple]]] = defaultdict(list)
        for k in removed.elements():
            by_rule[k[0]].append(("-", k))
        for k in added.elements():
            by_rule[k[0]].append(("+", k))
        for rule in sorted(by_rule):
            for sign, k in sorted(by_rule[rule], key=lambda x: (x[1][1], x[1][2], x[0])):
                print(f"  {sign} {k[0]} {k[1]}:{k[2][0]}:{k[2][1]} {k[3]}: {k[4][:160]}")
    return 1 if differs else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot", help="record the findings")
    snap.add_argument("out", type=Path)
    snap.add_argument("--corpus", type=Path, action="append", default=[], help="a kernel checkout (repeatable)")
    d = sub.add_parser("diff", help="compare two snapshots")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        snapshot(args.out, args.corpus)
        return 0
    return diff(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
