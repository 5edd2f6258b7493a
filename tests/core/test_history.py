"""`evalpin history`: series by instrument, named breaks, env changes, repeat checks."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from evalpin.core.judge.history import load_history
from evalpin.core.judge.series import (
    BACKEND_DELTA,
    DATASET_EDIT,
    ENV_CHANGE,
    RUBRIC_CHANGE,
    UNPINNED,
    Change,
)
from evalpin.core.records import FixturesInfo
from tests.builders import case, grid, header, write_run
from tests.clirun import cli, cli_process

ENV_311 = {"python": "CPython 3.11", "packages": {"pytest": "8.3"}}
ENV_312 = {"python": "CPython 3.12", "packages": {"pytest": "8.3"}}
OUTCOMES = {"a": [True, True, True], "b": [True, False, True], "c": [False] * 3}


def night(
    folder: Path,
    name: str,
    day: int,
    *,
    slot: str = "night",
    grader: str = "g1",
    dataset: str = "d" * 64,
    model: str = "m-1",
    env: dict[str, Any] | None = None,
    outcomes: dict[str, list[bool]] | None = None,
    dataset_id: str = "golden",
    controls: dict[str, Any] | None = None,
    moved: tuple[str, int] | None = None,
    settings: str | None = None,
) -> Path:
    """One nightly run file; `moved` gives that (case, seed) a different completion."""
    env = env or ENV_311
    cases = grid(outcomes or OUTCOMES, grader_version=grader, model_slot=slot, reported_model=model)
    if moved is not None:
        cases = [
            c
            if (c.case_id, c.seed) != moved
            else case(
                c.case_id,
                c.passed,
                c.seed,
                grader_version=grader,
                model_slot=slot,
                reported_model=model,
                completion_digest="elsewhere",
            )
            for c in cases
        ]
    head = header(
        run_id=name,
        started_at=f"2026-12-{day:02d}T02:00:00Z",
        fixtures=FixturesInfo(
            path="fixtures/golden.jsonl", kind="golden", dataset_id=dataset_id, dataset_hash=dataset
        ),
        grader_version=grader,
        model_slot=slot,
        env=env,
        env_digest=hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()[:16],
        controls=controls or {"temperature": 0.0, "seeds": [11, 29, 47]},
        slot={"provider": "command", "settings_digest": settings} if settings else {},
    )
    return write_run(folder / f"{name}.jsonl", cases, head=head)


@pytest.fixture
def nights(tmp_path: Path) -> Path:
    """Seven nights: a slot change, a grader change, an env change, a dataset edit."""
    folder = tmp_path / "runs"
    # File names out of date order: history orders by start time, not by name.
    night(folder, "z-night1", 1)
    night(folder, "a-night2", 2, moved=("a", 29))  # same instrument, completion moved
    night(folder, "m-night3", 3, env=ENV_312)  # environment change, same series
    lab = {"slot": "lab_free_2", "model": "m-2", "env": ENV_312}
    night(folder, "night4", 4, **lab)  # backend delta
    night(folder, "night5", 5, **lab, grader="g2")  # rubric change
    night(folder, "night6", 6, **lab, grader="g2", dataset="e" * 64)  # dataset edit
    night(folder, "other", 3, dataset_id="coding", dataset="f" * 64)  # another track
    (folder / "broken.jsonl").write_text('{"record": "run"\n')
    (folder / "README.md").write_text("not a run file\n")
    (folder / ".partial.jsonl.tmp").write_text("ignored\n")
    return folder


def test_series_breaks_and_env_change(nights: Path) -> None:
    h = load_history(nights)
    assert h.runs == 7
    names = [[Path(r.path).stem for r in s.runs] for s in h.series]
    assert names == [
        ["z-night1", "a-night2", "m-night3"],
        ["night4"],
        ["night5"],
        ["night6"],
        ["other"],
    ]
    first = h.series[0]
    assert first.pins == {
        "dataset_hash": "d" * 64,
        "envelope_hash": None,  # these runs predate envelopes
        "grader_version": "g1",
        "model_slot": "night",
        "reported_model": "m-1",
        "slot_settings": None,
    }
    assert [s.fixtures for s in h.series] == ["golden"] * 4 + ["coding"]
    # The env change is marked inside the series, on the run where it happened.
    assert [r.env_change for r in first.runs[:2]] == [None, None]
    assert first.runs[2].env_change == [Change("python", "CPython 3.11", "CPython 3.12")]

    assert [(b.before, b.after, b.kinds) for b in h.breaks] == [
        (1, 2, [BACKEND_DELTA]),
        (2, 3, [RUBRIC_CHANGE]),
        (3, 4, [DATASET_EDIT]),
    ]
    assert h.breaks[0].changes == [
        Change("model_slot", "night", "lab_free_2"),
        Change("reported_model", "m-1", "m-2"),
    ]
    assert h.breaks[1].changes == [Change("grader_version", "g1", "g2")]
    assert not any(b.overlap for b in h.breaks)


def test_unreadable_files_are_listed_not_fatal(nights: Path) -> None:
    h = load_history(nights)
    assert [Path(u.path).name for u in h.unreadable] == ["broken.jsonl"]
    assert h.unreadable[0].error.endswith("broken.jsonl:1: not JSON: Input data was truncated")


def test_per_run_numbers(nights: Path) -> None:
    run = load_history(nights).series[0].runs[0]
    assert run.verdict.pass_rate_by_seed == {11: 2 / 3, 29: 1 / 3, 47: 2 / 3}
    assert run.mean_rate == pytest.approx(5 / 9)
    assert run.verdict.spread == pytest.approx(1 / 3)
    assert run.verdict.label == "publishable"
    assert run.dated_by == "started_at"


def test_repeat_check_across_runs_of_a_series(nights: Path) -> None:
    h = load_history(nights)
    first = h.series[0]
    assert first.non_deterministic
    [conflict] = first.repeat_conflicts
    assert (conflict.case_id, conflict.seed) == ("a", 29)
    assert Path(conflict.first_run).stem == "z-night1"
    assert Path(conflict.run).stem == "a-night2" and conflict.digest == "elsewhere"
    # night3 reproduced night1 (the env changed, the backend's answers did not).
    assert conflict.runs_differing == 1
    assert not any(s.non_deterministic for s in h.series[1:])


def test_repeat_check_needs_same_controls_and_slot_config(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    night(folder, "n1", 1)
    warm = {"temperature": 0.7, "seeds": [11, 29, 47]}
    night(folder, "n2", 2, controls=warm, moved=("a", 11))  # other controls: not a repeat
    night(folder, "n3", 3, controls={"temperature": 0.0, "seeds": [11]}, moved=("b", 11))
    h = load_history(folder)
    assert len(h.series) == 1
    # Only the seed list differs between n1 and n3: the same request, so it must repeat.
    [conflict] = h.series[0].repeat_conflicts
    assert (conflict.case_id, conflict.seed, Path(conflict.run).stem) == ("b", 11, "n3")


def test_repeat_within_one_run_is_flagged(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    cases = [*grid({"a": [True] * 3}), case("a", True, 11, completion_digest="again")]
    write_run(folder / "r.jsonl", cases)
    [series] = load_history(folder).series
    assert series.non_deterministic and series.runs[0].verdict.repeat_mismatches == [("a", 11)]


def test_unpinned_runs_stand_alone(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    lines = [{"case_id": "a", "pass": True, "seed": 11}, {"case_id": "b", "pass": False}]
    for name in ("x.jsonl", "y.jsonl"):
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = {"dataset_id": "golden", "rows": [{"id": "a", "passed": True, "seed": 11}]}
    (folder / "report.json").write_text(json.dumps(report))
    os.utime(folder / "report.json", (1_700_000_000, 1_700_000_000))
    h = load_history(folder)
    assert len(h.series) == 3  # missing pins are never equal, not even to each other
    assert all(UNPINNED in b.kinds for b in h.breaks)
    assert all(s.unpinned for s in h.series)
    dated = {Path(r.path).name: r.dated_by for s in h.series for r in s.runs}
    assert dated["report.json"] == "file mtime"


def test_parallel_series_are_marked_overlapping(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    night(folder, "a1", 1)
    night(folder, "b1", 2, slot="other", model="m-9")
    night(folder, "a2", 3)
    h = load_history(folder)
    assert [len(s.runs) for s in h.series] == [2, 1]
    assert h.breaks[0].overlap and h.breaks[0].kinds == [BACKEND_DELTA]


def test_a_moved_slot_settings_digest_is_a_backend_delta(tmp_path: Path) -> None:
    """The agent's code changed under the same label: a new series, as `diff` refuses it."""
    folder = tmp_path / "runs"
    night(folder, "a", 1, settings="s-1")
    night(folder, "b", 2, settings="s-1")
    night(folder, "c", 3, settings="s-2")
    h = load_history(folder)
    assert [len(s.runs) for s in h.series] == [2, 1]
    [brk] = h.breaks
    assert brk.kinds == [BACKEND_DELTA]
    assert Change("slot_settings", "s-1", "s-2") in brk.changes


