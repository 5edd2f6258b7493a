"""Every command against runs that give it nothing to stand on (issue 39): a pair of runs
sharing no case, a run with a header and no cases, runs on other fixture sets. No
command may end with exit 0 where its contract says otherwise; the commands whose
contract is exit 0 whatever they read must say what they found.

The table below names every command of the CLI group: a new command fails
`test_every_command_is_walked` until it is given its row here."""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from evalpin.cli import cli as group
from tests.builders import coding_header, grid, header, write_run
from tests.clirun import Result, cli


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "runs"
    return {
        "monday": write_run(folder / "monday.jsonl", grid({"a": [True] * 3, "b": [False] * 3})),
        "tuesday": write_run(
            folder / "tuesday.jsonl",
            grid({"c": [True] * 3, "d": [True, False, True]}),
            head=header(run_id="r2", started_at="2026-11-30T02:00:00Z"),
        ),
        "empty": write_run(
            folder / "empty.jsonl",
            [],
            head=header(run_id="r3", started_at="2026-12-01T02:00:00Z"),
            finished=False,
        ),
        "coding": write_run(
            tmp_path / "other" / "coding.jsonl",
            grid({"slugify": [True] * 3}, model_slot="coder"),
            head=coding_header(),
        ),
    }


def _codes(capsys, *calls: tuple[str, ...]) -> list[Result]:
    return [cli(capsys, *args) for args in calls]


