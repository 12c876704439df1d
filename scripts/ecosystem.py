#!/usr/bin/env python3
"""The ecosystem check: nkilint over pinned public kernel repositories.

As ruff and mypy do before every release, this runs nkilint over checkouts
of real kernel repositories at pinned commits, keeps their findings as a
baseline in the repository, and shows what a change adds or removes, rule
by rule. Every finding a change adds must be judged (true / false / noise)
before it lands; the verdicts live in ``ecosystem/judged.tsv`` and this
script prints the precision they give.

It is a development tool, not part of CI (CI has no network): checkouts
live outside the project tree.

    python scripts/ecosystem.py fetch --root ../eco            # clone / check out the pinned commits
    python scripts/ecosystem.py run --root ../eco              # findings now vs the baseline, per rule
    python scripts/ecosystem.py run --root ../eco --write      # make the current findings the baseline
    python scripts/ecosystem.py precision [--root ../eco]      # precision over the judged findings
    python scripts/ecosystem.py unjudged --root ../eco         # current warnings/errors with no verdict
    python scripts/ecosystem.py judge --root ../eco verdicts.tsv   # record verdicts (repo, rule, path:line, verdict, why)
    python scripts/ecosystem.py carry --root ../eco             # keep verdicts of findings whose message was reworded

Repositories and their options are in ``ecosystem/repos.toml``::

    [[repo]]
    name = "nki-library"
    url = "https://github.com/aws-neuron/nki-library"
    commit = "d2ad3a5..."
    args = []            # extra nkilint check arguments (a target release, ...)

``judged.tsv`` columns: repo, rule, path, line, message hash, verdict
(true | false | noise), why. A finding is matched to its verdict by repo,
rule, path, line and message hash.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent.parent
DEFAULT_DIR = HERE / "ecosystem"
VERDICTS = ("true", "false", "noise")
JUDGED_HEADER = ["repo", "rule", "path", "line", "message_hash", "verdict", "why"]


@dataclass(frozen=True)
class Repo:
    name: str
    url: str
    commit: str
    args: tuple[str, ...] = ()


def load_repos(eco_dir: Path) -> list[Repo]:
    data = tomllib.loads((eco_dir / "repos.toml").read_text(encoding="utf-8"))
    return [Repo(r["name"], r.get("url", ""), r["commit"], tuple(r.get("args", ()))) for r in data.get("repo", [])]


def message_hash(message: str) -> str:
    return hashlib.sha1(message.encode("utf-8")).hexdigest()[:12]


def finding_key(repo: str, f: dict) -> tuple:
    return (repo, f["rule"], f["path"], int(f["line"]), f["message_hash"])


def check_repo(repo: Repo, checkout: Path, python: str = sys.executable) -> list[dict]:
    """Run nkilint over one checkout; findings as baseline entries."""
    cmd = [python, "-m", "nkilint", "check", "--format", "json", "--exit-zero", "--isolated", "--no-cache",
           *repo.args, "."]
    proc = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True)
    if not proc.stdout.strip():
        raise SystemExit(f"nkilint gave no report for {repo.name}: {proc.stderr[-2000:]}")
    out = []
    for f in json.loads(proc.stdout)["findings"]:
        if f.get("suppressed"):
            continue
        out.append({
            "rule": f["rule"], "family": f.get("family", ""), "path": f["path"],
            "line": f["range"]["start"]["line"], "level": f["level"],
            "message_hash": message_hash(f["message"]), "message": f["message"],
        })
    out.sort(key=lambda f: (f["path"], f["line"], f["rule"], f["message_hash"]))
    return out


def head_commit(checkout: Path) -> str:
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True)
    return proc.stdout.strip()


def load_judged(eco_dir: Path) -> dict[tuple, tuple[str, str]]:
    path = eco_dir / "judged.tsv"
    out: dict[tuple, tuple[str, str]] = {}
    if not path.exists():
        return out
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            verdict = row["verdict"].strip()
            if verdict not in VERDICTS:
                raise SystemExit(f"judged.tsv: verdict {verdict!r} must be one of {', '.join(VERDICTS)}")
            key = (row["repo"], row["rule"], row["path"], int(row["line"]), row["message_hash"])
            out[key] = (verdict, row.get("why", ""))
    return out


def current_findings(eco_dir: Path, root: Path) -> dict[str, dict]:
    results: dict[str, dict] = {}
    for repo in load_repos(eco_dir):
        checkout = root / repo.name
        if not checkout.is_dir():
            print(f"{repo.name}: no checkout at {checkout} (run `fetch`)", file=sys.stderr)
            continue
        commit = head_commit(checkout)
        if commit and repo.commit and not commit.startswith(repo.commit):
            print(f"{repo.name}: checkout is at {commit[:10]}, pinned {repo.commit[:10]}", file=sys.stderr)
        results[repo.name] = {"commit": commit or repo.commit, "findings": check_repo(repo, checkout)}
    return results


def load_baseline(eco_dir: Path) -> dict[str, dict]:
    path = eco_dir / "baseline.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def write_baseline(eco_dir: Path, results: dict[str, dict]) -> None:
    slim = {
        name: {"commit": r["commit"], "findings": [
            {k: f[k] for k in ("rule", "family", "path", "line", "level", "message_hash")} for f in r["findings"]
        ]}
        for name, r in sorted(results.items())
    }
    (eco_dir / "baseline.json").write_text(json.dumps(slim, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def diff_against_baseline(baseline: dict, results: dict, judged: dict) -> tuple[list[str], int]:
    """Lines to print, and the number of added findings without a verdict."""
    lines: list[str] = []
    unjudged = 0
    for name in sorted(results):
        before = Counter(finding_key(name, f) for f in baseline.get(name, {}).get("findings", []))
        now = {finding_key(name, f): f for f in results[name]["findings"]}
        after = Counter(finding_key(name, f) for f in results[name]["findings"])
        added, removed = after - before, before - after
        lines.append(f"{name}: {sum(after.values())} findings ({sum(added.values())} added, "
                     f"{sum(removed.values())} removed)")
        per_rule: dict[str, list[str]] = defaultdict(list)
        for key in added.elements():
            f = now[key]
            verdict = judged.get(key, ("unjudged", ""))[0]
            if verdict == "unjudged" and f["level"] != "note":
                unjudged += 1
            per_rule[key[1]].append(f"  + {key[1]} {key[2]}:{key[3]} [{f['level']}] ({verdict}) {f['message'][:140]}")
        for key in removed.elements():
            verdict = judged.get(key, ("unjudged", ""))[0]
            per_rule[key[1]].append(f"  - {key[1]} {key[2]}:{key[3]} ({verdict}{', LOST' if verdict == 'true' else ''})")
        for rule in sorted(per_rule):
            lines.extend(per_rule[rule])
    return lines, unjudged


def precision(results: dict, judged: dict, families_excluded: tuple[str, ...] = ("migration",)) -> list[str]:
    """Precision of the judged warnings and errors, per repository and level
    (families in ``families_excluded`` left out, as the precision goals say)."""
    lines = []
    totals: Counter = Counter()
    for name in sorted(results):
        counts: Counter = Counter()
        for f in results[name]["findings"]:
            if f["level"] == "note" or f.get("family") in families_excluded:
                continue
            verdict = judged.get(finding_key(name, f), ("unjudged", ""))[0]
            counts[(f["level"], verdict)] += 1
            totals[(f["level"], verdict)] += 1
        lines.append(f"{name}: " + _precision_text(counts))
    lines.append("all: " + _precision_text(totals))
    return lines


def _precision_text(counts: Counter) -> str:
    parts = []
    for level in ("error", "warning"):
        judged = sum(counts[(level, v)] for v in VERDICTS)
        true = counts[(level, "true")]
        unjudged = counts[(level, "unjudged")]
        pct = f"{100.0 * true / judged:.1f} %" if judged else "n/a"
        parts.append(f"{level}s {pct} true ({true}/{judged} judged, {unjudged} unjudged)")
    both = sum(counts[(lv, v)] for lv in ("error", "warning") for v in VERDICTS)
    true = counts[("error", "true")] + counts[("warning", "true")]
    parts.append(f"together {100.0 * true / both:.1f} %" if both else "together n/a")
    return "; ".join(parts)


def judge(eco_dir: Path, root: Path, verdicts_file: Path, judged: dict) -> int:
    """Record verdicts given as lines ``repo<TAB>rule<TAB>path:line<TAB>verdict<TAB>why``
    for every current finding of that rule on that line (each repository is
    checked whole, as the baseline is, so the message hashes match)."""
    wanted: dict[str, list[tuple[str, str, int, str, str]]] = defaultdict(list)
    for raw in verdicts_file.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        repo_name, rule, where, verdict, why = (raw.split("\t") + [""] * 5)[:5]
        path, _, line = where.rpartition(":")
        if verdict not in VERDICTS or not line.isdigit():
            raise SystemExit(f"bad verdict line: {raw!r}")
        wanted[repo_name].append((rule, path, int(line), verdict, why))
    repos = {r.name: r for r in load_repos(eco_dir)}
    table = eco_dir / "judged.tsv"
    if not table.exists():
        table.write_text("\t".join(JUDGED_HEADER) + "\n", encoding="utf-8")
    missing = 0
    with table.open("a", encoding="utf-8") as fh:
        for repo_name, items in sorted(wanted.items()):
            if repo_name not in repos:
                raise SystemExit(f"unknown repository {repo_name!r}")
            current = check_repo(repos[repo_name], root / repo_name)
            for rule, path, line, verdict, why in items:
                matches = [f for f in current if (f["rule"], f["path"], f["line"]) == (rule, path, line)]
                if not matches:
                    print(f"no {rule} finding at {path}:{line} in {repo_name}", file=sys.stderr)
                    missing += 1
                for f in matches:
                    key = finding_key(repo_name, f)
                    if key in judged:
                        continue
                    judged[key] = (verdict, why)
                    fh.write("\t".join([repo_name, rule, path, str(line), f["message_hash"], verdict,
                                         why.replace("\t", " ")]) + "\n")
    return 1 if missing else 0


def carried_verdicts(results: dict, judged: dict) -> list[tuple[tuple, str, str]]:
    """Verdicts for findings whose message was reworded: an unjudged
    finding takes the verdict of the judged findings on the same repository,
    rule, path and line when none of those is reported any more and they all
    had the same verdict (a rewording keeps the fault; a finding that moved
    or changed what it says about the code must be judged again)."""
    by_place: dict[tuple, list[tuple[str, str, str]]] = defaultdict(list)
    for (repo, rule, path, line, mhash), (verdict, why) in judged.items():
        by_place[(repo, rule, path, line)].append((mhash, verdict, why))
    out = []
    for name, r in sorted(results.items()):
        current = {finding_key(name, f) for f in r["findings"]}
        for f in r["findings"]:
            key = finding_key(name, f)
            if f["level"] == "note" or key in judged:
                continue
            old = by_place.get(key[:4], [])
            if not old or any(key[:4] + (mhash,) in current for mhash, _, _ in old):
                continue
            verdicts = {verdict for _, verdict, _ in old}
            if len(verdicts) == 1:
                why = old[0][2]
                out.append((key, verdicts.pop(), why if why.startswith("(reworded)") else f"(reworded) {why}"))
    return out


def carry(eco_dir: Path, results: dict, judged: dict) -> int:
    carried = carried_verdicts(results, judged)
    with (eco_dir / "judged.tsv").open("a", encoding="utf-8") as fh:
        for (repo, rule, path, line, mhash), verdict, why in carried:
            judged[(repo, rule, path, line, mhash)] = (verdict, why)
            fh.write("\t".join([repo, rule, path, str(line), mhash, verdict, why.replace("\t", " ")]) + "\n")
    print(f"{len(carried)} verdict(s) carried over to reworded findings")
    return 0


def fetch(eco_dir: Path, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for repo in load_repos(eco_dir):
        checkout = root / repo.name
        if not checkout.exists():
            subprocess.run(["git", "clone", "--quiet", repo.url, str(checkout)], check=True)
        subprocess.run(["git", "checkout", "--quiet", repo.commit], cwd=checkout, check=True)
        print(f"{repo.name}: {repo.commit[:10]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="the ecosystem folder (repos.toml, baseline, verdicts)")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("fetch", "run", "unjudged", "carry"):
        p = sub.add_parser(name)
        p.add_argument("--root", type=Path, required=True, help="folder holding one checkout per repository")
        if name == "run":
            p.add_argument("--write", action="store_true", help="write the current findings as the baseline")
    p = sub.add_parser("judge", help="record verdicts (lines: repo, rule, path:line, verdict, why; tab-separated)")
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("verdicts", type=Path)
    p = sub.add_parser("precision")
    p.add_argument("--root", type=Path, help="checkouts (default: the baseline's findings with the stored verdicts)")
    args = parser.parse_args(argv)
    eco_dir: Path = args.dir
    if args.command == "fetch":
        fetch(eco_dir, args.root)
        return 0
    judged = load_judged(eco_dir)
    if args.command == "precision":
        results = current_findings(eco_dir, args.root) if args.root else load_baseline(eco_dir)
        print("\n".join(precision(results, judged)))
        return 0
    if args.command == "judge":
        return judge(eco_dir, args.root, args.verdicts, judged)
    results = current_findings(eco_dir, args.root)
    if args.command == "carry":
        return carry(eco_dir, results, judged)
    if args.command == "unjudged":
        for name, r in sorted(results.items()):
            for f in r["findings"]:
                if f["level"] != "note" and finding_key(name, f) not in judged:
                    print("\t".join([name, f["rule"], f["path"], str(f["line"]), f["message_hash"], "", f["message"]]))
        return 0
    lines, unjudged = diff_against_baseline(load_baseline(eco_dir), results, judged)
    print("\n".join(lines))
    print("\n".join(precision(results, judged)))
    if args.write:
        write_baseline(eco_dir, results)
        print(f"baseline written: {eco_dir / 'baseline.json'}")
    if unjudged:
        print(f"{unjudged} added warning/error finding(s) have no verdict in judged.tsv", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
