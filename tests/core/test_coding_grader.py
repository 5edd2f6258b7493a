"""The coding grader's pure parts: files from a completion, the writable surface, static
checks, expected tests, the JUnit judgement and the reason order."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import CodingItem
from evalpin.core.instrument.graders.coding import (
    expected_tests,
    files_from_completion,
    grade_order,
    import_reasons,
    judge_report,
    rlimits,
    static_check,
    syntax_reasons,
)
from evalpin.core.instrument.graders.surface import approved_files, surface_path, surface_reasons
from evalpin.core.records import Completion

FENCE = "```"


def item(expected: list[str] | None = None, forbidden: list[str] | None = None) -> CodingItem:
    return CodingItem(
        id="case",
        language="python",
        prompt_file=Path("/fixtures/prompt.md"),
        test_file=Path("/fixtures/test_solution.py"),
        timeout_s=5.0,
        forbidden_imports=forbidden or [],
        expected_files=expected or ["solution.py"],
        fixture_hash="0" * 16,
    )


# -- files from a completion ----------------------------------------------------------


def test_files_map_wins_over_fenced_blocks() -> None:
    text = f"solution.py\n{FENCE}python\nx = 1\n{FENCE}\n"
    completion = Completion(text=text, files={"solution.py": "y = 2\n"})
    assert files_from_completion(completion) == {"solution.py": "y = 2\n"}


@pytest.mark.parametrize(
    "info",
    [
        "python title=solution.py",
        'python title="solution.py"',
        "py file=solution.py",
        "python filename='solution.py'",
        "solution.py",
        "python solution.py",
        "python:solution.py",
    ],
)
def test_name_in_info_string(info: str) -> None:
    text = f"Here you go:\n{FENCE}{info}\ndef f():\n    return 1\n{FENCE}\nDone."
    files = files_from_completion(Completion(text=text))
    assert files == {"solution.py": "def f():\n    return 1\n"}


@pytest.mark.parametrize(
    "line",
    [
        "solution.py",
        "# file: solution.py",
        "**solution.py**",
        "`solution.py`",
        "**`solution.py`**:",
        "### solution.py",
        "File: solution.py",
        "solution.py:",
    ],
)
def test_name_on_the_line_before_the_fence(line: str) -> None:
    text = f"Some words.\n\n{line}\n\n{FENCE}python\nx = 1\n{FENCE}\n"
    assert files_from_completion(Completion(text=text)) == {"solution.py": "x = 1\n"}


@pytest.mark.parametrize("first", ["# file: solution.py", "# solution.py"])
def test_name_in_a_first_line_comment_is_kept_in_the_content(first: str) -> None:
    text = f"{FENCE}python\n{first}\nx = 1\n{FENCE}\n"
    assert files_from_completion(Completion(text=text)) == {"solution.py": f"{first}\nx = 1\n"}


@pytest.mark.parametrize(
    "before",
    [
        "Here is the fix for solution.py:",  # a sentence, not a name
        "",
        "python",  # no extension
        "1.5",  # an extension must start with a letter
    ],
)
def test_unnamed_blocks_are_ignored(before: str) -> None:
    text = f"{before}\n{FENCE}python\nx = 1\n{FENCE}\n"
    assert files_from_completion(Completion(text=text)) == {}
    assert files_from_completion(Completion(text=text), ["a.py", "b.py"]) == {}


def test_one_unnamed_block_is_the_one_expected_file() -> None:
    text = f"Here is the fix:\n{FENCE}python\ndef add(a, b):\n    return a + b\n{FENCE}\n"
    files = files_from_completion(Completion(text=text), ["solution.py"])
    assert files == {"solution.py": "def add(a, b):\n    return a + b\n"}
    two = text + f"{FENCE}\nprint(1)\n{FENCE}\n"
    assert files_from_completion(Completion(text=two), ["solution.py"]) == {}
    named = text + f"helper.py\n{FENCE}python\nx = 1\n{FENCE}\n"
    assert files_from_completion(Completion(text=named), ["solution.py"]) == {
        "helper.py": "x = 1\n"
    }


def test_several_files_tilde_fences_and_a_longer_fence_holding_backticks() -> None:
    text = (
        "pkg/util.py\n~~~python\ndef g():\n    return 2\n~~~\n"
        f"````markdown title=README.md\n{FENCE}\ninner\n{FENCE}\n````\n"
    )
    assert files_from_completion(Completion(text=text)) == {
        "pkg/util.py": "def g():\n    return 2\n",
        "README.md": f"{FENCE}\ninner\n{FENCE}\n",
    }


def test_a_repeated_name_keeps_the_last_block() -> None:
    text = (
        f"solution.py\n{FENCE}python\nfirst = 1\n{FENCE}\nOops, fixed:\n\n"
        f"solution.py\n{FENCE}python\nsecond = 2\n{FENCE}\n"
    )
    assert files_from_completion(Completion(text=text)) == {"solution.py": "second = 2\n"}


def test_an_unclosed_block_runs_to_the_end() -> None:
    text = f"solution.py\n{FENCE}python\ndef f(:\n"
    assert files_from_completion(Completion(text=text)) == {"solution.py": "def f(:\n"}


def test_a_closing_fence_is_not_taken_as_the_next_blocks_name() -> None:
    text = f"{FENCE}python\nx = 1\n{FENCE}\n{FENCE}python\ny = 2\n{FENCE}\n"
    assert files_from_completion(Completion(text=text)) == {}


# -- surface --------------------------------------------------------------------------


def test_expected_files_are_writable_and_nothing_is_missing() -> None:
    assert surface_reasons({"solution.py": "x = 1\n"}, item()) == []


@pytest.mark.parametrize(
    "name",
    [
        "conftest.py",
        "Conftest.py",
        "pkg/conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.py",
        "pytest/__init__.py",
        "sitecustomize.py",
        "usercustomize.py",
        "evil.pth",
        "setup.cfg",
        "tox.ini",
        "pyproject.toml",
        "test_solution.py",  # the test file's own name
        "/abs/solution.py",
        "/etc/x",
        "../escape.py",
        "./a/../conftest.py",
        "..\\conftest.py",
        "a\\..\\..\\solution.py",
        "C:\\solution.py",
        "~/solution.py",
        "other.py",
        "",
    ],
)
def test_anything_but_the_expected_files_is_outside_the_surface(name: str) -> None:
    files = {"solution.py": "x = 1\n", name: "boom\n"}
    assert surface_reasons(files, item()) == [f"outside_surface:{name}"]
    assert approved_files(files, item()) == {"solution.py": "x = 1\n"}


def test_a_nul_in_a_name_is_refused_and_escaped_in_the_reason() -> None:
    files = {"solution.py": "x = 1\n", "sol\0ution.py": "x = 2\n"}
    assert surface_reasons(files, item()) == ["outside_surface:sol\\x00ution.py"]


def test_reserved_names_stay_refused_even_when_an_item_lists_them() -> None:
    reasons = surface_reasons({"conftest.py": "x = 1\n"}, item(["conftest.py"]))
    assert reasons == ["outside_surface:conftest.py", "missing_file:conftest.py"]


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("./solution.py", "solution.py"),
        ("a/../solution.py", "solution.py"),
        ("pkg\\mod.py", "pkg/mod.py"),
        ("pkg//./mod.py", "pkg/mod.py"),
    ],
)
def test_harmless_spellings_of_an_expected_file_are_accepted(given: str, canonical: str) -> None:
    expected = item([canonical])
    assert surface_path(given) == canonical
    assert surface_reasons({given: "x = 1\n"}, expected) == []
    assert approved_files({given: "x = 1\n"}, expected) == {canonical: "x = 1\n"}


def test_two_spellings_of_one_file_keep_the_first() -> None:
    files = {"solution.py": "a = 1\n", "./solution.py": "b = 2\n"}
    assert surface_reasons(files, item()) == ["outside_surface:./solution.py"]
    assert approved_files(files, item()) == {"solution.py": "a = 1\n"}


def test_missing_expected_files_come_after_outside_ones_in_item_order() -> None:
    reasons = surface_reasons({"extra.py": ""}, item(["b.py", "a.py"]))
    assert reasons == ["outside_surface:extra.py", "missing_file:b.py", "missing_file:a.py"]


def test_a_very_long_name_is_cut_in_the_reason() -> None:
    reason = surface_reasons({"x" * 500 + ".py": ""}, item())[0]
    assert reason.startswith("outside_surface:xxx") and reason.endswith("…")
    assert len(reason) < 150


# -- syntax ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "def f(:\n",
        "return 1\n",  # only the compiler (not ast.parse) rejects this
        "x = 1\0\n",
        "x = '\ud800'\n",  # cannot be written as UTF-8
    ],
)
def test_python_files_that_do_not_compile(source: str) -> None:
    assert syntax_reasons({"solution.py": source, "ok.py": "x = 1\n"}) == [
        "syntax_error:solution.py"
    ]


def test_syntax_is_checked_on_python_files_only_and_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').close()\n"
    assert syntax_reasons({"notes.txt": "def (", "solution.py": source}) == []
    assert not marker.exists()


def test_static_check_gives_the_compiler_message_for_the_repair_loop() -> None:
    reasons, note = static_check({"solution.py": "x = 1\ndef f(:\n"}, item())
    assert reasons == ["syntax_error:solution.py"]
    assert "solution.py:2:" in note


def test_static_check_passes_clean_files_with_no_note() -> None:
    assert static_check({"solution.py": "import json\n"}, item(forbidden=["os"])) == ([], "")


def test_static_check_orders_reasons() -> None:
    files = {"solution.py": "import os\n", "conftest.py": ""}
    reasons, _ = static_check(files, item(forbidden=["os"]))
    assert reasons == ["outside_surface:conftest.py", "forbidden_import:os"]


# -- imports --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import os",
        "import os.path",
        "import sys, os as o",
        "from os import path",
        "from os.path import join",
        "__import__('os')",
        "__import__(name='os.path')",
        "import importlib\nimportlib.import_module('os')",
        "from importlib import import_module\nimport_module('os.path')",
        "import importlib as il\nil.import_module('os')",
        "import builtins\nbuiltins.__import__('os')",
        "def f():\n    if True:\n        import os",
    ],
)
def test_forbidden_imports_in_every_static_form(source: str) -> None:
    assert import_reasons({"solution.py": source}, ["os"]) == ["forbidden_import:os"]


@pytest.mark.parametrize(
    "source",
    [
        "import osmosis",
        "import posixpath",
        "from . import os",
        "from .os import path",
        "import_module('.os', 'pkg')",
        "x = 'import os'",
        "__import__('o' + 's')",  # advisory: a computed name is not seen
    ],
)
def test_not_flagged(source: str) -> None:
    assert import_reasons({"solution.py": source}, ["os"]) == []


def test_a_forbidden_submodule_leaves_its_parent_allowed() -> None:
    assert import_reasons({"a.py": "import os"}, ["os.path"]) == []
    assert import_reasons({"a.py": "from os import path"}, ["os.path"]) == [
        "forbidden_import:os.path"
    ]
    assert import_reasons({"a.py": "import os.path.x"}, ["os.path"]) == ["forbidden_import:os.path"]


def test_import_reasons_follow_the_items_order_once_each() -> None:
    files = {"a.py": "import socket\nimport os\n", "b.py": "import os\n", "c.txt": "import sys"}
    reasons = import_reasons(files, ["sys", "os", "socket"])
    assert reasons == ["forbidden_import:os", "forbidden_import:socket"]


def test_unparsable_files_are_left_to_the_syntax_check() -> None:
    assert import_reasons({"a.py": "import os\ndef (:"}, ["os"]) == []


# -- expected tests -------------------------------------------------------------------


def test_expected_tests_mirror_what_pytest_collects() -> None:
    source = """
