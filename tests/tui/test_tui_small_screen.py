"""80 x 24 after the banner (issue 43, point 2): the pins start folded (a refused pair's
too), leaving room for cases and the detail, and the footer shows the keys that matter
first, on two rows. At 160 x 48 the pins stay open and every key is in the footer."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalpin.tui.widgets.pins import PinsHeader
from tests.tuikit import new_app, pair, screen_text, settle

FIRST = ["? help", "q quit", "n next", "p prev", "v verdict", "i pins"]


async def browse_refused(pilot, app) -> None:
    await settle(pilot, app, "banner")
    await pilot.press("b")
    await settle(pilot, app, "verdicts")
    await pilot.pause()


def footer(app) -> str:
    """The footer's rows as one line: Textual's footer, or the keys line that wraps in its
    place in a narrow terminal (issue 53)."""
    shown = next(w for w in app.screen.query("Footer, KeysLine") if w.display)
    rows = screen_text(app).splitlines()[shown.region.y : shown.region.bottom]
    return "  ".join(row.strip() for row in rows)


async def test_80x24_after_the_banner_has_cases_and_detail(tmp_path: Path) -> None:
    app = new_app(*pair(tmp_path, right_over={"model_slot": "day"}))
    async with app.run_test(size=(80, 24)) as pilot:
        await browse_refused(pilot, app)
        review = app.review
        pins = review.query_one(PinsHeader)
        assert pins.folded and pins.region.height <= 3
        assert review.case_list.region.height >= 7
        assert review.detail.region.height >= 6
        shown = footer(app)
        positions = [shown.find(key) for key in FIRST]
        assert -1 not in positions, shown
        assert positions == sorted(positions), shown  # in that order, first
        await pilot.press("i")
        assert not pins.folded
        await pilot.press("i")
        assert pins.folded


@pytest.mark.parametrize("over", [{"model_slot": "day"}, None], ids=["refused", "compared"])
async def test_160x48_keeps_the_pins_open_and_every_key(tmp_path: Path, over) -> None:
    app = new_app(*pair(tmp_path, right_over=over))
    async with app.run_test(size=(160, 48)) as pilot:
        if over:
            await browse_refused(pilot, app)
        else:
            await settle(pilot, app, "verdicts")
        assert not app.review.query_one(PinsHeader).folded
        shown = footer(app)
        for key in ["? help", "q quit", "n next changed", "v verdict", "i pins", "h history"]:
            assert key in shown, shown
        assert "l launch" in shown and "⏎ detail" in shown
