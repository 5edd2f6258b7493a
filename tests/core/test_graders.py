from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalpin.core.instrument import pins
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.instrument.graders.tools import grade_golden
from evalpin.core.records import Completion, ToolCall


def test_golden_pass(golden_file: Path) -> None:
    case = load_fixtures(golden_file).cases[0]
    done = Completion(text="Order 1001 ships Monday.", tools=[ToolCall("lookup_order", {})])
    assert grade_golden(case, done) == []


def test_golden_reasons_in_stable_order(golden_file: Path) -> None:
    case = load_fixtures(golden_file).cases[0]
    done = Completion(text="REFUND ISSUED for you", tools=[ToolCall("issue_refund", {})])
    assert grade_golden(case, done) == [
        "missing_tool:lookup_order",
        "forbidden_tool:issue_refund",
        "missing_text:1001",
        "forbidden_text:refund issued",
    ]


def test_text_checks_are_case_insensitive(golden_file: Path) -> None:
    case = load_fixtures(golden_file).cases[1]
    tools = [ToolCall("lookup_order"), ToolCall("cancel_order")]
    assert grade_golden(case, Completion(text="Order CANCELLED.", tools=tools)) == []
    assert grade_golden(case, Completion(text="Done.", tools=tools)) == ["missing_text:cancelled"]


def test_grader_version_moves_with_any_grader_source(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "graders"
    shutil.copytree(pins.GRADERS_DIR, copy)
    monkeypatch.setattr(pins, "GRADERS_DIR", copy)
    before = pins.grader_version()
    assert before == pins.grader_version()
    source = copy / "tools.py"
    source.write_text(source.read_text() + "\n# a rubric edit\n")
    assert pins.grader_version() != before


@pytest.mark.parametrize("field", ["text", "tools", "files"])
def test_completion_digest_covers_text_tools_and_files(field: str) -> None:
    base = Completion(text="a", tools=[ToolCall("t", {"x": 1})], files={"f.py": "1"})
    changed = {
        "text": Completion(text="b", tools=base.tools, files=base.files),
        "tools": Completion(text="a", tools=[ToolCall("t", {"x": 2})], files=base.files),
        "files": Completion(text="a", tools=base.tools, files={"f.py": "2"}),
    }[field]
    assert pins.completion_digest(base) != pins.completion_digest(changed)
    assert pins.completion_digest(base) == pins.completion_digest(
        Completion(text="a", tools=[ToolCall("t", {"x": 1})], files={"f.py": "1"})
    )