def walk_diff(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    mon, tue, empty, coding = (str(runs[k]) for k in ("monday", "tuesday", "empty", "coding"))
    expected = {
        (mon, tue): 4,  # no shared case
        (mon, empty): 4,  # a side with no cases
        (empty, mon): 4,
        (empty, empty): 4,
        (mon, coding): 2,  # other set and slot: refused, no case needs sharing
        (empty, coding): 2,
    }
    for (left, right), code in expected.items():
        for extra in ((), ("--json",)):
            r = cli(capsys, "diff", left, right, *extra)
            assert r.code == code, (left, right, extra, r.out, r.err)
            assert "no movement" not in r.out
    r = cli(capsys, "diff", "--baseline", str(runs["monday"].parent), tue)
    assert r.code == 4, r.out  # the earlier run on the same instrument shares no case


def walk_verdict(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    r = cli(capsys, "verdict", str(runs["empty"]))
    assert r.code == 1 and "nothing judged" in r.out


def walk_power(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """Exit 0 by contract (planning); it must say there is nothing to plan from."""
    r = cli(capsys, "power", str(runs["empty"]))
    assert r.code == 0 and "no cases" in r.out


def walk_history(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """Exit 0 by contract; every run is listed, the empty one with its 0 records."""
    r = cli(capsys, "history", str(runs["monday"].parent), "--json")
    assert r.code == 0
    listed = {Path(run["path"]).name: run for s in json.loads(r.out)["series"] for run in s["runs"]}
    assert set(listed) == {"monday.jsonl", "tuesday.jsonl", "empty.jsonl"}
    assert listed["empty.jsonl"]["records"] == 0


def walk_fixture_commands(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """`hash`, `seal` and `check` read fixture sets: a run file is none (exit 3)."""
    for command in (("hash",), ("seal",), ("seal", "--check"), ("check",)):
        for run in (runs["empty"], runs["monday"]):
            r = cli(capsys, *command, str(run))
            assert r.code == 3, (command, r.out, r.err)
    assert not list(runs["empty"].parent.glob("*.lock"))


def walk_run(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """A replay of a run that shares no case with the set: every request fails, and
    not one case judged is a run that failed (exit 1)."""
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "zz", "user": "hi", "must_include": ["x"]}) + "\n")
    out = tmp_path / "out" / "r.jsonl"
    slot = f"replayed=replay:{runs['monday']}"
    args = ("run", "--fixtures", str(golden), "--slot", slot, "--seeds", "11", "--out", str(out))
    r = cli(capsys, *args, "--progress", "none")
    assert r.code == 1 and "not one case could be judged" in r.err, r.err


def walk_review(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """Exit 0 by contract (interactive): runs on other sets show the banner before any
    case; runs sharing no case, and a run with no cases, open without a crash and the
    verdict screen says nothing was compared."""
    from evalpin.tui.screens.banner import BannerScreen
    from tests.tuikit import SIZE, new_app, screen_text, settle

    async def review(left: Path, right: Path) -> str:
        app = new_app(left, right)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app, "banner" if right == runs["coding"] else "verdicts")
            if isinstance(app.screen, BannerScreen):
                return "banner"
            await pilot.press("v")
            await pilot.pause()
            return screen_text(app)

    assert asyncio.run(review(runs["monday"], runs["coding"])) == "banner"
    for right in (runs["tuesday"], runs["empty"]):
        assert "nothing compared" in asyncio.run(review(runs["monday"], right))


def walk_crosscheck(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """Results that share no sample with the run, or a run or results with none at
    all: nothing compared is never agreement (exit 1)."""
    nothing = tmp_path / "nothing_results.jsonl"
    nothing.write_text("")
    stranger = tmp_path / "stranger_results.jsonl"
    stranger.write_text(json.dumps({"task_id": "zz", "seed": 11, "passed": True}) + "\n")
    for run in ("empty", "monday", "coding"):
        for results in (nothing, stranger):
            for extra in ((), ("--json",)):
                r = cli(capsys, "crosscheck", str(runs[run]), str(results), *extra)
                assert r.code == 1, (run, results.name, extra, r.out, r.err)
                if extra:
                    assert json.loads(r.out)["agrees"] is False
                else:
                    assert "nothing compared" in r.out


def walk_export(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """A run whose set is not where its header says, or that is no coding run: exit 3
    with the reason, and no samples file begun."""
    out = tmp_path / "samples.jsonl"
    for run in ("empty", "monday", "coding"):
        r = cli(capsys, "export", str(runs[run]), "--out", str(out))
        assert r.code == 3 and "fixture" in r.err, (run, r.out, r.err)
    assert not out.exists()


def walk_import(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """A run file (or a folder of them) is no benchmark: exit 3, nothing written."""
    sources = [
        ("humaneval", runs["monday"]),
        ("humaneval", runs["empty"]),
        ("mbpp", runs["monday"]),
        ("exercises", runs["monday"].parent),
    ]
    for n, (shape, source) in enumerate(sources):
        out = tmp_path / f"imported{n}"
        r = cli(capsys, "import", shape, str(source), "--out", str(out))
        assert r.code == 3, (shape, source, r.out, r.err)
        assert not out.exists() or not any(out.iterdir())


def walk_serve(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """The review in a browser: each tab runs `review` on exactly the runs given (walked
    above), so what serve shows of degenerate runs is what review shows."""
    from evalpin.cli.commands.serve import review_command

    given = (runs["monday"], runs["empty"], runs["coding"])
    argv = shlex.split(review_command(given, launch=False))
    assert argv[1:] == ["-m", "evalpin", "review", "--no-launch", *map(str, given)]


def walk_init(capsys, runs: dict[str, Path], tmp_path: Path) -> None:
    """Reads no run: in a folder of degenerate runs it lays out its project (exit 0)
    and leaves them as they were; a run file for DIR is refused (exit 3)."""
    folder = runs["monday"].parent
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    r = cli(capsys, "init", str(folder))
    assert r.code == 0, r.err
    assert {n: (folder / n).read_bytes() for n in before} == before
    assert (folder / "slots.yaml").is_file()
    r = cli(capsys, "init", str(runs["empty"]))
    assert r.code == 3 and "is a file, not a folder" in r.err, r.err
    assert runs["empty"].read_bytes() == before["empty.jsonl"]


WALKS: dict[str, Callable[..., None]] = {
    "diff": walk_diff,
    "verdict": walk_verdict,
    "power": walk_power,
    "history": walk_history,
    "hash": walk_fixture_commands,
    "seal": walk_fixture_commands,
    "check": walk_fixture_commands,
    "crosscheck": walk_crosscheck,
    "export": walk_export,
    "import": walk_import,
    "run": walk_run,
    "review": walk_review,
    "serve": walk_serve,
    "init": walk_init,
}


def test_every_command_is_walked() -> None:
    assert set(WALKS) == set(group.commands), "give the new command its row in WALKS"


@pytest.mark.parametrize("command", sorted(WALKS))
def test_a_command_on_degenerate_runs(
    command: str, capsys, runs: dict[str, Path], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    WALKS[command](capsys, runs, tmp_path)
