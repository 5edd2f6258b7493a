"""The reason registry: every code DESIGN names, every code the code can make, one table."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest

from evalpin.core import reasons
from evalpin.core.instrument import pins
from evalpin.core.judge.card import metrics
from evalpin.core.read.runfile import read_run
from tests.builders import case, write_run

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "evalpin"

# DESIGN.md's "Reason codes" section, as written there.
DESIGN_CODES = [
    "missing_tool:NAME",
    "forbidden_tool:NAME",
    "missing_text:NEEDLE",
    "forbidden_text:NEEDLE",
    "tests_failed",
    "timeout",
    "forbidden_import:MODULE",
    "outside_surface:PATH",
    "missing_file:NAME",
    "syntax_error:FILE",
    "tampering:KIND",
    "no_completion",
    "provider_error:KIND",
    "sandbox_error:KIND",
    "tool_loop_exhausted",
    "score:VALUE",
]
DESIGN_DETAILS = [
    "tampering:report",
    "tampering:pytest",
    "tampering:canary",
    "tampering:test_file",
    "provider_error:oversized",
    "sandbox_error:memory",
]


def test_every_design_code_is_registered() -> None:
    forms = {c.form for c in reasons.REGISTRY.values()}
    assert set(DESIGN_CODES) <= forms
    for code in DESIGN_DETAILS:
        assert reasons.lookup(code) is not None, code
    assert reasons.lookup("score:0.25") is reasons.SCORE


@pytest.mark.parametrize(
    "code",
    ["other_thing:x", "provider_error:made_up", "tampering:", "missing_tool", "tests_failed:x"],
)
def test_unregistered_codes_are_unknown_not_other(code: str) -> None:
    assert reasons.lookup(code) is None
    assert reasons.kind_of(code) == "unknown"
    assert not reasons.is_static(code)


def test_constructors_refuse_what_is_not_registered() -> None:
    assert reasons.MISSING_TOOL("lookup") == "missing_tool:lookup"
    assert reasons.TESTS_FAILED() == "tests_failed"
    with pytest.raises(ValueError, match="unknown provider_error kind"):
        reasons.PROVIDER_ERROR("teapot")
    with pytest.raises(ValueError, match="needs a NAME"):
        reasons.MISSING_TOOL()
    assert reasons.lookup(reasons.OUTSIDE_SURFACE("")) is reasons.OUTSIDE_SURFACE
    with pytest.raises(ValueError, match="takes no detail"):
        reasons.TIMEOUT("x")


def test_static_flag_is_what_the_card_counts(tmp_path: Path) -> None:
    static = {c.prefix for c in reasons.REGISTRY.values() if c.static}
    assert static == {"outside_surface", "missing_file", "syntax_error", "forbidden_import"}
    rows = [
        case("a", False, 11, reasons=["forbidden_import:os", "tests_failed"]),
        case("b", False, 11, reasons=["tests_failed"]),
        case("c", False, 11, reasons=["tampering:report"]),
    ]
    assert metrics(read_run(write_run(tmp_path / "r.jsonl", rows))).static_violations == 1


def test_docs_table_is_the_registry() -> None:
    # The docs' reason-code page is generated from markdown_table() at build time
    # (docs/hooks.py; tests/project/test_docs.py checks the built page), so no copy can go stale:
    # the page holds the marker, and neither it nor the README a hand-written table.
    page = (REPO / "docs" / "reference" / "reasons.md").read_text(encoding="utf-8")
    assert "<!-- generated: reason-codes -->" in page
    header = reasons.markdown_table().splitlines()[0]
    for path in (REPO / "docs" / "reference" / "reasons.md", REPO / "README.md"):
        assert header not in path.read_text(encoding="utf-8"), path
    table = reasons.markdown_table()
    assert all(f"`{c.form}`" in table for c in reasons.REGISTRY.values())


def test_registry_moves_the_grader_version(tmp_path: Path, monkeypatch) -> None:
    copy = tmp_path / "reasons.py"
    shutil.copy2(pins.REASONS_SOURCE, copy)
    monkeypatch.setattr(pins, "REASONS_SOURCE", copy)
    before = pins.grader_version()
    copy.write_text(copy.read_text() + "\n# an order edit\n")
    assert pins.grader_version() != before


# -- everything that can emit a code builds it through the registry ---------------------

# Modules that make reason codes: graders, slots, sandbox, runner (and any later ones
# under these folders). Every code they record must be built by a registry constructor.
EMITTERS = sorted(
    [
        *(SRC / "core" / "instrument" / "graders").glob("*.py"),
        *(SRC / "run").rglob("*.py"),
        *(SRC / "core" / "read" / "formats").rglob("*.py"),
    ]
)
_CODE_LITERAL = re.compile(r"^([a-z][a-z0-9]*_[a-z0-9_]*|timeout|score):\S")


def _constructor(node: ast.Call) -> reasons.ReasonCode | None:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    entry = getattr(reasons, name, None) if isinstance(name, str) else None
    return entry if isinstance(entry, reasons.ReasonCode) else None


def _literals(node: ast.expr) -> list[str] | None:
    """The strings an argument can be, when they are written in place; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = _literals(node.body), _literals(node.orelse)
        return None if body is None or orelse is None else body + orelse
    return None


