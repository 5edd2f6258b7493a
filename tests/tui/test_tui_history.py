"""The history screen (`h`) through Textual's Pilot: series and breaks in the table, the
chart's lines (one per series, never joined across a break), marking and opening pairs
(one series side by side, two series behind the banner), unreadable files, hostile text."""

from __future__ import annotations

import hashlib
import json
import os
from itertools import pairwise
from pathlib import Path

import msgspec
import pytest

from evalpin.core.judge.history import load_history
from evalpin.tui.app import EvalpinApp
from evalpin.tui.loader import source_path
from evalpin.tui.screens.banner import REFUSE_LINE, BannerScreen
from evalpin.tui.screens.help import HelpScreen, sections
from evalpin.tui.screens.history import HistoryScreen
from evalpin.tui.screens.review import ReviewScreen
from evalpin.tui.widgets.history_table import HistoryTable
from evalpin.tui.widgets.trend import BRAILLE, BREAK, ORDER, RUN, TIME, Line, Point, plot
from tests.builders import grid, header, write_run
from tests.tuikit import (
    HOSTILE,
    SIZE,
    assert_inert,
    new_app,
    screen_text,
    settle,
    styled_links,
    text_snapshot,
    wait_for,
)

NIGHTS = ("n1", "n2", "n3", "n4", "n5", "n6", "n7")


def night(
    folder: Path,
    name: str,
    day: int,
    passed: int,
    *,
    slot: str = "night",
    model: str = "m-1",
    grader: str = "g1",
    python: str = "CPython 3.11",
    hour: int = 2,
    minute: int = 0,
    replay: str | None = None,
    case_ids: list[str] | None = None,
) -> Path:
    """One nightly run of ten cases, `passed` of them passing on every seed. Each night
    replays its own recording unless `replay` says otherwise, so a changed completion is
    a new source, not a non-deterministic backend."""
    ids = case_ids or [f"case-{k:02d}" for k in range(10)]
    cases = grid(
        {cid: [k < passed] * 3 for k, cid in enumerate(ids)},
        grader_version=grader,
        model_slot=slot,
        reported_model=model,
    )
    env = {"python": python}
    head = header(
        run_id=name,
        started_at=f"2026-12-{day:02d}T{hour:02d}:{minute:02d}:00Z",
        grader_version=grader,
        model_slot=slot,
        slot={"provider": "replay", "path": replay or f"completions/{name}.jsonl"},
        env=env,
        env_digest=hashlib.sha256(json.dumps(env).encode()).hexdigest()[:16],
    )
    return write_run(folder / f"{name}.jsonl", cases, head=head)


def nights(folder: Path) -> Path:
    """Seven nights: an env change on night 3 (same series), a backend delta on night 4
    (slot and reported model), a rubric change with another env change on night 7 (grader,
    Python); and a broken file."""
    folder.mkdir(parents=True, exist_ok=True)
    night(folder, "n1", 1, 9)
    night(folder, "n2", 2, 8)
    night(folder, "n3", 3, 9, python="CPython 3.12")
    night(folder, "n4", 4, 3, slot="night-b", model="m-2", python="CPython 3.12")
    night(folder, "n5", 5, 4, slot="night-b", model="m-2", python="CPython 3.12")
    night(folder, "n6", 7, 6, slot="night-b", model="m-2", grader="g2", python="CPython 3.13")
    night(folder, "n7", 8, 7, slot="night-b", model="m-2", grader="g2", python="CPython 3.13")
    (folder / "broken.jsonl").write_text('{"record": "run", "schema": \n')
    return folder


async def open_history(pilot, app) -> HistoryScreen:
    await settle(pilot, app)
    await pilot.press("h")
    screen = app.screen
    assert isinstance(screen, HistoryScreen)
    await wait_for(pilot, lambda: screen.history is not None or screen.error, "history read")
    return screen


async def cursor_to(pilot, screen: HistoryScreen, name: str) -> None:
    """Move with the keys (Home, then down) to the run `name`."""
    names = [Path(r.path).stem for r in screen.table.runs]
    await pilot.press("home", *["down"] * names.index(name))
    assert Path(screen.table.current.path).stem == name


