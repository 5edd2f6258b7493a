"""`evalpin check`: a fixture set validated before it is sealed.

Coding items: the reference solution (`reference_files:`) must pass, the starting code
the prompt shows (`starting_files:`) must fail on a test ("each item names a failing
test", not a static or sandbox error), and for an item graded under process isolation
both go through plain pytest and the witness, which must agree: an item whose tests the
witness cannot carry is named before a night of disputed cases shows it, and so is one
where the witness passes what plain pytest fails. Golden cases: unknown keys, a tool both
required and forbidden, empty needles, a required phrase the case's own `must_not`
contains, a required tool the offered `tools` lack.

Each item's problems are listed on their own; a problem fails the check, a note (what
could not be checked) does not, unless `strict`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalpin.core.instrument.fixtures import KIND_CODING, CodingItem, FixtureSet
from evalpin.core.reasons import TAMPERING, TESTS_FAILED, is_disputed

GOLDEN_KEYS = frozenset(
    {"id", "user", "require_tools", "forbid_tools", "must_include", "must_not", "tools"}
    | {"tool_results"}
)


@dataclass
class ItemReport:
    """What was found for one item or case."""

    id: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "problems": self.problems, "notes": self.notes}


@dataclass
class CheckReport:
    path: str
    kind: str
    items: list[ItemReport]

    def problems(self, strict: bool = False) -> int:
        return sum(len(i.problems) + (len(i.notes) if strict else 0) for i in self.items)

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "path": self.path,
            "kind": self.kind,
            "problems": self.problems(strict),
            "items": [i.to_json() for i in self.items],
        }


Grade = Callable[[CodingItem, dict[str, str]], Any]  # run_item's Outcome


Progress = Callable[[int, int, str], None]  # (item number, items, item id)


def check_set(
    fs: FixtureSet, grade: Grade | None = None, progress: Progress | None = None
) -> CheckReport:
    """Every item of `fs` checked, in file order."""
    if fs.kind != KIND_CODING:
        return CheckReport(str(fs.path), fs.kind, lint_golden(fs.path))
    grade = grade or functools.partial(_sandboxed, allow_network=fs.network_allowed)
    items = []
    for n, item in enumerate(fs.cases, start=1):
        if progress is not None:
            progress(n, len(fs.cases), item.id)
        items.append(check_item(item, grade))
    return CheckReport(str(fs.path), fs.kind, items)


def _sandboxed(item: CodingItem, files: dict[str, str], *, allow_network: bool):
    """Both grades of a `process` item, the witness even after a plain fail."""
    from evalpin.run.sandbox import run_item

    return run_item(item, files, allow_network=allow_network, always_witness=True)


def _last_line(tail: str) -> str:
    return next((ln.strip()[:120] for ln in reversed(tail.splitlines()) if ln.strip()), "")


def _grade_text(outcome) -> str:
    if outcome.passed:
        return "pass"
    last = _last_line(outcome.tail)
    return "fail (" + " ".join(outcome.reasons) + (f": {last}" if last else "") + ")"


def _witness_text(outcome, disputed: list[str]) -> str:
    """What the witness saw: its reason, the tests it failed, or evalpin's last word."""
    said = " ".join(disputed)
    if outcome.witness_failed_tests:
        said += " in " + ", ".join(outcome.witness_failed_tests[:3])
    last = _last_line(outcome.witness_tail)
    return said + (f": {last.removeprefix('[evalpin] ')}" if last.startswith("[evalpin]") else "")


def check_item(item: CodingItem, grade: Grade) -> ItemReport:
    report = ItemReport(item.id)
    for what, files, must_pass in (
        ("reference", item.reference_files, True),
        ("starting code", item.starting_files, False),
    ):
        if not files:
            key = "reference_files" if must_pass else "starting_files"
            report.notes.append(f"{what} not checked: the item names no {key}")
            continue
        texts = {name: path.read_text(encoding="utf-8") for name, path in files.items()}
        outcome = grade(item, texts)
        disputed = [r for r in outcome.reasons if is_disputed(r)]
        own = [r for r in outcome.reasons if r != TAMPERING("witness")]
        if disputed:  # plain pytest passed it
            report.problems.append(
                f"the witness cannot carry the tests: plain pytest passes the {what}, the "
                f"witness does not ({_witness_text(outcome, disputed)}); a correct answer "
                "would be disputed (rewrite the test, or mark the item isolation: in-process)"
            )
        elif TAMPERING("witness") in outcome.reasons:
            report.problems.append(
                f"the witness passes the {what}, which plain pytest fails: "
                f"{_grade_text(dataclasses.replace(outcome, reasons=own))}"
            )
        if must_pass and not outcome.passed and not disputed:
            report.problems.append(
                f"the reference does not pass: "
                f"{_grade_text(dataclasses.replace(outcome, reasons=own))}"
            )
        if not must_pass:
            if outcome.passed or disputed:
                report.problems.append(
                    "the starting code passes: no test fails on the code the prompt shows"
                )
            elif own != [TESTS_FAILED()]:
                report.problems.append(f"the starting code fails by {' '.join(own)}, not on a test")
    return report


# -- golden sets ------------------------------------------------------------------------


def lint_golden(path: Path) -> list[ItemReport]:
    """The golden file's cases read again line by line (load_fixtures already refused
    what is malformed: a bad line, a duplicate id), for what loads but cannot be right."""
    reports = []
    default_tools: list = []
    for lineno, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        case = json.loads(raw)
        if "defaults" in case and "id" not in case:
            default_tools = case["defaults"].get("tools") or []
            continue
        offered_tools = case.get("tools", default_tools)  # as the loader fills them in
        report = ItemReport(str(case["id"]))
        problems = report.problems
        unknown = sorted(set(case) - GOLDEN_KEYS)
        if unknown:
            problems.append(f"line {lineno}: unknown key(s) {', '.join(map(repr, unknown))}")
        for key in ("require_tools", "forbid_tools", "must_include", "must_not"):
            if any(not v.strip() for v in case.get(key, [])):
                problems.append(f"line {lineno}: an empty {key} entry")
        both = sorted(set(case.get("require_tools", [])) & set(case.get("forbid_tools", [])))
        if both:
            problems.append(f"line {lineno}: {', '.join(both)} both required and forbidden")
        for good in case.get("must_include", []):
            for bad in case.get("must_not", []):
                if bad.strip() and bad.casefold() in good.casefold():
                    problems.append(
                        f"line {lineno}: must_include {good!r} contains must_not {bad!r}: "
                        "the case can never pass"
                    )
        offered = {_tool_name(t) for t in offered_tools} - {None}
        if offered:
            missing = sorted(set(case.get("require_tools", [])) - offered)
            if missing:
                problems.append(
                    f"line {lineno}: requires {', '.join(missing)}, not among the tools offered"
                )
        reports.append(report)
    return reports


def _tool_name(tool: Any) -> str | None:
    if not isinstance(tool, dict):
        return None
    function = tool.get("function")
    name = tool.get("name") or (function.get("name") if isinstance(function, dict) else None)
    return name if isinstance(name, str) else None
