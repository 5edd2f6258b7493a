"""Chaos (issue 28, item 5): N concurrent `evalpin run`s of one coding set and slot, some
on the default name and two resuming one explicit file, random `kill -9`s, then every
file resumed; each ends complete with each (case, seed) exactly once. On both sandbox
backends, which share the rounds: round k runs on the backend k % 2 names, with the same
kills and waits whichever backend that is (its own random seed). `EVALPIN_CHAOS_ROUNDS=20`
runs the issue's 20 rounds (the suite runs 2: one a backend)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalpin.core.read.runfile import read_run
from tests.capabilities import need

pytestmark = pytest.mark.slow  # concurrent runs killed and resumed (tests/lanes.py)

ROUNDS = int(os.environ.get("EVALPIN_CHAOS_ROUNDS", "2"))
BACKENDS = ("unshare", "bwrap")  # round k on BACKENDS[k % 2]
SEEDS = "1,2,3,4,5,6"
# Each case takes a moment of its own (a fork-served sandbox starts in a few ms), so
# the kills below land while runs are grading, however fast the sandbox starts.
TEST = (
    "import time\n\nfrom chunks import chunked\n\n\n"
    "def test_chunks():\n    time.sleep(0.4)\n    assert chunked([1, 2, 3], 2) == [[1, 2], [3]]\n"
)
SOLUTION = "def chunked(xs, n):\n    return [xs[i : i + n] for i in range(0, len(xs), n)]\n"


@pytest.fixture(params=BACKENDS)
def tools(request: pytest.FixtureRequest, tmp_path: Path, isolations) -> tuple[Path, str]:
    """A PATH holding only this backend (and setpriv): `run` probes and uses it."""
    iso = isolations[request.param]  # conftest's, probed once for the session
    if iso.kind == "none":
        need(request.param, iso.why)
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in (request.param, "setpriv"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    return folder, request.param


def _project(folder: Path) -> None:
    (folder / "tests").mkdir(parents=True)
    (folder / "prompt.md").write_text("Write chunked.\n")
    (folder / "tests" / "test_chunks.py").write_text(TEST)
    (folder / "coding.yaml").write_text(
        textwrap.dedent(
            """\
            schema: coding-eval/v1
            dataset_id: chaos
            dataset_version: "1"
            items:
              - id: chunked
                language: python
                prompt_file: prompt.md
                test_file: tests/test_chunks.py
                timeout_s: 20
                expected_files: [chunks.py]
            """
        )
    )
    answer = {"case_id": "chunked", "files": {"chunks.py": SOLUTION}, "text": ""}
    (folder / "answers.jsonl").write_text(json.dumps(answer) + "\n")


def _run(folder: Path, env: dict, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "evalpin", "run", "--fixtures", "coding.yaml"]
    command += ["--slot", "coder=replay:answers.jsonl", "--seeds", SEEDS, "--jobs", "1"]
    command += ["--progress", "none", *extra]
    return subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _grading_begun(runs: Path, timeout: float = 60.0) -> None:
    """Wait until some run has written a graded row: on a loaded machine the runs'
    start-up alone can outlast a fixed sleep, and a kill before any file is begun
    tests nothing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in runs.glob("*.jsonl"):
            if path.read_bytes().count(b"\n") >= 2:  # a header and a row
                return
        time.sleep(0.05)
    raise AssertionError("no run graded a case within a minute")


def test_concurrent_runs_and_kills_end_complete_and_exact(tools, tmp_path: Path) -> None:
    folder_of_tools, backend = tools
    # One backend: the probe picks it. The graders' scratch goes in this test's folder:
    # a grader killed while it makes or removes a box can leave a folder there that no
    # later grader may take for its own (no lock in it), which must not be in the host's /tmp.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "PATH": str(folder_of_tools), "TMPDIR": str(scratch)}
    # The rounds run one after the other: two at once ended their runs before any kill
    # on a quiet machine (the check below failed a fresh-clone CI). What a round tests
    # (the run file's lock, names and resume) is the same on either backend: each backend
    # takes every other round, and each round its own seed.
    rounds = range(BACKENDS.index(backend), max(ROUNDS, 2), 2)
    resumed = sum(
        _round(tmp_path / f"round-{k}", random.Random(2026 + k), env, backend) for k in rounds
    )
    assert resumed > 0, "no run was caught by a kill: the test proved nothing"


def _round(folder: Path, rng: random.Random, env: dict, backend: str) -> int:
    """One round: five runs at once, three of them killed, every file left incomplete
    resumed; each file ends complete and exact. Returns how many were resumed."""
    _project(folder)
    (folder / "runs").mkdir()
    shared = _run(folder, env, "--out", "runs/shared.jsonl")
    procs = [shared]
    try:
        time.sleep(rng.uniform(0.2, 0.8))
        procs += [_run(folder, env) for _ in range(3)]  # default names, at once
        procs.append(_run(folder, env, "--resume", "--out", "runs/shared.jsonl"))
        _grading_begun(folder / "runs")
        time.sleep(rng.uniform(0.0, 0.8))
        for proc in rng.sample(procs, 3):
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        for proc in procs:
            proc.wait(timeout=120)
    finally:  # a round that failed leaves none of its runs behind
        _stop(*procs)
    # Every file left incomplete resumed, all at once (each by one run of its own).
    resumes = []
    try:
        for path in sorted((folder / "runs").glob("*.jsonl")):
            if path.stat().st_size and read_run(path).complete:
                continue  # (an empty file: killed before its header)
            # The run's own inputs given again: a file killed before its header has none.
            resumes.append(_run(folder, env, "--resume", "--out", str(path)))
        for proc in resumes:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()
    finally:  # a failed or hung resume leaves none of the others running
        _stop(*resumes)
    files = sorted((folder / "runs").glob("*.jsonl"))
    assert len(files) >= 1
    for path in files:
        run = read_run(path)
        keys = [(r.case_id, r.seed) for r in run.rows]
        assert run.complete and not run.torn, path
        assert sorted(keys) == sorted(set(keys)) and len(keys) == 6, (path, keys)
        assert run.header is not None and run.header.env.get("sandbox") == backend
    assert not list((folder / "runs").glob(".*.writer"))
    return len(resumes)


def _stop(*procs: subprocess.Popen) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
