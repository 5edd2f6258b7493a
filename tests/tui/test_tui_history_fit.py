"""History at 80 columns (issue 43, point 5): what does not fit moves whole to the next
line or is cut with an ellipsis; a hash, a label or a name is never split across lines.
Over the bundled demo's runs and a folder of long names, at 160 x 48 and 80 x 24."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalpin.tui.widgets.history_table import FILE_MARK, WRAP_INDENT, HistoryTable
from tests.builders import grid, header, write_run
from tests.tuikit import history_shown, new_app, screen_text, settle

ROOT = Path(__file__).parents[2]
SIZES = [(160, 48), (80, 24)]


def size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def words_of(table: HistoryTable, line: int, width: int) -> set[str]:
    row = table.rows[line]
    cells = table._cells(row, width, table._marked(row))
    return set(" ".join(text.lstrip(FILE_MARK) for text, _ in cells).split())


def whole_or_cut(word: str, words: set[str]) -> bool:
    """A word drawn is one of the row's words, or one cut with an ellipsis."""
    if word in words:
        return True
    if word.endswith("…"):
        return any(w.startswith(word[:-1]) for w in words)
    if word.startswith("…"):
        return any(w.endswith(word[1:]) for w in words)
    return False


async def open_history(pilot, app) -> HistoryTable:
    await settle(pilot, app)
    await pilot.press("h")
    await history_shown(pilot, app)
    return app.screen.query_one(HistoryTable)


def check_nothing_split(table: HistoryTable) -> None:
    width = table.scrollable_content_region.width
    for k, row in enumerate(table.rows):
        drawn = table.draw_line(k, width).text
        assert len(drawn) == width
        if row.part:
            assert drawn.startswith(" " * WRAP_INDENT)
        words = words_of(table, k, width)
        for word in drawn.split():
            assert whole_or_cut(word, words), (word, drawn)


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_the_demo_history_splits_no_word(tmp_path: Path, size) -> None:
    shutil.copytree(ROOT / "runs", tmp_path / "runs")
    runs = tmp_path / "runs"
    app = new_app(runs / "demo-night-1.jsonl", runs / "demo-night-2.jsonl")
    async with app.run_test(size=size) as pilot:
        table = await open_history(pilot, app)
        check_nothing_split(table)
        text = screen_text(app)
        # The verdict labels and the grader hash are on screen whole.
        assert "exploratory-probe" in text or size[0] > 100
        grader = app.review.left.header.grader_version
        assert grader in text


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_long_labels_and_names_move_or_are_cut(tmp_path: Path, size) -> None:
    slot = "a-slot-label-long-enough-to-take-a-whole-narrow-line-of-its-own-and-more-x"
    head = header(model_slot=slot, run_id="L", grader_version="9" * 40)
    cases = grid({"h-one": [True] * 3}, model_slot=slot, grader_version="9" * 40)
    name = "night-" + "n" * 90 + ".jsonl"
    left = write_run(tmp_path / "early.jsonl", cases, head=head)
    head_r = header(
        model_slot=slot, run_id="R", grader_version="9" * 40, started_at="2026-11-30T02:00:00Z"
    )
    right = write_run(tmp_path / name, cases, head=head_r)
    app = new_app(left, right)
    async with app.run_test(size=size) as pilot:
        table = await open_history(pilot, app)
        check_nothing_split(table)
        text = table.text()
        assert name in text and slot[:39] + "…" in text  # a long value is cut, said so
