"""Every tone readable in every theme the review offers (issue 43, point 3).

For each component class evalpin's widgets and screens declare, in each theme `t`
switches between, the WCAG 2 contrast ratio of its foreground against the background it
is drawn on, as painted (`tones.tone_style`: a theme colour such as `$text-muted` is
resolved against that background) and as a 256-colour terminal shows it (Rich's
downgrade to the xterm palette). The floors are in `widgets/tones.py`: 4.5:1 for text in
24-bit colour (WCAG AA), 3:1 in a 256-colour terminal, 3:1 for the series colours (chart
lines and their keys, WCAG's non-text contrast). Also: after `t`, what is on screen is
painted in the new theme's tones, not the old one's. At 160 x 48 and 80 x 24.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from rich.color import Color, ColorSystem
from textual.dom import DOMNode

from evalpin.tui.screens.history import HistoryScreen
from evalpin.tui.screens.verdict import VerdictScreen
from evalpin.tui.widgets.pins import PinsHeader
from evalpin.tui.widgets.tones import (
    DARK_THEME,
    GRAPHIC_FLOOR,
    LIGHT_THEME,
    TEXT_FLOOR,
    TEXT_FLOOR_256,
    tone_style,
)
from tests.builders import grid, header, write_run
from tests.tuikit import contrast, new_app, pair, settle, wait_for

SIZES = [(160, 48), (80, 24)]


def size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def evalpin_classes(node: DOMNode) -> set[str]:
    """The component classes evalpin's own classes declare (not Textual's)."""
    names: set[str] = set()
    for cls in type(node).__mro__:
        if cls.__module__.startswith("evalpin.") and "COMPONENT_CLASSES" in vars(cls):
            names |= set(vars(cls)["COMPONENT_CLASSES"])
    return names


def measured(node: DOMNode) -> list[tuple[str, float, float, float]]:
    """(class, 24-bit ratio, 256-colour ratio, floor) for each of the node's classes."""
    out = []
    base = node.rich_style  # type: ignore[attr-defined]
    for name in sorted(evalpin_classes(node)):
        painted = tone_style(node, name)
        full = node.get_component_rich_style(name)  # type: ignore[attr-defined]
        fg = painted.color or base.color
        bg = full.bgcolor or base.bgcolor
        if painted.reverse:
            fg, bg = bg, fg
        assert fg is not None and bg is not None, name
        down = (c.downgrade(ColorSystem.EIGHT_BIT) for c in (fg, bg))
        floor = GRAPHIC_FLOOR if re.search(r"--s\d$", name) else TEXT_FLOOR
        out.append((name, contrast(fg, bg), contrast(*down), floor))
    return out


async def every_screen(pilot, app) -> list[tuple[str, str, float, float, float]]:
    """Every evalpin node with component classes on the review, verdict and history
    screens, measured."""
    found = []

    def take(screen) -> None:
        for node in [screen, *screen.walk_children()]:
            for name, ratio, ratio256, floor in measured(node):
                found.append((type(node).__name__, name, ratio, ratio256, floor))

    take(app.screen)
    await pilot.press("v")
    await wait_for(pilot, lambda: isinstance(app.screen, VerdictScreen), "verdict")
    take(app.screen)
    await pilot.press("escape", "h")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, HistoryScreen) and app.screen.history is not None,
        "history",
    )
    take(app.screen)
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is app.review, "back")
    return found


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_every_tone_reads_in_every_theme(tmp_path: Path, size) -> None:
    app = new_app(*pair(tmp_path), theme=DARK_THEME)
    themes = []
    low: list[str] = []
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "verdicts")
        for _ in range(2):  # each theme `t` offers
            themes.append(app.theme)
            found = await every_screen(pilot, app)
            assert len({(w, n) for w, n, *_ in found}) > 60  # every widget was measured
            for widget, name, ratio, ratio256, floor in found:
                if ratio < floor or ratio256 < min(floor, TEXT_FLOOR_256):
                    low.append(f"{app.theme} {widget} .{name}: {ratio:.2f} / {ratio256:.2f}")
            await pilot.press("t")
            await pilot.pause()
    assert themes == [DARK_THEME, LIGHT_THEME]
    assert not low, "\n".join(low)


def fill_of(svg: str, text: str) -> str:
    """The colour the screenshot paints the first run of text holding `text` in."""
    for match in re.finditer(r'<text class="([^"]+)"[^>]*>([^<]*)</text>', svg):
        if text in html.unescape(match.group(2)).replace("\xa0", " "):
            cls = match.group(1).split()[0]
            rule = re.search(r"\." + re.escape(cls) + r" \{ fill: (#[0-9a-f]{6})", svg)
            assert rule is not None
            return rule.group(1)
    raise AssertionError(f"{text!r} not on screen")


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_t_repaints_the_pins_in_the_new_themes_tones(tmp_path: Path, size) -> None:
    cases = {"t-one": [True] * 3, "t-two": [False] * 3}
    left = write_run(tmp_path / "l.jsonl", grid(cases))
    right = write_run(
        tmp_path / "r.jsonl",
        grid(cases, model_slot="day"),
        head=header(model_slot="day", run_id="R", started_at="2026-11-30T02:00:00Z"),
    )
    app = new_app(left, right, theme=DARK_THEME)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "banner")
        await pilot.press("b")
        await settle(pilot, app, "verdicts")
        pins = app.review.query_one(PinsHeader)
        if pins.folded:
            await pilot.press("i")
        await pilot.press("t")
        await pilot.pause()
        await pilot.pause()
        assert app.theme == LIGHT_THEME
        svg = app.export_screenshot()
        key = tone_style(pins, "pins--key").color
        differs = tone_style(pins, "pins--differs").color
        assert key is not None and differs is not None
        assert fill_of(svg, "scorer commit") == key.name  # a label: not white on grey
        assert fill_of(svg, "≠") == differs.name  # not the dark theme's pale yellow
        background = Color.parse("#e0e0e0")
        assert contrast(Color.parse(fill_of(svg, "scorer commit")), background) >= TEXT_FLOOR
