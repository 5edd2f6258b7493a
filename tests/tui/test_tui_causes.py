"""`c`: the cause view on the demo pair, through Textual's Pilot."""

from __future__ import annotations

from pathlib import Path

from evalpin.tui.screens.causes import CausesScreen
from evalpin.tui.widgets.case_list import CaseList
from tests.tuikit import SIZE, new_app, screen_text, settle, wait_for

DEMO = Path(__file__).resolve().parents[2] / "runs"


def listed(app) -> list[str]:
    return [app.review.cases.cases[i].case_id for i in app.review.query_one(CaseList).rows]


async def choose(pilot, app, label: str) -> None:
    await pilot.press("c")
    await wait_for(pilot, lambda: isinstance(app.screen, CausesScreen), "the causes screen")
    screen = app.screen
    labels = ["every case", *(c.label for c in screen.causes)]
    options = screen.query_one("#cause-list")
    options.highlighted = next(i for i, text in enumerate(labels) if text.startswith(label))
    await pilot.press("enter")
    await wait_for(pilot, lambda: not isinstance(app.screen, CausesScreen), "back to the list")
    await pilot.pause()


async def test_choosing_a_cause_lists_its_cases_and_n_steps_through_them() -> None:
    app = new_app(DEMO / "demo-night-1.jsonl", DEMO / "demo-night-2.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        assert app.review.reached("causes")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CausesScreen), "the causes screen")
        text = screen_text(app)
        assert "+ missing_text:sorry" in text and "  1 case (3 seeds)" in text
        assert "- missing_tool:escalate_to_human" in text
        assert "+ calls cancel_order" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, CausesScreen), "closed")
        everything = listed(app)
        await choose(pilot, app, "+ missing_text:sorry")
        assert listed(app) == ["status-late-apology"]
        assert "cause + missing_text:sorry" in screen_text(app)
        await choose(pilot, app, "- missing_tool:escalate_to_human")
        assert listed(app) == ["refund-over-limit"]
        await pilot.press("n")
        assert app.review.query_one(CaseList).cursor == 0  # nothing else to step to
        await choose(pilot, app, "every case")
        assert listed(app) == everything
        assert app.review.cause is None
        assert "cause + " not in screen_text(app)


async def test_one_run_alone_has_no_causes_and_says_so() -> None:
    app = new_app(DEMO / "demo-night-2.jsonl")
    app.NOTIFICATION_TIMEOUT = 600  # a toast lives 5 s; a loaded machine is slower
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("c")
        await pilot.pause()
        assert not isinstance(app.screen, CausesScreen)
        assert "causes compare two runs" in " ".join(str(n.message) for n in app._notifications)
