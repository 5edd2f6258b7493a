"""Counts right in every renderer, from one source (issue 51): a refusal where one of
eight common pairs was measured with another instrument says "1 of 8" in the terminal,
Markdown, HTML, JUnit and the TUI's banner; every pins table has the envelope row; and
two runs nothing of which was graded say "ungraded", not "errored"."""

from __future__ import annotations

import re
from pathlib import Path

from evalpin.core.judge.compare import compare
from evalpin.core.judge.report import build_report
from evalpin.core.read.runfile import read_run
from evalpin.core.records import FixturesInfo
from evalpin.tui.screens.banner import refusal_text
from tests.builders import case, grid, header, write_run
from tests.clirun import cli

ENVELOPE_LEFT, ENVELOPE_RIGHT = "a" * 64, "b" * 64


def _fixtures(envelope: str) -> FixturesInfo:
    return FixturesInfo(
        path="f.jsonl", kind="golden", dataset_id="f", dataset_hash="d" * 64, envelope_hash=envelope
    )


def _pair(tmp_path: Path, moved: int) -> tuple[Path, Path]:
    """Two runs of 4 cases x 2 seeds; on the right, `moved` of the 8 pairs carry another
    fixture hash (another instrument)."""
    outcomes = {c: [True, True] for c in "abcd"}
    left = grid(outcomes, seeds=(11, 29))
    right = grid(outcomes, seeds=(11, 29))
    for k in range(moved):
        right[k] = case(right[k].case_id, True, right[k].seed, fixture_hash="edited")
    lpath = write_run(
        tmp_path / "l.jsonl", left, head=header(seeds=[11, 29], fixtures=_fixtures(ENVELOPE_LEFT))
    )
    rpath = write_run(
        tmp_path / "r.jsonl", right, head=header(seeds=[11, 29], fixtures=_fixtures(ENVELOPE_RIGHT))
    )
    return lpath, rpath


def _faces(capsys, tmp_path: Path, left: Path, right: Path) -> dict[str, str]:
    md, html, junit = (tmp_path / n for n in ("d.md", "d.html", "d.xml"))
    r = cli(capsys, "diff", str(left), str(right), "--markdown", str(md), "--html", str(html),
            "--junit", str(junit))  # fmt: skip
    assert r.code == 2, r.err
    faces = {"text": r.out, "markdown": md.read_text().replace("\\", ""), "html": html.read_text()}
    faces["junit"] = junit.read_text()
    diff = compare(read_run(left), read_run(right))
    faces["tui"] = refusal_text(diff, diff.key_mismatches()).plain
    return faces


def test_every_renderer_says_one_of_eight(capsys, tmp_path: Path) -> None:
    left, right = _pair(tmp_path, moved=1)
    report = build_report(read_run(left), read_run(right))
    assert (report.mismatched, report.compared) == (1, 8)
    for name, face in _faces(capsys, tmp_path, left, right).items():
        said = re.sub(r"\s+", " ", face)
        assert "1 of 8 common (case, seed) pairs" in said, (name, face)
        assert "8 common (case, seed) pairs were measured" not in said.replace("1 of 8", ""), name


def test_the_counts_follow_the_diff(capsys, tmp_path: Path) -> None:
    left, right = _pair(tmp_path, moved=3)
    for name, face in _faces(capsys, tmp_path, left, right).items():
        assert "3 of 8 common" in re.sub(r"\s+", " ", face), (name, face)


def test_every_pins_table_has_the_envelope_row(capsys, tmp_path: Path) -> None:
    left, right = _pair(tmp_path, moved=1)
    faces = _faces(capsys, tmp_path, left, right)
    for name in ("markdown", "html", "junit"):
        assert "envelope_hash" in faces[name], name
        assert ENVELOPE_LEFT in faces[name] and ENVELOPE_RIGHT in faces[name], name


def test_two_runs_nothing_graded_say_ungraded_not_errored(capsys, tmp_path: Path) -> None:
    unscored = {"status": "error", "reasons": ["log_error:unscored"], "passed": False}
    rows = [case(c, **unscored) for c in "abc"]
    left = write_run(tmp_path / "l.jsonl", rows, head=header(seeds=[11]))
    right = write_run(tmp_path / "r.jsonl", rows, head=header(seeds=[11]))
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 4
    said = re.sub(r"\s+", " ", r.out)
    assert "ungraded, not errored" in said and "error case" not in said, r.out
    errored = [case(c, status="error", reasons=["no_completion"], passed=False) for c in "abc"]
    right = write_run(tmp_path / "r2.jsonl", errored, head=header(seeds=[11]))
    r = cli(capsys, "diff", str(left), str(right))
    said = re.sub(r"\s+", " ", r.out)
    assert r.code == 4 and "3 error" in said and "3 ungraded" in said, r.out
