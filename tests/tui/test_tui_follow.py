"""A run still being written is followed (issue 43, point 1), at 160 x 48 and 80 x 24: the
test writes cases into a run file while the review is open and sees them appear, the
counts and the verdict move, "being written by pid N since T" while the writer lives,
then the trailer, after which the review stops following."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from evalpin.core.read.runfile import RunWriter
from evalpin.core.records import Summary
from evalpin.tui.widgets.pins import PinsHeader
from tests.builders import grid, header, write_run
from tests.tuikit import detail_ready, new_app, screen_text, settle, wait_for

SIZES = [(160, 48), (80, 24)]


def size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def listed(app) -> list[str]:
    review = app.review
    table = review.case_list.table
    return [table.cases[i].case_id for i in review.case_list.rows] if table else []


def pins_text(app) -> str:
    """The pins as on screen (open or folded)."""
    region = app.review.query_one(PinsHeader).region
    rows = screen_text(app).splitlines()[region.y : region.bottom]
    return " ".join(" ".join(row.split()) for row in rows)


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_a_run_being_written_is_followed_to_its_trailer(tmp_path: Path, size) -> None:
    path = tmp_path / "tonight.jsonl"
    writer = RunWriter(path, new=True)
    try:
        writer.write(header(run_id="tonight"))
        for rec in grid({"w-alpha": [True] * 3, "w-beta": [True, True, False]}):
            writer.write(rec)
        app = new_app(path)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app, "verdicts")
            review = app.review
            await wait_for(pilot, lambda: review.reached("following"), "following")
            assert listed(app) == ["w-alpha", "w-beta"]
            said = f"being written by pid {os.getpid()} since "
            await wait_for(pilot, lambda: said in pins_text(app), "the writer named")
            assert "FOLLOWING" in screen_text(app)
            # Two more cases arrive, one failing on every seed.
            for rec in grid({"w-gamma": [False] * 3, "w-delta": [True] * 3}):
                writer.write(rec)
            await wait_for(pilot, lambda: len(listed(app)) == 4, "the new cases listed")
            assert listed(app)[2:] == ["w-gamma", "w-delta"]
            counts = review.cases.counts()
            assert counts["fail"] == 1 and counts["flaky"] == 1 and counts["pass"] == 2
            await wait_for(pilot, lambda: "12 records" in pins_text(app), "the count moved")
            assert review.verdicts is not None
            # The trailer lands and the writer goes (its mark with it): following stops.
            writer.write(Summary("2026-11-29T03:00:00Z", records=12, passed=8))
            writer.close()
            await wait_for(pilot, lambda: not review.reached("following"), "following stops")
            assert review.left is not None and review.left.complete is True
            await pilot.pause()
            text = screen_text(app)
            assert "FOLLOWING" not in text and "being written" not in text
            pins = review.query_one(PinsHeader)
            assert pins.sides[0].state()[0] == "12 records, complete"
            assert "INCOMPLETE" not in pins_text(app) and "publishable" in pins_text(app)
    finally:
        writer.close()


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_tonight_beside_last_night_fills_in_with_the_cursor_kept(
    tmp_path: Path, size
) -> None:
    night = {"n-one": [True] * 3, "n-two": [True] * 3, "n-three": [True] * 3}
    left = write_run(tmp_path / "last.jsonl", grid(night))
    path = tmp_path / "tonight.jsonl"
    writer = RunWriter(path, new=True)
    try:
        writer.write(header(run_id="tonight", started_at="2026-11-30T02:00:00Z"))
        for rec in grid({"n-one": [True] * 3}):
            writer.write(rec)
        app = new_app(left, path)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app, "verdicts")
            review = app.review
            await wait_for(pilot, lambda: review.reached("following"), "following")
            statuses = {c.case_id: c.status for c in review.cases.cases}
            assert statuses == {"n-one": "unchanged", "n-two": "only left", "n-three": "only left"}
            await pilot.press("end")  # the reviewer looks at n-three
            assert listed(app)[review.case_list.cursor] == "n-three"
            for rec in grid({"n-two": [True, False, True], "n-three": [False] * 3}):
                writer.write(rec)

            def moved() -> bool:
                return {c.case_id: c.status for c in review.cases.cases} == {
                    "n-one": "unchanged",
                    "n-two": "regressed",
                    "n-three": "regressed",
                }

            await wait_for(pilot, moved, "tonight's regressions")
            await detail_ready(pilot, app)
            assert listed(app)[review.case_list.cursor] == "n-three"  # still on its case
            shown = review.detail.shown
            assert shown is not None and shown.table is review.cases
            assert "regressed 2" in screen_text(app)
            assert review.verdicts is not None and review.verdicts[1] is not None
            assert review.verdicts[1].label != "publishable"  # no trailer yet: internal
    finally:
        writer.close()


async def test_a_mark_of_a_dead_writer_says_incomplete(tmp_path: Path) -> None:
    path = write_run(tmp_path / "killed.jsonl", grid({"k": [True] * 3}), finished=False)
    mark = tmp_path / ".killed.jsonl.writer"
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(child.stdout)  # a pid that was a writer and is gone
    mark.write_text(json.dumps({"pid": dead, "host": socket.gethostname(), "since": "x"}))
    app = new_app(path)
    async with app.run_test(size=SIZES[1]) as pilot:
        await settle(pilot, app, "verdicts")
        await wait_for(pilot, lambda: app.review.reached("following"), "following")
        assert "INCOMPLETE" in pins_text(app) and "being written" not in pins_text(app)


async def test_a_run_rewritten_by_resume_is_read_anew(tmp_path: Path) -> None:
    path = write_run(tmp_path / "resumed.jsonl", grid({"r-one": [True] * 3}), finished=False)
    app = new_app(path)
    async with app.run_test(size=SIZES[1]) as pilot:
        await settle(pilot, app, "verdicts")
        await wait_for(pilot, lambda: app.review.reached("following"), "following")
        with RunWriter(path, new=False) as writer:  # as `evalpin run --resume` does
            more = grid({"r-two": [False] * 3})
            data = path.read_bytes() + b"".join(
                json.dumps(msgspec.to_builtins(rec)).encode() + b"\n" for rec in more
            )
            writer.rewrite(data)
        await wait_for(pilot, lambda: listed(app) == ["r-one", "r-two"], "read anew")


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_cases_the_writer_has_not_reached_are_not_yet_written(tmp_path: Path, size) -> None:
    """Beside last night, tonight's cases still to come are `not yet written` while its
    writer holds the file (not `only left`: the night has not lost them), in the list,
    the counts and the detail; once the writer is gone, a case it never wrote is what it
    is, on the left only."""
    night = {"u-one": [True] * 3, "u-two": [True] * 3, "u-three": [False] * 3}
    left = write_run(tmp_path / "last.jsonl", grid(night))
    path = tmp_path / "tonight.jsonl"
    writer = RunWriter(path, new=True)
    writer.write(header(run_id="tonight", started_at="2026-11-30T02:00:00Z"))
    for rec in grid({"u-one": [True] * 3}):
        writer.write(rec)
    try:
        app = new_app(left, path)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, app, "verdicts")
            review = app.review
            said = f"being written by pid {os.getpid()}"
            await wait_for(
                pilot,
                lambda: said in pins_text(app) or "being written" in screen_text(app),
                "the writer named",
            )
            await wait_for(pilot, lambda: "not yet written 2" in screen_text(app), "counts")
            await pilot.press("end")
            await detail_ready(pilot, app)
            text = screen_text(app)
            assert "only left" not in text
            area = review.case_list.region
            rows = [r[area.x : area.right] for r in text.splitlines()[area.y : area.bottom]]
            rows = [r for r in rows if "u-three" in r or "u-two" in r]
            assert len(rows) == 2 and all("not yet written" in r for r in rows), rows
            assert "u-three   not yet written" in text  # the detail's heading
            for rec in grid({"u-two": [True] * 3}):
                writer.write(rec)
            await wait_for(pilot, lambda: "not yet written 1" in screen_text(app), "u-two")
            writer.close()  # the writer is gone, its night unfinished
            await wait_for(pilot, lambda: "only left 1" in screen_text(app), "said as it is")
            assert "not yet written" not in screen_text(app)
    finally:
        writer.close()
