"""Text snapshots of the screens no SVG snapshot shows at this size: what the terminal
shows, character for character.

The screens are read back from `App.export_screenshot` as plain text (`tuikit.screen_text`),
so a diff here reads as characters. The review, its regressions filter and the banner are
held by the SVG snapshots in test_tui_svg (colours and characters alike), so they are not
shot twice. To accept a deliberate change:
EVALPIN_UPDATE_SNAPSHOTS=1 pytest tests/tui/test_tui_snapshots.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tuikit import SIZE, new_app, pair, screen_text, settle, text_snapshot, wait_for


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Relative file names on screen: the same text on every machine."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def test_snapshot_delta(here: Path) -> None:
    """A refused pair browsed as a backend delta (the SVGs show it on small terminals)."""
    pair(Path("."), right_over={"reported_model": "m-2"})
    app = new_app(Path("left.jsonl"), Path("right.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        await settle(pilot, app, "verdicts")
        await pilot.press("b")
        await settle(pilot, app, "listed")
        text_snapshot("delta", screen_text(app))


async def test_snapshot_help(here: Path) -> None:
    # (The verdict screen is checked by content in test_tui_review: it shows whatever the
    # core's Verdict carries, which grows; a character snapshot would break with it.)
    pair(Path("."))
    app = new_app(Path("left.jsonl"), Path("right.jsonl"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: app.screen is not app.review, "the help screen")
        text_snapshot("help", screen_text(app))
