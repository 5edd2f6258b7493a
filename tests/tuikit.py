"""Helpers for the TUI tests: run pairs, waiting for the loader, the screen as text."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

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
    `banner`)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while what not in app.review.timings:
        if loop.time() > end:
            raise TimeoutError(f"review never reached {what!r}: {app.review.timings}")
        await pilot.pause(0.02)
    await pilot.pause()


async def wait_for(pilot, ready, what: str = "condition", timeout: float = 20) -> None:
    """Pause until `ready()` is true (a worker's result arrived, a screen changed)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not ready():
        if loop.time() > end:
            raise TimeoutError(f"never reached: {what}")
        await pilot.pause(0.02)
    await pilot.pause()


def screen_text(app: EvalpinApp) -> str:
    """What the terminal shows, as plain text (like `export_screenshot`, without styles)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


def new_app(left, right=None, **kw) -> EvalpinApp:
    return make_app(left, right, cursor_blink=False, **kw)


__all__ = ["SIZE", "case", "new_app", "pair", "screen_text", "settle"]
