"""Stale answers from the workers are dropped by token, not by file name: a reopen of the
same file, or a cursor that moved on, never lets an older answer land on screen."""

from __future__ import annotations

from pathlib import Path

from evalpin.tui.messages import CasesReady
from evalpin.tui.widgets.detail import DetailPane
from evalpin.tui.widgets.detail_model import Shown
from tests.tuikit import SIZE, detail_ready, new_app, pair, screen_text, settle, wait_for


async def test_reopening_the_same_pair_drops_the_first_loads_answers(tmp_path: Path) -> None:
    left, right = pair(tmp_path)
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        review = app.review
        old_table, old_generation = review.cases, review.generation
        review.open_runs(left, right)  # the same two files
        assert review.cases is None and review.generation == old_generation + 1
        # An answer of the first load arriving now names the same files, yet is dropped.
        review.post_message(CasesReady(old_generation, old_table))
        await pilot.pause()
        assert review.cases is not old_table
        await settle(pilot, app, "verdicts")
        assert review.cases is not None and review.cases is not old_table
        assert "REGRESSED" in screen_text(app)


async def test_the_detail_keeps_only_the_latest_request(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        review = app.review
        detail = review.detail
        table = review.cases
        assert table is not None
        stale_token = detail.token
        stale = detail.shown
        await pilot.press("down")
        await detail_ready(pilot, app)
        shown = detail.shown
        assert shown is not None and shown.case != stale.case
        assert detail.token > stale_token
        # The answer to an older request, arriving late, does not replace the case.
        decoded = detail._decoded
        detail.post_message(DetailPane.Loaded(detail, stale_token, stale, decoded))
        await pilot.pause()
        assert detail.shown is shown
        assert detail.text().startswith(table.cases[shown.case].case_id)
        assert not detail.text().startswith(table.cases[stale.case].case_id)


async def test_the_detail_reads_off_the_ui_thread_and_reports_a_vanished_file(
    tmp_path: Path,
) -> None:
    left, right = pair(tmp_path)
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        review = app.review
        left.unlink()  # the run file disappears after it was read
        await pilot.press("down")
        await wait_for(pilot, lambda: not review.detail.decoding, "the detail answered")
        assert "cannot show this case" in review.detail.text()
        assert "left.jsonl" in review.detail.text()


def test_shown_compares_tables_by_identity(tmp_path: Path) -> None:
    from evalpin.core.read.runfile import read_run
    from evalpin.core.review.case_index import build_case_table

    left, _ = pair(tmp_path)
    one, two = build_case_table(read_run(left)), build_case_table(read_run(left))
    assert Shown(one, 0) == Shown(one, 0)
    assert Shown(one, 0) != Shown(two, 0)  # equal contents, another reading


async def test_while_partial_a_small_case_is_shown_at_once_else_through_the_worker(
    tmp_path: Path,
) -> None:
    from evalpin.core.read.runfile import read_run
    from evalpin.core.review.case_index import CaseIndex
    from evalpin.tui.widgets import detail as detail_module
    from tests.builders import case, write_run

    many = range(detail_module.INLINE_RECORDS + 1)  # a case repeated more than that
    records = [case("a-small", True, 11), *(case("b-big", k % 2 == 0, k) for k in many)]
    path = write_run(tmp_path / "one.jsonl", records)
    index = CaseIndex(pair=False)
    run = read_run(path)
    index.advance(run.rows)
    partial = index.table(run, None)  # as the loader hands it over while reading
    app = new_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        detail = app.review.detail
        complete = app.review.cases
        assert partial.partial and complete is not None and not complete.partial
        detail.show(partial, 0)
        assert not detail.decoding and detail.shown.case == 0  # read and laid out here
        assert detail.text().startswith("a-small")
        detail.show(partial, 1)
        assert detail.decoding  # a big case goes to the worker
        await detail_ready(pilot, app)
        assert detail.shown.case == 1 and detail.text().startswith("b-big")
        detail.show(complete, 0)
        assert detail.decoding  # once listed, every case goes to the worker
        await detail_ready(pilot, app)
        assert detail.text().startswith("a-small")
