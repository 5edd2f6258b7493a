"""Every character the review paints reads against what it is painted on (issue 53,
point 1), measured on the screen itself: the colours of the SVG Textual exports (what a
terminal is sent), so a widget's own styles, Textual's (the footer's keys, placeholders,
disabled buttons, an option list's highlight) and whatever a cursor or a pop-up lays
over them are all counted, where `test_tui_contrast` measures evalpin's component
classes one by one.

In each theme `t` offers, at 160 x 48 and 80 x 24, the demo is walked through the
states a reviewer sees: the refusal banner, the list with its cursor focused and
blurred, the detail focused, a search, a filter, the causes pop-up with its highlight
moved, the verdict, history with its cursor moved, a note, help, the launch panel with a
field and a button focused. Each non-blank character that is not a line or block
drawing (borders, scroll bars, the chart's braille) must reach 3:1 (WCAG 2 contrast)
against its background both in 24-bit colour and rounded to the xterm 256-colour palette
(TERM=xterm-256color). Behind a pop-up, the screen it covers is faded on purpose: only the
pop-up's own area is measured there.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from rich.color import Color, ColorSystem
from textual.screen import ModalScreen

from evalpin.tui.screens.causes import CausesScreen
from evalpin.tui.screens.launch import LaunchScreen
from evalpin.tui.screens.verdict import VerdictScreen
from evalpin.tui.widgets.tones import DARK_THEME, LIGHT_THEME
from tests.tuikit import (
    contrast,
    demo_copy,
    history_shown,
    new_app,
    painted,
    settle,
    wait_for,
)

FLOOR = 3.0
SIZES = [(160, 48), (80, 24)]


def drawing(char: str) -> bool:
    """Box and block drawing, braille: lines, not text."""
    return 0x2500 <= ord(char) <= 0x259F or 0x2800 <= ord(char) <= 0x28FF


class Readings:
    """What fell below the floor, by (state, colour, background), with the text."""

    def __init__(self) -> None:
        self.low: dict[tuple[str, str, str, str], str] = defaultdict(str)
        self.measured: dict[str, int] = defaultdict(int)  # characters, by state
        self.ratios: dict[tuple[str, str], tuple[float, float]] = {}  # a screen has few pairs

    def take(self, app, state: str) -> None:
        screen = app.screen
        areas = (
            [w.region for w in screen.children if w.display]
            if isinstance(screen, ModalScreen)
            else [screen.region]
        )
        for x, y, char, fill, behind in painted(app):
            if char.isspace() or drawing(char) or not any(a.contains(x, y) for a in areas):
                continue
            self.measured[state] += 1
            full, palette = self.ratio(fill, behind)
            if min(full, palette) < FLOOR:
                self.low[(state, f"{full:.2f} / {palette:.2f}", fill, behind)] += char

    def ratio(self, fill: str, behind: str) -> tuple[float, float]:
        """The pair's contrast in 24-bit colour and in the 256-colour palette."""
        if (fill, behind) not in self.ratios:
            fg, bg = Color.parse(fill), Color.parse(behind)
            palette = contrast(*(c.downgrade(ColorSystem.EIGHT_BIT) for c in (fg, bg)))
            self.ratios[fill, behind] = (contrast(fg, bg), palette)
        return self.ratios[fill, behind]

    def report(self) -> str:
        return "\n".join(
            f"{state}: {ratio} ({fill} on {bg}): {text[:40]!r}"
            for (state, ratio, fill, bg), text in sorted(self.low.items())
        )


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """The bundled demo in a project folder of its own (the launch panel reads it)."""
    return demo_copy(tmp_path)


async def walk_refused_pair(pilot, app, seen: Readings) -> None:
    await settle(pilot, app, "banner")
    seen.take(app, "banner")
    await pilot.press("b")
    await settle(pilot, app, "verdicts")
    seen.take(app, "list focused")
    await pilot.press("enter")
    await pilot.pause()
    seen.take(app, "detail focused, list cursor blurred")
    await pilot.press("escape", "slash", "s")
    await pilot.pause()
    seen.take(app, "search")
    await pilot.press("escape", "i")
    await pilot.pause()
    seen.take(app, "pins toggled")
    await pilot.press("i", "v")
    await wait_for(pilot, lambda: isinstance(app.screen, VerdictScreen), "verdict")
    seen.take(app, "verdict")
    await pilot.press("escape", "h")
    await history_shown(pilot, app)
    await pilot.press("down")
    await pilot.pause()
    seen.take(app, "history")
    await pilot.press("escape", "m")
    await pilot.pause()
    seen.take(app, "note")
    await pilot.press("escape", "question_mark")
    await pilot.pause()
    seen.take(app, "help")
    await pilot.press("escape", "l")
    await wait_for(pilot, lambda: isinstance(app.screen, LaunchScreen), "launch")
    await pilot.pause()
    seen.take(app, "launch panel")
    await pilot.press("tab", "tab")
    await pilot.pause()
    seen.take(app, "launch panel, a field focused")
    app.screen.query_one("#launch-start").focus()
    await pilot.pause()
    seen.take(app, "launch panel, Start focused")


async def walk_two_nights(pilot, app, seen: Readings) -> None:
    await settle(pilot, app, "verdicts")
    seen.take(app, "nights: list")
    await pilot.press("c")
    await wait_for(pilot, lambda: isinstance(app.screen, CausesScreen), "causes")
    seen.take(app, "causes")
    await pilot.press("down")
    await pilot.pause()
    seen.take(app, "causes, highlight moved")
    await pilot.press("enter")
    await wait_for(pilot, lambda: not isinstance(app.screen, CausesScreen), "a cause chosen")
    await pilot.press("enter")
    await pilot.pause()
    seen.take(app, "nights: a cause's case, detail focused")
    await pilot.press("escape", "f", "f")
    await pilot.pause()
    seen.take(app, "nights: filtered")


@pytest.mark.parametrize("theme", [DARK_THEME, LIGHT_THEME])
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_painted_character_reads(demo: Path, size, theme: str) -> None:
    seen = Readings()
    runs = demo / "runs"
    app = new_app(
        runs / "demo-night-2.jsonl", runs / "demo-night-2-lab_free_2.jsonl", cwd=demo, theme=theme
    )
    async with app.run_test(size=size) as pilot:
        await walk_refused_pair(pilot, app, seen)
    app = new_app(runs / "demo-night-1.jsonl", runs / "demo-night-2.jsonl", cwd=demo, theme=theme)
    async with app.run_test(size=size) as pilot:
        await walk_two_nights(pilot, app, seen)
    assert len(seen.measured) == 17 and min(seen.measured.values()) > 100, seen.measured
    assert not seen.low, seen.report()
