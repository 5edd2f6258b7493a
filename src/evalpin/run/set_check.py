"""`evalpin check`: a fixture set validated before it is sealed.

Coding items: the modules an item `requires:` must be importable by the interpreter that
grades (else every answer would fail: the item is named and not graded), the reference
solution (`reference_files:`) must pass, the starting code
the prompt shows (`starting_files:`) must fail on a test ("each item names a failing
test", not a static or sandbox error), and for an item graded under process isolation
both go through plain pytest and the witness, which must agree: an item whose tests the
witness cannot carry is named before a night of disputed cases shows it, and so is one
where the witness passes what plain pytest fails. Golden cases: a tool both required and
forbidden, empty needles, a required phrase the case's own `must_not` contains, a
required tool the offered `tools` lack, a case that checks nothing at all (it would pass
whatever the model answers).

Before those, every problem the loader finds in the set (unknown keys with the nearest
valid one, duplicate ids, malformed lines or items: what `run`, `hash` and `seal` refuse
at the first) is listed, each with its line (`invalid`). Each item's problems are listed
on their own; a problem fails the check, a note (what could not be checked) does not,
unless `strict`.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import KIND_CODING, CodingItem, FixtureSet, GoldenCase
from evalpin.core.instrument.tool_schema import tool_name
from evalpin.core.reasons import TAMPERING, TESTS_FAILED, is_disputed


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
    fs: FixtureSet,
    grade: Grade | None = None,
    progress: Progress | None = None,
    found: Sequence[InputError] = (),
    jobs: int = 1,
) -> CheckReport:
    """Every item of `fs` checked, in file order, after `found`: the problems the loader
    collected (cases or items it left out). A coding set with any is not run in the
    sandbox: what its items would do is moot until the set is valid."""
    if fs.kind != KIND_CODING:
        reports = lint_golden(fs)
        # A problem on a loaded case's line (an unknown key) is listed with that case.
        cases = [*fs.cases, *fs.shadowed]
        on_line = {case.line: r for case, r in zip(cases, reports, strict=True)}  # type: ignore[union-attr]
        rest = []
        for error in found:
            report = on_line.get(error.line) if error.line is not None else None
            if report is None:
                rest.append(error)
            else:
                report.problems.insert(0, f"line {error.line}: {error.message}")
        head = [invalid(fs.path, rest)] if rest else []
        return CheckReport(str(fs.path), fs.kind, head + reports)
    head = [invalid(fs.path, list(found))] if found else []
    if head:
        head[0].notes.append("items not run in the sandbox: fix the set's problems first")
        return CheckReport(str(fs.path), fs.kind, head)
    grade = grade or functools.partial(_sandboxed, allow_network=fs.network_allowed)

    def one(numbered: tuple[int, CodingItem]) -> ItemReport:
        n, item = numbered
        if progress is not None:
            progress(n, len(fs.cases), item.id)
        return check_item(item, grade)

    from concurrent.futures import ThreadPoolExecutor

    from evalpin.run.sandbox import zygote

    numbered = list(enumerate(fs.cases, start=1))
    zygote.acquire()  # the fork servers the check starts stop with it
    try:
        if jobs <= 1:
            return CheckReport(str(fs.path), fs.kind, list(map(one, numbered)))
        # Items in file order whatever order they finish in; each grade its own sandboxes.
        with ThreadPoolExecutor(jobs, thread_name_prefix="evalpin-check") as pool:
            return CheckReport(str(fs.path), fs.kind, list(pool.map(one, numbered)))
    finally:
        zygote.release()


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


def _does_not_compile(item: CodingItem) -> str | None:
    """Why the item's test file is not Python (named, with the line), or None: pytest
    would only say "1 error", and the reference would seem to fail."""
    try:
        compile(item.test_file.read_bytes(), str(item.test_file), "exec")
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return f"the test file {item.test_file.name} does not compile: {exc.msg}{where}"
    except (OSError, ValueError) as exc:  # unreadable, or a NUL byte
        return f"the test file {item.test_file.name} cannot be compiled: {exc}"
    return None


def missing_modules(names: Sequence[str]) -> list[str]:
    """The modules of `names` the grading interpreter (this one: the sandboxes run it)
    cannot import, found without importing any."""
    import importlib.util

    missing = []
    for name in names:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            missing.append(name)
    return missing


def check_item(item: CodingItem, grade: Grade) -> ItemReport:
    report = ItemReport(item.id)
    broken = _does_not_compile(item)
    if broken:  # nothing to grade against: the test file itself is the problem
        report.problems.append(broken)
        return report
    missing = missing_modules(item.requires)
    if missing:  # every answer would fail on an import: nothing to learn from grading
        report.problems.append(
            f"needs {', '.join(missing)}, which the grading interpreter cannot import"
            f" ({sys.executable}): every answer would fail; install them, or leave the"
            " item out"
        )
        return report
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


def lint_golden(fs: FixtureSet) -> list[ItemReport]:
    """What loads but cannot be right, per case (the loader already refused what is
    malformed: a bad line, an unknown key, a duplicate id)."""
    reports = []
    for case in [*fs.cases, *fs.shadowed]:
        assert isinstance(case, GoldenCase)
        shadowed = case in fs.shadowed  # a repeated id: its content is checked too
        report = ItemReport(f"{case.id} (line {case.line})" if shadowed else case.id)
        problems, lineno = report.problems, case.line
        if not (case.require_tools or case.forbid_tools or case.must_include or case.must_not):
            problems.append(
                f"line {lineno}: the case checks nothing (no require_tools, forbid_tools, "
                "must_include or must_not): it passes whatever the model answers"
            )
        for key in ("require_tools", "forbid_tools", "must_include", "must_not"):
            if any(not v.strip() for v in getattr(case, key)):
                problems.append(f"line {lineno}: an empty {key} entry")
        both = sorted(set(case.require_tools) & set(case.forbid_tools))
        if both:
            problems.append(f"line {lineno}: {', '.join(both)} both required and forbidden")
        for good in case.must_include:
            for bad in case.must_not:
                if bad.strip() and bad.casefold() in good.casefold():
                    problems.append(
                        f"line {lineno}: must_include {good!r} contains must_not {bad!r}: "
                        "the case can never pass"
                    )
        offered = {tool_name(t) for t in case.tools} - {None}  # the defaults filled in
        if offered:
            missing = sorted(set(case.require_tools) - offered)
            if missing:
                problems.append(
                    f"line {lineno}: requires {', '.join(missing)}, not among the tools offered"
                )
        reports.append(report)
    return reports


def invalid(fs_path: Path, found: list[InputError]) -> ItemReport:
    """The problems that kept cases or items out of the set (unknown keys, duplicate
    ids, malformed lines), together under the file's name, each with its line."""
    report = ItemReport(fs_path.name)
    for error in found:
        where = f"line {error.line}: " if error.line is not None else ""
        report.problems.append(where + error.message)
    return report