def _hand_spelled(source: str) -> list[tuple[int, str]]:
    """String literals and f-strings in `source` shaped like a reason code."""
    bare = {c.prefix for c in reasons.REGISTRY.values() if c.detail is None}
    found = []
    for node in ast.walk(ast.parse(source)):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr) and len(node.values) > 1:
            first = node.values[0]
            if isinstance(first, ast.Constant):
                text = str(first.value) + "x"
        # "timeout" alone is also a provider_error kind and a config key: not flagged.
        if text is not None and (_CODE_LITERAL.match(text) or (text in bare - {"timeout"})):
            found.append((node.lineno, text))
    return found


def test_the_scan_sees_hand_spelled_codes() -> None:
    source = 'a = [f"missing_tool:{n}"]\nb = "tests_failed"\nc = "brand_new:x"\nd = "a: b"\n'
    assert sorted(line for line, _ in _hand_spelled(source)) == [1, 2, 3]


def test_no_emitter_spells_a_code_by_hand() -> None:
    """A code written as a string (or f-string) bypasses the registry: none may exist."""
    found = [
        f"{path.relative_to(SRC)}:{line}: {text!r}"
        for path in EMITTERS
        for line, text in _hand_spelled(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_every_literal_detail_an_emitter_passes_is_registered() -> None:
    calls = 0
    for path in EMITTERS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or (entry := _constructor(node)) is None:
                continue
            calls += 1
            for arg in node.args:
                for detail in _literals(arg) or []:
                    where = f"{path.relative_to(SRC)}:{node.lineno}"
                    assert reasons.lookup(entry(detail)) is entry, where
    assert calls >= 10  # graders, sandbox, runner and slots all build codes this way


def test_openai_failure_kinds_are_registered() -> None:
    """The openai slot names its failures by kind first, then builds the code."""
    tree = ast.parse((SRC / "run" / "slots" / "openai_slot.py").read_text(encoding="utf-8"))
    kinds = [
        n.args[0].value
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and getattr(n.func, "id", None) == "_Failure"
        and isinstance(n.args[0], ast.Constant)
    ]
    assert kinds and all(reasons.lookup(f"provider_error:{k}") for k in kinds)


def test_every_code_in_the_demo_runs_is_registered() -> None:
    seen = set()
    for path in sorted((REPO / "runs").glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(raw)
            seen.update(rec.get("reasons") or ())
    assert seen and all(reasons.lookup(code) for code in seen), seen


def test_recorded_order_follows_the_registry() -> None:
    mixed = ["sandbox_error:setup", "tampering:report", "tests_failed", "syntax_error:a.py"]
    assert reasons.in_order([*mixed, "tests_failed", "zz:new"]) == [
        "syntax_error:a.py",
        "tampering:report",
        "tests_failed",
        "sandbox_error:setup",
        "zz:new",
    ]


def test_grader_output_is_registered(golden_file: Path) -> None:
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.instrument.graders.tools import grade_golden
    from evalpin.core.records import Completion, ToolCall

    fs = load_fixtures(golden_file)
    bad = Completion(text="refund issued", tools=[ToolCall("issue_refund", {})])
    codes = [r for c in fs.cases for r in grade_golden(c, bad)]
    assert codes and all(reasons.kind_of(r) in ("tool", "text") for r in codes)


async def test_the_detail_pane_marks_an_unknown_code(tmp_path: Path) -> None:
    from tests.tuikit import SIZE, new_app, screen_text, settle

    rows = [case("a", False, 11, reasons=["tests_failed", "brand_new:x"])]
    app = new_app(write_run(tmp_path / "r.jsonl", rows))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
    assert "brand_new:x  (unknown code)" in text
    assert "tests_failed  (unknown code)" not in text and "tests_failed" in text
