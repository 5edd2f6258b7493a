"""`evalpin review FOLDER` opens the folder's newest pair; `evalpin` alone shows its help.

The folder is chosen from as `evalpin review` with no argument chooses from ./runs: the
newest run beside the newest earlier run on the same fixture set (`default_pair`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import evalpin.tui.app as tui_app
from tests.builders import grid, header, write_run
from tests.clirun import cli, cli_process
from tests.tuikit import new_app, screen_text, settle

SIZES = [(160, 48), (80, 24)]


def nights(folder: Path) -> tuple[Path, Path, Path]:
    """Three runs: two nights on one fixture set, and a newer run on another set (which
    must not be the pair's left side: it measures other cases)."""
    folder.mkdir(parents=True, exist_ok=True)
    first = write_run(
        folder / "mon.jsonl",
        grid({"x-one": [True] * 3, "x-two": [True] * 3}),
        head=header(run_id="mon", started_at="2026-11-23T02:00:00Z"),
    )
    other_set = header(run_id="oth", started_at="2026-11-24T01:00:00Z")
    other_set.fixtures.dataset_hash = "a" * 64
    other = write_run(folder / "other.jsonl", grid({"y": [True] * 3}), head=other_set)
    second = write_run(
        folder / "tue.jsonl",
        grid({"x-one": [True] * 3, "x-two": [False] * 3}),
        head=header(run_id="tue", started_at="2026-11-24T02:00:00Z"),
    )
    return first, other, second


class Opened:
    """Stands in for the app: records what the command would have opened."""

    sources: tuple = ()

    def __init__(self, *sources, **_options) -> None:
        Opened.sources = sources

    def run(self) -> None:
        pass


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_review_of_a_folder_opens_its_newest_pair(
    capsys, tmp_path: Path, monkeypatch, size
) -> None:
    first, _other, second = nights(tmp_path / "nightly")
    monkeypatch.setattr(tui_app, "make_app", Opened)
    r = cli(capsys, "review", str(tmp_path / "nightly"))
    assert r.code == 0, r.err
    assert [s.path for s in Opened.sources] == [str(first), str(second)]
    assert "mon.jsonl and tue.jsonl" in r.err  # says what it chose
    app = new_app(*Opened.sources)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app, "verdicts")
        text = screen_text(app)
        assert app.review.cases is not None and app.review.cases.mode == "compare"
        assert "x-two" in text and "REG" in text  # the pair's regression, listed


def test_review_of_a_folder_with_one_run_opens_it_alone(capsys, tmp_path: Path, monkeypatch):
    only = write_run(tmp_path / "solo" / "only.jsonl", grid({"a": [True] * 3}))
    monkeypatch.setattr(tui_app, "make_app", Opened)
    r = cli(capsys, "review", str(tmp_path / "solo"))
    assert r.code == 0 and [s.path for s in Opened.sources] == [str(only)]


def test_review_of_an_empty_folder_says_so(capsys, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    r = cli(capsys, "review", str(tmp_path / "empty"))
    assert r.code == 3 and "no runs" in r.err and r.err.count("\n") == 1


def test_no_arguments_shows_the_help_and_exits_0(capsys) -> None:
    r = cli(capsys)
    assert r.code == 0
    assert "Usage: evalpin" in r.out and "review" in r.out and "Commands" in r.out
    assert r.err == ""


def test_no_arguments_as_a_process() -> None:
    done = cli_process()
    assert done.code == 0 and "Usage: evalpin" in done.out
