"""Progressive review: the first cases are browsable while the runs are still read.

The reader is held at a gate (each block waits for the test's go), and the chunk size is
made small, so the partial state is reached on purpose, not by racing a clock: the list
shows the known prefix marked PARTIAL, n/p, filters and search work on it, nothing is
labelled regressed before the whole join, the banner comes with the first mismatched
pair read, and the complete table replaces the partial one under the reviewer's cursor.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalpin.core.read import rundata
from evalpin.core.read.formats import RunStream
from evalpin.tui.screens import review_loading
from tests.builders import case, grid, header, write_run
from tests.tuikit import SIZE, new_app, screen_text, settle, wait_for

CASES = 40


class Gate:
    """Holds every `RunStream.step` until the test lets some through (or opens it)."""

    def __init__(self) -> None:
        self.allowed = threading.Semaphore(0)
        self.opened = threading.Event()
        self.steps = 0

    def allow(self, n: int) -> None:
        for _ in range(n):
            self.allowed.release()

    def wait(self) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()  # an app closing (a failed test) cancels it: go on
        while not self.opened.is_set() and not self.allowed.acquire(timeout=0.01):
            if worker.is_cancelled:
                break
        self.steps += 1


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    step = RunStream.step

    def gated(stream: RunStream) -> bool:
        held.wait()
        return step(stream)

    monkeypatch.setattr(RunStream, "step", gated)
    monkeypatch.setattr(rundata, "_CHUNK", 1024)  # a few lines a block
    yield held
    held.opened.set()  # never leave the loader waiting


def runs(folder: Path, **right_case_over) -> tuple[Path, Path]:
    """c01 regresses on seed 29, c30 is fixed; `right_case_over` edits c20 seed 47."""
    left = {f"c{i:02d}": [True] * 3 for i in range(CASES)}
    left["c30"] = [False] * 3
    right = dict(left)
    right["c01"] = [True, False, True]
    right["c30"] = [True] * 3
    rrecords = grid(right)
    if right_case_over:
        k = 20 * 3 + 2
        rrecords[k] = case("c20", True, 47, **right_case_over)
    lpath = write_run(folder / "left.jsonl", grid(left), head=header(run_id="L"))
    rpath = write_run(folder / "right.jsonl", rrecords, head=header(run_id="R"))
    return lpath, rpath


async def test_the_first_cases_are_browsable_before_the_runs_are_read(
    tmp_path: Path, gate: Gate
) -> None:
    app = new_app(*runs(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        review = app.review
        gate.allow(8)  # a few blocks of each side: c01 is read on both, c30 on neither
        await wait_for(pilot, lambda: review.reached("shown") and gate.steps >= 8, "partial")
        await wait_for(pilot, lambda: review.case_list.line_count() > 2, "c01 on both sides")
        assert not review.reached("listed") and review.table is review.preview
        text = screen_text(app)
        assert "PARTIAL" in text
        assert "REGRESSED" not in text and "fixed" not in text
        assert "c30" not in text  # not read yet
        assert review.preview.cases[1].status == "changed"
        # n steps to what is known to have changed, and the detail follows.
        await pilot.press("n")
        await wait_for(pilot, lambda: review.detail.shown is not None, "detail")
        assert review.case_list.current == 1
        await wait_for(pilot, lambda: review.detail.text().startswith("c01"), "detail of c01")
        # The filters are the partial ones; `changed` keeps c01 only.
        await pilot.press("f")
        assert review.filter == "changed"
        assert [review.preview.cases[i].case_id for i in review.rows] == ["c01"]
        # Let the rest through: the complete table replaces the partial one in place.
        gate.opened.set()
        await settle(pilot, app, "listed")
        assert review.filter == "changed" and review.cases is not None
        assert review.cases.cases[review.case_list.current].case_id == "c01"
        text = screen_text(app)
        assert "PARTIAL" not in text and "REGRESSED" in text and "c30" in text


async def test_search_and_growth_keep_the_cursor_on_its_case(tmp_path: Path, gate: Gate) -> None:
    app = new_app(*runs(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        review = app.review
        gate.allow(6)
        await wait_for(pilot, lambda: review.case_list.line_count() >= 2, "partial")
        await pilot.press("down")
        chosen = review.case_list.current
        gate.allow(10)  # more blocks arrive: the list grows, the cursor stays
        await wait_for(pilot, lambda: gate.steps >= 16, "more read")
        await wait_for(pilot, lambda: review.case_list.line_count() > 6, "grown")
        assert review.case_list.current == chosen
        await pilot.press("slash", "c", "0")
        await wait_for(pilot, lambda: review.search == "c0", "search")
        assert all("c0" in review.preview.cases[i].case_id for i in review.rows)
        gate.opened.set()
        await settle(pilot, app, "listed")
        assert [review.cases.cases[i].case_id for i in review.rows] == [f"c0{i}" for i in range(10)]


async def test_the_banner_comes_with_the_first_mismatch_read(tmp_path: Path, gate: Gate) -> None:
    # The headers agree; one record in the middle of the right run has another slot.
    app = new_app(*runs(tmp_path, model_slot="other-slot"))
    async with app.run_test(size=SIZE) as pilot:
        review = app.review
        for _ in range(50):  # four 1 KiB blocks at a time (of some 65), to the banner
            gate.allow(4)
            await wait_for(
                pilot,
                lambda n=gate.steps: gate.steps >= n + 4 or review.banner is not None,
                "blocks read",
            )
            await pilot.pause()
            if review.banner is not None:  # decided: no more blocks until it is on screen
                break
        await wait_for(pilot, lambda: review.reached("banner"), "the banner on screen")
        assert not review.reached("read")  # still reading when it came
        assert "A case read so far" in screen_text(app) and "c20" in screen_text(app)
        gate.opened.set()
        await wait_for(pilot, lambda: review.diff is not None, "the join")
        await pilot.pause()
        assert "1 of 120 common" in screen_text(app)
        await pilot.press("b")
        await settle(pilot, app, "listed")
        assert review.cases is not None and review.cases.mode == "delta"
        assert "REGRESSED" not in screen_text(app)


async def test_browsing_at_a_header_banner_at_once_still_lists_every_case(
    tmp_path: Path,
) -> None:
    # The headers already refuse the pair: the banner is the first screen. Pressed at
    # once, `b` must not strand the reader (it used to wait on the banner's next
    # repaint, which never came, and the list stayed empty).
    left = write_run(tmp_path / "l.jsonl", grid({"c1": [True] * 3}), head=header())
    right_cases = grid({"c1": [True] * 3}, model_slot="other")
    right = write_run(tmp_path / "r.jsonl", right_cases, head=header(model_slot="other"))
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        review = app.review
        end = asyncio.get_running_loop().time() + 30
        while not review.reached("banner"):  # no Pilot pause: it would repaint the banner
            assert asyncio.get_running_loop().time() < end, "the banner never came"
            await asyncio.sleep(0.01)
        await pilot.press("b")
        await settle(pilot, app, "listed")
        assert review.cases is not None and review.cases.mode == "delta"
        assert "c1" in screen_text(app)


async def test_a_bad_line_deep_in_a_file_is_reported_in_the_review(
    tmp_path: Path, gate: Gate
) -> None:
    left, right = runs(tmp_path)
    lines = right.read_text().splitlines(keepends=True)
    lines.insert(100, "{not json\n")
    right.write_text("".join(lines))
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        gate.opened.set()
        await wait_for(pilot, lambda: "cannot open" in screen_text(app), "the error")
        assert "right.jsonl:101" in screen_text(app)


async def test_browsing_holds_the_list_still_and_it_grows_at_a_pause(
    tmp_path: Path, gate: Gate, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = new_app(*runs(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        review = app.review
        gate.allow(6)
        await wait_for(pilot, lambda: review.case_list.line_count() >= 2, "partial")
        monkeypatch.setattr(review_loading, "BROWSING_PAUSE", 60.0)  # a reviewer at work
        await pilot.press("down")
        chosen = review.case_list.current
        # The loader waits for the answer to the key: the detail of the new case.
        await wait_for(pilot, lambda: review.detail.shown is not None, "detail")
        await wait_for(pilot, lambda: review.detail.shown.case == chosen, "its detail")
        await wait_for(pilot, review._answered.is_set, "the key answered: loading goes on")
        shown = review.case_list.line_count()
        gate.allow(20)  # more is read meanwhile, but the list stays as the reviewer sees it
        await wait_for(pilot, lambda: gate.steps >= 26, "more read")
        await pilot.pause(0.3)
        assert review.case_list.line_count() == shown and review.case_list.current == chosen
        monkeypatch.setattr(review_loading, "BROWSING_PAUSE", 0.0)  # the reviewer pauses
        await wait_for(pilot, lambda: review.case_list.line_count() > shown, "grown")
        assert review.case_list.current == chosen
        gate.opened.set()
        await settle(pilot, app, "listed")
