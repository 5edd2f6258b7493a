"""Other tools' instruments pinned all the way (issue 51), on real inspect-ai logs made
offline by scripts/make_instrument_logs.py: a model-graded scorer whose grader model
changed, a run with no grader role against one with it, and a changed message limit
are each refused naming the pin that moved, never "no movement" nor a regression; with
the instrument held, a score that moves between two failing values (P -> I) is a move."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from evalpin.core.judge.compare import DRIFT, compare
from evalpin.core.judge.history import load_history
from evalpin.core.read.runfile import read_run
from tests.clirun import cli

DATA = Path(__file__).parents[1] / "data" / "inspect" / "instruments"
EXPECTED = json.loads((DATA / "expected.json").read_text())


@pytest.mark.parametrize(
    ("left", "right", "pin"),
    [
        ("graded_a", "graded_b", "grader_version"),
        ("graded_none", "graded_a", "grader_version"),
        ("limit_10", "limit_4", "slot settings"),
    ],
)
def test_a_changed_instrument_of_another_tool_is_refused(capsys, left, right, pin) -> None:
    assert EXPECTED[left] != EXPECTED[right]  # the logs differ where the test says
    r = cli(capsys, "diff", str(DATA / f"{left}.eval"), str(DATA / f"{right}.eval"))
    assert r.code == 2 and r.out.startswith("REFUSE_DIFF"), r.out
    assert pin in r.out.splitlines()[1], r.out


def test_the_roles_and_limits_are_in_the_pins(capsys) -> None:
    a = read_run(DATA / "graded_a.eval")
    assert EXPECTED["graded_a"]["roles"] == {"grader": "mockllm/grader-a"}
    limited = read_run(DATA / "limit_4.eval")
    assert limited.header.slot["limits"]["message_limit"] == 4
    assert limited.header.controls["message_limit"] == 4
    assert a.header.grader_version != read_run(DATA / "graded_none.eval").header.grader_version


def test_history_puts_each_instrument_in_its_own_series(tmp_path) -> None:
    for name in ("graded_a", "graded_b", "graded_none"):
        (tmp_path / f"{name}.eval").write_bytes((DATA / f"{name}.eval").read_bytes())
    history = load_history(tmp_path)
    assert len(history.series) == 3 and not history.unreadable, history


def test_a_move_between_two_failing_scores_is_a_move() -> None:
    """Held to one instrument (the right log's grader pin set to the left's), the three
    samples grader-b turned from P to I with the same completion are moves."""
    left, right = read_run(DATA / "graded_a.eval"), read_run(DATA / "graded_b.eval")
    grader = left.rows[0].grader_version
    right.rows = [msgspec.structs.replace(r, grader_version=grader) for r in right.rows]
    right.header = msgspec.structs.replace(right.header, grader_version=grader)
    right.__dict__.pop("pin_values", None)
    diff = compare(left, right)
    assert not diff.refused
    moved = {m.case_id: m.kind for m in diff.moved}
    flipped = {
        s
        for s, g in EXPECTED["graded_a"]["grades"].items()
        if g != EXPECTED["graded_b"]["grades"][s]
    }
    assert flipped == {"q3", "q4", "q5"} and moved == dict.fromkeys(flipped, DRIFT)
