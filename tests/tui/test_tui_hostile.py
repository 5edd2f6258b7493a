"""Untrusted text from models and test runs renders inert: visible, capped, harmless.

Every string below, put in a case id, a test tail, completion text or tool arguments,
must show as visible text (controls as `\\x1b`-style escapes), never act as markup or a
terminal sequence, never crash the app or quit it, and leave the clipboard alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region

from evalpin.core.records import ToolCall
from evalpin.tui.safe import BLOCK_WIDTH
from tests.builders import case, write_run
from tests.tuikit import SIZE, detail_ready, new_app, screen_text, settle

HOSTILE = {
    "markup": ("[bold red]red?[/]", "[bold red]red?[/]"),
    "close": ("ok[/]", "ok[/]"),
    "action": ("[@click=app.quit]click me[/]", "[@click=app.quit]click me[/]"),
    "clipboard": ("\x1b]52;c;cHduZWQ=\x07", "\\x1b]52;c;cHduZWQ=\\x07"),
    "title": ("\x1b]0;owned title\x07", "\\x1b]0;owned title\\x07"),
    "clear": ("\x1b[2Jgone", "\\x1b[2Jgone"),
    "csi8": ("\x9b31mred", "\\x9b31mred"),
    "overprint": ("FAILED\rPASSED", "FAILED\\x0dPASSED"),
    "bidi": ("abc\u202edcba", "abc\\u202edcba"),
}


def hostile_run(folder: Path) -> Path:
    records = []
    for name, (raw, _) in HOSTILE.items():
        too_wide = "x" * (BLOCK_WIDTH + 500)
        long_tail = "\n".join(f"line {i}" for i in range(100)) + "\n" + raw + "\n" + too_wide
        records.append(
            case(
                f"{name}:{raw}",
                False,
                11,
                reasons=[f"missing_text:{raw}"],
                tool_names=[raw],
                tail=long_tail,
                text=f"completion {raw}",
                tools=[ToolCall(name=raw, args={"q": raw})],
                reported_model=raw,
            )
        )
    return write_run(folder / "hostile.jsonl", records)


def assert_inert(text: str) -> None:
    bad = [ch for ch in text if (ord(ch) < 32 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F]
    assert not bad, bad
    assert "\u202e" not in text


def styled_links(app) -> list:
    """Any segment on screen that carries an action or a link (it must be none): every
    displayed widget's lines, through the public `Widget.render_lines`."""
    found = []
    for widget in app.screen.query("*"):
        if not widget.display or not widget.size.area:
            continue
        for strip in widget.render_lines(Region(0, 0, *widget.size)):
            for segment in strip:
                style = segment.style
                if style is not None and (style.link or (style.meta and "@click" in style.meta)):
                    found.append(segment)
    return found


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_hostile_strings_render_inert_in_list_and_detail(tmp_path: Path, name: str) -> None:
    shown = HOSTILE[name][1]
    app = new_app(hostile_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        title = app.title
        # Put the hostile case on screen and in the detail.
        await pilot.press("slash", *name, "enter")
        await detail_ready(pilot, app)
        text = screen_text(app)
        assert_inert(text)
        assert f"{name}:{shown}"[:40] in text  # the case id, in the list and the detail
        assert f"missing_text:{shown}"[:40] in text
        # Into the detail: the blocks (tail, completion, tool calls) with their cap notes.
        await pilot.press("enter")
        assert app.review.query_one("#detail").has_focus
        seen = [screen_text(app)]
        for _ in range(6):  # page through the whole detail
            await pilot.press("pagedown")
            await pilot.pause()
            seen.append(screen_text(app))
            assert_inert(seen[-1])
            assert not styled_links(app)
        text = "".join(seen)
        assert "test output tail" in text and "completion text" in text and "tool calls" in text
        assert "lines cut above" in text and "characters cut from long lines" in text
        assert f"completion {shown}" in text
        # Clicking over the text and pressing keys does nothing hostile.
        for offset in ((90, 20), (100, 30), (20, 12)):
            await pilot.click(offset=offset)
        await pilot.press("escape", "j", "k")
        await detail_ready(pilot, app)  # the detail shows the case the keys landed on
        assert app.is_running
        assert app.clipboard == ""
        assert app.title == title
        assert_inert(screen_text(app))


async def test_every_hostile_case_listed_inert(tmp_path: Path) -> None:
    app = new_app(hostile_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        text = screen_text(app)
        assert_inert(text)
        for name, (_, shown) in HOSTILE.items():
            assert f"{name}:{shown}"[:30] in text
        assert "[bold red]red?[/]" in text
        for _ in range(len(HOSTILE)):
            await pilot.press("j")
            await detail_ready(pilot, app)  # the hostile case's detail is on screen
            assert_inert(screen_text(app))
            assert not styled_links(app)
        await pilot.press("v")
        await pilot.pause()
        assert_inert(screen_text(app))
        assert app.is_running
