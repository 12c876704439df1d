#!/usr/bin/env python3
"""Build nkilint/data/nki_api.json from the shared NKI API table.

Input: ../shared/nki-api/nki-api.json (generated from aws-neuron-sdk API stubs
and release notes, one entry per SDK release). Output: a compact table keyed
by SDK release with only what nkilint's rules read (functions and their
parameters, constants, classes, flags), plus the change records and the
api_index. Run again whenever the shared table changes; the test suite checks
that the committed file matches what this script produces.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_INPUT = HERE.parent.parent / "shared" / "nki-api" / "nki-api.json"
OUTPUT = HERE.parent / "nkilint" / "data" / "nki_api.json"

KIND = {
    "positional_or_keyword": "p",
    "keyword_only": "k",
    "var_positional": "*",
    "var_keyword": "**",
    "positional_only": "o",
}
FUNCTION_FLAGS = ("deprecated", "deprecated_since_nki", "replacement", "experimental", "call_unsupported")


def compact_function(fn: dict) -> dict:
    out: dict = {}
    if fn.get("params") is not None:
        out["params"] = [
            [p["name"], KIND[p["kind"]], bool(p.get("required")), p.get("default")] for p in fn["params"]
        ]
    else:
        out["params"] = None
    for flag in FUNCTION_FLAGS:
        if fn.get(flag) is not None:
            out[flag] = fn[flag]
    if fn.get("doc_only_params"):
        out["doc_only_params"] = fn["doc_only_params"]
    return out


def compact_module(mod: dict) -> dict:
    out = {
        "functions": {name: compact_function(fn) for name, fn in sorted(mod.get("functions", {}).items())},
        "constants": sorted(mod.get("constants", [])),
    }
    details = {}
    for name, det in (mod.get("constant_details") or {}).items():
        keep = {k: det[k] for k in ("deprecated", "replacement", "members", "value") if k in det}
        if keep:
            details[name] = keep
    if details:
        out["constant_details"] = details
    classes = {}
    for name, cls in (mod.get("classes") or {}).items():
        entry = {
            "kind": cls.get("kind"),
            "attributes": sorted(cls.get("attributes", [])),
            "methods": sorted(cls.get("methods", [])),
        }
        if cls.get("members"):
            entry["members"] = cls["members"]
        if cls.get("method_signatures"):
            entry["method_signatures"] = {
                m: compact_function(sig) for m, sig in sorted(cls["method_signatures"].items())
            }
        classes[name] = entry
    if classes:
        out["classes"] = classes
    if mod.get("doc_only_ops"):
        out["doc_only_ops"] = sorted(mod["doc_only_ops"])
    return out


def build(data: dict) -> dict:
    releases = []
    for rel in data["releases"]:
        releases.append(
            {
                "sdk": rel["sdk"],
                "sdk_aliases": rel.get("sdk_aliases", []),
                "nki": rel["nki"],
                "namespace": rel["namespace"],
                "modules": {name: compact_module(mod) for name, mod in sorted(rel["modules"].items())},
                "isa_op_tables": {
                    k: v for k, v in (rel.get("isa_op_tables") or {}).items() if k in ("alu_ops", "activation_ops")
                },
                "tile_size": {k: v.get("value") for k, v in (rel.get("tile_size_documented_values") or {}).items()},
            }
        )
    changes = []
    for ch in data["changes"]:
        changes.append(
            {k: ch[k] for k in ("api", "param", "change", "since_sdk", "since_nki", "replacement", "severity", "note", "source", "details") if ch.get(k) is not None}
        )
    return {
        "generated_from": "shared/nki-api/nki-api.json (schema_version %s)" % data.get("schema_version"),
        "nki_version_map": data["nki_version_map"],
        "releases": releases,
        "changes": changes,
        "api_index": data["api_index"],
    }


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else DEFAULT_INPUT
    table = build(json.loads(src.read_text(encoding="utf-8")))
    text = json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT} ({len(text)} bytes, {len(table['releases'])} releases, {len(table['changes'])} changes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
