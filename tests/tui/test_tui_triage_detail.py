"""Issue 26: the case itself and the two answers as a diff, in the review's detail.

Driven through the real app with Pilot at fixed sizes: what the case asked (read from the
fixture set the run names, only while its hash holds), left against right as a word diff
with the needles found or said absent, seeds with the same answers as one block, lines
broken between words, every string from a run or a fixture inert."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rich.style import Style

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.records import FixturesInfo
from evalpin.core.review import case_source
from evalpin.tui.widgets.detail import DetailPane
from tests.builders import case, header, write_run
from tests.tuikit import new_app, open_case, wait_for

ROOT = Path(__file__).parents[2]
NIGHTS = (ROOT / "runs/demo-night-1.jsonl", ROOT / "runs/demo-night-2.jsonl")
WIDE, SMALL = (160, 48), (80, 24)
LATE = "status-late-apology"


def lines_with(detail: DetailPane, text: str) -> list[int]:
    return [n for n, t in enumerate(detail.lines) if text in t.plain]


def style_at(detail: DetailPane, n: int, word: str) -> Style:
    text = detail.lines[n]
    return text.get_style_at_offset(detail.app.console, text.plain.index(word))


async def test_the_lost_apology_at_160x48() -> None:
    app = new_app(*NIGHTS, cwd=ROOT)
    async with app.run_test(size=WIDE) as pilot:
        detail = await open_case(pilot, app, LATE)
        text = detail.text()
        # What the case asked, from fixtures/orders/golden.jsonl (its hash holds).
        assert "── case · golden · fixtures/orders/golden.jsonl" in text
        assert "user            Order B5530 is now a week late." in text
        assert "must include    B5530, sorry" in text
        assert "must not        calm down" in text
        assert "case not shown" not in text
        # One block for the three seeds (the same answer on each), left against right.
        heads = [t.plain for t in detail.lines if t.plain.startswith("── completion text")]
        assert heads == ["── completion text · seeds 11, 29, 47 · left → right"]
        tools = [t.plain for t in detail.lines if t.plain.startswith("── tool calls")]
        assert tools == ["── tool calls · seeds 11, 29, 47 · same on both sides"]
        # The apology is marked deleted (struck), the rewording inserted (underlined).
        [apology] = lines_with(detail, "I'm really sorry")
        deleted = style_at(detail, apology, "sorry")
        assert deleted.strike and not deleted.underline
        assert deleted.reverse  # and it is the needle: highlighted where it occurs
        [reworded] = lines_with(detail, "has not")
        assert style_at(detail, reworded, "has not").underline
        assert not style_at(detail, reworded, "arrived").strike  # unchanged text is plain
        # Each needle found or absent, on each side.
        assert "must include    B5530: on both · sorry: absent on the right" in text
        assert "must not        calm down: absent on both" in text


async def test_the_lost_apology_at_80x24() -> None:
    app = new_app(*NIGHTS, cwd=ROOT)
    async with app.run_test(size=SMALL) as pilot:
        detail = await open_case(pilot, app, LATE)
        width = detail.scrollable_content_region.width
        assert all(t.cell_len <= width for t in detail.lines)
        text = detail.text()
        assert "Order B5530 is now a week late." in text.replace("\n" + " " * 16, " ")
        assert "sorry: absent on the right" in text.replace("\n" + " " * 16, " ")
        assert [t.plain for t in detail.lines if t.plain.startswith("── completion")] == [
            "── completion text · seeds 11, 29, 47 · left → right"
        ]
        [apology] = lines_with(detail, "I'm really sorry")
        assert style_at(detail, apology, "sorry").strike
        # Broken between words: every word of both answers is whole on some line.
        words = {w for t in detail.lines for w in t.plain.split()}
        for word in ("replacement", "frustrating,", "especially", "delivery."):
            assert word in words, word


async def test_light_theme_marks_differ_from_plain_text() -> None:
    app = new_app(*NIGHTS, cwd=ROOT, theme="textual-light")
    async with app.run_test(size=WIDE) as pilot:
        detail = await open_case(pilot, app, LATE)
        base = detail.rich_style
        deleted = detail.get_component_rich_style("detail--deleted", partial=True)
        inserted = detail.get_component_rich_style("detail--inserted", partial=True)
        for mark in (deleted, inserted):
            assert mark.color is not None and mark.color != base.color
            assert mark.bgcolor is not None and mark.bgcolor != base.bgcolor
        assert deleted.strike and inserted.underline  # apart without colour too
        assert deleted.color != inserted.color and deleted.bgcolor != inserted.bgcolor
        # What reaches the terminal: the struck words on their own background.
        [at] = lines_with(detail, "I'm really sorry")
        detail.scroll_to(0, at, animate=False)
        await pilot.pause()
        segments = list(detail.render_line(at - round(detail.scroll_y)))
        marked = [s for s in segments if "frustrating" in s.text]
        plain = [s for s in segments if "Order" in s.text]
        assert marked and marked[0].style.strike and marked[0].style.bgcolor != base.bgcolor
        assert plain and not plain[0].style.strike and plain[0].style.bgcolor == base.bgcolor


def project(tmp_path: Path, edit=None) -> Path:
    """The demo nights in a folder of their own, with (optionally edited) fixtures."""
    (tmp_path / "runs").mkdir()
    for run in NIGHTS:
        shutil.copy(run, tmp_path / "runs" / run.name)
    if edit is not None:
        folder = tmp_path / "fixtures" / "orders"
        folder.mkdir(parents=True)
        lines = (ROOT / "fixtures/orders/golden.jsonl").read_text().splitlines()
        cases = [edit(json.loads(line)) for line in lines]
        (folder / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return tmp_path


async def test_a_gone_fixture_set_is_one_line_and_the_diff_still_shows(tmp_path: Path) -> None:
    folder = project(tmp_path)
    app = new_app(*(folder / "runs" / p.name for p in NIGHTS), cwd=folder)
    async with app.run_test(size=WIDE) as pilot:
        detail = await open_case(pilot, app, LATE)
        text = detail.text()
        said = [t.plain for t in detail.lines if "case not shown" in t.plain]
        assert said == [
            "case not shown: the fixture file fixtures/orders/golden.jsonl has moved or is gone"
        ]
        assert "user   " not in text and "must not        calm down" not in text
        # The records still say which needle went missing: it is still looked for.
        assert "sorry: absent on the right" in text
        assert "── completion text · seeds 11, 29, 47 · left → right" in text


async def test_a_case_changed_since_the_run_is_not_shown_as_the_case(tmp_path: Path) -> None:
    def edit(c: dict) -> dict:
        if c["id"] == LATE:
            c["must_include"] = ["B5530", "apologise"]
        return c

    folder = project(tmp_path, edit)
    app = new_app(*(folder / "runs" / p.name for p in NIGHTS), cwd=folder)
    async with app.run_test(size=WIDE) as pilot:
        detail = await open_case(pilot, app, LATE)
        text = detail.text()
        said = [t.plain for t in detail.lines if "case not shown" in t.plain]
        assert len(said) == 1 and "changed since the run" in said[0]
        assert "c9b3c0a96c2eb8f9" in said[0]  # the hash the run recorded
        assert "apologise" not in text and "user   " not in text


async def test_stepping_through_cases_never_reads_the_set_again() -> None:
    app = new_app(*NIGHTS, cwd=ROOT)
    async with app.run_test(size=WIDE) as pilot:
        detail = await open_case(pilot, app, LATE)
        await pilot.press("escape")  # clear the search: the whole list
        await pilot.press("slash", "enter")
        before = case_source.SOURCES.loads
        await pilot.press("g")
        for _ in range(8):
            await pilot.press("j")
            await wait_for(pilot, lambda: not detail.decoding, "the detail")
            assert "case · golden · fixtures/orders/golden.jsonl" in detail.text()
        assert case_source.SOURCES.loads == before


HOSTILE_USER = "\x1b]52;c;cHduZWQ=\x07 [bold red]red?[/] [@click=app.quit]q[/] abc\u202edcba"


async def test_hostile_fixture_and_answer_text_render_inert(tmp_path: Path) -> None:
    fixture = {
        "id": "evil",
        "user": HOSTILE_USER,
        "require_tools": ["\x1b[2Jwipe"],
        "forbid_tools": [],
        "must_include": ["\x1b]0;title\x07"],
        "must_not": ["[b]x[/b]"],
    }
    path = tmp_path / "fixtures" / "golden.jsonl"
    path.parent.mkdir()
    path.write_text(json.dumps(fixture) + "\n")
    fixture_hash = load_fixtures(path).cases[0].fixture_hash
    texts = ["\x1b]0;title\x07 left [b]x[/b]", "right \x1b[31mred\x1b[0m\rover"]
    runs = []
    for side, text in zip(("left", "right"), texts, strict=True):
        record = case("evil", side == "left", 11, fixture_hash=fixture_hash, text=text)
        runs.append(write_run(tmp_path / "runs" / f"{side}.jsonl", [record], head=header()))
    app = new_app(*runs, cwd=tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        detail = await open_case(pilot, app, "evil")
        text = detail.text()
        bad = [ch for ch in text if (ord(ch) < 32 and ch != "\n") or 0x7F <= ord(ch) <= 0x9F]
        assert not bad and "\u202e" not in text
        assert "\\x1b]52;c;cHduZWQ=\\x07 [bold red]red?[/] [@click=app.quit]q[/]" in text
        assert "require tools   \\x1b[2Jwipe" in text
        assert "[31mred\\x1b[0m\\x0dover" in text  # the right's answer, escapes visible
        assert "must include    \\x1b]0;title\\x07: absent on the right" in text
        for t in detail.lines:
            for span in t.spans:
                style = span.style
                assert not isinstance(style, str) or not style.startswith("@")
                assert not isinstance(style, Style) or not (style.link or style.meta)
        assert app.is_running


def coding_set(folder: Path) -> Path:
    (folder / "prompts").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "prompts" / "fix.md").write_text("# Fix `f`\n\nMake `f()` return 1.\n")
    (folder / "tests" / "test_mod.py").write_text(
        "from mod import f\n\n\ndef test_one():\n    assert f() == 1\n\n\n"
        "class TestMore:\n    def test_two(self):\n        assert f() != 2\n"
    )
    path = folder / "coding.yaml"
    path.write_text(
        "schema: coding-eval/v1\ndataset_id: demo\ndataset_version: '1'\nitems:\n"
        "  - id: fix_f\n    language: python\n    prompt_file: prompts/fix.md\n"
        "    test_file: tests/test_mod.py\n    timeout_s: 5\n    expected_files: [mod.py]\n"
    )
    return path


async def test_a_coding_item_shows_its_prompt_and_marks_its_failing_tests(tmp_path: Path) -> None:
    path = coding_set(tmp_path / "set")
    fixture_hash = load_fixtures(path).cases[0].fixture_hash
    info = FixturesInfo(path="set/coding.yaml", kind="coding", dataset_id="demo")
    records = [
        case(
            "fix_f",
            False,
            11,
            fixture_hash=fixture_hash,
            reasons=["tests_failed"],
            failed_tests=["TestMore::test_two"],
            tail="F.\n1 failed",
        ),
        case(
            "fix_f",
            False,
            29,
            fixture_hash=fixture_hash,
            reasons=["tests_failed"],
            failed_tests=["test_one", "TestMore::test_two", "test_three[1]"],
            tail="FF\n2 failed",
        ),
    ]
    run = write_run(tmp_path / "runs" / "coding.jsonl", records, head=header(fixtures=info))
    app = new_app(run, cwd=tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        detail = await open_case(pilot, app, "fix_f")
        text = detail.text()
        assert "── case · coding item · set/coding.yaml" in text
        assert "prompt          prompts/fix.md" in text and "Make `f()` return 1." in text
        assert "── test file · tests/test_mod.py · ✗ a failing test" in text
        [one] = [t.plain for t in detail.lines if "def test_one" in t.plain]
        [two] = [t.plain for t in detail.lines if "def test_two" in t.plain]
        assert one.startswith("✗") and one.rstrip().endswith("← failed: seed 29")
        assert two.startswith("✗") and two.rstrip().endswith("← failed: seeds 11, 29")
        [first] = [t.plain for t in detail.lines if "from mod import f" in t.plain]
        assert first.startswith("   1 ")  # numbered, no mark
        assert "failed, not found in the file: test_three (seed 29)" in text
        # The two tails differ: one block each, in a run alone.
        assert "── test output tail · seed 11" in text and "── test output tail · seed 29" in text
