"""Helpers for the TUI tests: run pairs, waiting for the loader, the screen as text."""

from __future__ import annotations

import asyncio
import html
import os
import re
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.color import Color
from textual.geometry import Region

from evalpin.tui.app import EvalpinApp, make_app
from tests.builders import case, grid, header, write_run

SIZE = (160, 45)


def pair(folder: Path, right_over: dict | None = None, **cases_over) -> tuple[Path, Path]:
    """Yesterday and today: b regressed on seed 29, c fixed, d drifted, e flaky both days."""
    left = grid(
        {
            "a-steady": [True, True, True],
            "b-breaks": [True, True, True],
            "c-mends": [False, False, False],
            "d-drifts": [True, True, True],
            "e-flaky": [True, False, True],
            "f-gone": [True, True, True],
        }
    )
    right = grid(
        {
            "a-steady": [True, True, True],
            "b-breaks": [True, False, True],
            "c-mends": [True, True, True],
            "d-drifts": [True, True, True],
            "e-flaky": [True, False, True],
            "g-new": [False, False, False],
        },
        **(right_over or {}),
    )
    for rec in right:
        if rec.case_id == "d-drifts":
            rec.completion_digest = f"moved-{rec.seed}"
    lpath = write_run(folder / "left.jsonl", left, head=header(run_id="L"))
    rpath = write_run(
        folder / "right.jsonl",
        right,
        head=header(run_id="R", started_at="2026-11-30T02:00:00Z"),
    )
    return lpath, rpath


async def settle(pilot, app: EvalpinApp, what: str = "listed", timeout: float = 20) -> None:
    """Wait until the review screen reached a loading milestone (`listed`, `verdicts`,
    `banner`, `diff`, `read`: see `ReviewScreen.reached`) and the detail pane shows the
    case under the cursor."""
    review = app.review
    await wait_for(pilot, lambda: review.reached(what), f"review reached {what!r}", timeout)
    await detail_ready(pilot, app, timeout)


async def detail_ready(pilot, app: EvalpinApp, timeout: float = 20) -> None:
    """Wait until the detail pane's worker delivered the case it was last asked for."""
    detail = app.review.detail
    await wait_for(pilot, lambda: not detail.decoding, "the detail loaded", timeout)


