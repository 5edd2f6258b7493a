"""`evalpin check`: a fixture set validated before it is sealed.

Coding items: the reference solution (`reference_files:`) must pass, the starting code
the prompt shows (`starting_files:`) must fail on a test ("each item names a failing
test", not a static or sandbox error), and an item graded under process isolation must
get the same grade in-process too, for both. Golden cases: unknown keys, a tool both
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

from evalpin.core.instrument.fixtures import (
    ISOLATION_IN_PROCESS,
    ISOLATION_PROCESS,
    KIND_CODING,
    CodingItem,
    FixtureSet,
)
from evalpin.core.reasons import TESTS_FAILED

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
    from evalpin.run.sandbox import run_item

    return run_item(item, files, allow_network=allow_network)


def _grade_text(outcome) -> str:
    if outcome.passed:
        return "pass"
    last = next((ln for ln in reversed(outcome.tail.splitlines()) if ln.strip()), "")
    return "fail (" + " ".join(outcome.reasons) + (f": {last.strip()[:120]}" if last else "") + ")"


def check_item(item: CodingItem, grade: Grade) -> ItemReport:
    report = ItemReport(item.id)
    other = ISOLATION_IN_PROCESS if item.isolation == ISOLATION_PROCESS else None
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
        if must_pass and not outcome.passed:
            report.problems.append(f"the reference does not pass: {_grade_text(outcome)}")
        if not must_pass:
            if outcome.passed:
                report.problems.append(
                    "the starting code passes: no test fails on the code the prompt shows"
                )
            elif outcome.reasons != [TESTS_FAILED()]:
                report.problems.append(
                    f"the starting code fails by {' '.join(outcome.reasons)}, not on a test"
                )
        if other is not None:
            twin = grade(dataclasses.replace(item, isolation=other), texts)
            if (twin.passed, twin.reasons) != (outcome.passed, outcome.reasons):
                report.problems.append(
                    f"the isolations disagree on the {what}: process {_grade_text(outcome)}, "
                    f"in-process {_grade_text(twin)}"
                )
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
