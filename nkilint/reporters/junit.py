"""JUnit XML (``artifacts: reports: junit`` in GitLab, Jenkins' junit step).

One ``<testsuite>`` per file with findings (``name`` and ``file`` are its
path), one ``<testcase>`` per active finding with a ``<failure>`` whose
``type`` is the level; a file that could not be analysed, or a crash, is an
``<error>``. Per file, because both GitLab and Jenkins list a suite's cases
together and link a case to its ``file``: a reviewer reads one file's
problems at once. The ``classname`` is the path without ``.py``, since
Jenkins splits class names at dots. A run without findings has one passing
case, so the report is never empty. Characters XML 1.0 cannot hold (most
control characters) are dropped; everything else is escaped by ElementTree.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..findings import Finding, Level
from ..run import Run

# Not allowed anywhere in an XML 1.0 document, even as a character reference.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    return _INVALID_XML.sub("", text)


def _classname(path: str) -> str:
    return xml_text(path[:-3] if path.endswith(".py") else path)


def _suite(parent: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(parent, "testsuite", name=xml_text(name), file=xml_text(name))


def _case(suite: ET.Element, f: Finding, run: Run) -> None:
    rule = run.ruleset.rules.get(f.rule_id)
    span = f.span
    title = f"{f.rule_id} ({rule.name})" if rule else f.rule_id
    case = ET.SubElement(
        suite,
        "testcase",
        name=xml_text(f"{title} at line {span.start_line}, column {span.start_col}"),
        classname=_classname(f.path),
        file=xml_text(f.path),
        line=str(span.start_line),
        time="0",
    )
    body = f"{f.path}:{span.start_line}:{span.start_col}: {f.rule_id} [{f.level.label}] {f.message}"
    if f.hint:
        body += f"\nhint: {f.hint}"
    failure = ET.SubElement(case, "failure", message=xml_text(f.message), type=f.level.label)
    failure.text = xml_text(body)


def render_junit(run: Run) -> str:
    root = ET.Element("testsuites", name="nkilint")
    suites: dict[str, ET.Element] = {}
    for f in run.active:
        if f.path not in suites:
            suites[f.path] = _suite(root, f.path)
        _case(suites[f.path], f, run)
    # A crash is also a finding (NKI rule-crash) when that rule is on: once.
    reported = {(f.path, f.message) for f in run.active}
    for n in run.all_notifications:
        if n.level is not Level.ERROR or (n.path, n.message) in reported:
            continue
        path = n.path or "nkilint"
        if path not in suites:
            suites[path] = _suite(root, path)
        case = ET.SubElement(suites[path], "testcase", name=xml_text(f"nkilint {n.rule_id or 'run'}"),
                             classname=_classname(path), time="0")
        error = ET.SubElement(case, "error", message=xml_text(n.message), type=n.rule_id or "nkilint")
        error.text = xml_text(n.detail or n.message)
    if not suites:
        suite = _suite(root, "nkilint")
        ET.SubElement(suite, "testcase", name="no findings", classname="nkilint", time="0")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for suite in root:
        counts = {
            "tests": len(suite),
            "failures": sum(1 for c in suite if c.find("failure") is not None),
            "errors": sum(1 for c in suite if c.find("error") is not None),
        }
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("skipped", "0")
        suite.set("time", "0")
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
