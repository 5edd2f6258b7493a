"""The call over cases on every face: verdict (text and JSON), the verdict screen, the card."""

from __future__ import annotations

import json
from pathlib import Path

from evalpin.core.judge.power import power
from evalpin.core.read.runfile import read_run
from evalpin.tui.screens.verdict import VerdictScreen
from tests.builders import grid, issue_example, write_run
from tests.clirun import cli
from tests.tuikit import new_app, screen_text, settle, wait_for

TALL = (170, 140)  # the whole verdict screen at once, without scrolling


def issue_runs(tmp_path: Path) -> tuple[Path, Path]:
    left, right = issue_example()
    return (
        write_run(tmp_path / "left.jsonl", grid(left)),
        write_run(tmp_path / "right.jsonl", grid(right)),
    )


def test_verdict_says_what_the_run_can_detect(capsys, tmp_path: Path) -> None:
    _, right = issue_runs(tmp_path)
    expect = power(read_run(right).rows)
    assert expect.mde80 is not None
    r = cli(capsys, "verdict", str(right))
    assert r.code == 0
    assert f"this run can detect drops of {expect.mde80 * 100:.1f} points or more" in r.out
    data = json.loads(cli(capsys, "verdict", str(right), "--json").out)
    assert data["power"]["mde80"] == expect.mde80 and data["power"]["cases"] == 200


def test_verdict_on_a_run_without_variance_says_so(capsys, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r.jsonl", grid({f"c{i}": [True] * 3 for i in range(12)}))
    r = cli(capsys, "verdict", str(run))
    assert "this run cannot estimate its noise: every case gave the same grade" in r.out
    few = write_run(tmp_path / "few.jsonl", grid({f"c{i}": [True, False, True] for i in range(5)}))
    r = cli(capsys, "verdict", str(few))
    assert "this run cannot estimate its noise: too few cases to say: 5 cases" in r.out


async def test_verdict_screen_and_card_lead_with_cases(tmp_path: Path) -> None:
    left, right = issue_runs(tmp_path)
    app = new_app(left, right)
    async with app.run_test(size=TALL) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, VerdictScreen), "verdict screen")
        text = screen_text(app)
        head = "clustered over 200 cases: 16 regressed, 3 fixed, X^2 = 6.91, p = 0.0086: signal"
        assert head in text
        assert "paired difference -5.2 points (right - left), 95% [-9.0, -1.4]" in text
        assert "11 whole cases regressed (on every seed)" in text
        assert "pairs (detail)" in text and "significant" not in text
        assert text.index(head) < text.index("pairs (detail)")
        assert "sensitivity    this run can detect drops of" in text
        await pilot.press("e")
        await wait_for(pilot, lambda: "card written" in screen_text(app), "cards")
    card = (tmp_path / "right.card.md").read_text()
    assert f"**{head}**" in card
    assert card.index(head) < card.index("Detail, counting seeds as independent pairs: 40")
    assert "Sensitivity: this run can detect drops of" in card
