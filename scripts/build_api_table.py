#!/usr/bin/env python3
"""Build nkilint/data/nki_api.json from the shared NKI API table.

Input: the shared table shared/nki-api/nki-api.json (generated from
aws-neuron-sdk API stubs and release notes, one entry per SDK release up to
2.32.0; looked up next to the checkout, or given as the argument), extended
with the 2.33.0 and 2.34.0 releases and their change records from
scripts/nki_api_additions.py (written from the readthedocs pages). Output:
a compact table keyed by SDK release with only what nkilint's rules read
(functions and their parameters, constants, classes, flags), plus the
change records and the api_index. Run again whenever either input changes;
the test suite checks that the committed file matches what this script
produces.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parent / "nkilint" / "data" / "nki_api.json"
# The shared table sits next to the main checkout (../shared) or next to
# the worktree directory of a branch (../../shared).
SHARED_CANDIDATES = tuple(up / "shared" / "nki-api" / "nki-api.json" for up in HERE.parents[1:3])


def find_shared_table() -> Path | None:
    return next((p for p in SHARED_CANDIDATES if p.is_file()), None)

KIND = {
    "positional_or_keyword": "p",
    "keyword_only": "k",
    "var_positional": "*",
    "var_keyword": "**",
    "positional_only": "o",
}
FUNCTION_FLAGS = ("deprecated", "deprecated_since_nki", "replacement", "experimental", "call_unsupported")
# Where a signature comes from when it is not a stub: "rst" (an API page's
# signature line, params may be null), "prose" (a deep-dive), "docs-usage";
# "doc" is the page an added release's entry was read from.
SOURCE_KEYS = ("signature_source", "doc")


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
    for key in SOURCE_KEYS:
        if fn.get(key) is not None and fn.get(key) != "stub":
            out[key] = fn[key]
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


def _names_at(index: dict, sdk: str) -> set[str]:
    key = _sdk_key(sdk)
    return {name for name, entry in index.items() if any(_sdk_key(lo) <= key <= _sdk_key(hi) for lo, hi in entry["ranges"])}


def _sdk_key(sdk: str) -> tuple[int, ...]:
    return tuple(int(x) for x in sdk.split("."))


def _class_names(module: str, name: str, cls: dict) -> dict[str, str]:
    out = {f"{module}.{name}": cls.get("kind", "class")}
    for attr in cls.get("attributes", []):
        out[f"{module}.{name}.{attr}"] = "attribute"
    for method in cls.get("methods", []):
        out[f"{module}.{name}.{method}"] = "method"
    for member in cls.get("members") or {}:
        out[f"{module}.{name}.{member}"] = "enum_member"
    return out


def add_release(data: dict, spec: dict) -> None:
    """Append one release given as changes to its base release, and extend
    the api_index ranges of every name it has."""
    base = next(r for r in data["releases"] if r["sdk"] == spec["base"])
    release = copy.deepcopy(base)
    release.update({k: spec[k] for k in ("sdk", "sdk_aliases", "nki", "nki_label", "namespace")})
    release.update({"tag": None, "commit": None, "stub_root": None, "source": spec["source"]})
    added: dict[str, str] = {}
    for module, functions in spec.get("functions", {}).items():
        for name, function in functions.items():
            release["modules"][module]["functions"][name] = function
            added[f"{module}.{name}"] = "function"
    for module, flags in spec.get("flags", {}).items():
        for name, values in flags.items():
            release["modules"][module]["functions"][name].update(values)
    for module, body in spec.get("new_modules", {}).items():
        release["modules"][module] = copy.deepcopy(body)
        for name in body.get("functions", {}):
            added[f"{module}.{name}"] = "function"
        for name, cls in body.get("classes", {}).items():
            added.update(_class_names(module, name, cls))
    for module, names in spec.get("constants", {}).items():
        constants = release["modules"][module].setdefault("constants", [])
        for name in names:
            if name not in constants:
                constants.append(name)
            added[f"{module}.{name}"] = "constant"
    for module, classes in spec.get("classes", {}).items():
        release["modules"][module].setdefault("classes", {}).update(copy.deepcopy(classes))
        for name, cls in classes.items():
            added.update(_class_names(module, name, cls))
    index = data["api_index"]
    present = _names_at(index, spec["base"]) | set(added)
    for name in sorted(present):
        entry = index.setdefault(name, {"kind": added.get(name, "function"), "ranges": []})
        ranges = entry["ranges"]
        if ranges and ranges[-1][1] == spec["base"]:
            ranges[-1] = [ranges[-1][0], spec["sdk"]]
        elif not ranges or ranges[-1][1] != spec["sdk"]:
            ranges.append([spec["sdk"], spec["sdk"]])
    data["releases"].append(release)
    data["nki_version_map"][spec["sdk"].rsplit(".", 1)[0]] = spec["nki"]


def extend(data: dict) -> dict:
    """The shared table with the releases after it (nki_api_additions)."""
    sys.path.insert(0, str(HERE))
    try:
        import nki_api_additions as additions
    finally:
        sys.path.pop(0)
    data = copy.deepcopy(data)
    known = {r["sdk"] for r in data["releases"]}
    for spec in additions.RELEASES:
        if spec["sdk"] not in known:
            add_release(data, spec)
    data["changes"] = list(data["changes"]) + [c for c in additions.CHANGES if c["since_sdk"] not in known]
    return data


def build(data: dict) -> dict:
    data = extend(data)
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
        "generated_from": "shared/nki-api/nki-api.json (schema_version %s) + scripts/nki_api_additions.py"
        % data.get("schema_version"),
        "nki_version_map": data["nki_version_map"],
        "releases": releases,
        "changes": changes,
        "api_index": data["api_index"],
    }


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else find_shared_table()
    if src is None:
        print(f"no shared table found (looked at {', '.join(map(str, SHARED_CANDIDATES))}); give its path", file=sys.stderr)
        return 2
    table = build(json.loads(src.read_text(encoding="utf-8")))
    text = json.dumps(table, sort_keys=True, separators=(",", ":")) + "\n"
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT} ({len(text)} bytes, {len(table['releases'])} releases, {len(table['changes'])} changes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
