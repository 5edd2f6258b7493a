"""Untrusted text from models and test runs renders inert: visible, capped, harmless.

Every string below, put in a case id, a test tail, completion text or tool arguments,
must show as visible text (controls as `\\x1b`-style escapes), never act as markup or a
terminal sequence, never crash the app or quit it, and leave the clipboard alone.
"""

from __future__ import annotations

from pathlib import Path

from evalpin.core.records import ToolCall
from evalpin.tui.safe import BLOCK_WIDTH
from tests.builders import case, write_run
from tests.tuikit import (
    HOSTILE,
    SIZE,
    assert_inert,
    detail_ready,
    new_app,
    screen_text,
    settle,
    styled_links,
)


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


async def test_hostile_strings_render_inert_in_list_and_detail(tmp_path: Path) -> None:
    """Each hostile case in turn, in one app (the run holds them all): found, shown in
    the list and the detail, paged through, clicked over, each read on its own."""
    app = new_app(hostile_run(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        title = app.title
        for name in HOSTILE:
            await _inert_in_list_and_detail(pilot, app, name)
            assert app.is_running, name
            assert app.clipboard == "", name
            assert app.title == title, name


async def _inert_in_list_and_detail(pilot, app, name: str) -> None:
    shown = HOSTILE[name][1]
    # Put the hostile case on screen and in the detail.
    await pilot.press("slash", *name, "enter")
    await detail_ready(pilot, app)
    text = screen_text(app)
    assert_inert(text)
    assert f"{name}:{shown}"[:40] in text, name  # the case id, in the list and the detail
    assert f"missing_text:{shown}"[:40] in text, name
    # Into the detail: the blocks (tail, completion, tool calls) with their cap notes.
    await pilot.press("enter")
    assert app.review.query_one("#detail").has_focus, name
    seen = [screen_text(app)]
    for _ in range(6):  # page through the whole detail
        await pilot.press("pagedown")
        await pilot.pause()
        seen.append(screen_text(app))
        assert_inert(seen[-1])
        assert not styled_links(app), name
    text = "".join(seen)
    assert "test output tail" in text and "completion text" in text and "tool calls" in text
    assert "lines cut above" in text and "characters cut from long lines" in text, name
    assert f"completion {shown}" in text, name
    # Clicking over the text and pressing keys does nothing hostile.
    for offset in ((90, 20), (100, 30), (20, 12)):
        await pilot.click(offset=offset)
    await pilot.press("escape", "j", "k")
    await detail_ready(pilot, app)  # the detail shows the case the keys landed on
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