async def mark(pilot, screen: HistoryScreen, *names: str) -> None:
    for name in names:
        await cursor_to(pilot, screen, name)
        await pilot.press("space")
    await pilot.pause()


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return nights(tmp_path / "runs")


async def test_table_shows_series_breaks_env_changes_and_unreadable(runs: Path) -> None:
    app = new_app(runs / "n6.jsonl", runs / "n7.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        assert screen.folder == runs  # the left run's folder
        assert Path(screen.table.current.path).name == "n7.jsonl"  # starts on the review's run
        text = screen_text(app)
        assert "7 runs · 3 series · 2 breaks · 1 unreadable" in text
        table = screen.table.text()
        assert "break: backend delta" in table
        assert "moved  model_slot night → night-b · reported_model m-1 → m-2" in table
        assert "break: rubric change · environment change" in table
        assert "moved  grader_version g1 → g2" in table
        assert "env    python CPython 3.12 → CPython 3.13" in table  # what moved, by name
        lines = table.splitlines()
        # The break rows sit between the series they separate.
        order = [
            next(k for k, row in enumerate(lines) if needle in row)
            for needle in (
                "n3.jsonl",
                "break: backend delta",
                "series 2",
                "n5.jsonl",
                "break: rubric change",
                "series 3",
            )
        ]
        assert order == sorted(order)
        n3 = next(row for row in lines if "n3.jsonl" in row)
        assert "2026-12-03 02:00" in n3 and "90.0%" in n3 and "11:90.0 29:90.0 47:90.0" in n3
        assert "~ python" in n3  # the env change is marked at its run, with what moved
        assert "publishable" in n3
        assert "~" not in next(row for row in lines if "n2.jsonl" in row)
        assert "unreadable files (1)" in table
        assert "broken.jsonl: 1:" in table
        # The legend names each series by slot, reported model and grader.
        chart = screen.chart.text()
        for label in ("1 night · m-1 · g g1", "2 night-b · m-2 · g g1", "3 night-b · m-2 · g g2"):
            assert label in chart


async def test_chart_draws_one_line_per_series_never_joined_across_breaks(runs: Path) -> None:
    app = new_app(runs / "n6.jsonl", runs / "n7.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        p = screen.chart.plot
        assert p is not None and p.mode == TIME
        history = screen.history
        assert history is not None
        # One line per series; a series of n runs is n - 1 segments, each joining two of
        # its own runs, in time order.
        assert sorted(p.segments) == [1, 2, 3]
        for series in history.series:
            cells = [p.points[r.path] for r in series.runs]
            joined = p.segments[series.index]
            assert len(joined) == len(series.runs) - 1
            for (a, b), (ca, cb) in zip(joined, pairwise(cells), strict=True):
                assert (a[0] // 2, a[1] // 4) == ca and (b[0] // 2, b[1] // 4) == cb
        col = {Path(path).stem: c for path, (c, _) in p.points.items()}
        # Nothing drawn between the last run of a series and the first of the next: the
        # dotted break column alone, never a slope.
        for last, first in (("n3", "n4"), ("n5", "n6")):
            for row in p.cells:
                between = [ch for ch, _ in row[col[last] + 1 : col[first]]]
                assert set(between) <= {" "}, (last, first, between)
            assert all(row[col[first]][0] in (BREAK, RUN) for row in p.cells)
            assert col[first] in p.breaks
        # Each series in its own colour, only over its own stretch of time.
        roles = {}
        for row in p.cells:
            for c, (ch, role) in enumerate(row):
                if BRAILLE <= ord(ch) < BRAILLE + 256 or ch == RUN:
                    roles.setdefault(role, set()).add(c)
        assert set(roles) == {"s0", "s1", "s2"}
        assert max(roles["s0"]) == col["n3"] and min(roles["s1"]) == col["n4"]
        assert max(roles["s1"]) == col["n5"] and min(roles["s2"]) == col["n6"]
        assert col["n3"] in p.env  # the env change on the axis
        # Axis labels: 0-100% and dates.
        chart = screen.chart.text()
        for needle in ("100% ┤", "50% ┤", "0% ┤", "12-01", "12-08", "└", "┊ series break"):
            assert needle in chart
        assert "2026-12-01 → 2026-12-08" in chart


def test_plot_joins_only_within_a_series() -> None:
    """The pure layout: two series side by side, a steep drop between them stays a gap."""
    from datetime import UTC, datetime

    def at(day: int) -> datetime:
        return datetime(2026, 12, day, 2, tzinfo=UTC)

    lines = [
        Line(1, 0, "a", (Point("a1", at(1), 1.0), Point("a2", at(2), 1.0))),
        Line(2, 1, "b", (Point("b1", at(3), 0.0), Point("b2", at(4), 0.0))),
    ]
    p = plot(lines, 40, 8, breaks_at=["b1"])
    assert p.segments == {1: [((0, 0), (26, 0))], 2: [((53, 31), (79, 31))]}
    rows = p.rows()
    assert rows[0][0] == RUN and rows[7][-1] == RUN
    # No dot anywhere in the middle rows: the drop from 100% to 0% is not drawn.
    assert all(set(row) <= {" ", BREAK} for row in rows[1:7])
    assert [row[26] for row in rows] == [BREAK] * 7 + [RUN]


async def test_one_series_pair_opens_side_by_side(runs: Path) -> None:
    app = new_app(runs / "n6.jsonl", runs / "n7.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        await mark(pilot, screen, "n2", "n1")  # newer first: still opens older on the left
        assert "one series: ⏎ opens them side by side" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, ReviewScreen)
        review = app.review
        assert [Path(source_path(s)).stem for s in (review.left_source, review.right_source)] == [
            "n1",
            "n2",
        ]
        assert review.diff is not None and not review.diff.refused
        assert review.banner is None and not review.banner_pending and not review.delta
        assert "regressed 1" in screen_text(app)  # case-08 passed on night 1, not night 2


async def test_two_series_pair_meets_the_banner(runs: Path) -> None:
    app = new_app(runs / "n1.jsonl", runs / "n2.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        await mark(pilot, screen, "n4", "n3")
        assert "different series: ⏎ meets the refusal banner" in screen_text(app)
        await pilot.press("o")
        await settle(pilot, app, "banner")
        assert isinstance(app.screen, BannerScreen)
        review = app.review
        assert Path(source_path(review.left_source)).stem == "n3"
        assert Path(source_path(review.right_source)).stem == "n4"
        await settle(pilot, app, "diff")
        text = screen_text(app)
        assert REFUSE_LINE in text and "model slot" in text
        await pilot.press("b")  # browse as a backend delta, as `review` offers
        await pilot.pause()
        assert review.delta and "BACKEND DELTA" in screen_text(app)


async def test_marks_at_most_two_unmark_back_and_reload(runs: Path) -> None:
    app = new_app(runs / "n1.jsonl", runs / "n2.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        await pilot.press("enter")  # nothing marked: a hint, no change of screen
        assert app.screen is screen
        await mark(pilot, screen, "n1", "n2", "n3")
        assert [Path(p).stem for p in screen.marked] == ["n1", "n2"]
        assert screen.chart.text().count("◆") == 3  # two runs, and the legend's key
        assert screen.table.text().count("◆") == 2
        await mark(pilot, screen, "n1")  # space on a marked run unmarks it
        assert [Path(p).stem for p in screen.marked] == ["n2"]
        assert "mark one more" in screen_text(app)
        # A new night appears; `r` reads the folder again, keeping the mark and cursor.
        night(runs, "n8", 9, 8, slot="night-b", model="m-2", grader="g2", python="CPython 3.13")
        await cursor_to(pilot, screen, "n5")
        await pilot.press("r")
        await wait_for(pilot, lambda: screen.history is not None and screen.history.runs == 8)
        assert [Path(p).stem for p in screen.marked] == ["n2"]
        assert Path(screen.table.current.path).stem == "n5"
        assert "8 runs · 3 series" in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)
        screen = await open_history(pilot, app)
        await pilot.press("h")
        assert isinstance(app.screen, ReviewScreen)


async def test_cursor_moves_over_runs_only_and_the_chart_follows(runs: Path) -> None:
    app = new_app(runs / "n1.jsonl", runs / "n2.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        seen = []
        await pilot.press("home")
        for key in ("j", "down", "j", "k", "up", "end", "G", "g"):
            await pilot.press(key)
            seen.append(Path(screen.table.current.path).stem)
        assert seen == ["n2", "n3", "n4", "n3", "n2", "n7", "n7", "n1"]
        assert screen.chart.cursor == screen.table.current.path
        await pilot.press("pagedown")
        assert screen.table.current is not None
        # A click on a run row puts the cursor there.
        table = screen.query_one(HistoryTable)
        row = table.run_rows[3] - round(table.scroll_y)
        await pilot.click(HistoryTable, offset=(10, row))
        assert Path(screen.table.current.path).stem == "n4"


async def test_fixture_sets_are_charted_one_at_a_time(tmp_path: Path) -> None:
    from evalpin.core.records import FixturesInfo

    runs = nights(tmp_path / "runs")
    other = FixturesInfo(
        path="fixtures/code.yaml", kind="coding", dataset_id="code", dataset_hash="c" * 64
    )
    for k, day in enumerate((2, 4)):
        cases = grid({"x": [True, k == 1, True]})
        write_run(
            runs / f"code{k}.jsonl",
            cases,
            head=header(run_id=f"c{k}", fixtures=other, started_at=f"2026-12-{day:02d}T03:00:00Z"),
        )
    app = new_app(runs / "n1.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        await cursor_to(pilot, screen, "n1")
        chart = screen.chart.text()
        assert "golden" in chart and "fixture set 1 of 2" in chart
        assert sorted(screen.chart.plot.segments) == [1, 2, 3]
        await cursor_to(pilot, screen, "code1")
        chart = screen.chart.text()
        assert "code" in chart and "fixture set 2 of 2" in chart
        assert len(screen.chart.plot.segments) == 1
        assert "fixtures  code" in screen.table.text()


@pytest.mark.parametrize("size", [(120, 40), (160, 45)])
@pytest.mark.parametrize("shape", ["single run", "single series", "many series", "same minute"])
async def test_chart_renders_at_sizes_and_shapes(tmp_path: Path, size, shape: str) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    if shape == "single run":
        night(runs, "only", 1, 5)
    elif shape == "single series":
        for day in range(1, 11):
            night(runs, f"d{day:02d}", day, 3 + day % 5)
    elif shape == "many series":
        for k in range(20):  # a new slot every night: twenty series, colours cycle
            night(runs, f"s{k:02d}", k + 1, k % 10, slot=f"slot-{k:02d}", model=f"model-{k}")
    else:
        for k in range(4):  # started within a minute: laid out by run order
            night(runs, f"m{k}", 1, 2 + 2 * k, minute=k % 2, hour=2)
    first = sorted(runs.iterdir())[0]
    app = new_app(first)
    async with app.run_test(size=size) as pilot:
        screen = await open_history(pilot, app)
        history = load_history(runs)
        p = screen.chart.plot
        assert p is not None
        chart = screen.chart.text()
        lines = chart.splitlines()
        assert len(lines) == screen.chart.size.height
        assert all(len(row) == screen.chart.size.width for row in lines)
        assert "100% ┤" in chart and "0% ┤" in chart and "series break" in chart
        assert len(p.segments) == len(history.series)
        assert len(p.points) == history.runs
        assert chart.count(RUN) + chart.count("◆") >= min(history.runs, 8)
        assert_inert(screen_text(app))
        if shape == "single run":
            assert p.segments == {1: []} and "12-01 02:00" in chart
        if shape == "many series":
            assert "and " in chart and "more series" in chart  # the legend says what it left out
            assert "series 20" in screen.table.text()
        if shape == "same minute":
            assert p.mode == ORDER and "x: run order" in chart


async def test_flags_incomplete_undated_and_only_unreadable(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    night(runs, "n1", 1, 9)
    write_run(
        runs / "killed.jsonl",
        grid({"case-00": [True, True, False]}),
        head=header(run_id="k", started_at="2026-12-02T02:00:00Z"),
        finished=False,
    )
    undated = runs / "undated.jsonl"  # bare case records: no header, no start time
    undated.write_bytes(b"".join(msgspec.json.encode(c) + b"\n" for c in grid({"a": [True] * 3})))
    os.utime(undated, (1_796_000_000, 1_796_000_000))  # 2026-11-30
    app = new_app(runs / "n1.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        table = screen.table.text()
        assert "INCOMPLETE" in next(row for row in table.splitlines() if "killed" in row)
        assert "2026-11-30 " in table and "*" in next(
            row for row in table.splitlines() if "undated" in row
        )
    # Nothing readable at all: the files are listed, the chart says there is nothing.
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "a.jsonl").write_text("nope\n")
    app = new_app(runs / "n1.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.review.left_source = str(empty / "a.jsonl")
        await pilot.press("h")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        await wait_for(pilot, lambda: screen.history is not None, "history read")
        assert screen.table.current is None
        await pilot.press("space", "enter", "j")
        text = screen_text(app)
        assert "no runs to chart" in text and "unreadable files (1)" in text
        assert "a.jsonl: 1:" in text


async def test_hostile_slot_label_case_id_and_file_name_render_inert(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    slot = "".join(raw for raw, _ in (HOSTILE["markup"], HOSTILE["clipboard"], HOSTILE["bidi"]))
    case_id = HOSTILE["action"][0] + HOSTILE["title"][0]
    ids = [case_id, *(f"case-{k}" for k in range(9))]
    # Two runs of one series on one recording: the hostile case's completion changed, so
    # the series is flagged non-deterministic, naming the case.
    night(runs, "a", 1, 10, slot=slot, replay="same.jsonl", case_ids=ids)
    night(runs, "b", 2, 0, slot=slot, replay="same.jsonl", case_ids=ids)
    night(runs, "c", 3, 5, slot="plain", model=HOSTILE["csi8"][0])
    (runs / ("bad" + HOSTILE["clear"][0] + ".jsonl")).write_text("not json\n")
    app = new_app(runs / "a.jsonl", runs / "b.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        title = app.title
        screen = await open_history(pilot, app)
        await pilot.press("home")
        await pilot.pause()
        text = screen_text(app)  # what the terminal shows
        assert_inert(text + screen.table.text() + screen.chart.text())
        assert not styled_links(app)
        # (Long values are cut to 40 characters in the table, and to the legend's width.)
        assert "[bold red]red?[/]\\x1b]52;c;cHduZWQ=\\x07abc\\u202e"[:39] in text  # the slot
        assert "[@click=app.quit]click me[/]\\x1b]0;owned"[:39] in text  # the case id
        assert "\\x9b31mred" in text  # a reported model
        assert "bad\\x1b[2Jgone.jsonl" in text  # an unreadable file's name
        assert "non-deterministic backend" in text
        for key in ("space", "j", "space", "j", "k"):
            await pilot.press(key)
            await pilot.pause()
            assert_inert(screen_text(app))
        assert app.is_running and app.title == title and app.clipboard == ""


async def test_missing_folder_is_said_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = nights(tmp_path / "runs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    app = new_app(runs / "n1.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        # The left run's folder went away: `h` falls back to ./runs, which is not there.
        app.review.left_source = str(tmp_path / "gone" / "n1.jsonl")
        await pilot.press("h")
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        assert screen.folder == elsewhere / "runs"
        await wait_for(pilot, lambda: screen.error is not None, "the error")
        text = screen_text(app)
        assert "cannot read" in text and "no such folder" in text
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)


async def test_help_lists_the_history_keys(runs: Path) -> None:
    history = dict(sections(EvalpinApp.BINDINGS))["History screen"]
    assert {b.key for b in history} >= {
        b.key for b in HistoryScreen.BINDINGS + HistoryTable.BINDINGS
    }
    app = new_app(runs / "n1.jsonl", runs / "n2.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert "h history" in screen_text(app)  # the footer
        await open_history(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        # The help is taller than the terminal: scroll to its history section.
        app.screen.query_one("#help").scroll_end(animate=False)
        await pilot.pause()
        assert "History screen" in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, HistoryScreen)


async def test_snapshot_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    nights(Path("runs"))
    app = new_app(Path("runs/n6.jsonl"), Path("runs/n7.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_history(pilot, app)
        await mark(pilot, screen, "n4", "n5")
        text_snapshot("history", screen_text(app))