async def wait_for(pilot, ready, what: str = "condition", timeout: float = 20) -> None:
    """Pause until `ready()` is true (a worker's result arrived, a screen changed). The
    timeout only turns a hang into a failure; nothing asserts how long it took."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not ready():
        if loop.time() > end:
            raise TimeoutError(f"never reached: {what}")
        await pilot.pause(0.02)
    await pilot.pause()


_CELL = re.compile(
    r'<text class="[^"]*" x="(?P<x>[\d.]+)" y="[\d.]+" textLength="[\d.]+" '
    r'clip-path="url\(#[\w-]+-line-(?P<line>\d+)\)">(?P<text>[^<]*)</text>'
)
_CHAR_WIDTH = 0.61 * 20  # rich's export_svg: font aspect ratio times the 20 px line


def screen_text(app: EvalpinApp) -> str:
    """What the terminal shows, as plain text: read back from the public
    `App.export_screenshot` SVG (each run of text is placed at its column)."""
    width, height = app.size
    rows: list[list[tuple[int, str]]] = [[] for _ in range(height)]
    for found in _CELL.finditer(app.export_screenshot()):
        column = round(float(found["x"]) / _CHAR_WIDTH)
        text = html.unescape(found["text"]).replace("\xa0", " ").replace("\n", "")
        rows[int(found["line"])].append((column, text))
    out = []
    for row in rows:
        line, at = "", 0
        for column, text in sorted(row):
            line += " " * max(0, column - at) + text
            at = max(at, column) + cell_len(text)
        out.append(line.ljust(width))
    return "\n".join(out)


_BACKGROUND = re.compile(
    r'<rect fill="(?P<fill>#[0-9a-f]{6})" x="(?P<x>[\d.]+)" y="(?P<y>[\d.]+)" '
    r'width="(?P<width>[\d.]+)" height="[\d.]+" shape-rendering="crispEdges"/>'
)
_FILL = re.compile(r"\.(?P<cls>[\w-]+-r\d+) \{ fill: (?P<fill>#[0-9a-f]{6})")
_TEXT = re.compile(
    r'<text class="(?P<cls>[^" ]+)[^"]*" x="(?P<x>[\d.]+)" y="[\d.]+" textLength="[\d.]+" '
    r'clip-path="url\(#[\w-]+-line-(?P<line>\d+)\)">(?P<text>[^<]*)</text>'
)
_LINE = 24.4  # rich's export_svg: the line height, px; rows start 1.5 px down


def painted(app: EvalpinApp) -> list[tuple[int, int, str, str, str]]:
    """Every character on screen as painted: (column, row, character, its colour, the
    colour behind it), read back from the public `App.export_screenshot` SVG (reverse
    and dim already applied, as a terminal shows them)."""
    svg = app.export_screenshot()
    behind = {
        (round(float(m["x"]) / _CHAR_WIDTH), round((float(m["y"]) - 1.5) / _LINE)): m["fill"]
        for m in _BACKGROUND.finditer(svg)
    }
    fills = {m["cls"]: m["fill"] for m in _FILL.finditer(svg)}
    cells = []
    for m in _TEXT.finditer(svg):
        column, row = round(float(m["x"]) / _CHAR_WIDTH), int(m["line"])
        text = html.unescape(m["text"]).replace("\xa0", " ")
        if (column, row) not in behind or m["cls"] not in fills:
            continue  # a line's end
        colour, under = fills[m["cls"]], behind[column, row]
        for char in text:
            cells.append((column, row, char, colour, under))
            column += cell_len(char)
    return cells


async def open_case(pilot, app: EvalpinApp, case_id: str, milestone: str = "verdicts"):
    """Wait for `milestone`, search for the case, and wait until the detail shows it
    (its fixture set read); the detail pane."""
    await settle(pilot, app, milestone)
    await pilot.press("slash", *case_id, "enter")
    detail = app.review.detail

    def showing() -> bool:
        shown = detail.shown
        here = shown is not None and shown.table.cases[shown.case].case_id == case_id
        return here and not detail.decoding

    await wait_for(pilot, showing, f"the detail of {case_id}")
    return detail


ROOT = Path(__file__).resolve().parent.parent


def demo_copy(folder: Path) -> Path:
    """The bundled demo's runs, fixtures and slots in `folder`, a project of its own."""
    for name in ("runs", "fixtures"):
        shutil.copytree(ROOT / name, folder / name)
    shutil.copy(ROOT / "slots.yaml", folder / "slots.yaml")
    return folder


async def history_shown(pilot, app: EvalpinApp) -> None:
    """Wait until the history screen is up with its runs read."""
    from evalpin.tui.screens.history import HistoryScreen

    def shown() -> bool:
        return isinstance(app.screen, HistoryScreen) and app.screen.history is not None

    await wait_for(pilot, shown, "history")
    await pilot.pause()


def new_app(left, right=None, **kw) -> EvalpinApp:
    return make_app(left, right, cursor_blink=False, **kw)


__all__ = [
    "SIZE",
    "case",
    "demo_copy",
    "detail_ready",
    "history_shown",
    "new_app",
    "open_case",
    "painted",
    "pair",
    "screen_text",
    "settle",
    "wait_for",
]


# -- what is checked on a screen --------------------------------------------------------


# Text snapshots (tests/tui/snapshots/): EVALPIN_UPDATE_SNAPSHOTS=1 accepts a deliberate change.
SNAPSHOTS = Path(__file__).parent / "tui" / "snapshots"
UPDATE = os.environ.get("EVALPIN_UPDATE_SNAPSHOTS") == "1"


def text_snapshot(name: str, text: str) -> None:
    """`text` is the screen `name` held in tests/tui/snapshots/ (written anew, and the
    test failed, where there is none; all written under EVALPIN_UPDATE_SNAPSHOTS=1)."""
    path = SNAPSHOTS / f"{name}.txt"
    text = "\n".join(row.rstrip() for row in text.splitlines()) + "\n"
    if UPDATE or not path.exists():
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"snapshot {path.name} was missing and has been written: check it")
    assert text == path.read_text(encoding="utf-8"), f"screen differs from {path.name}"


# Untrusted strings, each with what the screen must show for it (visible, inert).
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


# WCAG 2 contrast of two colours.
def luminance(colour: Color) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = colour.get_truecolor()
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: Color, b: Color) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)
