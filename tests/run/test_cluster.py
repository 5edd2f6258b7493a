"""`evalpin run --cluster`: grading on a real Dask cluster gives the same run file.

Every cluster here is a real `distributed.LocalCluster` with worker processes bound to
127.0.0.1, closed by its fixture; the tests that kill things wait for conditions (a task
executing, a record written), never for time, and check that no process is left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

import psutil
import pytest

from evalpin.core.instrument.pins import env_digest
from evalpin.core.read.runfile import read_run
from evalpin.run import events
from evalpin.run.executors import DaskExecutor, GradeJob
from evalpin.run.sandbox import probe_isolation
from evalpin.run.session import RunRequest, start_run
from tests.capabilities import need
from tests.clirun import cli, cli_process
from tests.procs import surviving

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.slow  # starts Dask clusters (tests/lanes.py)

FAKE_SECRET = "sk-evalpin-fake-" + uuid.uuid4().hex
SOLUTION = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"


def _test_source(index: int, pause: float) -> str:
    return (
        "import time\n"
        "from calc import add\n\n\n"
        f"def test_add_{index}():\n"
        f"    time.sleep({pause})\n"
        f"    assert add({index}, 2) == {index + 2}\n"
    )


def make_project(folder: Path, items: int, pause: float = 0.0) -> Path:
    """A coding set of `items` items and a replay slot: odd items answered wrongly."""
    (folder / "tests").mkdir(parents=True)
    (folder / "prompts").mkdir()
    marker = uuid.uuid4().hex[:8]
    lines, replay = [], []
    for i in range(items):
        test = f"test_{marker}_{i}.py"
        (folder / "tests" / test).write_text(_test_source(i, pause))
        (folder / "prompts" / f"p{i}.md").write_text(f"Write calc.add (item {i}).\n")
        lines.append(
            f"  - {{id: item{i}, language: python, prompt_file: prompts/p{i}.md, "
            f"test_file: tests/{test}, timeout_s: 60, forbidden_imports: [socket], "
            f"expected_files: [calc.py]}}\n"
        )
        answer = WRONG if i % 2 else SOLUTION
        replay.append({"case_id": f"item{i}", "text": "here", "files": {"calc.py": answer}})
    (folder / "coding.yaml").write_text(
        "schema: coding-eval/v1\ndataset_id: cluster-test\ndataset_version: '1'\n"
        "frozen_at: '2026-01-01'\nholdout_policy: sealed\nitems:\n" + "".join(lines)
    )
    (folder / "replay.jsonl").write_text("".join(json.dumps(r) + "\n" for r in replay))
    return folder


def run_args(project: Path, out: str, *executor: str) -> list[str]:
    return [
        "run",
        "--fixtures",
        str(project / "coding.yaml"),
        "--slot",
        f"coder=replay:{project / 'replay.jsonl'}",
        "--seeds",
        "1,2",
        "--out",
        str(project / out),
        "--progress",
        "none",
        *executor,
    ]


def case_lines(path: Path) -> list[str]:
    """Case records with their timings removed: the run's and pytest's own."""
    out = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record["record"] != "case":
            continue
        record.pop("seconds", None)
        if record.get("tail"):
            record["tail"] = re.sub(r" in \d+\.\d+s", " in Ns", record["tail"])
        out.append(json.dumps(record))
    return out


def header(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


def local_cluster(workers: int, **extra: Any) -> distributed.LocalCluster:
    """Real worker processes, one thread each, on 127.0.0.1 (any free port, no dashboard)."""
    return distributed.LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=None,
        **extra,
    )


@pytest.fixture(autouse=True)
def _scratch_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers (and runs) of these tests make their scratch folders under the test's own
    temporary folder: a worker killed mid-item never removes its job folder, and it
    must not be left in the host's /tmp."""
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))


