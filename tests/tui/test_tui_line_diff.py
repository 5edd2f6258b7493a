"""A pytest tail (and tool calls) is line-shaped: the review's detail diffs it line by
line, words marked only inside a changed line (issue 43, point 4), at 160 x 48 and 80 x 24.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import grid, header, write_run
from tests.tuikit import new_app, open_case

SIZES = [(160, 48), (80, 24)]
BEFORE = """\
tests/test_dates.py ..F.F.                                               [100%]
FAILED tests/test_dates.py::test_leap - assert 28 == 29
FAILED tests/test_dates.py::test_span - assert 3 == 4
================ 2 failed, 4 passed in 0.31s ================"""
AFTER = """\
tests/test_dates.py ..F...                                               [100%]
FAILED tests/test_dates.py::test_leap - assert 28 == 29
================ 1 failed, 5 passed in 0.27s ================"""


def size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def tails(tmp_path: Path) -> tuple[Path, Path]:
    left = grid({"dates-item": [False] * 3}, reasons=["tests_failed"], tool_names=[], tail=BEFORE)
    right = grid({"dates-item": [False] * 3}, reasons=["tests_failed"], tool_names=[], tail=AFTER)
    for k, rec in enumerate(right):
        rec.completion_digest = f"moved-{k}"
    return (
        write_run(tmp_path / "l.jsonl", left),
        write_run(
            tmp_path / "r.jsonl", right, head=header(run_id="R", started_at="2026-11-30T02:00:00Z")
        ),
    )


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_a_tail_reads_line_by_line(tmp_path: Path, size) -> None:
    app = new_app(*tails(tmp_path))
    async with app.run_test(size=size) as pilot:
        detail = await open_case(pilot, app, "dates-item")
        plain = [t.plain for t in detail.lines]
        start = next(n for n, t in enumerate(plain) if t.startswith("── test output tail"))
        block = plain[start:]
        assert not any("2 1 failed" in t or "4 5 passed" in t for t in plain), block
        # Each summary line whole, the left's above the right's, marked - and +.
        old = next(n for n, t in enumerate(block) if "2 failed, 4 passed in 0.31s" in t)
        new = next(n for n, t in enumerate(block) if "1 failed, 5 passed in 0.27s" in t)
        assert old < new and block[old].startswith("- ") and block[new].startswith("+ ")
        # The failure only the left had is a whole line gone; the shared one, unmarked.
        gone = next(t for t in block if "test_span" in t)
        assert gone.startswith("- ")
        shared = [t for t in block if "test_leap" in t]
        assert len(shared) == 1 and shared[0].startswith("  ")
        # Within the changed line only the changed words are marked: struck on the left.
        line = detail.lines[start + old]
        at = line.plain.index("2 failed")
        assert line.get_style_at_offset(app.console, at).strike
        assert not line.get_style_at_offset(app.console, line.plain.index("failed,")).strike
        new_line = detail.lines[start + new]
        assert new_line.get_style_at_offset(app.console, new_line.plain.index("1 failed")).underline
        width = detail.scrollable_content_region.width
        assert all(t.cell_len <= width for t in detail.lines)
