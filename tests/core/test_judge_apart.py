"""Verdicts judged in a child process (`core.judge_apart`): the same verdict as in this
process, over the same bytes, and a child that is never left behind or believed when it
fails."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from evalpin.core.judge.verdict import judge
from evalpin.core.read.formats import ReadOptions, RunStream
from evalpin.core.read.runfile import RunWriter, read_run
from evalpin.core.review import judge_apart
from evalpin.core.review.judge_apart import JudgeApart, Request
from tests.builders import case, grid, write_run
from tests.procs import surviving
from tests.tuikit import SIZE, new_app, settle


def outcomes(n: int) -> dict[str, list[bool]]:
    return {f"c{i:03d}": [i % 3 != 0, i % 5 != 0, True] for i in range(n)}


def test_the_request_survives_its_trip_to_the_child() -> None:
    request = Request((("a b.jsonl", 123), ("c.json", None)), ReadOptions(scorer="s", metric=None))
    assert Request.from_json(request.to_json()) == request


def test_the_child_judges_as_this_process_does(tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid(outcomes(40)))
    right = write_run(tmp_path / "r.jsonl", grid(outcomes(41)), finished=False)
    streams = [RunStream(left), RunStream(right)]
    verdicts = JudgeApart.of(streams).verdicts(lambda: False)
    assert verdicts is not None
    here = [judge(read_run(left)), judge(read_run(right))]
    assert [v.to_json() for v in verdicts] == [v.to_json() for v in here]
    assert verdicts[1].label == "internal"  # incomplete: no trailer


def test_a_run_still_being_written_is_judged_as_the_stream_reads_it(tmp_path: Path) -> None:
    path = write_run(tmp_path / "live.jsonl", grid(outcomes(10)), finished=False)
    stream = RunStream(path)  # the review opens the file here ...
    with RunWriter(path, new=False) as w:  # ... and the run goes on writing
        for c in grid({"late": [False, False, False]}):
            w.write(c)
    verdicts = JudgeApart.of([stream]).verdicts(lambda: False)
    assert verdicts is not None
    while stream.step():
        pass
    assert stream.run is not None and len(stream.run.rows) == 30  # not the late case
    assert verdicts[0].to_json() == judge(stream.run).to_json()
    assert len(read_run(path).rows) == 33


def test_a_child_that_fails_is_no_answer(tmp_path: Path) -> None:
    path = write_run(tmp_path / "gone.jsonl", grid(outcomes(3)))
    apart = JudgeApart.of([RunStream(path)])
    path.unlink()  # the child finds no file: it exits non-zero, its output is not read
    assert apart.verdicts(lambda: False) is None


def test_a_child_reading_hostile_bytes_is_no_answer(tmp_path: Path) -> None:
    path = write_run(tmp_path / "bad.jsonl", grid(outcomes(30)))
    data = path.read_bytes()
    path.write_bytes(data[:900] + b"\x00\xff\xfe not a record\n" + data[900:])
    # The child meets the bad line, exits non-zero and is not believed; the review's own
    # reading reports the file and line.
    assert JudgeApart.of([RunStream(path)]).verdicts(lambda: False) is None


def test_a_child_given_up_on_is_killed(tmp_path: Path) -> None:
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)  # the child blocks reading it, until killed
    apart = JudgeApart(Request(((str(fifo), None),), ReadOptions()))
    calls = []
    assert apart.verdicts(lambda: calls.append(1) or len(calls) > 3) is None
    assert not surviving(str(fifo))


def test_small_runs_stay_in_this_process(tmp_path: Path) -> None:
    path = write_run(tmp_path / "small.jsonl", grid(outcomes(3)))
    assert not judge_apart.worth_it([RunStream(path)])


async def test_the_review_shows_the_childs_verdicts_and_leaves_no_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judge_apart, "APART_BYTES", 0)  # these small runs too
    left = write_run(tmp_path / "l.jsonl", grid(outcomes(30)))
    right = write_run(tmp_path / "r.jsonl", [*grid(outcomes(30)), case("x", False, 11)])
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        lv, rv = app.review.verdicts
        assert lv.to_json() == judge(read_run(left)).to_json()
        assert rv is not None and rv.to_json() == judge(read_run(right)).to_json()
    assert not surviving("evalpin.core.review.judge_apart")


async def test_closing_the_review_kills_a_child_still_judging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judge_apart, "APART_BYTES", 0)
    mark = f"judge-apart-stand-in-{os.getpid()}"
    # A child that never answers: the review lists its cases and waits on it.
    stand_in = [sys.executable, "-c", "import time, sys; time.sleep(120)", mark]
    monkeypatch.setattr(judge_apart, "CHILD", stand_in)
    left = write_run(tmp_path / "l.jsonl", grid(outcomes(5)))
    app = new_app(left)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "listed")
        assert surviving(mark), "the stand-in child should be running"
        assert app.review.verdicts is None
    deadline = time.monotonic() + 60  # killed at unmount, reaped by the loader thread:
    while surviving(mark) and time.monotonic() < deadline:  # a guard, not a measurement
        time.sleep(0.05)
    assert not surviving(mark)
