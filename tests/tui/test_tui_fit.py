"""The review fits 80 x 24 and 160 x 48 in both themes (issue 53, points 3 and 4), as a
new user meets the bundled demo: every key in the footer with its word, a file name, a
model id or a path never split inside a token, a line diff's wrapped rows still marked,
a hard-wrapped prompt reflowed, two spaces at least between a left and a right value,
the banner's notes whole, the launch panel's fields apart, and history opening with its
cursor on screen and headings cut only between whole parts."""

from __future__ import annotations

import re
import shutil
from itertools import pairwise
from pathlib import Path

import pytest
from textual.widgets import Footer

from evalpin.tui.screens.banner import BannerScreen
from evalpin.tui.screens.launch import LaunchScreen
from evalpin.tui.widgets.keys_line import KeysLine
from evalpin.tui.widgets.tones import DARK_THEME, LIGHT_THEME
from tests.tuikit import (
    demo_copy,
    history_shown,
    new_app,
    open_case,
    screen_text,
    settle,
    wait_for,
)

ROOT = Path(__file__).parents[2]
SIZES = [(160, 48), (80, 24)]
THEMES = [DARK_THEME, LIGHT_THEME]
ids = {"ids": lambda s: f"{s[0]}x{s[1]}"}
# A theme sets colours only (evalpin.tcss's theme rules are tints): a test that reads
# words, a layout or which file is shown reads the same in both, so each size takes one
# theme and both themes are still walked (their colours: test_tui_contrast.py and
# test_tui_rendered_contrast.py, every size in every theme).
PAIRED = {
    "argnames": ("size", "theme"),
    "argvalues": [(SIZES[0], DARK_THEME), (SIZES[1], LIGHT_THEME)],
    "ids": [f"{w}x{h}-{t}" for (w, h), t in zip(SIZES, THEMES, strict=True)],
}


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled demo in a folder of its own, reviewed from there (relative paths, as
    after `cd` into a clone)."""
    monkeypatch.chdir(tmp_path)
    return demo_copy(tmp_path)


def refused(theme: str):
    runs = Path("runs")
    return new_app(runs / "demo-night-2.jsonl", runs / "demo-night-2-lab_free_2.jsonl", theme=theme)


def coding(theme: str):
    runs = Path("runs")
    return new_app(
        runs / "demo-coding-probe.jsonl", runs / "demo-coding-publishable.jsonl", theme=theme
    )


def rows_of(app, widget) -> list[str]:
    area = widget.region
    return [r[area.x : area.right] for r in screen_text(app).splitlines()[area.y : area.bottom]]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, **ids)
async def test_the_browsed_refused_pair_fits(demo: Path, size, theme: str) -> None:
    """One app per size and theme, its screens read in turn (each a read of its own):
    the footer names every key whole; in the light theme, the open pins keep each file
    name on one row; in the dark one, history opens with its cursor on screen and, back
    from it, the launch panel keeps its fields apart."""
    app = refused(theme)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "banner")
        await pilot.press("b")
        await settle(pilot, app, "verdicts")
        _the_footer_names_every_key_whole(app, size)
        if theme == LIGHT_THEME:
            await _open_pins_keep_each_file_name_on_one_row(pilot, app)
        else:
            await _history_opens_with_its_cursor_on_screen(pilot, app)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is app.review, "back to the review")
            await _the_launch_panel_keeps_its_fields_apart(pilot, app)


def _the_footer_names_every_key_whole(app, size) -> None:
    review = app.review
    keys = [
        (app.get_key_display(b), b.description)
        for _, b, _, _ in review.active_bindings.values()
        if b.show
    ]
    assert {d for _, d in keys} >= {"history", "launch", "theme", "help", "quit"}
    narrow = size[0] < 120
    shown = review.query_one(KeysLine if narrow else Footer)
    assert shown.display and not review.query_one(Footer if narrow else KeysLine).display
    text = "  ".join(" ".join(r.split()) for r in rows_of(app, shown))
    for key, word in keys:
        assert f"{key} {word}" in text, (key, word, text)


async def _open_pins_keep_each_file_name_on_one_row(pilot, app) -> None:
    pins = app.review.query_one("#pins")
    if pins.folded:
        await pilot.press("i")
        await pilot.pause()
    head = rows_of(app, pins)[0]
    for name in ("demo-night-2.jsonl", "demo-night-2-lab_free_2.jsonl"):
        # Whole, or cut from its start (an ellipsis), never carried to a next row.
        tail = name[-16:]
        assert tail in head, (name, head)
    assert not any(r.strip().startswith(("onl", "jsonl", ".jsonl")) for r in rows_of(app, pins))


async def _history_opens_with_its_cursor_on_screen(pilot, app) -> None:
    await pilot.press("h")
    await history_shown(pilot, app)
    table = app.screen.table
    # On a run the review shows (the last in the folder: at 80 x 24, below the rows a
    # first screen of the table shows).
    assert Path(table.current.path).name == "demo-night-2-lab_free_2.jsonl"
    line = table.cursor_line
    assert table.scroll_y <= line < table.scroll_y + table.scrollable_content_region.height
    chart = app.screen.chart.text().splitlines()
    title = chart[0].rstrip()
    # Cut, if at all, between whole parts (`a · b`), never inside a word or a date.
    assert not title.endswith("…") or title.endswith(" …"), title
    assert "2026-12-…" not in title and "mode " not in chart[0][-30:], chart[0]


async def _the_launch_panel_keeps_its_fields_apart(pilot, app) -> None:
    await pilot.press("l")
    await wait_for(pilot, lambda: isinstance(app.screen, LaunchScreen), "the panel")
    await pilot.pause()
    text = screen_text(app)
    # Apart: a space at least, or a field's border, between the two.
    assert re.search(r"HOST:PORT[ ▎▊]*[ ▎▊] *in flight", text), text
    assert "runs go to" in text
    status = app.screen.query_one("#launch-status")
    assert status.region.bottom <= app.screen.query_one("#launch").region.bottom


@pytest.mark.parametrize("size", SIZES, **ids)
async def test_a_model_id_breaks_at_its_fingerprint_and_values_stay_apart(demo: Path, size):
    app = coding(DARK_THEME)
    async with app.run_test(size=size) as pilot:
        detail = await open_case(pilot, app, "merge_intervals")
        lines = detail.text().splitlines()
        model = "repair-coder-7b-2026-09@fp_51d7e2"
        rows = [r for r in lines if "repair-coder" in r or "fp_" in r]
        assert rows
        for row in rows:  # whole, or broken just before its `@`
            assert (
                model in row
                or re.search(r"repair-coder-7b-2026-09(\s|$)", row)
                or ("@fp_51d7e2" in row)
            ), row
        # Two spaces at least between the left and the right value of a row.
        for row in lines:
            if row.startswith(" reported model") and row.count("repair-coder") == 2:
                assert "09  " in row or "e2  " in row, row


@pytest.mark.parametrize("size", SIZES, **ids)
async def test_a_hard_wrapped_prompt_reads_as_paragraphs(demo: Path, size) -> None:
    app = coding(LIGHT_THEME)
    async with app.run_test(size=size) as pilot:
        detail = await open_case(pilot, app, "merge_intervals")
        await wait_for(pilot, lambda: "── case · coding item" in detail.text(), "the prompt")
        lines = detail.text().splitlines()
        start = next(k for k, r in enumerate(lines) if r.startswith("── case"))
        end = next(k for k, r in enumerate(lines) if k > start and r.startswith("── test"))
        prose = [r for r in lines[start + 2 : end] if r.strip() and not r.startswith(" ")]
        width = detail.scrollable_content_region.width
        # A row of one or two words only ends a paragraph: the row before it is not full.
        for before, row in pairwise(prose):
            if len(row.split()) <= 2 and not row.startswith(("#", "-", "`")):
                assert len(before) < width - 20, (before, row)
        assert "being offered meetings" in " ".join(lines)  # the file's line break joined


@pytest.mark.parametrize("size", SIZES, **ids)
async def test_a_line_diff_keeps_its_marks_on_wrapped_rows(demo: Path, size) -> None:
    app = coding(DARK_THEME)
    async with app.run_test(size=(60, size[1])) as pilot:  # narrow: tails wrap
        detail = await open_case(pilot, app, "merge_intervals")
        lines = detail.text().splitlines()
        start = next(
            k for k, r in enumerate(lines) if r.startswith("── test output tail · seed 29")
        )
        block = []
        for row in lines[start + 1 :]:
            if not row.strip() or row.startswith("──"):
                break
            block.append(row)
        if block and block[0].startswith("struck:"):  # the legend, above the first diff
            block = block[next(k for k, r in enumerate(block) if r.startswith(("- ", "+ "))) :]
        assert sum(r.startswith("+ =====") for r in block) >= 2  # a long line, wrapped
        assert all(r.startswith(("- ", "+ ", "  ")) for r in block), block


@pytest.mark.parametrize("size", SIZES, **ids)
async def test_a_banner_note_is_never_cut(demo: Path, size) -> None:
    """A set edited without a version bump: the banner's note (longer than a line at
    160 columns) is on screen whole, wrapped between words."""
    note = (
        "golden: edited without a version bump: dataset_version 2026-11 on both sides, "
        "but the envelope moved (fixtures/orders/golden.jsonl, fixtures/orders/tools.json): "
        "re-seal it with a new version before comparing"
    )
    app = refused(LIGHT_THEME)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "banner")
        app.push_screen(BannerScreen(headers=[("model_slot", "a", "b")], notes=[note]))
        await wait_for(pilot, lambda: isinstance(app.screen, BannerScreen), "the banner")
        await pilot.pause()
        app.screen.query_one("#banner-scroll").scroll_end(animate=False)
        await pilot.pause()
        rows = [re.sub(r"[\u2500-\u259f]", " ", r) for r in screen_text(app).splitlines()]
        shown = " ".join(" ".join(r.split()) for r in rows)
        assert note in shown
        assert "…" not in shown.split("golden: edited")[1][: len(note)]


@pytest.mark.parametrize(**PAIRED)
async def test_the_case_is_shown_reviewed_from_anywhere(tmp_path: Path, monkeypatch, size, theme):
    """The demo laid out as a wheel installs it (`evalpin/demo_runs` and
    `evalpin/fixtures`, pyproject's force-include), reviewed from an unrelated folder
    holding a `fixtures/orders/golden.jsonl` of its own: the case is read from the set
    beside the runs, the one whose bytes the run hashed, not from the look-alike."""
    package = tmp_path / "site-packages" / "evalpin"
    shutil.copytree(ROOT / "runs", package / "demo_runs")
    shutil.copytree(ROOT / "fixtures", package / "fixtures")
    elsewhere = tmp_path / "elsewhere"
    fake = elsewhere / "fixtures" / "orders" / "golden.jsonl"
    fake.parent.mkdir(parents=True)
    fake.write_text((ROOT / "fixtures/orders/golden.jsonl").read_text().replace("sorry", "sory"))
    monkeypatch.chdir(elsewhere)
    runs = package / "demo_runs"
    app = new_app(runs / "demo-night-1.jsonl", runs / "demo-night-2.jsonl", theme=theme)
    async with app.run_test(size=size) as pilot:
        detail = await open_case(pilot, app, "status-late-apology")
        await wait_for(pilot, lambda: "── case · golden" in detail.text(), "the case itself")
        text = detail.text()
        assert "moved or is gone" not in text and "changed since" not in text
        where = str(package / "fixtures" / "orders" / "golden.jsonl")
        assert where in "".join(text.split())  # (a long path wraps at a `/`)


@pytest.mark.parametrize(**PAIRED)
async def test_a_publishable_label_beside_an_unstable_spread_says_what_it_means(
    demo: Path, size, theme: str
) -> None:
    app = coding(theme)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("v")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "VerdictScreen", "verdict")
        await pilot.pause()
        seen: list[str] = []  # the screen, scrolled a page at a time (at 80 x 24 it stacks)
        for _ in range(8):
            rows = [" ".join(r.split()) for r in screen_text(app).splitlines()]
            seen += [r for r in rows if r not in seen]
            await pilot.press("pagedown")
            await pilot.pause()
        text = " ".join(seen)
        assert "publishable with its variance: the spread across seeds (0.125) is over" in text
        assert "the task is unstable under this prompt" in text
        # Said once, under the publishable run's label only (the probe is not publishable).
        assert text.count("publishable with its variance") == 1


def test_the_verdict_command_says_it_in_one_line(capsys) -> None:
    from tests.clirun import cli

    shown = cli(capsys, "verdict", str(ROOT / "runs" / "demo-coding-publishable.jsonl"))
    lines = shown.out.splitlines()
    at = next(k for k, r in enumerate(lines) if r.startswith("label"))
    assert "publishable" in lines[at] and "publishable with its variance" in lines[at + 1]
    assert shown.code == 0
    probe = cli(capsys, "verdict", str(ROOT / "runs" / "demo-coding-probe.jsonl"))
    assert "with its variance" not in probe.out  # not publishable: nothing to explain
