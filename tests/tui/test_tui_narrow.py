"""The reviewer in an 80 x 24 terminal and a split pane (issue 17): the stacked layout,
folded pins, nothing the reviewer needs cut, the other screens at 80 x 24, and live
re-layout when the terminal is resized."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Input, Select

from evalpin.core.read.runfile import read_run
from evalpin.core.records import CaseRecord
from evalpin.tui.screens.help import HelpScreen
from evalpin.tui.screens.history import HistoryScreen
from evalpin.tui.screens.launch import LaunchScreen
from evalpin.tui.screens.verdict import VerdictScreen
from evalpin.tui.widgets.case_list import CaseList
from evalpin.tui.widgets.detail import DetailPane
from evalpin.tui.widgets.detail_model import KEY_WIDTH
from evalpin.tui.widgets.history_table import WRAP_INDENT, HistoryTable
from evalpin.tui.widgets.pins import PinsHeader
from tests.builders import case, grid, header, write_run
from tests.tuikit import detail_ready, new_app, pair, screen_text, settle, wait_for

ROOT = Path(__file__).parents[2]
SMALL = (80, 24)
WIDE = (160, 45)


def records(path: Path) -> list[CaseRecord]:
    """Every case record of a run file, as read back."""
    run = read_run(path)
    return list(run.records(range(len(run.rows))).values())


def on_screen(app, widget) -> bool:
    """The widget is in the terminal and not clipped away: its corners are the widget (or
    a part of it) on screen."""
    region = widget.region
    if region.area == 0 or not app.screen.region.contains_region(region):
        return False
    for x, y in ((region.x, region.y), (region.right - 1, region.bottom - 1)):
        hit, _ = app.screen.get_widget_at(x, y)
        if hit is not widget and widget not in hit.ancestors:
            return False
    return True


async def test_demo_nights_at_80x24_show_whole_ids_and_the_whole_reason() -> None:
    """The issue's done-when: 8 cases with whole ids, the regression's reason, no key."""
    left, right = ROOT / "runs/demo-night-1.jsonl", ROOT / "runs/demo-night-2.jsonl"
    app = new_app(left, right)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app, "verdicts")
        review = app.review
        text = screen_text(app)
        rows = text.splitlines()
        ids = [review.cases.cases[i].case_id for i in review.case_list.rows]
        whole = [cid for cid in ids if any(row.rstrip().endswith(" " + cid) for row in rows)]
        assert len(whole) >= 8, (whole, text)
        selected = review.cases.cases[review.case_list.current]
        assert selected.status == "regressed"
        reasons = {
            r
            for rec in records(right)
            if rec.case_id == selected.case_id
            for r in rec.reasons or []
        }
        missing = sorted(r for r in reasons if r.startswith("missing_text:"))
        assert missing, reasons
        assert any(r in text for r in missing), text


async def test_resize_from_160_to_80_and_back(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app, "verdicts")
        review, pins = app.review, app.review.query_one(PinsHeader)
        cases, detail = review.case_list, review.detail

        def side_by_side() -> bool:
            return cases.region.right <= detail.region.x and cases.region.y == detail.region.y

        assert not review.has_class("-narrow") and side_by_side() and not pins.folded
        await pilot.resize_terminal(80, 24)
        await wait_for(pilot, lambda: review.has_class("-narrow"), "the narrow layout")
        await pilot.pause()
        assert cases.region.bottom <= detail.region.y  # the list above, the detail below
        assert cases.region.width >= 78 and detail.region.width >= 78
        assert pins.folded and pins.region.height == 1
        status = review.status_line  # as tall as its text at the new width, no blank row
        need = -(-status.content.plain.__len__() // status.content_region.width)  # type: ignore[union-attr]
        assert status.region.height == need
        await detail_ready(pilot, app)
        text = screen_text(app)
        assert " REGRESSED  L   3/3 R   2/3  b-breaks " in text  # the list, whole
        assert " b-breaks   REGRESSED " in text  # the detail of the selected case
        await pilot.resize_terminal(*WIDE)
        await wait_for(pilot, lambda: not review.has_class("-narrow"), "the wide layout")
        await pilot.pause()
        assert side_by_side() and not pins.folded


async def test_i_unfolds_and_folds_the_pins_and_differences_stay_marked(tmp_path: Path) -> None:
    left, right = pair(tmp_path)
    # Same instrument (triple), another environment: a pin that differs, not a refusal.
    rows = records(right)
    right.unlink()
    write_run(right, rows, head=header(run_id="R", env_digest="f" * 16))
    app = new_app(left, right)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app, "verdicts")
        pins = app.review.query_one(PinsHeader)
        assert pins.folded
        folded = pins.content.plain  # type: ignore[union-attr]
        assert "≠ env digest eeeeeeeeeeeeeeee → ffffffffffffffff" in folded
        assert "night · golden dddddddd · grader g1 · n=3" in folded
        await pilot.press("i")
        assert not pins.folded and pins.region.height > 5
        assert "scorer commit" in screen_text(app)
        await pilot.press("i")
        assert pins.folded
        await pilot.resize_terminal(*WIDE)  # the reviewer's choice outlives a resize
        await pilot.pause()
        assert pins.folded


async def test_a_refused_pair_folds_its_pins_at_80x24_leading_with_what_differs(
    tmp_path: Path,
) -> None:
    app = new_app(*pair(tmp_path, right_over={"reported_model": "m-2"}))
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app, "banner")
        banner = app.screen
        for button in banner.query(Button):
            assert on_screen(app, button), button
        await pilot.press("b")
        await settle(pilot, app, "listed")
        pins = app.review.query_one(PinsHeader)
        assert pins.folded
        assert pins.content.plain.startswith("pins ≠ reported model m-1 → m-2")  # type: ignore[union-attr]
        await pilot.press("i")
        assert not pins.folded and "≠" in screen_text(app)


async def test_case_ids_whole_the_score_columns_give_way(tmp_path: Path) -> None:
    long_id = "orders/international/" + "cancel-after-partial-shipment-with-gift-card"
    left = write_run(tmp_path / "l.jsonl", grid({long_id: [True] * 3, "short": [True] * 3}))
    right = write_run(
        tmp_path / "r.jsonl",
        grid({long_id: [True, False, True], "short": [True] * 3}),
        head=header(run_id="R"),
    )
    app = new_app(left, right)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        row = next(r for r in text.splitlines() if long_id in r)
        assert "REG" in row and "L " not in row  # seed columns dropped, the id whole
        short_row = next(r for r in text.splitlines() if r.rstrip().endswith(" short"))
        assert "L   3/3 R   3/3" in short_row  # a row with room keeps them
        cases = app.review.query_one(CaseList)
        for width in (12, 30, 50, 80, 120):
            assert cases.draw_line(0, width).cell_length == width


async def test_a_long_reason_wraps_in_the_detail(tmp_path: Path) -> None:
    needle = "missing_text:" + "apology-for-the-late-delivery-" * 3 + "end"
    lrecs = [case("x", True, seed) for seed in (11, 29, 47)]
    rrecs = [case("x", False, seed, reasons=[needle]) for seed in (11, 29, 47)]
    left = write_run(tmp_path / "l.jsonl", lrecs)
    right = write_run(tmp_path / "r.jsonl", rrecs, head=header(run_id="R"))
    app = new_app(left, right)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        detail = app.review.query_one(DetailPane)
        width = detail.scrollable_content_region.width
        assert all(t.cell_len <= width for t in detail.lines)
        assert "…" not in detail.text()
        side = (width - KEY_WIDTH - 2) // 2
        right_column = "".join(t.plain[KEY_WIDTH + 2 + side :].strip() for t in detail.lines)
        assert needle in right_column.replace("+", "")


async def test_verdict_launch_history_help_fit_80x24(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path), cwd=tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, VerdictScreen), "verdict")
        await pilot.pause()
        body = app.screen.query_one("#verdict")
        assert body.virtual_size.width <= body.scrollable_content_region.width
        heads = [r for r in screen_text(app).splitlines() if r.startswith("  left  ")]
        assert len(heads) == 1 and "right  " not in heads[0]  # stacked, not side by side
        await pilot.press("escape", "l")
        await wait_for(pilot, lambda: isinstance(app.screen, LaunchScreen), "launch panel")
        await pilot.pause()
        panel = app.screen
        controls = [*panel.query("#launch Input"), *panel.query("#launch Select")]
        controls += list(panel.query("#launch Button"))
        for control in controls:
            assert on_screen(app, control), control
        await pilot.press("escape", "h")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, HistoryScreen) and app.screen.history is not None,
            "history",
        )
        await pilot.pause()
        for widget in app.screen.query("#history-runs, #history-marks, #trend"):
            assert on_screen(app, widget), widget
        await pilot.press("escape", "question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        await pilot.pause()
        assert on_screen(app, app.screen.query_one("#help"))
        assert "toggle_pins" not in screen_text(app)
        await pilot.press("escape")
        await detail_ready(pilot, app)
        assert isinstance(app.screen, type(app.review))


async def test_launch_fields_lose_their_borders_only_when_short(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path), cwd=tmp_path)  # no fixtures/ nor slots.yaml: blank picks
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app)
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LaunchScreen), "launch panel")
        seeds = app.screen.query_one("#seeds", Input)
        assert not seeds.compact and seeds.region.height == 3
        await pilot.resize_terminal(*SMALL)
        await wait_for(pilot, lambda: seeds.compact, "compact fields")
        await pilot.pause()
        assert seeds.region.height == 1
        assert all(s.compact for s in app.screen.query(Select))


async def test_a_short_wide_terminal_folds_the_pins_side_by_side(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=(150, 24)) as pilot:
        await settle(pilot, app)
        review = app.review
        assert not review.has_class("-narrow")  # wide enough to stay side by side...
        assert review.query_one(PinsHeader).folded  # ...but too short for ten rows of pins
        assert review.case_list.region.height >= 15


async def test_a_resize_behind_another_screen_is_applied_on_return(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, VerdictScreen), "verdict")
        await pilot.resize_terminal(*SMALL)
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.review, "back to the review")
        await wait_for(pilot, lambda: app.review.has_class("-narrow"), "the narrow layout")
        assert app.review.query_one(PinsHeader).folded


async def test_history_at_80_columns_wraps_what_does_not_fit(tmp_path: Path) -> None:
    model = "long-reported-model-2026-10@fp_0123abc"
    for path in pair(tmp_path):
        rows = records(path)
        head = read_run(path).header
        for rec in rows:
            rec.reported_model = model
        path.unlink()
        write_run(path.parent / ("runs-of-a-long-night-" + path.name), rows, head=head)
    app = new_app(*sorted(tmp_path.glob("runs-of-*.jsonl")))
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot, app)
        await pilot.press("h")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, HistoryScreen) and app.screen.history is not None,
            "history",
        )
        table = app.screen.query_one(HistoryTable)
        width = table.scrollable_content_region.width
        drawn: list[str] = []
        for k, row in enumerate(table.rows):
            text = table.draw_line(k, width).text
            assert len(text) == width
            if row.part:
                assert text.startswith(" " * WRAP_INDENT)
                drawn[-1] += " " + text[WRAP_INDENT:]
            else:
                drawn.append(text)
        # Every word of every row is on screen whole, in order (moved, never split).
        for line, shown in zip(table.text().splitlines(), drawn, strict=True):
            assert line.split() == shown.split(), (line, shown)
        assert any(model in line for line in table.text().splitlines())
        await pilot.press("end")
        last = table.cursor_line
        assert last is not None and table.rows[last + 1].part  # its file name, below
        top = round(table.scroll_y)
        assert top <= last + 1 < top + table.scrollable_content_region.height
        await pilot.resize_terminal(*WIDE)  # wide again: one line a row
        await wait_for(pilot, lambda: not any(r.part for r in table.rows), "one line a row")
