"""The TUI and tool conversations: the detail shows a transcript turn by turn (inert), and
a slot whose settings digest moved is refused by the banner naming "slot settings"."""

from __future__ import annotations

from pathlib import Path

from evalpin.core.read.discovery import header_mismatch
from evalpin.core.records import Turn, TurnCall
from evalpin.tui.screens.banner import BannerScreen
from evalpin.tui.widgets.detail import DetailPane
from tests.builders import case, grid, header, write_run
from tests.tuikit import SIZE, new_app, screen_text, settle

HOSTILE = "[@click=app.quit]boom\x1b]52;c;Zm9v\x07"


async def test_detail_text_shows_the_conversation_turn_by_turn(tmp_path: Path) -> None:
    turns = [
        Turn(
            text="",
            calls=[
                TurnCall("get_order", {"id": 1001}, {"eta": "2026-12-03"}),
                TurnCall("get_order", "{id: oops", {"error": "arguments are not valid JSON"}),
            ],
        ),
        Turn(text=f"It ships 2026-12-03 {HOSTILE}", calls=[TurnCall("get_order", {"id": 2})]),
    ]
    rec = case("loop", False, reasons=["tool_loop_exhausted"], turns=turns, text=turns[-1].text)
    app = new_app(write_run(tmp_path / "run.jsonl", [rec]))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")
        await pilot.pause()
        text = app.review.query_one(DetailPane).text()
        transcript = text[text.index("tool conversation, 2 turns") :].splitlines()
        assert transcript[1:9] == [
            "turn 1: (no text)",
            '  → get_order({"id": 1001})',
            '  ← {"eta": "2026-12-03"}',
            '  → get_order("{id: oops")',
            '  ← {"error": "arguments are not valid JSON"}',
            "turn 2: It ships 2026-12-03 [@click=app.quit]boom\\x1b]52;c;Zm9v\\x07",
            '  → get_order({"id": 2})',
            "  ← (not sent: out of turns)",
        ]
        assert "\x1b" not in screen_text(app)
        assert app.is_running


async def test_banner_names_slot_settings_when_the_digest_moved(tmp_path: Path) -> None:
    outcomes = {"a": [True, True, True], "b": [True, False, True]}
    slot = {"provider": "command", "argv": ["agents/solve.py"]}
    left = write_run(
        tmp_path / "left.jsonl",
        grid(outcomes, slot_settings="1111"),
        head=header(run_id="L", slot={**slot, "settings_digest": "1111"}),
    )
    right = write_run(
        tmp_path / "right.jsonl",
        grid(outcomes, slot_settings="2222"),
        head=header(
            run_id="R", started_at="2026-11-30T02:00:00Z", slot={**slot, "settings_digest": "2222"}
        ),
    )
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        await settle(pilot, app, "diff")
        assert isinstance(app.screen, BannerScreen)
        text = screen_text(app)
        assert "slot settings  differs on 6 pairs" in text
        assert "1111" in text and "2222" in text
        assert "different slot settings" in text and "re-pointed" in text


def test_the_headers_alone_show_a_moved_settings_digest() -> None:
    def head(digest: str | None) -> object:
        slot = {"provider": "command"} | ({"settings_digest": digest} if digest else {})
        return header(slot=slot)

    assert header_mismatch(head("1111"), head("2222")) == [("slot_settings", "1111", "2222")]
    assert header_mismatch(head("1111"), head("1111")) is None
    assert header_mismatch(head(None), head("2222")) is None  # cannot tell: no refusal
