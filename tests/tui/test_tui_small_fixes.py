"""Small things a reviewer misread (issue 43, point 8), at 160 x 48 and 80 x 24:

- a backend delta where every common case was measured with another instrument marks no
  row `≠` (it read "≠ same" on every line); where only some cases moved instrument, those
  are marked;
- one envelope hash, sealed on one side only, is the same hash: not marked `≠`, the lock
  state said beside the side it belongs to;
- counts of (case, seed) pairs say so (the banner, `diff`).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from tests.builders import grid, header, write_run
from tests.clirun import cli
from tests.tuikit import new_app, screen_text, settle, wait_for

SIZES = [(160, 48), (80, 24)]
IDS = {"size": lambda s: f"{s[0]}x{s[1]}"}


def size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def rows_of(app) -> list[str]:
    """The case list's lines as shown."""
    review = app.review
    table = review.case_list.table
    return [table.cases[i].case_id for i in review.case_list.rows]


def list_text(app) -> str:
    """The case list's own region of the screen."""
    region = app.review.case_list.region
    lines = screen_text(app).splitlines()[region.y : region.bottom]
    return "\n".join(row[region.x : region.right] for row in lines)


async def browse_delta(pilot, app) -> None:
    await settle(pilot, app, "banner")
    await pilot.press("b")
    await settle(pilot, app, "verdicts")


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_a_whole_run_slot_change_marks_no_row(tmp_path: Path, size) -> None:
    cases = {"c-one": [True] * 3, "c-two": [True, False, True], "c-three": [False] * 3}
    left = write_run(tmp_path / "l.jsonl", grid(cases))
    moved = {**cases, "c-three": [True] * 3}
    right = write_run(
        tmp_path / "r.jsonl",
        grid(moved, model_slot="other"),
        head=header(model_slot="other", run_id="R", started_at="2026-11-30T02:00:00Z"),
    )
    app = new_app(left, right)
    async with app.run_test(size=size) as pilot:
        await browse_delta(pilot, app)
        shown = list_text(app)
        assert "≠" not in shown, shown  # every case moved instrument: no mark says anything
        assert set(rows_of(app)) == set(cases)
        assert "BACKEND DELTA" in screen_text(app)  # the bar says it once


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_cases_that_moved_instrument_alone_are_marked(tmp_path: Path, size) -> None:
    cases = {"k-plain": [True] * 3, "k-edited": [True] * 3, "k-other": [False] * 3}
    left = write_run(tmp_path / "l.jsonl", grid(cases))
    right_cases = grid(cases)
    for rec in right_cases:
        if rec.case_id == "k-edited":
            rec.fixture_hash = "fh-edited-since"
    right = write_run(
        tmp_path / "r.jsonl",
        right_cases,
        head=header(run_id="R", started_at="2026-11-30T02:00:00Z"),
    )
    app = new_app(left, right)
    async with app.run_test(size=size) as pilot:
        await browse_delta(pilot, app)
        lines = list_text(app).splitlines()
        edited = next(line for line in lines if "k-edited" in line)
        assert "≠" in edited
        assert all("≠" not in line for line in lines if "k-plain" in line or "k-other" in line)


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_one_envelope_sealed_on_one_side_is_not_marked(tmp_path: Path, size) -> None:
    cases = grid({"e-one": [True] * 3, "e-two": [False] * 3})
    sealed = header()
    sealed.fixtures = msgspec.structs.replace(
        sealed.fixtures, envelope_hash="b" * 64, lock="matched"
    )
    loose = header(run_id="R", started_at="2026-11-30T02:00:00Z")
    loose.fixtures = msgspec.structs.replace(
        loose.fixtures, envelope_hash="b" * 64, lock="unsealed"
    )
    left = write_run(tmp_path / "l.jsonl", cases, head=sealed)
    right = write_run(tmp_path / "r.jsonl", cases, head=loose)
    app = new_app(left, right)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "verdicts")
        if app.review.query_one("#pins").folded:
            await pilot.press("i")
            await wait_for(pilot, lambda: not app.review.query_one("#pins").folded)
        rows = screen_text(app).splitlines()
        envelope = next(row for row in rows if row.lstrip().startswith("envelope"))
        assert "≠" not in envelope, envelope
        assert envelope.count("bbbbbbbbbbbb") == 2
        assert envelope.count("(lock: unsealed)") == 1
        # the note is on the right side: after the second hash
        assert envelope.index("(lock: unsealed)") > envelope.rindex("bbbbbbbbbbbb")


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_the_banner_counts_pairs_as_pairs(tmp_path: Path, size) -> None:
    cases = grid({"p-one": [True] * 3, "p-two": [True] * 3})
    left = write_run(tmp_path / "l.jsonl", cases)
    right = write_run(
        tmp_path / "r.jsonl",
        grid({"p-one": [True] * 3, "p-two": [True] * 3}, grader_version="g2"),
        head=header(grader_version="g2", run_id="R", started_at="2026-11-30T02:00:00Z"),
    )
    app = new_app(left, right)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "banner")
        await wait_for(pilot, lambda: app.review.reached("diff"))
        await pilot.pause()
        text = " ".join(screen_text(app).split())
        assert "differs on 6 pairs" in text, text
        assert "case(s)" not in text


def test_diff_says_it_compared_pairs(tmp_path: Path, capsys) -> None:
    cases = grid({"q-one": [True] * 3, "q-two": [True, True, False]})
    left = write_run(tmp_path / "l.jsonl", cases)
    right = write_run(
        tmp_path / "r.jsonl", cases, head=header(run_id="R", started_at="2026-11-30T02:00:00Z")
    )
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 0
    assert "compared 6 (case, seed) pairs: " in r.out
