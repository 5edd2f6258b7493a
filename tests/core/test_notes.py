"""Review notes (`core/read/notes.py`): the file's format, bad lines, concurrent writers, and
`diff` carrying the notes without their changing a grade, a count or the exit code."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from evalpin.core.read.notes import (
    CLEARED,
    FLAKY,
    TICKET,
    append_note,
    make_note,
    notes_path,
    read_notes,
)
from tests.clirun import cli

DEMO = Path(__file__).resolve().parents[2] / "runs"
CASE = "status-late-apology"


@pytest.fixture
def nights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The demo pair, copied: notes land beside these copies, never in the repo."""
    monkeypatch.delenv("EVALPIN_NOTES", raising=False)
    left = shutil.copy(DEMO / "demo-night-1.jsonl", tmp_path / "night-1.jsonl")
    right = shutil.copy(DEMO / "demo-night-2.jsonl", tmp_path / "night-2.jsonl")
    return Path(left), Path(right)


def fixture_hash(run: Path, case_id: str) -> str:
    for line in run.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("case_id") == case_id:
            return rec["fixture_hash"]
    raise AssertionError(f"{case_id} not in {run}")


def test_the_latest_line_of_a_key_wins_and_clearing_drops_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    append_note(path, make_note("a", "h1", FLAKY, author="ana"))
    append_note(path, make_note("a", "h1", TICKET, "see 1432", author="bo"))
    append_note(path, make_note("b", "h1", FLAKY))
    append_note(path, make_note("b", "h1", CLEARED))
    book = read_notes(path)
    assert not book.skipped and len(book.notes) == 4
    assert book.get("a", "h1").summary() == "ticket: see 1432"
    assert book.get("a", "h1").author == "bo"
    assert book.get("a", "h2") is None  # the case changed: its note drops off
    assert book.get("b", "h1") is None


def test_a_note_is_one_ascii_line_with_its_text_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    note = make_note("a\u202e", "h", TICKET, "two\nlines\x1b[31m red ", author="x\ny")
    append_note(path, note)
    data = path.read_bytes()
    assert data.count(b"\n") == 1 and data.endswith(b"\n")
    assert data.isascii() and b"\x1b" not in data
    got = read_notes(path).get("a\u202e", "h")
    assert got is not None and got.text == "two lines\x1b[31m red" and got.author == "x y"


def test_bad_kinds_and_empty_texts_are_refused_before_anything_is_written() -> None:
    with pytest.raises(ValueError, match="unknown note kind"):
        make_note("a", "h", "accepted")
    with pytest.raises(ValueError, match="needs a text"):
        make_note("a", "h", TICKET, "   ")
    with pytest.raises(ValueError, match="case id"):
        make_note("", "h", FLAKY)


def test_garbage_lines_are_skipped_named_and_left_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    good = json.dumps(
        {"record": "note", "case_id": "a", "fixture_hash": "h", "kind": "flaky"}
    ).encode()
    data = b"\n".join(
        [
            good,
            b"not json at all",
            b"\xff\xfe binary",
            b'{"record": "case", "case_id": "a"}',
            b'{"record": "note", "case_id": "a", "fixture_hash": "h", "kind": "shrug"}',
            b"[1, 2]",
            b'{"record": "note", "case_id": "b", "fixture_hash": "h", "kind": "fla',
        ]
    )
    path.write_bytes(data)
    book = read_notes(path)
    assert [n.case_id for n in book.notes] == ["a"]
    reasons = {s.line: s.reason for s in book.skipped}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7]
    assert reasons[2] == "not JSON"
    assert "UTF-8" in reasons[3] or "utf" in reasons[3].lower()
    assert reasons[4].startswith("not a note: record is")
    assert "unknown kind" in reasons[5]
    assert reasons[7].startswith("cut short")
    warning = book.skipped_text()
    assert "skipped 6 lines" in warning and "line 2: not JSON" in warning
    assert "left as it is" in warning
    assert path.read_bytes() == data  # reading never writes


def test_a_note_after_a_line_cut_short_starts_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    cut = b'{"record": "note", "case_id": "a", "fixture_hash": "h", "ki'
    path.write_bytes(cut)
    append_note(path, make_note("b", "h", FLAKY))
    data = path.read_bytes()
    assert data.startswith(cut + b"\n")  # what was there is kept, byte for byte
    book = read_notes(path)
    assert [n.case_id for n in book.notes] == ["b"]
    assert [s.line for s in book.skipped] == [1]


def test_a_symlink_or_a_folder_at_the_path_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep\n")
    link = tmp_path / "notes.jsonl"
    link.symlink_to(target)
    with pytest.raises(OSError, match="symlink"):
        append_note(link, make_note("a", "h", FLAKY))
    assert target.read_text() == "keep\n"
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    with pytest.raises(OSError):
        append_note(folder, make_note("a", "h", FLAKY))
    book = read_notes(folder)
    assert book.error is not None and not book.notes


