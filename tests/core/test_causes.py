"""What moved, by cause: the core's grouping, and diff's text, JSON, Markdown and HTML."""

from __future__ import annotations

import json
from pathlib import Path

from evalpin.core.judge.causes import find_causes
from evalpin.core.judge.compare import compare
from evalpin.core.judge.report import build_report
from evalpin.core.read.runfile import read_run
from tests.builders import case, header, write_run
from tests.clirun import cli

DEMO = Path(__file__).resolve().parents[2] / "runs"


def demo_causes():
    diff = compare(read_run(DEMO / "demo-night-1.jsonl"), read_run(DEMO / "demo-night-2.jsonl"))
    return {c.label: c for c in find_causes(diff)}


def test_the_demo_pair_names_its_causes_with_cases_and_seeds() -> None:
    causes = demo_causes()
    sorry = causes["+ missing_text:sorry"]
    assert (sorry.cases, sorry.pairs) == (("status-late-apology",), 3)
    assert sorry.describe() == "+ missing_text:sorry  1 case (3 seeds)"
    assert causes["- missing_tool:escalate_to_human"].cases == ("refund-over-limit",)
    assert causes["+ calls cancel_order"].cases == ("cancel-already-shipped",)
    assert causes["+ calls escalate_to_human"].cases == ("refund-over-limit",)


def test_reasons_tools_and_tests_that_came_and_went(tmp_path: Path) -> None:
    left = [
        case("a", False, s, reasons=["tests_failed"], failed_tests=["test_x"], tool_names=[])
        for s in (11, 29)
    ] + [case("b", True, 11, tool_names=["lookup"]), case("c", True, 11)]
    right = [
        case("a", False, 11, reasons=["tests_failed"], failed_tests=["test_y"], tool_names=[]),
        case("a", False, 29, reasons=["tests_failed"], failed_tests=["test_x"], tool_names=[]),
        case("b", False, 11, reasons=["forbidden_tool:refund"], tool_names=["refund"]),
        case("c", True, 11),  # unmoved: never read, never a cause
    ]
    for r in right[:2]:
        r.completion_digest = f"{r.completion_digest}-moved"
    lp = write_run(tmp_path / "l.jsonl", left)
    rp = write_run(tmp_path / "r.jsonl", right)
    causes = {c.label: c for c in find_causes(compare(read_run(lp), read_run(rp)))}
    assert set(causes) == {
        "+ forbidden_tool:refund",
        "- calls lookup",
        "+ calls refund",
        "+ fails test_y",
        "- fails test_x",
    }
    assert (causes["+ fails test_y"].cases, causes["+ fails test_y"].pairs) == (("a",), 1)
    kinds = [c.kind for c in causes.values()]
    assert kinds == sorted(kinds, key=("reason", "tool", "test").index)


def test_a_refused_pair_has_no_causes(tmp_path: Path) -> None:
    lp = write_run(tmp_path / "l.jsonl", [case("a", True)])
    rp = write_run(
        tmp_path / "r.jsonl",
        [case("a", False, grader_version="g2")],
        head=header(grader_version="g2"),
    )
    report = build_report(read_run(lp), read_run(rp))
    assert report.refused and report.causes == []


def test_diff_prints_the_causes_in_every_format(tmp_path: Path, capsys) -> None:
    left, right = str(DEMO / "demo-night-1.jsonl"), str(DEMO / "demo-night-2.jsonl")
    md, html = tmp_path / "d.md", tmp_path / "d.html"
    done = cli(capsys, "diff", left, right, "--markdown", str(md), "--html", str(html))
    assert done.code == 1
    assert "what moved, by cause:" in done.out
    assert "+ missing_text:sorry  1 case (3 seeds)  status-late-apology" in done.out
    data = json.loads(cli(capsys, "diff", left, right, "--json").out)
    by_label = {c["label"]: c for c in data["causes"]}
    assert by_label["+ missing_text:sorry"] == {
        "sign": "+",
        "kind": "reason",
        "name": "missing_text:sorry",
        "label": "+ missing_text:sorry",
        "cases": ["status-late-apology"],
        "pairs": 3,
    }
    assert "| + missing\\_text:sorry | 1 | 3 | status-late-apology |" in md.read_text()
    assert "<td>+ missing_text:sorry</td><td>1</td><td>3</td>" in html.read_text()


def test_hostile_reason_and_tool_names_stay_inert(tmp_path: Path, capsys) -> None:
    evil = "x\x1b[31m<b>|"
    lp = write_run(tmp_path / "l.jsonl", [case("a", True)])
    rp = write_run(
        tmp_path / "r.jsonl",
        [case("a", False, reasons=[f"missing_text:{evil}"], tool_names=[evil])],
    )
    md, html = tmp_path / "d.md", tmp_path / "d.html"
    done = cli(capsys, "diff", str(lp), str(rp), "--markdown", str(md), "--html", str(html))
    assert "what moved, by cause:" in done.out
    assert "\x1b" not in done.out
    assert "<b>" not in html.read_text() and "&lt;b&gt;" in html.read_text()
    assert "\x1b" not in md.read_text()
