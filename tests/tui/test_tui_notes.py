"""`m`: a review note on a case, through the real app with Pilot: written to the notes
file beside the runs, shown in the list and the detail, there again the next time the pair
(or the next night on the same instrument) is opened, and never a grade."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalpin.core.read.notes import MARK, read_notes
from evalpin.tui.screens.note import NoteScreen
from tests.tuikit import new_app, open_case, screen_text, wait_for

ROOT = Path(__file__).resolve().parents[2]
LATE = "status-late-apology"
WIDE, SMALL = (160, 48), (80, 24)


@pytest.fixture
def nights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three nights on one instrument (the third a copy of the second), in a tmp folder."""
    monkeypatch.delenv("EVALPIN_NOTES", raising=False)
    one = Path(shutil.copy(ROOT / "runs/demo-night-1.jsonl", tmp_path / "night-1.jsonl"))
    two = Path(shutil.copy(ROOT / "runs/demo-night-2.jsonl", tmp_path / "night-2.jsonl"))
    three = Path(shutil.copy(two, tmp_path / "night-3.jsonl"))
    return [one, two, three]


async def write_note(pilot, app, kind_index: int, text: str = "") -> None:
    await pilot.press("m")
    await wait_for(pilot, lambda: isinstance(app.screen, NoteScreen), "the note screen")
    app.screen.query_one("#note-kinds").highlighted = kind_index
    await pilot.press("enter")
    if text:
        await pilot.pause()
        await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: not isinstance(app.screen, NoteScreen), "back to the review")
    await wait_for(pilot, lambda: LATE in app.review.noted, "the note written")


def detail_text(app) -> str:
    return "\n".join(t.plain for t in app.review.detail.lines)


async def test_a_ticket_note_shows_and_follows_the_case_to_the_next_night(
    nights: list[Path],
) -> None:
    one, two, three = nights
    app = new_app(one, two, cwd=ROOT)
    async with app.run_test(size=WIDE) as pilot:
        await open_case(pilot, app, LATE, "notes")
        counts = app.review.cases.counts()
        await write_note(pilot, app, 2, "accepted: new tone, see ticket 1432")
        await pilot.pause()
        assert f"{MARK} ticket: accepted: new tone, see ticket 1432" in detail_text(app)
        rows = [r for r in screen_text(app).splitlines() if LATE in r and "search" not in r]
        assert rows and MARK in rows[0][:40]  # the list's line for the case
        assert app.review.cases.counts() == counts  # a note is not a grade

    book = read_notes(two.parent / "notes.jsonl")
    assert [n.text for n in book.notes] == ["accepted: new tone, see ticket 1432"]

    for pair in ((one, two), (two, three)):  # the pair again; the next night
        app = new_app(*pair, cwd=ROOT)
        async with app.run_test(size=SMALL) as pilot:
            await open_case(pilot, app, LATE, "notes")
            assert "ticket: accepted: new tone" in detail_text(app)
            assert set(app.review.noted) == {LATE}


async def test_acknowledged_then_cleared(nights: list[Path]) -> None:
    one, two, _ = nights
    app = new_app(one, two, cwd=ROOT)
    async with app.run_test(size=WIDE) as pilot:
        await open_case(pilot, app, LATE, "notes")
        await write_note(pilot, app, 0)
        assert app.review.noted[LATE].kind == "acknowledged"
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, NoteScreen), "the note screen")
        assert "now: acknowledged" in screen_text(app)
        app.screen.query_one("#note-kinds").highlighted = 4  # clear the note
        await pilot.press("enter")
        await wait_for(pilot, lambda: LATE not in app.review.noted, "the note cleared")
        assert MARK not in detail_text(app)
    kinds = [n.kind for n in read_notes(two.parent / "notes.jsonl").notes]
    assert kinds == ["acknowledged", "cleared"]


async def test_escape_writes_nothing(nights: list[Path]) -> None:
    one, two, _ = nights
    app = new_app(one, two, cwd=ROOT)
    async with app.run_test(size=WIDE) as pilot:
        await open_case(pilot, app, LATE, "notes")
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, NoteScreen), "the note screen")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, NoteScreen), "closed")
    assert not (two.parent / "notes.jsonl").exists()


async def test_a_garbage_notes_file_opens_says_which_line_and_is_kept(
    nights: list[Path],
) -> None:
    one, two, _ = nights
    notes = two.parent / "notes.jsonl"
    data = b'\x89PNG\r\n\x1a\n{"record": "note", "case_id": "x", "kind": "fla'
    notes.write_bytes(data)
    app = new_app(one, two, cwd=ROOT)
    # A toast lives 5 s: a loaded machine can take longer to open the case.
    app.NOTIFICATION_TIMEOUT = 600
    async with app.run_test(size=WIDE) as pilot:
        await open_case(pilot, app, LATE, "notes")

        def said() -> str:
            return " ".join(str(n.message) for n in app._notifications)

        await wait_for(pilot, lambda: "left as it is" in said(), "the notes file's warning")
        assert "skipped" in said() and "line 1:" in said()
        assert notes.read_bytes() == data
        await write_note(pilot, app, 1)  # known flaky: appended, nothing rewritten
        key = app.review.noted[LATE].key
    assert notes.read_bytes().startswith(data + b"\n")
    assert read_notes(notes).get(*key).kind == "flaky"


async def test_note_text_is_shown_inert(nights: list[Path]) -> None:
    one, two, _ = nights
    app = new_app(one, two, cwd=ROOT)
    async with app.run_test(size=WIDE) as pilot:
        await open_case(pilot, app, LATE, "notes")
        await write_note(pilot, app, 3, "[bold red]loud[/] \x1b[31m")
        await pilot.pause()
        shown = detail_text(app)
        assert "[bold red]loud[/]" in shown and "\x1b" not in shown
