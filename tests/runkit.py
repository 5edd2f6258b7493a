"""A working folder for `evalpin run` (`project`: a golden set, a replay recording, a
slots file) and a run slow enough to be stopped while it grades (`slow_project`, `start`,
`wait_for_cases`): the fixtures are imported by the modules that use them."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GOLDEN_CASES

REPLAY = [
    {
        "case_id": "order-1",
        "text": "Order 1001 ships Monday.",
        "tools": [{"name": "lookup_order", "args": {"order": 1001}}],
        "model": "orders-mini@fp_1",
    },
    {
        "case_id": "order-2",
        "seed": 11,
        "text": "Your order is cancelled.",
        "tools": [{"name": "lookup_order", "args": {}}, {"name": "cancel_order", "args": {}}],
        "model": "orders-mini@fp_1",
    },
    {"case_id": "order-2", "seed": 29, "text": "Done.", "model": "orders-mini@fp_1"},
]


@pytest.fixture
def project(tmp_path: Path, golden_file: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with a golden set, a replay recording and a slots file."""
    monkeypatch.chdir(tmp_path)
    for name in ("EVAL_DATASET", "EVAL_SEEDS", "EVAL_TEMPERATURE", "EVAL_NETWORK", "EVAL_WORKDIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "night.jsonl").write_text("".join(json.dumps(r) + "\n" for r in REPLAY))
    (tmp_path / "slots.yaml").write_text("slots:\n  night: {provider: replay, path: night.jsonl}\n")
    return tmp_path


SLOW_AGENT = """
import json, os, sys, time
request = json.load(sys.stdin)
deadline = time.monotonic() + 50
while os.path.exists("hold") and time.monotonic() < deadline:  # tests/runkit.py's `held`
    time.sleep(0.02)
time.sleep(0.15)
print(json.dumps({"text": "Order 1001 is cancelled.", "model": "agent@1",
                  "tools": [{"name": "lookup_order", "args": {}}, {"name": "cancel_order"}]}))
"""


@pytest.fixture
def slow_project(project: Path) -> Path:
    (project / "agent.py").write_text(SLOW_AGENT)
    (project / "slots.yaml").write_text(
        f"slots:\n  night: {{provider: replay, path: night.jsonl}}\n"
        f"  agent: {{provider: command, argv: [{sys.executable}, agent.py], timeout_s: 60}}\n"
    )
    many = [{**GOLDEN_CASES[i % 2], "id": f"case-{i:02d}"} for i in range(12)]
    (project / "many.jsonl").write_text("".join(json.dumps(c) + "\n" for c in many))
    return project


def start(project: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalpin",
            "run",
            "--fixtures",
            "many.jsonl",
            "--slot",
            "agent",
            "--jobs",
            "1",
            # One completion at a time: the run is still going when the test stops it
            # (at the default concurrency the 24 slow cases finish in a few tenths).
            "--concurrency",
            "1",
            "--seeds",
            "1,2",
            "--out",
            "runs/slow.jsonl",
            "--progress",
            "json",
            *extra,
        ],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl+C as a terminal delivers it, whatever this process inherited (a test
        # run started in the background has SIGINT ignored, and so would the child).
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_cases(proc: subprocess.Popen[str], n: int) -> None:
    assert proc.stdout is not None
    seen = 0
    while seen < n:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "no output"
        seen += json.loads(line)["event"] == "case"


@contextlib.contextmanager
def held(project: Path) -> Iterator[None]:
    """The slow run's agent waits before each next answer until this ends: a second
    process started meanwhile meets the first still running, however loaded the machine
    (24 cases of 0.15 s can end before a second interpreter has started)."""
    hold = project / "hold"
    hold.touch()
    try:
        yield
    finally:
        hold.unlink(missing_ok=True)
