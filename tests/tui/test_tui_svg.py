"""SVG snapshots of the main screens, colours included (`pytest-textual-snapshot`).

A text snapshot cannot see a regressed row turn green; these can. Everything on screen
is pinned: runs built here with fixed headers, relative paths (the test runs in its own
folder), a fixed terminal size and theme, the cursor blink off; no screen shows a clock
or a host name (the launch panel is shot before a run starts, with animations off so
its idle progress bar stands still). Each test waits on the
app's state (`ReviewScreen.reached`, the detail's worker), never on a delay.

To accept a deliberate change: pytest tests/tui/test_tui_svg.py --snapshot-update, then look
at the SVGs in tests/tui/__snapshots__/test_tui_svg/ (a failing run writes an HTML report
of the differences, snapshot_report.html).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalpin.core.read.notes import TICKET, append_note, make_note
from evalpin.tui.app import EvalpinApp, make_app
from evalpin.tui.screens.causes import CausesScreen
from evalpin.tui.screens.history import HistoryScreen
from evalpin.tui.screens.note import NoteScreen
from tests.builders import case, header, write_run
from tests.conftest import GOLDEN_CASES
from tests.tuikit import pair, wait_for

SIZE = (150, 44)
THEME = "textual-dark"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder of its own, as the current folder: relative names on screen."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "golden.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in GOLDEN_CASES)
    )
    (tmp_path / "slots.yaml").write_text(
        "slots:\n  night: {provider: replay, path: fixtures/night.jsonl}\n"
    )
    return tmp_path


def app_for(**right_over) -> EvalpinApp:
    pair(Path("."), right_over=right_over or None)
    app = make_app(
        Path("left.jsonl"), Path("right.jsonl"), cursor_blink=False, theme=THEME, cwd=Path(".")
    )
    app.animation_level = "none"  # the clock pinned: an idle progress bar does not pulse
    return app


async def loaded(pilot, milestone: str = "verdicts") -> None:
    """The review reached `milestone` and the detail shows the case under the cursor."""
    review = pilot.app.review
    await wait_for(pilot, lambda: review.reached(milestone) and not review.detail.decoding)


def test_svg_review(here: Path, snap_compare) -> None:
    assert snap_compare(app_for(), terminal_size=SIZE, run_before=loaded)


def test_svg_review_filtered_to_regressions(here: Path, snap_compare) -> None:
    async def filtered(pilot) -> None:
        await loaded(pilot)
        await pilot.press("f", "f")
        await loaded(pilot)

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=filtered)


def test_svg_banner(here: Path, snap_compare) -> None:
    async def banner(pilot) -> None:
        await loaded(pilot, "banner")
        await loaded(pilot, "verdicts")  # the screen behind it, loaded too

    assert snap_compare(app_for(reported_model="m-2"), terminal_size=SIZE, run_before=banner)


def test_svg_verdict(here: Path, snap_compare) -> None:
    async def verdict(pilot) -> None:
        await loaded(pilot)
        await pilot.press("v")

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=verdict)


def test_svg_launch_panel(here: Path, snap_compare) -> None:
    async def launch(pilot) -> None:
        await loaded(pilot)
        await pilot.press("l")

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=launch)


def test_svg_history(here: Path, snap_compare) -> None:
    async def history(pilot) -> None:
        await loaded(pilot)
        await pilot.press("h")
        await wait_for(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, HistoryScreen) and pilot.app.screen.history is not None
            ),
        )

    assert snap_compare(app_for(), terminal_size=SIZE, run_before=history)


# -- small terminals (issue 17): the stacked layout, folded pins, the other screens -----

SMALL_SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((100, 30), id="100x30")]


@pytest.mark.parametrize("size", SMALL_SIZES)
def test_svg_small_review(here: Path, snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(app_for(), terminal_size=size, run_before=loaded)


@pytest.mark.parametrize("size", SMALL_SIZES)
def test_svg_small_refused_pair(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def delta(pilot) -> None:
        await loaded(pilot, "banner")
        await loaded(pilot, "verdicts")
        await pilot.press("b")  # browse as a backend delta: the pins stay open
        await loaded(pilot, "listed")

    assert snap_compare(app_for(reported_model="m-2"), terminal_size=size, run_before=delta)


@pytest.mark.parametrize("size", SMALL_SIZES)
def test_svg_small_banner(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def banner(pilot) -> None:
        await loaded(pilot, "banner")
        await loaded(pilot, "verdicts")

    assert snap_compare(app_for(reported_model="m-2"), terminal_size=size, run_before=banner)


@pytest.mark.parametrize("size", SMALL_SIZES)
def test_svg_small_verdict(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def verdict(pilot) -> None:
        await loaded(pilot)
        await pilot.press("v")

    assert snap_compare(app_for(), terminal_size=size, run_before=verdict)


@pytest.mark.parametrize("size", SMALL_SIZES)
def test_svg_small_launch_panel(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def launch(pilot) -> None:
        await loaded(pilot)
        await pilot.press("l")

    assert snap_compare(app_for(), terminal_size=size, run_before=launch)


@pytest.mark.parametrize("size", SMALL_SIZES)
def test_svg_small_history(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def history(pilot) -> None:
        await loaded(pilot)
        await pilot.press("h")
        await wait_for(
            pilot,
            lambda: (
                isinstance(pilot.app.screen, HistoryScreen) and pilot.app.screen.history is not None
            ),
        )

    assert snap_compare(app_for(), terminal_size=size, run_before=history)


# -- triage (issue 26): causes, the two answers as a diff, review notes ----------------------

TRIAGE_SIZES = [pytest.param((160, 48), id="160x48"), pytest.param((80, 24), id="80x24")]
APOLOGY = "late-apology"


def triage_app(noted: bool = False) -> EvalpinApp:
    """A pair where one case lost its apology on every seed and another started calling a
    tool; with `noted`, a review note (fixed author and date) on the first."""
    said = "Sorry for the wait: order B5530 ships Friday, and the fee is refunded."
    says = "Order B5530 ships Friday. The fee stays."
    seeds = (11, 29, 47)
    left = [case(APOLOGY, True, s, text=said) for s in seeds]
    right = [case(APOLOGY, False, s, text=says, reasons=["missing_text:sorry"]) for s in seeds]
    left += [case("cancel-shipped", True, s, tool_names=["lookup"]) for s in seeds]
    right += [case("cancel-shipped", False, s, tool_names=["lookup", "cancel"]) for s in seeds]
    write_run(Path("left.jsonl"), left, head=header(run_id="L"))
    write_run(Path("right.jsonl"), right, head=header(run_id="R"))
    if noted:
        note = make_note(
            APOLOGY,
            f"fh-{APOLOGY}",
            TICKET,
            "accepted: new tone, see ticket 1432",
            author="ana",
            written_at="2026-12-03T09:14:02Z",
        )
        append_note(Path("notes.jsonl"), note)
    app = make_app(
        Path("left.jsonl"), Path("right.jsonl"), cursor_blink=False, theme=THEME, cwd=Path(".")
    )
    app.animation_level = "none"
    return app


@pytest.mark.parametrize("size", TRIAGE_SIZES)
def test_svg_triage_causes(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def causes(pilot) -> None:
        await loaded(pilot)
        await wait_for(pilot, lambda: pilot.app.review.reached("causes"))
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CausesScreen))

    assert snap_compare(triage_app(), terminal_size=size, run_before=causes)


@pytest.mark.parametrize("size", TRIAGE_SIZES)
def test_svg_triage_diff_and_note(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def noted(pilot) -> None:
        await loaded(pilot)
        await wait_for(pilot, lambda: pilot.app.review.reached("notes"))
        await pilot.press("slash", *APOLOGY, "enter")
        await loaded(pilot)

    assert snap_compare(triage_app(noted=True), terminal_size=size, run_before=noted)


@pytest.mark.parametrize("size", TRIAGE_SIZES)
def test_svg_triage_note_screen(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def note(pilot) -> None:
        await loaded(pilot)
        await wait_for(pilot, lambda: pilot.app.review.reached("notes"))
        await pilot.press("slash", *APOLOGY, "enter")
        await loaded(pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, NoteScreen))

    assert snap_compare(triage_app(noted=True), terminal_size=size, run_before=note)


@pytest.mark.parametrize("size", TRIAGE_SIZES)
def test_svg_triage_word_diff(here: Path, snap_compare, size: tuple[int, int]) -> None:
    async def word_diff(pilot) -> None:
        await loaded(pilot)
        await pilot.press("slash", *APOLOGY, "enter")
        await loaded(pilot)
        detail = pilot.app.review.detail
        at = next(n for n, t in enumerate(detail.lines) if "left → right" in t.plain)
        await wait_for(pilot, lambda: detail.max_scroll_y > 0)  # laid out at its size
        target = min(at, detail.max_scroll_y)
        detail.scroll_to(y=target, animate=False)
        await wait_for(pilot, lambda: round(detail.scroll_y) == target)
        await pilot.pause()

    assert snap_compare(triage_app(), terminal_size=size, run_before=word_diff)
