"""The review TUI on other tools' logs: pins say the format, epochs and what is missing;
the banner stops an incomparable pair; the detail shows the completion text."""

from __future__ import annotations

from pathlib import Path

from evalpin.core.read.runfile import read_run
from evalpin.tui.screens.banner import BannerScreen
from evalpin.tui.widgets.detail import DetailPane
from tests.tuikit import SIZE, new_app, screen_text, settle

DATA = Path(__file__).parents[1] / "data"


async def test_inspect_pair_shows_format_epochs_and_completion() -> None:
    app = new_app(
        read_run(DATA / "inspect" / "night1.eval"), read_run(DATA / "inspect" / "night2.eval")
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        text = screen_text(app)
        assert "inspect-ai log (.eval, scorer includes), 12 records, complete" in text
        assert "epochs          1,2 (n=2)" in text
        assert "REGRESSED  L   2/2 R   0/2  banana" in text
        assert "epoch 1         left" in text
        shown = "\n".join(t.plain for t in app.review.query_one(DetailPane).lines)
        # Both epochs answered alike on each side: one block, left against right.
        assert "completion text · epochs 1, 2 · left → right" in shown and "plantain" in shown


async def test_inspect_other_model_raises_the_banner() -> None:
    app = new_app(
        read_run(DATA / "inspect" / "night1.eval"),
        read_run(DATA / "inspect" / "other_model.eval"),
    )
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        assert isinstance(app.screen, BannerScreen)
        text = screen_text(app)
        assert "REFUSE_DIFF" in text and "mockllm/other" in text


async def test_lm_eval_pair_marks_missing_pins_and_the_docs_own_id() -> None:
    app = new_app(read_run(DATA / "lm_eval" / "seed1"), read_run(DATA / "lm_eval" / "seed2"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        text = screen_text(app)
        assert "lm-eval samples (exact_match), 6 records, complete" in text
        assert "scorer commit   <missing>" in text
        assert "0  (apple)" in text and "repeat 0" in text


async def test_promptfoo_nights_on_two_servers_raise_the_banner() -> None:
    """Issue 41: the review stops a pair of promptfoo nights under one provider id and
    model name that two servers answered."""
    folder = DATA / "promptfoo"
    app = new_app(read_run(folder / "night2.json"), read_run(folder / "night2_server_b.json"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        assert isinstance(app.screen, BannerScreen)
        assert "REFUSE_DIFF" in screen_text(app)


async def test_promptfoo_cached_answer_is_marked_in_the_detail() -> None:
    folder = DATA / "promptfoo"
    app = new_app(read_run(folder / "night1.json"), read_run(folder / "cached.json"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        shown = "\n".join(t.plain for t in app.review.query_one(DetailPane).lines)
        assert "from the tool's cache" in shown
