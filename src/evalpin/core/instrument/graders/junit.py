"""The JUnit report pytest writes, read as a grade, and what of it reaches a run file.

`expected_tests` reads the tests a file defines; `judge_report` and `judge_in_process`
decide a grade from a report (and, in-process, the guard's record); `failed_tests`
names the tests a failing grade shows. A report is the tested code's to forge under
plain pytest (it shares the process), so nothing of it reaches a run file unbounded:
each name is cut to `MAX_TEST_NAME_CHARS` and at most `MAX_FAILED_TESTS` are named,
the rest counted (a forged name of 40 MiB stays a case of its own, never a record the
reader refuses). Part of the grader version, as every grader module.
"""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from evalpin.core import syntax
from evalpin.core.instrument.graders.outcomes import fixture
from evalpin.core.reasons import TAMPERING, TESTS_FAILED
from evalpin.core.reasons import in_order as grade_order

# What of a report's test names a case record keeps.
MAX_TEST_NAME_CHARS = 200
MAX_FAILED_TESTS = 100


def _test_functions(body: list[ast.stmt], prefix: str) -> Iterator[str]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test") and not fixture(node):
                yield prefix + node.name
        elif isinstance(node, ast.ClassDef) and _collected_class(node):
            yield from _test_functions(node.body, f"{prefix}{node.name}::")


def _collected_class(node: ast.ClassDef) -> bool:
    """pytest skips a `Test*` class that defines `__init__` or sets `__test__ = False`."""
    return node.name.startswith("Test") and not any(
        _defines(stmt, "__init__") or _opts_out(stmt) for stmt in node.body
    )


def _defines(stmt: ast.stmt, name: str) -> bool:
    return isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == name


def _opts_out(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__test__" for t in stmt.targets)
        and isinstance(stmt.value, ast.Constant)
        and not stmt.value.value
    )