def test_break_names_a_coinciding_env_change(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    night(folder, "a", 1)
    night(folder, "b", 2, grader="g2", env=ENV_312)
    [brk] = load_history(folder).breaks
    assert brk.kinds == [RUBRIC_CHANGE, ENV_CHANGE]
    assert Change("env.python", "CPython 3.11", "CPython 3.12") in brk.changes


def test_cli_human_output(capsys, nights: Path) -> None:
    r = cli(capsys, "history", str(nights))
    assert r.code == 0, r.err
    out = r.out
    assert "7 run(s) in 5 series, 1 unreadable" in out
    for kind in ("backend delta", "rubric change", "dataset edit"):
        assert f"break   {kind}: " in out
    assert "model_slot night -> lab_free_2; reported_model m-1 -> m-2" in out
    assert "~ environment change: python CPython 3.11 -> CPython 3.12" in out
    assert "non-deterministic backend: 1 (case, seed) pair(s)" in out
    assert "a (seed 29) z-night1.jsonl vs a-night2.jsonl" in out
    assert "2026-12-01 02:00" in out and "publishable" in out
    assert "broken.jsonl" in out.split("unreadable")[-1]
    lines = out.splitlines()
    # Series come in date order: night1's line before night2's before night3's.
    order = [next(i for i, ln in enumerate(lines) if n in ln) for n in ("z-n", "a-n", "m-n")]
    assert order == sorted(order)


def test_cli_json_shape(capsys, nights: Path) -> None:
    r = cli(capsys, "history", str(nights), "--json")
    assert r.code == 0
    data = json.loads(r.out)
    assert set(data) == {"folder", "runs", "series", "breaks", "unreadable"}
    s = data["series"][0]
    assert set(s) == {
        "index",
        "fixtures",
        "pins",
        "unpinned",
        "non_deterministic",
        "runs",
        "repeat_conflicts",
    }
    run = s["runs"][2]
    assert {"path", "started_at", "pass_rate", "pass_rate_by_seed", "mean", "spread"} <= set(run)
    assert run["label"] == "publishable" and run["interval"]["total"] == 9
    assert run["env_change"] == [
        {"key": "python", "before": "CPython 3.11", "after": "CPython 3.12"}
    ]
    assert s["repeat_conflicts"][0]["differing"]["digest"] == "elsewhere"
    assert [b["kinds"] for b in data["breaks"]] == [
        ["backend delta"],
        ["rubric change"],
        ["dataset edit"],
    ]
    assert data["unreadable"][0]["path"].endswith("broken.jsonl")


def test_cli_missing_folder_exits_3(tmp_path: Path) -> None:
    r = cli_process("history", str(tmp_path / "nope"))
    assert r.code == 3
    assert r.err.count("\n") == 1 and "no such folder" in r.err


def test_cli_default_folder_is_runs(capsys, nights: Path, monkeypatch) -> None:
    monkeypatch.chdir(nights.parent)
    r = cli(capsys, "history", "--json")
    assert r.code == 0 and json.loads(r.out)["runs"] == 7


def test_repeat_check_when_runs_list_cases_in_another_order(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    night(folder, "n1", 1)
    night(folder, "n2", 2, moved=("c", 47))
    n3 = night(folder, "n3", 3, moved=("c", 47))
    header_line, *cases, trailer = n3.read_text().splitlines(keepends=True)
    n3.write_text("".join([header_line, *reversed(cases), trailer]))  # e.g. a resumed run
    [conflict] = load_history(folder).series[0].repeat_conflicts
    assert (conflict.case_id, conflict.seed, conflict.runs_differing) == ("c", 47, 2)
    assert Path(conflict.first_run).stem == "n1" and Path(conflict.run).stem == "n2"


def test_hostile_text_is_printed_inert(capsys, tmp_path: Path) -> None:
    hostile = "[bold red]x[/]\x1b]52;c;aGk=\x07\x1b[2J\x9bFAILED\rPASSED\u202e"
    folder = tmp_path / "runs"
    night(folder, "a", 1, slot=hostile, model=hostile, env={"python": hostile})
    night(folder, "b", 2, moved=("a", 11))
    (folder / "bad\x1b[2J.jsonl").write_text("{oops\n")
    r = cli(capsys, "history", str(folder))
    assert r.code == 0
    for bad in ("\x1b", "\x07", "\x9b", "\r", "\u202e"):
        assert bad not in r.out
    assert "[bold red]x[/]\\x1b]52;c;aGk=\\x07" in r.out


def test_history_streams_one_run_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """When a file is read, every run read before it is already freed, rows and all:
    the repeat check's reference keeps packed bytes, not a run's rows or key tuples."""
    import weakref

    import evalpin.core.judge.history as history

    class Rows(list):  # a list that can be weakly referenced
        pass

    folder = tmp_path / "runs"
    for day in range(1, 7):
        night(folder, f"n{day}", day, moved=("b", 29) if day == 4 else None)
    alive: list[weakref.ref] = []
    held: list[int] = []
    real_read = history.read_run

    def counting_read(path, options=None):
        held.append(sum(ref() is not None for ref in alive))  # earlier runs still held
        run = real_read(path, options)
        run.rows = Rows(run.rows)
        alive.extend((weakref.ref(run), weakref.ref(run.rows)))
        return run

    monkeypatch.setattr(history, "read_run", counting_read)
    h = load_history(folder)
    assert h.runs == 6 and held == [0] * 6
    # The repeat check still sees the moved completion against the first night's.
    [conflict] = h.series[0].repeat_conflicts
    assert (conflict.case_id, conflict.seed, Path(conflict.run).stem) == ("b", 29, "n4")
    assert Path(conflict.first_run).stem == "n1"


def test_repeat_check_when_the_first_run_repeats_a_key(tmp_path: Path) -> None:
    """The digest first seen for a key repeated within the reference is its first
    occurrence's, whatever order later runs list their cases in."""
    folder = tmp_path / "runs"
    first = night(folder, "n1", 1)
    head, *cases, trailer = first.read_text().splitlines(keepends=True)
    again = json.loads(cases[0])  # ("a", 11) once more, with another completion
    again["completion_digest"] = again["text_digest"] = "second"
    first.write_text("".join([head, *cases, json.dumps(again) + "\n", trailer]))
    night(folder, "n2", 2, moved=("a", 11))
    [conflict] = load_history(folder).series[0].repeat_conflicts
    assert (conflict.case_id, conflict.seed, conflict.first_digest) == ("a", 11, "cd-a-11-True")