import pytest

def helper(): pass
def test_a(): pass
async def test_b(): pass
def testing_prefix_counts_too(): pass
def test_a(): pass  # redefined: collected once

class TestThing:
    def test_m(self): pass
    def helper(self): pass
    class TestInner:
        def test_n(self): pass

class TestHasInit:
    def __init__(self): pass
    def test_never(self): pass

class TestOptedOut:
    __test__ = False
    def test_never(self): pass

class Thing:
    def test_never(self): pass

if True:
    def test_conditional(): pass
"""
    assert expected_tests(source) == [
        "test_a",
        "test_b",
        "testing_prefix_counts_too",
        "TestThing::test_m",
        "TestThing::TestInner::test_n",
    ]


def test_an_unparsable_test_file_expects_nothing() -> None:
    assert expected_tests("def test_(:") == []


# -- the report -----------------------------------------------------------------------


def report(*cases: str, errors: str = "0", failures: str = "0") -> bytes:
    body = "".join(cases)
    return (
        '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
        f'<testsuite name="pytest" errors="{errors}" failures="{failures}" skipped="0" '
        f'tests="{len(cases)}">{body}</testsuite></testsuites>'
    ).encode()


def case(name: str, classname: str = "test_solution", inner: str = "") -> str:
    return f'<testcase classname="{classname}" name="{name}" time="0.001">{inner}</testcase>'


PASSING = report(
    case("test_a"),
    case("test_p[1]"),
    case("test_p[two-2]"),
    case("test_m", classname="test_solution.TestThing"),
)
EXPECTED = ["test_a", "test_p", "TestThing::test_m"]


def test_a_clean_report_with_every_expected_test_passes() -> None:
    assert judge_report(PASSING, EXPECTED) == (True, [])
    assert judge_report(PASSING, EXPECTED, exit_code=0) == (True, [])


@pytest.mark.parametrize(
    "xml",
    [
        report(case("test_a", inner='<failure message="boom">x</failure>')),
        report(case("test_a", inner='<error message="teardown">x</error>')),
        report(case("test_a", inner='<skipped type="pytest.skip" message="s" />')),
        report(case("test_a"), errors="1"),
        report(case("test_a"), failures="1"),
        report(case("test_solution", classname="", inner='<error message="collection"/>')),
    ],
)
def test_any_failure_error_or_skip_fails(xml: bytes) -> None:
    assert judge_report(xml, []) == (False, ["tests_failed"])


def test_an_expected_test_that_did_not_run_fails() -> None:
    assert judge_report(report(case("test_a")), ["test_a", "test_b"]) == (False, ["tests_failed"])
    # a method of another class does not stand in for a top-level test
    xml = report(case("test_m", classname="test_solution.TestOther"))
    assert judge_report(xml, ["TestThing::test_m"]) == (False, ["tests_failed"])


def test_no_test_at_all_fails() -> None:
    assert judge_report(report(), []) == (False, ["tests_failed"])


@pytest.mark.parametrize("xml", [None, b"", b"not xml", b"<testsuites><testsuite>"])
def test_no_readable_report_never_passes(xml: bytes | None) -> None:
    assert judge_report(xml, []) == (False, ["tests_failed"])


@pytest.mark.parametrize("exit_code", [1, 2, 5, -9])
def test_a_non_zero_exit_fails_even_with_a_clean_report(exit_code: int) -> None:
    assert judge_report(PASSING, EXPECTED, exit_code=exit_code) == (False, ["tests_failed"])


@pytest.mark.parametrize(
    "prolog",
    [
        '<!DOCTYPE testsuites [<!ENTITY a "aaaaaaaa">]>',
        "<!doctype testsuites>",
        '<!ENTITY x SYSTEM "file:///etc/passwd">',
    ],
)
def test_dtds_and_entities_are_refused(prolog: str) -> None:
    xml = PASSING.replace(b"?>", b"?>" + prolog.encode(), 1)
    assert judge_report(xml, EXPECTED) == (False, ["tests_failed"])


# -- order and limits -----------------------------------------------------------------


def test_grade_order_sorts_by_kind_and_drops_duplicates() -> None:
    reasons = [
        "sandbox_error:setup",
        "tests_failed",
        "forbidden_import:os",
        "syntax_error:a.py",
        "missing_file:b.py",
        "outside_surface:c.py",
        "forbidden_import:os",
        "outside_surface:a.py",
        "something_new:x",
    ]
    assert grade_order(reasons) == [
        "outside_surface:c.py",
        "outside_surface:a.py",
        "missing_file:b.py",
        "syntax_error:a.py",
        "forbidden_import:os",
        "tests_failed",
        "sandbox_error:setup",
        "something_new:x",
    ]


def test_cpu_limit_leaves_the_wall_clock_timeout_to_act_first() -> None:
    limits = rlimits(1.5)
    assert limits["RLIMIT_CPU"] > 1.5
    assert limits["RLIMIT_CORE"] == 0
