"""A disputed case (issue 38) wherever a grade is shown: plain pytest passed it, the witness
did not, so it is neither a pass nor a fail. Counted apart like an error in the run's
trailer and its pass rates, a run with one is at most `internal` and names the items,
`diff` moves into and out of it as their own kinds in every format, `history` says it,
the review lists, filters and shows it with both tails side by side, and the API reads
it. The first test is a real `evalpin run` of a coding set; the rest read run files
written through the real writer."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from evalpin import api
from evalpin.core.records import FixturesInfo
from tests.builders import case, header, write_run
from tests.clirun import cli
from tests.tuikit import SIZE, new_app, open_case, screen_text, settle


def _d(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


ITEMS = {
    # id: (module, test, the answer replayed)
    "totals": (
        "totals.py",
        "from totals import total\n\n\ndef test_total():\n    assert total([2, 3]) == 5\n",
        "def total(xs):\n    return sum(xs)\n",
    ),
    "halves": (
        "halves.py",
        "from halves import half\n\n\ndef test_half():\n    assert half(9) == 4.5\n",
        "def half(x):\n    return x // 2\n",  # wrong: a fail
    ),
    "joins": (
        "joins.py",
        _d(
            """
            import sys

            from joins import joined


            def test_joins_a_frame():
                assert joined(sys._getframe(), "-") == "test-joins-a-frame"
            """
        ),
        # a frame of the test's handed over: the witness cannot carry it
        "def joined(frame, sep):\n    return sep.join(frame.f_code.co_name.split('_'))\n",
    ),
}


def _coding_set(folder: Path) -> None:
    lines = ["schema: coding-eval/v1", "dataset_id: disputes", "dataset_version: '1'", "items:"]
    answers = []
    for item_id, (module, test, answer) in ITEMS.items():
        (folder / f"test_{item_id}.py").write_text(test)
        (folder / f"{item_id}.md").write_text(f"Write {module}.\n")
        lines += [
            f"  - id: {item_id}",
            "    language: python",
            f"    prompt_file: {item_id}.md",
            f"    test_file: test_{item_id}.py",
            "    timeout_s: 20",
            f"    expected_files: [{module}]",
        ]
        answers.append({"case_id": item_id, "files": {module: answer}, "text": ""})
    (folder / "coding.yaml").write_text("\n".join(lines) + "\n")
    (folder / "replay.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_real_run_records_counts_and_judges_a_disputed_case(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _coding_set(tmp_path)
    run = ("run", "--fixtures", "coding.yaml", "--slot", "x=replay:replay.jsonl")
    r = cli(capsys, *run, "--seeds", "1,2", "--loops", "1", "--out", "runs/a.jsonl")
    assert r.code == 0, r.err
    assert "2/4 passed" in r.err and "2 disputed case(s)" in r.err
    lines = _lines(tmp_path / "runs/a.jsonl")
    cases = {(c["case_id"], c["seed"]): c for c in lines if c["record"] == "case"}
    joins = cases[("joins", 1)]
    assert joins["pass"] is False and joins["status"] == "disputed"
    assert joins["reasons"] == ["witness:unsupported"]
    # It passed plain pytest: never sent back to be repaired. The fail was (the replay
    # has no second answer: its record says the repair round asked and got none).
    assert joins["loops"] == 0 and "error" not in joins
    assert "repair round 1" in cases[("halves", 1)]["error"]
    assert "1 passed" in joins["tail"] and "frame" in joins["witness_tail"]
    assert "status" not in cases[("halves", 1)]
    assert cases[("halves", 1)]["reasons"] == ["tests_failed"]
    assert "witness_tail" not in cases[("totals", 1)]  # a witnessed pass keeps one tail
    summary = lines[-1]
    assert (summary["passed"], summary["disputed"], summary.get("errors", 0)) == (2, 2, 0)
    assert summary["pass_rate_by_seed"] == {"1": 0.5, "2": 0.5}  # over the judged cases

    v = cli(capsys, "verdict", "runs/a.jsonl", "--json")
    assert v.code == 1
    verdict = json.loads(v.out)
    assert verdict["label"] == "internal"
    assert (verdict["judged"], verdict["errors"], verdict["disputed"]) == (4, 0, 2)
    assert verdict["disputed_cases"] == ["joins"]
    assert verdict["disputed_reasons"] == {"witness:unsupported": 2}
    assert verdict["pass_rate"] == 0.5
    (check,) = [c for c in verdict["checklist"] if c["rule"] == "witnessed"]
    assert check["ok"] is False and "2 disputed case(s) on joins" in check["why"]
    text = cli(capsys, "verdict", "runs/a.jsonl")
    assert "2 disputed case(s) apart" in text.out and "witnessed" in text.out

    # Disputed cases are not errors: --retry-errors leaves them (asking again would
    # only replace an answer plain pytest passed).
    again = cli(
        capsys, *run, "--seeds", "1,2", "--out", "runs/a.jsonl", "--resume", "--retry-errors"
    )
    assert again.code == 3 and "no error cases to retry" in again.err


# -- run files as the grader writes them -------------------------------------------------

CODING = FixturesInfo(
    path="coding.yaml", kind="coding", dataset_id="disputes", dataset_hash="d" * 64
)
CONTROLS = {"temperature": 0.0, "seeds": [11, 29, 47], "network": "off-enforced"}
PLAIN_TAIL = "test_joins.py .\n1 passed in 0.02s\n"
WITNESS_TAIL = (
    "FAILED test_joins.py::test_joins_with_the_modules_separator\n1 failed in 0.30s\n"
    "[evalpin] the witness could not carry: handing a module to the candidate"
)


def _disputed(case_id: str, seed: int) -> Any:
    return case(
        case_id,
        False,
        seed,
        reasons=["witness:unsupported"],
        status="disputed",
        tail=PLAIN_TAIL,
        witness_tail=WITNESS_TAIL,
        witness_failed_tests=["test_joins_with_the_modules_separator"],
    )


def _runs(folder: Path) -> tuple[Path, Path]:
    """Yesterday every case judged; today `joins` disputed on seed 29."""
    seeds = (11, 29, 47)
    left = [case(c, True, s) for c in ("joins", "totals") for s in seeds]
    right = [_disputed("joins", s) if s == 29 else case("joins", True, s) for s in seeds] + [
        case("totals", True, s) for s in seeds
    ]
    for rec in right:
        rec.completion_digest = f"cd-{rec.case_id}-{rec.seed}"
    for rec in left:
        rec.completion_digest = f"cd-{rec.case_id}-{rec.seed}"
    lpath = write_run(
        folder / "a.jsonl", left, head=header(run_id="A", fixtures=CODING, controls=CONTROLS)
    )
    rpath = write_run(
        folder / "b.jsonl",
        right,
        head=header(
            run_id="B", fixtures=CODING, controls=CONTROLS, started_at="2026-11-30T02:00:00Z"
        ),
    )
    return lpath, rpath


def test_diff_moves_into_and_out_of_dispute_in_every_format(capsys, tmp_path: Path) -> None:
    left, right = _runs(tmp_path)
    d = cli(capsys, "diff", str(left), str(right), "--json")
    assert d.code == 1  # a move, never a regression
    report = json.loads(d.out)
    (move,) = report["silent_regressions"]
    assert (move["case_id"], move["seed"], move["kind"]) == ("joins", 29, "disputed")
    assert (move["left_status"], move["right_status"]) == ("pass", "disputed")
    assert report["stats"]["clustered"]["regressed_cases"] == 0
    back = json.loads(cli(capsys, "diff", str(right), str(left), "--json").out)
    assert [m["kind"] for m in back["silent_regressions"]] == ["recovered"]

    md, html, junit = tmp_path / "d.md", tmp_path / "d.html", tmp_path / "d.xml"
    text = cli(
        capsys, "diff", str(left), str(right), "--markdown", str(md), "--html", str(html),
        "--junit", str(junit),
    )  # fmt: skip
    assert "1 disputed" in text.out and "DISPUTED" in text.out
    assert "the witness did not pass test_joins_with_the_modules_separator" in text.out
    assert "### Disputed (1: plain pytest passed, the witness did not)" in md.read_text()
    assert "witness:unsupported" in md.read_text()
    assert 'class="disputed">disputed<' in html.read_text()
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1" and suite.get("failures") == "0"
    (error,) = suite.iter("error")
    assert error.get("type") == "disputed" and "witness:unsupported" in error.get("message", "")


def test_history_says_the_disputed_cases_apart(capsys, tmp_path: Path) -> None:
    _runs(tmp_path)
    data = json.loads(cli(capsys, "history", str(tmp_path), "--json").out)
    runs = {r["run_id"]: r for s in data["series"] for r in s["runs"]}
    assert (runs["B"]["disputed"], runs["B"]["judged"], runs["B"]["label"]) == (
        1,
        5,
        "internal",
    )
    assert runs["A"]["disputed"] == 0
    assert "1 disputed case(s) apart" in cli(capsys, "history", str(tmp_path)).out


def test_the_api_reads_the_status_and_both_tails(tmp_path: Path) -> None:
    _, right = _runs(tmp_path)
    run = api.read_run(right)
    rows = run.to_dicts(detail=True)
    (row,) = [r for r in rows if r["status"] == api.DISPUTED]
    assert (row["case_id"], row["seed"], row["pass"]) == ("joins", 29, False)
    assert row["witness_tail"] == WITNESS_TAIL and row["tail"] == PLAIN_TAIL
    assert row["witness_failed_tests"] == ["test_joins_with_the_modules_separator"]
    verdict = api.verdict(run)
    assert (verdict.disputed, verdict.disputed_cases, verdict.judged) == (1, ["joins"], 5)
    assert verdict.label == api.INTERNAL


async def test_the_review_lists_filters_and_shows_both_tails(tmp_path: Path) -> None:
    _, right = _runs(tmp_path)
    app = new_app(right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        text = screen_text(app)
        assert "disputed 1" in text and "DISPUTED" in text
        await pilot.press("f", "f", "f", "f")
        assert app.review.filter == "disputed"
        assert [
            app.review.cases.cases[i].case_id for i in app.review.query_one("CaseList").rows
        ] == ["joins"]
        detail = await open_case(pilot, app, "joins")
        shown = detail.text()
        assert "DISPUTED (not judged)" in shown
        assert "witness failed" in shown and "test_joins_with_the_modules_separator" in shown
        assert "plain pytest beside the witness · seed 29" in shown
        # Side by side: plain pytest's pass on the left of each row, the witness's on the right.
        rows = [row for row in shown.splitlines() if " │ " in row]
        assert rows[0].startswith("plain pytest") and rows[0].endswith("│ witness"), rows
        assert rows[2].startswith("1 passed in 0.02s ") and "│ test_joins.py::" in rows[2]
        assert any(row.endswith("│ 1 failed in 0.30s") for row in rows)
        assert any(row.endswith("│ [evalpin] the witness could not carry:") for row in rows)


async def test_a_pair_marks_the_move_into_dispute(tmp_path: Path) -> None:
    app = new_app(*_runs(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        assert "DISPUTED" in screen_text(app)
        await pilot.press("f", "f", "f", "f", "f", "f", "f")
        assert app.review.filter == "disputed"