def _write_many(path: str, writer: int, count: int) -> None:
    for i in range(count):
        append_note(path, make_note(f"case-{writer}-{i}", "h", TICKET, "x" * (i % 300 + 1)))


def test_concurrent_writers_lose_no_note(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    writers, each = 6, 150
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_write_many, args=(str(path), w, each)) for w in range(writers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    book = read_notes(path)
    assert not book.skipped
    assert len(book.notes) == writers * each
    assert len(book.latest) == writers * each


def test_notes_are_found_beside_the_newer_run_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALPIN_NOTES", raising=False)
    run = tmp_path / "runs" / "n.jsonl"
    assert notes_path(run) == tmp_path / "runs" / "notes.jsonl"
    assert notes_path(run, tmp_path / "team.jsonl") == tmp_path / "team.jsonl"
    monkeypatch.setenv("EVALPIN_NOTES", str(tmp_path / "env.jsonl"))
    assert notes_path(run) == tmp_path / "env.jsonl"
    assert notes_path(run, tmp_path / "flag.jsonl") == tmp_path / "flag.jsonl"


def _note_demo(right: Path, text: str = "accepted: new tone, see ticket 1432") -> None:
    note = make_note(CASE, fixture_hash(right, CASE), TICKET, text, author="ana")
    append_note(right.parent / "notes.jsonl", note)


def every_report(capsys, folder: Path, left: Path, right: Path):
    """`diff` with its text on stdout and a Markdown, JUnit and HTML report in `folder`:
    the result and the three files."""
    md, junit, page = folder / "r.md", folder / "r.xml", folder / "r.html"
    done = cli(
        capsys,
        "diff",
        str(left),
        str(right),
        "--markdown",
        str(md),
        "--junit",
        str(junit),
        "--html",
        str(page),
    )
    return done, md, junit, page


def test_diff_carries_a_note_and_nothing_else_changes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, nights: tuple[Path, Path]
) -> None:
    left, right = nights
    bare = cli(capsys, "diff", str(left), str(right), "--json")
    _note_demo(right)
    noted = cli(capsys, "diff", str(left), str(right), "--json")
    assert noted.code == bare.code
    before, after = json.loads(bare.out), json.loads(noted.out)
    assert after.pop("review_notes")[CASE]["text"] == "accepted: new tone, see ticket 1432"
    assert after == before  # grades, counts, causes, label: all as they were

    text, md, junit, page = every_report(capsys, tmp_path, left, right)
    assert text.code == bare.code
    assert "review notes (1):" in text.out and "ticket: accepted: new tone" in text.out
    assert f"| ✎ {CASE} | ticket: accepted: new tone, see ticket 1432 | ana," in md.read_text()
    assert "review note: ticket: accepted: new tone, see ticket 1432 (ana," in junit.read_text()
    assert "ticket: accepted: new tone, see ticket 1432" in page.read_text()


def test_a_note_from_another_case_version_is_not_shown(
    capsys: pytest.CaptureFixture[str], nights: tuple[Path, Path]
) -> None:
    left, right = nights
    append_note(right.parent / "notes.jsonl", make_note(CASE, "0" * 16, FLAKY))
    done = cli(capsys, "diff", str(left), str(right), "--json")
    assert "review_notes" not in json.loads(done.out)


def test_diff_names_the_lines_it_skipped_and_keeps_the_file(
    capsys: pytest.CaptureFixture[str], nights: tuple[Path, Path]
) -> None:
    left, right = nights
    bare = cli(capsys, "diff", str(left), str(right))
    notes = right.parent / "notes.jsonl"
    _note_demo(right)
    data = notes.read_bytes() + b"\x00\x01 garbage\n" + b'{"record": "note", "case'
    notes.write_bytes(data)
    done = cli(capsys, "diff", str(left), str(right))
    assert done.code == bare.code
    assert (
        "notes:" in done.err and "line 2: not JSON" in done.err and "line 3: cut short" in done.err
    )
    assert "review notes (1):" in done.out
    assert notes.read_bytes() == data


def test_note_text_is_inert_in_every_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, nights: tuple[Path, Path]
) -> None:
    left, right = nights
    hostile = "\x1b[2J\x1b]8;;http://x\x07[bold]x[/bold] <script>alert(1)</script> | a |"
    _note_demo(right, hostile)
    done, md, junit, page = every_report(capsys, tmp_path, left, right)
    assert "\x1b" not in done.out and "\x07" not in done.out
    assert "[bold]x[/bold]" in done.out  # shown as typed, not as markup
    assert "<script>" not in page.read_text() and "<script>" not in md.read_text()
    assert "\x1b" not in junit.read_text()


def test_review_takes_a_notes_path(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalpin.cli import cli as group

    done = CliRunner().invoke(group, ["review", "--help"])
    assert done.exit_code == 0 and "--notes" in done.output
    assert os.path.exists(DEMO / "demo-night-2.jsonl")