def expected_tests(test_source: str) -> list[str]:
    """The tests a test file defines, read statically: top-level `test*` functions and
    `test*` methods of `Test*` classes (nested classes too), as `name` or
    `Class::name`. The prefixes are pytest's, as pinned in PYTEST_INI, so this is the set
    pytest collects from the file's own definitions. An unparsable file has none (pytest
    then reports a collection error, which fails the case)."""
    try:
        tree = syntax.parse(test_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return list(dict.fromkeys(_test_functions(tree.body, "")))


_FAILED = ("failure", "error", "skipped")


def judge_report(
    xml_bytes: bytes | None,
    expected: list[str],
    *,
    exit_code: int | None = None,
    explains: frozenset[str] = frozenset(),
) -> tuple[bool, list[str]]:
    """Pass only when, by pytest's own rules, every expected test ran (parametrized ids
    match by the name before `[`), none failed or errored, one passed at least, each
    skip or xfail is of a kind the test file gives (`explains`: `outcomes.explained`)
    and, when given, pytest exited 0. Anything else, no report included: `tests_failed`.

    DTDs and entities are refused before parsing; pytest never writes them.
    """
    failed = (False, [TESTS_FAILED()])
    if exit_code not in (None, 0):
        return failed
    root = _parse_report(xml_bytes)
    if root is None:
        return failed
    ran: set[str] = set()
    passed = False
    for suite in root.iter("testsuite"):
        if suite.get("errors", "0") != "0" or suite.get("failures", "0") != "0":
            return failed
    for case in root.iter("testcase"):
        if any(child.tag in ("failure", "error") for child in case):
            return failed
        skipped = case.find("skipped")
        if skipped is None:
            passed = True
        elif ("xfailed" if skipped.get("type") == "pytest.xfail" else "skipped") not in explains:
            return failed
        # classname is "module" or "module.Class[.Inner]"; the test copy is top-level.
        classes = (case.get("classname") or "").split(".")[1:]
        ran.add("::".join([*classes, (case.get("name") or "").split("[", 1)[0]]))
    if not passed or any(name not in ran for name in expected):
        return failed
    return True, []


def _parse_report(xml_bytes: bytes | None) -> ET.Element | None:
    """A JUnit report's root, or None for no report, a malformed one, or one with a DTD or
    entities (refused before parsing; pytest never writes them)."""
    if not xml_bytes:
        return None
    head = xml_bytes.upper()
    if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
        return None
    try:
        return ET.fromstring(xml_bytes)
    except ET.ParseError:
        return None


def report_outcomes(xml_bytes: bytes | None) -> dict[str, str] | None:
    """Each test's outcome in a JUnit report (`passed`, `skipped` or `failed`; the worst
    over parametrized ids), or None when there is no well-formed report."""
    root = _parse_report(xml_bytes)
    if root is None:
        return None
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        outcome = (
            "failed"
            if tags & {"failure", "error"}
            else "skipped"
            if "skipped" in tags
            else "passed"
        )
        classes = (case.get("classname") or "").split(".")[1:]
        name = "::".join([*classes, (case.get("name") or "").split("[", 1)[0]])
        outcomes[name] = max(outcomes.get(name, "passed"), outcome, key=rank.__getitem__)
    return outcomes


def failed_tests(
    xml_bytes: bytes | None, expected: list[str], set_aside: tuple[str, ...] = ()
) -> list[str]:
    """The tests a failing grade names: each test that failed, errored or was skipped in
    the report, then each expected test that never ran, in file order (`set_aside`: the
    guard's canaries). Shown to the reviewer only; the grade never reads it. Bounded
    (`bounded_names`): the report may be the tested code's forgery."""
    root = _parse_report(xml_bytes)
    ran: set[str] = set()
    bad: list[str] = []
    for case in root.iter("testcase") if root is not None else ():
        classname = case.get("classname") or ""
        if not classname:  # a module that did not collect: its tests never ran
            continue
        name = "::".join([*classname.split(".")[1:], (case.get("name") or "").split("[", 1)[0]])
        ran.add(name)
        if name not in set_aside and any(child.tag in _FAILED for child in case):
            bad.append(name)
    return bounded_names(list(dict.fromkeys([*bad, *(n for n in expected if n not in ran)])))


def judge_in_process(
    xml_bytes: bytes | None,
    guard_bytes: bytes | None,
    expected: list[str],
    canaries: tuple[str, str],
    *,
    exit_code: int | None,
    test_file_intact: bool,
) -> tuple[bool, list[str]]:
    """The grade of an `isolation: in-process` item, with its tamper checks.

    `tampering:test_file` when the test copy changed during the run;
    `tampering:report` when a report exists without the guard's record (the session did
    not end normally after something wrote it) or the two disagree on any test;
    `tampering:pytest` when the guard saw pytest's plugins, hooks, internals, atexit
    callbacks or threads change, or the session ran on in a forked process;
    `tampering:canary` when the guard added its canaries and the must-pass one did not
    pass or the must-fail one did not fail (in the report or the guard's record).
    Without tampering, the grade is `judge_report`'s, with the canaries set aside
    (pytest exits 1 for the failing one).
    """
    must_pass, must_fail = canaries
    report = report_outcomes(xml_bytes)
    guard = _guard_record(guard_bytes)
    reasons = [] if test_file_intact else [TAMPERING("test_file")]
    if report is not None and guard is None:
        reasons.append(TAMPERING("report"))
    if guard is not None:
        if guard["changed"]:
            reasons.append(TAMPERING("pytest"))
        if report is not None and report != guard["outcomes"]:
            reasons.append(TAMPERING("report"))
    if guard is not None and guard["canaries"]:
        for outcomes in (o for o in (report, guard["outcomes"]) if o is not None):
            if outcomes.get(must_pass) != "passed" or outcomes.get(must_fail) != "failed":
                reasons.append(TAMPERING("canary"))
    if reasons:
        return False, grade_order(reasons)
    if guard is None or not guard["canaries"] or report is None or exit_code != 1:
        return False, [TESTS_FAILED()]  # crashed, or nothing collected to attach them to
    tests = {n: o for n, o in report.items() if n not in canaries}
    if not tests or any(o != "passed" for o in tests.values()):
        return False, [TESTS_FAILED()]
    if any(name not in tests for name in expected):
        return False, [TESTS_FAILED()]
    return True, []


def _guard_record(data: bytes | None) -> dict | None:
    import json

    try:
        record = json.loads(data) if data else None
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    changed, outcomes = record.get("changed"), record.get("outcomes")
    if not isinstance(changed, list) or not isinstance(outcomes, dict):
        return None
    return {"changed": changed, "outcomes": outcomes, "canaries": record.get("canaries") is True}


def bounded_names(names: list[str]) -> list[str]:
    """`names` as a record keeps them: each cut to `MAX_TEST_NAME_CHARS` (marked with
    "..."), the first `MAX_FAILED_TESTS`, then one entry counting the rest."""
    most = MAX_TEST_NAME_CHARS
    cut = [n if len(n) <= most else n[: most - 3] + "..." for n in names]
    if len(cut) <= MAX_FAILED_TESTS:
        return cut
    return [*cut[:MAX_FAILED_TESTS], f"[{len(cut) - MAX_FAILED_TESTS} more not named]"]