@pytest.fixture(scope="module")
def six_items(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six items of a second each and their run on local jobs (`ref.jsonl`): the file
    a run of them interrupted (a worker killed, the scheduler gone, the coordinator
    killed) must equal. Made once for the tests that interrupt one (each writes its own
    file beside it); its run's scratch stays here."""
    project = make_project(tmp_path_factory.mktemp("six"), 6, pause=1.0)
    (project / "scratch").mkdir()
    env = {**os.environ, "TMPDIR": str(project / "scratch")}
    ref = cli_process(*run_args(project, "ref.jsonl", "--jobs", "2"), env=env)
    assert ref.code == 0, ref.err
    return project


@pytest.fixture
def cluster() -> Iterator[distributed.LocalCluster]:
    """Two real worker processes on 127.0.0.1; closed, and their processes gone, after."""
    before = _children_now()
    with local_cluster(2) as c:
        yield c
    _assert_no_new_children(before)


def _children_now() -> set[int]:
    """Our child processes, with Python's own resource tracker (which lives as long as
    this process, once a cluster has started it) started first, so it is not counted."""
    resource_tracker.ensure_running()
    return {p.pid for p in psutil.Process().children(recursive=True)}


def _assert_no_new_children(before: set[int]) -> None:
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    _, alive = psutil.wait_procs(left, timeout=60)
    assert not alive, [p.cmdline() for p in alive]


def _assert_no_process_mentions(marker: str) -> None:
    """No sandboxed pytest of this project outlives the test (even an orphaned one)."""
    procs = []
    for pid in surviving(marker):
        with contextlib.suppress(psutil.NoSuchProcess):
            procs.append(psutil.Process(pid))
    _, alive = psutil.wait_procs(procs, timeout=60)
    assert not alive


def start_in_thread(request: RunRequest) -> tuple[threading.Thread, list, dict]:
    seen: list[events.Event] = []
    result: dict[str, int] = {}

    def go() -> None:
        result["code"] = start_run(request, {}, seen.append)

    thread = threading.Thread(target=go)
    thread.start()
    return thread, seen, result


def request(project: Path, out: str, **over) -> RunRequest:
    fields = {"seeds": "1,2", **over}
    return RunRequest(
        fixtures=project / "coding.yaml",
        slot=f"coder=replay:{project / 'replay.jsonl'}",
        out=project / out,
        **fields,
    )


# -- inputs ------------------------------------------------------------------------


def test_bad_cluster_addresses_exit_3_and_write_nothing(capsys, tmp_path: Path) -> None:
    project = make_project(tmp_path, 1)
    for address in ("local:0", "local:x", "http://h:1", "tcp://nohost"):
        r = cli(capsys, *run_args(project, "x.jsonl", "--cluster", address))
        assert r.code == 3, (address, r)
        assert "--cluster" in r.err
    r = cli(capsys, *run_args(project, "x.jsonl", "--cluster", "local:1", "--jobs", "2"))
    assert r.code != 0 and "exclude each other" in r.err
    assert not (project / "x.jsonl").exists()


def test_without_dask_cluster_says_how_to_install(tmp_path: Path) -> None:
    project = make_project(tmp_path, 1)
    blocked = (
        "import sys; sys.modules['distributed'] = None; from evalpin.cli import main; "
        "main(sys.argv[1:])"
    )
    args = run_args(project, "x.jsonl", "--cluster", "local:1")
    done = subprocess.run(
        [sys.executable, "-c", blocked, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3, done.stderr
    checkout = Path(__file__).resolve().parents[2]  # evalpin runs from this checkout
    assert f"pip install '{checkout}[cluster]'" in done.stderr
    assert not (project / "x.jsonl").exists()


# -- the same run ------------------------------------------------------------------


def test_local_cluster_writes_the_jobs_run_and_keeps_secrets_home(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path, 4)
    monkeypatch.setenv("EVALPIN_TEST_API_KEY", FAKE_SECRET)
    monkeypatch.setenv("SOME_PASSWORD_HERE", FAKE_SECRET)
    payloads: list[bytes] = []
    seen_env: list[str] = []
    real_grade = DaskExecutor.grade

    def spy(self: DaskExecutor, job: GradeJob):
        payloads.append(pickle.dumps(job))
        if not seen_env:  # what the workers, their nannies and the cluster host hold
            addresses = [*self.client.scheduler_info()["workers"], self.client.scheduler.address]
            seen_env.append(json.dumps(addresses))
            seen_env.extend(self.client.run(lambda: json.dumps(dict(os.environ))).values())
            seen_env.extend(
                self.client.run(lambda: Path("/proc/self/environ").read_text()).values()
            )
            seen_env.append(Path(f"/proc/{self.host.proc.pid}/environ").read_text())
            for pid in self.client.run(os.getppid).values():
                seen_env.append(Path(f"/proc/{pid}/environ").read_text())
        return real_grade(self, job)

    monkeypatch.setattr(DaskExecutor, "grade", spy)
    before = _children_now()
    r_jobs = cli(capsys, *run_args(project, "jobs.jsonl", "--jobs", "2"))
    r_dask = cli(capsys, *run_args(project, "dask.jsonl", "--cluster", "local:2"))
    assert (r_jobs.code, r_dask.code) == (0, 0), (r_jobs.err, r_dask.err)
    _assert_no_new_children(before)

    jobs, dask = project / "jobs.jsonl", project / "dask.jsonl"
    assert case_lines(dask) == case_lines(jobs)
    assert len(case_lines(dask)) == 8
    assert [json.loads(x)["pass"] for x in case_lines(dask)][:4] == [True, True, False, False]
    h_jobs, h_dask = header(jobs), header(dask)
    assert h_jobs["execution"]["executor"] == {"kind": "local"}
    assert h_jobs["execution"]["jobs"] == 2
    executor = h_dask["execution"]["executor"]
    assert executor["kind"] == "dask" and executor["workers"] == 2
    assert executor["worker_env_digests"] == [h_dask["env_digest"]]
    assert h_dask["env_digest"] == h_jobs["env_digest"]
    assert h_dask["controls"]["network"] == h_jobs["controls"]["network"]
    assert read_run(dask).summary is not None

    assert len(payloads) == 8
    assert all(FAKE_SECRET.encode() not in p for p in payloads)
    assert len(seen_env) >= 6
    assert all(a.startswith("tcp://127.0.0.1:") for a in json.loads(seen_env[0]))
    assert all(FAKE_SECRET not in text for text in seen_env)
    assert all("EVALPIN_TEST_API_KEY" not in text for text in seen_env)


def test_worker_with_another_sandbox_is_refused_before_work(capsys, tmp_path: Path) -> None:
    here = probe_isolation()
    if here.kind == "none":
        need("unshare", "a sandbox here that a worker without PATH cannot have")
    project = make_project(tmp_path, 2)
    before = _children_now()
    with (
        local_cluster(1, env={"PATH": str(tmp_path / "no-tools")}) as c,  # no unshare, no bwrap
        distributed.Client(c, set_as_default=False) as client,
    ):
        r = cli(capsys, *run_args(project, "x.jsonl", "--cluster", c.scheduler_address))
        assert r.code == 3, r
        assert "refused" in r.err and f"sandbox kind none there, {here.kind} here" in r.err
        assert not (project / "x.jsonl").exists()
        assert client.run(lambda dask_worker: dask_worker.state.executed_count) == {
            w: 0 for w in c.scheduler_info["workers"]
        }
    _assert_no_new_children(before)


# -- faults ------------------------------------------------------------------------


def test_worker_killed_mid_item_is_retried_on_another(six_items: Path, cluster) -> None:
    project = six_items
    marker = Path(next((project / "tests").iterdir()).name).stem.split("_")[1]
    with distributed.Client(cluster, set_as_default=False) as client:
        pids = client.run(os.getpid)
        thread, seen, result = start_in_thread(
            request(project, "k.jsonl", cluster=cluster.scheduler_address)
        )
        busy: list[str] = []
        while not busy and thread.is_alive():
            executing = client.run(lambda dask_worker: len(dask_worker.state.executing))
            busy = [w for w, n in executing.items() if n]
        assert busy, "no item was ever executing"
        victim = psutil.Process(pids[busy[0]])
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        thread.join()
    assert result["code"] == 0, seen
    out = project / "k.jsonl"
    assert case_lines(out) == case_lines(project / "ref.jsonl")
    assert read_run(out).summary is not None
    _assert_no_process_mentions(marker)


def test_an_item_whose_graders_keep_dying_is_recorded_worker_lost(tmp_path: Path) -> None:
    project = make_project(tmp_path, 1, pause=5.0)
    marker = Path(next((project / "tests").iterdir()).name).stem.split("_")[1]
    before = _children_now()
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        local_cluster(1) as c,
        distributed.Client(c, set_as_default=False) as client,
    ):
        thread, seen, result = start_in_thread(
            request(project, "w.jsonl", cluster=c.scheduler_address, seeds="1")
        )
        killed = 0
        while thread.is_alive():  # each worker that picks the item up dies
            # A worker killed a moment ago may still be on the scheduler's list: it is
            # left out of the answer (on_error), not a connection error of the test's.
            executing = client.run(
                lambda dask_worker: (os.getpid(), len(dask_worker.state.executing)),
                on_error="ignore",
            )
            for pid, n in executing.values():
                if n:
                    psutil.Process(pid).kill()
                    killed += 1
            thread.join(0.05)
    _assert_no_new_children(before)
    # The item's every seed lost: not one case judged, so the run failed (exit 1).
    assert killed >= 1 and result["code"] == 1, seen
    (record,) = [json.loads(x) for x in case_lines(project / "w.jsonl")]
    assert record["pass"] is False
    assert record["reasons"] == ["sandbox_error:worker_lost"]
    _assert_no_process_mentions(marker)


def test_scheduler_gone_interrupts_and_resume_finishes_locally(six_items: Path) -> None:
    project = six_items
    marker = Path(next((project / "tests").iterdir()).name).stem.split("_")[1]
    before = _children_now()
    c = local_cluster(2)
    try:
        thread, seen, result = start_in_thread(
            request(project, "s.jsonl", cluster=c.scheduler_address)
        )
        out = project / "s.jsonl"
        while thread.is_alive() and not any(isinstance(e, events.CaseEvent) for e in seen):
            thread.join(0.05)
    finally:
        c.close()
    thread.join()
    _assert_no_new_children(before)
    assert result["code"] == 130, seen
    assert isinstance(seen[-1], events.InterruptedEvent)
    assert any(isinstance(e, events.WarningEvent) and "scheduler" in e.message for e in seen)
    partial = read_run(out)
    assert partial.header is not None and partial.summary is None
    assert 1 <= len(partial.rows) < 12
    _assert_no_process_mentions(marker)

    resumed = cli_process(*run_args(project, "s.jsonl", "--jobs", "2", "--resume"))
    assert resumed.code == 0, resumed.err
    assert sorted(case_lines(out)) == sorted(case_lines(project / "ref.jsonl"))
    assert read_run(out).summary is not None


def test_coordinator_kill_9_leaves_a_readable_file_and_no_workers(six_items: Path) -> None:
    project = six_items
    marker = Path(next((project / "tests").iterdir()).name).stem.split("_")[1]
    out = project / "c.jsonl"
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "evalpin", *run_args(project, "c.jsonl", "--cluster", "local:2")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    me = psutil.Process(coordinator.pid)
    try:
        while coordinator.poll() is None and not (out.exists() and case_lines(out)):
            time.sleep(0.05)  # polling for the first record; nothing asserts a duration
        family = me.children(recursive=True)
        assert family, "the local cluster runs in child processes"
    finally:
        coordinator.send_signal(signal.SIGKILL)
        coordinator.wait()
    _, alive = psutil.wait_procs(family, timeout=90)
    assert not alive, [p.cmdline() for p in alive]
    partial = read_run(out)
    assert partial.header is not None and partial.summary is None and partial.rows
    assert env_digest(partial.header.env) == partial.header.env_digest
    _assert_no_process_mentions(marker)

    before = _children_now()
    resumed = cli_process(*run_args(project, "c.jsonl", "--cluster", "local:2", "--resume"))
    assert resumed.code == 0, resumed.err
    _assert_no_new_children(before)
    assert sorted(case_lines(out)) == sorted(case_lines(project / "ref.jsonl"))
    assert read_run(out).summary is not None


# -- the launch panel --------------------------------------------------------------


async def test_launch_panel_executor_field_picks_jobs_or_a_cluster(tmp_path: Path) -> None:
    from textual.widgets import Input

    from evalpin.tui.screens.launch import LaunchScreen
    from tests.builders import coding_header, grid, write_run
    from tests.tuikit import SIZE, new_app, settle

    project = make_project(tmp_path, 1)
    # A run to open the review on (the panel's fields are typed below, not taken from it).
    left = write_run(project / "left.jsonl", grid({"item0": [True]}, seeds=(1,)),
                     head=coding_header(seeds=[1]))  # fmt: skip
    app = new_app(left, cwd=project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen
        assert isinstance(panel, LaunchScreen)
        panel.query_one("#fixture-path", Input).value = "coding.yaml"
        panel.query_one("#slot-inline", Input).value = "c=replay:replay.jsonl"
        field = panel.query_one("#jobs", Input)
        for typed, flags in [
            ("3", ["--jobs", "3"]),
            ("local:2", ["--cluster", "local:2"]),
            ("tcp://127.0.0.1:8786", ["--cluster", "tcp://127.0.0.1:8786"]),
            ("", []),
        ]:
            field.value = typed
            argv = panel.request().argv()
            assert [a for a in argv if a in ("--jobs", "--cluster")] == flags[:1]
            if flags:
                assert argv[argv.index(flags[0]) + 1] == flags[1]


def test_a_job_refuses_a_worker_unlike_the_coordinator(tmp_path: Path) -> None:
    """What a late-joining worker does with a job meant for another instrument."""
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.run.executors import WorkerRefused, grade_here, grade_remote, machine_facts

    project = make_project(tmp_path, 2)
    items = load_fixtures(project / "coding.yaml").cases
    here = machine_facts()
    for item, passed in zip(items, (True, False), strict=True):
        job = GradeJob(item, {"calc.py": WRONG if not passed else SOLUTION}, seed=1)
        remote = grade_remote(job, item.test_file.read_bytes(), here)
        local = grade_here(job)
        assert remote.passed is local.passed is passed
        assert remote.reasons == local.reasons
    other = {**here, "components": {**here["components"], "sandbox": "elsewhere"}}
    with pytest.raises(WorkerRefused, match="sandbox kind"):
        grade_remote(job, item.test_file.read_bytes(), other)
