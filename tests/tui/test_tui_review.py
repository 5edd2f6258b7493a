"""The review screen through Textual's Pilot: opening, stepping, filters, search, detail,
the refusal banner, backend-delta mode, verdicts and export, help, the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from evalpin.core.read.runfile import read_run
from evalpin.tui.screens.banner import BannerScreen
from evalpin.tui.screens.help import HelpScreen
from evalpin.tui.screens.verdict import VerdictScreen
from evalpin.tui.widgets.case_list import CaseList
from evalpin.tui.widgets.detail import DetailPane
from tests.builders import grid, header, write_run
from tests.clirun import cli
from tests.tuikit import SIZE, detail_ready, new_app, pair, screen_text, settle, wait_for


def current_id(app) -> str | None:
    cases = app.review.query_one(CaseList)
    return None if cases.current is None else app.review.cases.cases[cases.current].case_id


def listed(app) -> list[str]:
    return [app.review.cases.cases[i].case_id for i in app.review.query_one(CaseList).rows]


async def test_opens_on_first_regression_with_pins_and_detail(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        assert current_id(app) == "b-breaks"
        text = screen_text(app)
        assert "REGRESSED  L   3/3 R   2/3  b-breaks" in text
        assert "regressed 1 · fixed 1 · drift 1 · flaky 1 · unchanged 1" in text
        for pin in ("night (replay)", "m-1", "g1", "11,29,47 (n=3)", "eeeeeeeeeeeeeeee"):
            assert pin in text
        assert "publishable" in text  # the verdict badges
        assert "+ missing_tool:lookup" in text  # the reason added on the right
        assert "≠" in text  # digests that moved are marked
        assert app.review.query_one(CaseList).has_focus


async def test_n_and_p_land_on_changed_cases(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        seen = []
        for _ in range(5):
            await pilot.press("n")
            seen.append(current_id(app))
        assert seen == ["c-mends", "d-drifts", "f-gone", "g-new", "g-new"]
        await pilot.press("p", "p")
        assert current_id(app) == "d-drifts"
        await pilot.press("k", "k")
        assert current_id(app) == "b-breaks"
        await pilot.press("j", "down", "up")
        assert current_id(app) == "c-mends"
        await pilot.press("G")
        assert current_id(app) == "g-new"
        await pilot.press("g")
        assert current_id(app) == "a-steady"
        await detail_ready(pilot, app)
        assert "a-steady   unchanged" in screen_text(app)  # the detail followed


async def test_filter_cycle_and_search(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        expected = {
            "changed": ["b-breaks", "c-mends", "d-drifts", "f-gone", "g-new"],
            "regressed": ["b-breaks"],
            "fixed": ["c-mends"],
            "drift": ["d-drifts"],
            "errored": [],
            "flaky": ["b-breaks", "e-flaky"],
            "disputed": [],
            "all": ["a-steady", "b-breaks", "c-mends", "d-drifts", "e-flaky", "f-gone", "g-new"],
        }
        for name, ids in expected.items():
            await pilot.press("f")
            await pilot.pause()
            assert app.review.filter == name
            assert listed(app) == ids
            assert f"filter {name}" in screen_text(app)
        await pilot.press("slash")
        await pilot.press(*"DRIFT")
        await pilot.pause()
        assert listed(app) == ["d-drifts"]
        assert current_id(app) == "d-drifts"
        await pilot.press("enter")  # keeps the search, back to the list
        assert app.review.query_one(CaseList).has_focus
        assert "search DRIFT" in screen_text(app)
        await pilot.press("slash", "backspace", "backspace", "backspace", "backspace", "backspace")
        await pilot.press("z", "z", "z")
        await pilot.pause()
        assert listed(app) == []
        assert "no case matches" in screen_text(app)
        await pilot.press("escape")  # clears the search
        await pilot.pause()
        assert len(listed(app)) == 7 and app.review.search == ""


async def test_enter_and_click_focus_the_detail(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")
        assert app.review.query_one(DetailPane).has_focus
        await pilot.press("j", "k")  # scrolls the detail, does not move the list
        assert current_id(app) == "b-breaks"
        await pilot.press("escape")
        assert app.review.query_one(CaseList).has_focus
        cases = app.review.query_one(CaseList)
        await pilot.click(CaseList, offset=(20, 2))  # the third row
        await pilot.pause()
        assert current_id(app) == "c-mends"
        assert app.review.query_one(DetailPane).has_focus
        assert cases.cursor == 2


@pytest.mark.parametrize(
    ("over", "key_shown"),
    [({"model_slot": "other-slot"}, "model slot"), ({"reported_model": "m-2"}, "reported model")],
)
async def test_banner_blocks_until_an_explicit_choice(tmp_path: Path, over, key_shown) -> None:
    app = new_app(*pair(tmp_path, right_over=over))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        assert isinstance(app.screen, BannerScreen)
        await settle(pilot, app, "diff")  # the counts come with the join
        text = screen_text(app)
        assert "REFUSE_DIFF: triple mismatch, not a prompt regression" in text
        assert key_shown in text and "differs on 15 pairs" in text
        if key_shown == "reported model":
            assert "the alias was re-pointed" in text
        # Before any case: the list stays empty under the banner.
        assert app.review.query_one(CaseList).rows == ()
        for key in ("enter", "space", "escape", "tab", "a", "n", "j", "f", "v", "e", "l", "?"):
            await pilot.press(key)
            assert isinstance(app.screen, BannerScreen), key
        for offset in ((1, 1), (80, 22), (150, 40)):
            await pilot.click(offset=offset)
            assert isinstance(app.screen, BannerScreen), offset
        assert app.is_running
        await pilot.press("b")
        await pilot.pause()
        assert not isinstance(app.screen, BannerScreen)
        text = screen_text(app)
        assert "BACKEND DELTA" in text
        assert app.review.query_one("#delta-bar", Static).display
        assert listed(app)
        flags = {row[:12].strip(" ≠") for row in text.splitlines() if " L " in row[:20]}
        assert "differs" in flags and "same" in flags
        assert not flags & {"REGRESSED", "regressed", "fixed", "drift", "unchanged"}
        assert "regressed" not in text.split("\n", 12)[-2]  # the counts line: no such status
        # The bar stays for the whole visit: through filters, the verdict screen and back.
        await pilot.press("f", "n", "v")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert "BACKEND DELTA" in screen_text(app)
        assert app.review.filter == "differs"


async def test_banner_from_headers_comes_before_the_cases_are_read(tmp_path: Path) -> None:
    left, right = pair(tmp_path)
    raw = right.read_text().replace('"model_slot":"night"', '"model_slot":"day"')
    right.write_text(raw)
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # Painted at once from the headers, then completed by the join.
        banner = app.screen
        assert isinstance(banner, BannerScreen)
        assert banner.headers is not None  # built from the headers, before any case was read
        await settle(pilot, app, "diff")
        await pilot.pause()
        assert app.screen is banner and banner.diff is not None  # the same banner, completed
        text = screen_text(app)
        assert "model slot  differs on 15 pairs" in text and "night" in text and "day" in text
        # The cases indexed later do not make the list behind the banner claim otherwise.
        await settle(pilot, app, "verdicts")
        assert app.review.cases is not None
        assert app.review.query_one(CaseList).placeholder == "comparison refused: see the banner"


async def test_banner_quit_and_its_button(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path, right_over={"grader_version": "g2"}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    app = new_app(*pair(tmp_path / "two", right_over={"grader_version": "g2"}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        await pilot.pause()
        await pilot.click("#banner-browse")
        await pilot.pause()
        assert app.review.delta


async def test_verdict_screen_and_export(tmp_path: Path) -> None:
    left = write_run(
        tmp_path / "probe.jsonl",
        grid({"a": [True], "b": [False]}, seeds=(11,)),
        head=header(seeds=[11], controls={"temperature": 0.0, "seeds": [11]}),
    )
    right = write_run(tmp_path / "full.jsonl", grid({"a": [True] * 3, "b": [True, False, True]}))
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, VerdictScreen)
        text = screen_text(app)
        assert "exploratory-probe" in text and "publishable" in text
        assert "1 seed(s); at least 3 needed" in text
        assert "✗ seed list" in text and "✓ seed list" in text
        assert "flaky cases    1: b" in text
        await pilot.press("e")
        await wait_for(pilot, lambda: "card written" in screen_text(app), "the card written")
        text = screen_text(app)
        assert "left: no card: not publishable (exploratory-probe" in text
        assert "right: publish card written to" in text
        assert not (tmp_path / "probe.card.md").exists()
        card = (tmp_path / "full.card.md").read_text()
        for needle in (
            "Verdict: **publishable**",
            "| dataset hash |",
            "| scorer commit |",
            "| seed list | 11, 29, 47 (n=3) |",
            "| env digest |",
            "| 29 | 0.500 |",
            "Spread across seeds: 0.500",
            "| static-check violations | 0 |",
            "| mean repair loops | 0.00 |",
            "| latency p50 | 0.01 s |",
            "| latency max | 0.01 s |",
        ):
            assert needle in card, needle
        await pilot.press("escape")
        assert not isinstance(app.screen, VerdictScreen)


async def test_help_theme_and_quit(tmp_path: Path) -> None:
    # (That the help lists every binding is test_tui_keys.)
    app = new_app(*pair(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = screen_text(app)
        assert "next changed case" in text and "launch panel" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("t")
        await pilot.pause()
        assert app.theme == "evalpin-light"
        assert "REGRESSED" in screen_text(app)
        await pilot.press("t")
        assert app.theme == "textual-dark"
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_one_run_alone(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r.jsonl", grid({"ok": [True] * 3, "bad": [False] * 3, "w": [True, False, True]})
    )
    app = new_app(run)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        assert current_id(app) == "bad"
        text = screen_text(app)
        assert "fail 1 · flaky 1 · pass 1" in text
        assert " R " not in text.split("filter")[1]
        await pilot.press("n")
        assert current_id(app) == "w"
        await pilot.press("f", "f", "f")
        assert app.review.filter == "flaky" and listed(app) == ["w"]


async def test_accepts_runfiles_already_read(tmp_path: Path) -> None:
    left, right = pair(tmp_path)
    app = new_app(read_run(left), read_run(right))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        assert current_id(app) == "b-breaks"


def test_review_refuses_bad_files_before_any_screen(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record": "run", "schema": "evalpin.run/1"\n')
    r = cli(capsys, "review", str(bad))
    assert r.code == 3
    assert r.err.count("\n") == 1 and str(bad) in r.err
    good = write_run(tmp_path / "good.jsonl", grid({"a": [True] * 3}))
    r = cli(capsys, "review", str(good), str(tmp_path / "missing.jsonl"))
    assert r.code == 3 and "no such file" in r.err


def test_review_without_runs_or_demo_says_so(capsys, tmp_path: Path, monkeypatch) -> None:
    # With runs of its own or a bundled demo, `review` opens them (tested in
    # test_cases); with neither, it says so in one line instead of opening nothing.
    import evalpin.core.read.discovery as discovery

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(discovery, "bundled_demo", lambda: None)
    r = cli(capsys, "review")
    assert r.code == 3 and "no runs folder" in r.err and r.err.count("\n") == 1
