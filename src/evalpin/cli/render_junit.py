"""`diff --junit`: one test case per shared (case, seed), failed where it regressed.

Any CI then lists regressions as failed tests and keeps the history of flaky ones. Fixes
and drift pass, with what moved in `system-out`; cases on one side only are skipped. A
refusal is one failed test, `REFUSE_DIFF`, whose message lists the mismatched pins: a
CI page must never show a backend delta as regressions or fixes. A diff that compared
nothing (exit 4) has one test in error, `NOTHING_COMPARED`: an empty suite reads green.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from evalpin.cli.escape import xml_block, xml_line
from evalpin.core.judge.report import REFUSE_LINE, DiffReport, Movement
from evalpin.core.read.notes import Note, sorted_notes

CLASSNAME = "evalpin"


def _name(case_id: str, seed: int | None, label: str = "seed") -> str:
    """`case-id [seed 11]` (inspect logs: `[epoch 2]`), stable night to night for CI."""
    return xml_line(case_id) + ("" if seed is None else f" [{label} {seed}]")


def _reasons(reasons: list[str] | None) -> str:
    if reasons is None:
        return "<reasons missing>"
    return ", ".join(xml_line(r) for r in reasons) or "-"


def _detail(m: Movement) -> str:
    lines = [
        f"left  {'pass' if m.left_pass else 'fail'}  {_reasons(m.left_reasons)}",
        f"right {'pass' if m.right_pass else 'fail'}  {_reasons(m.right_reasons)}",
        f"completion digest {xml_line(m.left_digest or '-')} -> {xml_line(m.right_digest or '-')}",
    ]
    if m.right_tail:
        lines += ["", "right test output (tail):", xml_block(m.right_tail)]
    return "\n".join(lines)


def _refusal_text(report: DiffReport) -> str:
    lines = []
    choice = report.baseline
    if choice is not None and choice.refused:
        first, moved = choice.said(xml_line, ", ".join)
        lines += [first, *moved]
    for m in report.mismatches:
        for lv, rv, n in m.pairs:
            where = m.extent if m.whole_run else f"on {n}"
            lines.append(f"{m.key}: {xml_line(lv)} (left) vs {xml_line(rv)} (right) {where}")
        if m.example is not None:
            case_id, seed = m.example
            lines.append(f"  first: {_name(case_id, seed, report.repeat_label)}")
    if report.left is not None:
        lines.append(xml_line(report.refusal_said()))
    return "\n".join(lines)


def _note_line(note: Note) -> str:
    by = note.byline()
    return "review note: " + xml_line(note.summary()) + (f" ({xml_line(by)})" if by else "")


def _out(case: ET.Element, line: str) -> None:
    """Add a line to the test case's one `system-out`."""
    out = case.find("system-out")
    if out is None:
        out = ET.SubElement(case, "system-out")
        out.text = line
    else:
        out.text = f"{out.text}\n{line}" if out.text else line


def render_junit(report: DiffReport) -> str:
    """The whole JUnit XML document."""
    suite = ET.Element("testsuite", name="evalpin diff")
    props = ET.SubElement(suite, "properties")
    for key, lv, rv, _ in report.pin_rows():
        ET.SubElement(props, "property", name=f"left.{key}", value=xml_line(lv or "<missing>"))
        ET.SubElement(props, "property", name=f"right.{key}", value=xml_line(rv or "<missing>"))
    tests = failures = skipped = errors = 0
    noted: list[tuple[ET.Element, Note]] = []
    if report.refused:
        case = ET.SubElement(suite, "testcase", classname=CLASSNAME, name="REFUSE_DIFF")
        failure = ET.SubElement(case, "failure", message=REFUSE_LINE, type="refused")
        failure.text = _refusal_text(report)
        tests = failures = 1
    else:
        if report.nothing is not None:  # no test passed: an empty suite is no green
            case = ET.SubElement(suite, "testcase", classname=CLASSNAME, name="NOTHING_COMPARED")
            ET.SubElement(case, "error", message=xml_line(report.headline()), type="nothing")
            tests = errors = 1
        for o in report.outcomes():
            case = ET.SubElement(
                suite,
                "testcase",
                classname=CLASSNAME,
                name=_name(o.case_id, o.seed, report.repeat_label),
            )
            tests += 1
            m = o.movement
            if (note := report.review_notes.get(o.case_id)) is not None:
                noted.append((case, note))
            if m is None:
                continue
            if m.kind == "regressed":
                failures += 1
                failure = ET.SubElement(
                    case,
                    "failure",
                    message=f"regressed: {_reasons(m.right_reasons)}",
                    type="regressed",
                )
                failure.text = _detail(m)
            elif m.kind in ("errored", "disputed"):  # JUnit's own word: not judged
                errors += 1
                error = ET.SubElement(
                    case,
                    "error",
                    message=f"{m.kind}: {_reasons(m.right_reasons)}",
                    type=m.kind,
                )
                error.text = _detail(m) + (f"\n{m.right_error}" if m.right_error else "")
            else:
                _out(case, f"{m.kind}\n{_detail(m)}")
        for side, keys in (("left", report.only_left), ("right", report.only_right)):
            for case_id, seed in keys:
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=CLASSNAME,
                    name=_name(case_id, seed, report.repeat_label),
                )
                ET.SubElement(case, "skipped", message=f"only in the {side} run")
                if (note := report.review_notes.get(case_id)) is not None:
                    noted.append((case, note))
                tests += 1
                skipped += 1
    for case, note in noted:  # last in each test case: beside its grade, never instead
        _out(case, _note_line(note))
    if report.refused and report.review_notes:
        ET.SubElement(suite, "system-out").text = "\n".join(
            f"{xml_line(case_id)}: {_note_line(note)}"
            for case_id, note in sorted_notes(report.review_notes)
        )
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites", name="evalpin", tests=str(tests), failures=str(failures))
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"
