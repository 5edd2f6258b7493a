"""The launch panel runs `evalpin run --progress json` as a child process, shows its
progress, opens the finished run against the left run, and cancels cleanly."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from textual.widgets import Input, Select, Static

from evalpin.core.read.runfile import read_run
from evalpin.tui.screens.launch import LaunchRequest, LaunchScreen, find_fixture_sets
from tests.clirun import cli_process
from tests.conftest import GOLDEN_CASES
from tests.tuikit import SIZE, new_app, screen_text, settle

REPLAY = [
    {
        "case_id": "order-1",
        "text": "Order 1001 ships Monday.",
        "tools": [{"name": "lookup_order", "args": {"order": 1001}}],
        "model": "orders-mini@fp_1",
    },
    {"case_id": "order-2", "text": "Done.", "model": "orders-mini@fp_1"},
]
# A gated agent instead of a slow one: the first call answers, the next ones wait until
# the test opens the gate (or their run is gone, so a cancelled run leaves no process).
# The test can then cancel mid-run however loaded the machine is.
GATED = """
import json, os, sys, time
from pathlib import Path
json.load(sys.stdin)
here = Path(__file__).parent
parent = os.getppid()
try:
    (here / "answered-once").touch(exist_ok=False)
except FileExistsError:
    while not (here / "gate-open").exists():
        if os.getppid() != parent:
            sys.exit(1)
        time.sleep(0.02)
print(json.dumps({"text": "Order 1001", "model": "slow-1"}))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with a fixture set, a replay recording, a gated command slot, a left run."""
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "golden.jsonl").write_text(
        "".join(json.dumps(c) + "\n" for c in GOLDEN_CASES)
    )
    (tmp_path / "fixtures" / "night.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in REPLAY)
    )
    (tmp_path / "slow.py").write_text(GATED)
    (tmp_path / "slots.yaml").write_text(
        "slots:\n"
        "  night: {provider: replay, path: fixtures/night.jsonl}\n"
        f"  slow: {{provider: command, argv: [{json.dumps(sys.executable)}, slow.py]}}\n"
    )
    done = cli_process(
        "run",
        "--fixtures",
        "fixtures/golden.jsonl",
        "--slot",
        "night",
        "--out",
        "runs/left.jsonl",
        cwd=tmp_path,
    )
    assert done.code == 0, done.err
    return tmp_path


async def wait_for(pilot, condition, timeout: float = 60) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise TimeoutError("condition not reached")
        await pilot.pause(0.05)


def test_finds_fixture_sets_not_recordings(project: Path) -> None:
    assert find_fixture_sets(project / "fixtures") == [project / "fixtures" / "golden.jsonl"]
    argv = LaunchRequest("f.jsonl", "night", seeds="1,2,3", jobs="2", concurrency="32").argv()
    assert argv[1:] == [
        "-m",
        "evalpin",
        "run",
        "--progress",
        "json",
        "--fixtures",
        "f.jsonl",
        "--slot",
        "night",
        "--seeds",
        "1,2,3",
        "--jobs",
        "2",
        "--concurrency",
        "32",
    ]


async def test_launch_completes_a_replay_run_and_opens_it(project: Path) -> None:
    app = new_app(project / "runs" / "left.jsonl", cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen
        assert isinstance(panel, LaunchScreen)
        assert panel.query_one("#fixture-pick", Select).value == "fixtures/golden.jsonl"
        assert panel.query_one("#slot-pick", Select).value == "night"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: panel.finished is not None and panel.process is None)
        # The status is painted after the worker's last event: wait for the screen itself.
        summary = ("6/6 cases", "a reproduction of the left run:")
        try:
            await wait_for(pilot, lambda: all(s in screen_text(app) for s in summary), 30)
        except TimeoutError:
            status = panel.query_one("#launch-status", Static).render()
            pytest.fail(f"never shown: {summary}\nstatus: {status}\n{screen_text(app)}")
        assert panel.events[0].kind == "start"
        assert panel.events[-1].kind == "done"
        out = panel.finished
        # A folder of its own: runs/ (what a bare `evalpin review` reads) stays as it was.
        assert Path(out).parent == project / "launches" and read_run(out).complete is True
        assert sorted(p.name for p in (project / "runs").iterdir()) == ["left.jsonl"]
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert not isinstance(app.screen, LaunchScreen)
        await settle(pilot, app, "verdicts")
        review = app.review
        assert str(review.right_source) == out
        assert review.cases is not None and review.cases.mode == "compare"
        text = screen_text(app)
        assert "left.jsonl" in text and Path(out).name in text
        assert "unchanged 2" in text  # same fixtures, same recording: nothing moved


async def test_launch_form_starts_from_the_left_runs_instrument(project: Path) -> None:
    slots = (project / "slots.yaml").read_text()
    (project / "slots.yaml").write_text(
        slots.replace("slots:\n", "slots:\n  aaa: {provider: replay, path: fixtures/night.jsonl}\n")
    )
    done = cli_process(
        "run",
        "--fixtures",
        "fixtures/golden.jsonl",
        "--slot",
        "night",
        "--seeds",
        "5,6",
        "--temperature",
        "0.5",
        "--out",
        "runs/warm.jsonl",
        cwd=project,
    )
    assert done.code == 0, done.err
    app = new_app(project / "runs" / "warm.jsonl", cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen
        assert panel.query_one("#slot-pick", Select).value == "night"  # not the first label
        assert panel.query_one("#fixture-pick", Select).value == "fixtures/golden.jsonl"
        assert panel.query_one("#seeds", Input).value == "5,6"
        assert panel.query_one("#temperature", Input).value == "0.5"


async def test_launch_cancel_leaves_a_resumable_file(project: Path) -> None:
    app = new_app(project / "runs" / "left.jsonl", cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen
        panel.query_one("#slot-pick", Select).value = "slow"
        panel.query_one("#jobs", Input).value = "1"
        panel.query_one("#concurrency", Input).value = "1"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any(e.kind == "case" for e in panel.events))
        assert panel.process is not None
        await pilot.press("escape")  # does not close the panel while a run is going
        assert app.screen is panel
        await pilot.press("ctrl+x")
        await wait_for(pilot, lambda: panel.process is None)
        await pilot.pause()
        kinds = [e.kind for e in panel.events]
        assert kinds[-1] == "interrupted" and "done" not in kinds
        text = screen_text(app)
        assert "cancelled" in text and "evalpin run --resume --out" in text
        out = Path(panel.out)
        partial = read_run(out)
        assert partial.complete is False and 0 < len(partial.rows) < 6
        assert panel.finished is None
        await pilot.press("escape")
        assert app.screen is not panel
    (project / "gate-open").touch()
    done = cli_process("run", "--resume", "--out", str(out), cwd=project)
    assert done.code == 0, done.err
    assert read_run(out).complete is True and len(read_run(out).rows) == 6


async def test_launch_reports_a_refused_run(project: Path) -> None:
    app = new_app(project / "runs" / "left.jsonl", cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen
        panel.query_one("#fixture-path", Input).value = "fixtures/nope.jsonl"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: panel.process is None and "refused" in screen_text(app))
        assert "no such file" in screen_text(app)
        assert panel.finished is None
