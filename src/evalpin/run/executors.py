"""Where coding items are graded: in the runner's own threads, or on a Dask cluster.

The runner hands its executor a `GradeJob` and gets a `GradeResult` back: plain data both
ways, so a job can cross the network. The coordinator keeps the slot (completions are
asked where the credentials are); a worker only runs the sandbox on (item, files, seed,
limits). No environment value, key or slot setting is in a job, and `local:N` starts its
workers with an allow-listed environment (cluster_host.py).

Before any work is sent every worker reports its facts (Python, pytest, sandbox kind,
grader version); one that differs from the coordinator is refused. Each job also carries
the facts it expects, so a worker that joins later and differs refuses the job rather
than grade it with another instrument.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evalpin.core.errors import InputError
from evalpin.core.extras import install_hint
from evalpin.core.instrument.fixtures import CodingItem
from evalpin.core.instrument.pins import env_components, env_digest, grader_version
from evalpin.core.judge.limits_rule import NOT_ENFORCED
from evalpin.core.reasons import SANDBOX_ERROR
from evalpin.run.scrub import SECRETISH

LOCAL_PREFIX = "local:"
CONNECT_TIMEOUT_S = 30
# Worker deaths one item may cause before it is recorded as sandbox_error:worker_lost.
ALLOWED_FAILURES = 2
# What a `local:N` cluster's processes may inherit: no keys, no slot settings.
_WORKER_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "HOME", "PYTHONPATH")


@dataclass(frozen=True)
class GradeJob:
    """One completion's files to grade against one item's tests."""

    item: CodingItem
    files: dict[str, str]
    seed: int
    allow_network: bool = False
    witness_alone: bool = False  # the witness runs with nothing else of the run alive


@dataclass(frozen=True)
class GradeResult:
    """What a grade decides; the runner turns it into the case record."""

    passed: bool
    reasons: list[str]
    tail: str
    network: str
    failed_tests: tuple[str, ...] = ()  # the tests a `tests_failed` grade names
    # A disputed grade's witness: its output and the tests it did not pass.
    witness_tail: str = ""
    witness_failed_tests: tuple[str, ...] = ()


class ExecutorLost(Exception):
    """The cluster can no longer grade (scheduler gone, a worker refused a job): the run
    stops as interrupted and `--resume` finishes it, here or on another cluster."""


class GradingExecutor(Protocol):
    """What the runner needs: grade a job (blocking, thread-safe), how many at once,
    what to record in the header, the network control every grader enforced."""

    capacity: int
    network: str | None

    def grade(self, job: GradeJob) -> GradeResult: ...

    def describe(self, controls: dict[str, Any]) -> dict[str, Any]: ...

    def close(self) -> None: ...


def grade_here(
    job: GradeJob,
    *,
    workdir_parent: Path | None = None,
    secret_names: Iterable[str] = (),
    isolation: Any = None,
) -> GradeResult:
    """The one call into the sandbox (so a change of its signature is one edit here)."""
    from evalpin.run.sandbox import run_item

    outcome = run_item(
        job.item,
        job.files,
        workdir_parent=workdir_parent,
        secret_names=secret_names,
        allow_network=job.allow_network,
        isolation=isolation,
        witness_alone=job.witness_alone,
    )
    return GradeResult(
        outcome.passed,
        list(outcome.reasons),
        outcome.tail,
        outcome.network,
        tuple(outcome.failed_tests),
        outcome.witness_tail,
        tuple(outcome.witness_failed_tests),
    )


class LocalExecutor:
    """Grades in the calling thread: the runner's `--jobs` threads are the pool."""

    def __init__(
        self,
        jobs: int,
        *,
        workdir: Path | None = None,
        secret_names: Iterable[str] = (),
        isolation: Any = None,
    ) -> None:
        self.capacity = jobs
        self.network = isolation.network if isolation is not None else None
        self._workdir = workdir
        self._secret_names = list(secret_names)
        self._isolation = isolation
        # A user of the fork servers from its first grade to `close` (a run that grades
        # nothing, or is planned and dropped, holds nothing).
        self._lock = threading.Lock()
        self._held = self._closed = False

    def grade(self, job: GradeJob) -> GradeResult:
        if not self._held:
            with self._lock:
                if not self._held and not self._closed:
                    from evalpin.run.sandbox import zygote

                    zygote.acquire()  # the fork servers it starts live until it closes
                    self._held = True
        return grade_here(
            job,
            workdir_parent=self._workdir,
            secret_names=self._secret_names,
            isolation=self._isolation,
        )

    def describe(self, controls: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "local"}

    def close(self) -> None:
        """The fork servers this run used stop with it (when no other run uses them);
        the threads belong to the runner."""
        with self._lock:
            self._closed = True
            if self._held:
                from evalpin.run.sandbox import zygote

                self._held = False
                zygote.release()


# -- facts of a grading machine -------------------------------------------------------


def machine_facts() -> dict[str, Any]:
    """This process's grading environment: env components (without the run's controls),
    the sandbox it gets and whether network-off is enforced. Runs on each worker."""
    from evalpin.run.sandbox import probe_isolation

    iso = probe_isolation()
    components = env_components(["pytest"], {})
    del components["controls"]
    components["sandbox"] = iso.kind
    from evalpin.run.sandbox.limits import enforcement

    facts = {"components": components, "network": iso.network, "grader": grader_version()}
    return facts | {"limits": enforcement(iso)}


def _must_match(facts: dict[str, Any]) -> dict[str, Any]:
    """The facts a worker must share with the coordinator, by the name a refusal uses."""
    c = facts["components"]
    return {
        "Python": c["python"],
        "pytest": c["packages"].get("pytest"),
        "sandbox kind": c["sandbox"],
        "grader version": facts["grader"],
    }


def differences(here: dict[str, Any], there: dict[str, Any]) -> list[str]:
    """What makes a worker grade with another instrument than the coordinator."""
    a, b = _must_match(here), _must_match(there)
    return [f"{name} {b[name]} there, {a[name]} here" for name in a if a[name] != b[name]]


class WorkerRefused(Exception):
    """Raised on a worker whose facts differ from the ones the job expects."""


@functools.cache
def _facts_once() -> dict[str, Any]:
    return machine_facts()


def grade_remote(job: GradeJob, test_source: bytes, expect: dict[str, Any]) -> GradeResult:
    """The task a worker runs: the test file comes as bytes (the worker need not see the
    coordinator's folders); the grade is the same sandbox call as a local run's."""
    diff = differences(expect, _facts_once())
    if diff:
        raise WorkerRefused("; ".join(diff))
    with tempfile.TemporaryDirectory(prefix="evalpin-job-") as folder:
        test_file = Path(folder) / job.item.test_file.name
        test_file.write_bytes(test_source)
        item = dataclasses.replace(job.item, test_file=test_file)
        return grade_here(dataclasses.replace(job, item=item))


# -- the Dask executor ----------------------------------------------------------------


def worker_env(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The allow-listed environment a `local:N` cluster starts with."""
    return {k: environ[k] for k in _WORKER_ENV if k in environ and not SECRETISH.search(k)}


class LocalClusterProcess:
    """A `distributed.LocalCluster` in a child process (cluster_host.py) started with an
    allow-listed environment; it closes its cluster when our pipe to it closes, so the
    workers go with the coordinator, even after `kill -9`."""

    def __init__(self, workers: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "evalpin.run.cluster_host", str(workers)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=worker_env(),
            start_new_session=True,  # Ctrl-C stops the run, not the graders mid-item
        )
        self.address = self._read_address()

    def _read_address(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode("utf-8", "replace").strip()
        if not line.startswith("tcp://"):
            self.close()
            err = self.proc.stderr.read().decode("utf-8", "replace") if self.proc.stderr else ""
            last = (err.strip().splitlines() or ["no address printed"])[-1]
            raise InputError("--cluster", f"the local cluster did not start: {last}")
        return line

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def parse_address(address: str) -> tuple[str, int | None]:
    """`local:N` -> ("local", N); `tcp://host:port` -> (address, None)."""
    if address.startswith(LOCAL_PREFIX):
        count = address[len(LOCAL_PREFIX) :]
        if not count.isdigit() or int(count) < 1:
            raise InputError("--cluster", f"local:N needs a worker count >= 1, got {address!r}")
        return "local", int(count)
    if re.fullmatch(r"(tcp|tls)://[^\s/]+:\d+", address):
        return address, None
    raise InputError(
        "--cluster", f"expected tcp://HOST:PORT of a Dask scheduler or local:N, got {address!r}"
    )


class DaskExecutor:
    """Grades on a Dask cluster; the calling thread waits for its item's result."""

    def __init__(self, client: Any, facts: dict[str, Any]) -> None:
        self.client = client
        self.here = facts
        self.host: LocalClusterProcess | None = None
        self.workers: dict[str, dict[str, Any]] = {}
        self.capacity = 1
        self.network: str | None = None
        self.limits: dict[str, str] = {}
        self._lost = threading.Event()

    @classmethod
    def open(cls, address: str) -> DaskExecutor:
        """Connect (starting a local cluster for `local:N`) and check every worker."""
        target, count = parse_address(address)
        try:
            from distributed import Client
        except ImportError:
            hint = install_hint("cluster")
            raise InputError("--cluster", f"needs dask.distributed: {hint}") from None
        host = LocalClusterProcess(count) if count is not None else None
        try:
            scheduler = host.address if host else target
            try:
                client = Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except OSError as exc:
                raise InputError("--cluster", f"cannot reach {scheduler}: {exc}") from None
            executor = cls(client, machine_facts())
            executor.host = host
            try:
                executor.check_workers(count or 1)
            except BaseException:
                executor.close()
                raise
            return executor
        except BaseException:
            if host is not None:
                host.close()
            raise

    def check_workers(self, at_least: int) -> None:
        """Refuse, before any work is sent, a cluster whose graders differ from us."""
        try:
            self.client.wait_for_workers(at_least, timeout=CONNECT_TIMEOUT_S)
        except TimeoutError:
            raise InputError(
                "--cluster", f"no worker joined the scheduler within {CONNECT_TIMEOUT_S} s"
            ) from None
        self.workers = self.client.run(machine_facts)
        problems = [
            f"worker {address}: {'; '.join(diff)}"
            for address, facts in sorted(self.workers.items())
            if (diff := differences(self.here, facts))
        ]
        if problems:
            raise InputError(
                "--cluster",
                "refused: a worker would grade with another instrument ("
                + " | ".join(problems)
                + ")",
            )
        info = self.client.scheduler_info()["workers"]
        # Twice the graders' threads in flight: a worker finds its next item already
        # queued, instead of waiting a round trip through us for it.
        self.capacity = 2 * max(1, sum(w.get("nthreads", 1) for w in info.values()))
        enforced = all(f["network"] == "off-enforced" for f in self.workers.values())
        self.network = "off-enforced" if enforced else "off-unenforced"
        # Each limit as the workers enforce it: the first that does not, else the first's.
        self.limits: dict[str, str] = {}
        for facts in self.workers.values():
            for name, how in facts.get("limits", {}).items():
                if name not in self.limits or how.startswith(NOT_ENFORCED):
                    self.limits[name] = how

    def describe(self, controls: dict[str, Any]) -> dict[str, Any]:
        """Kind, worker count and each distinct worker env digest (over the run's controls,
        so one equal to the header's env_digest means the same environment)."""
        digests = sorted(
            {env_digest({**f["components"], "controls": controls}) for f in self.workers.values()}
        )
        return {"kind": "dask", "workers": len(self.workers), "worker_env_digests": digests}

    def grade(self, job: GradeJob) -> GradeResult:
        from distributed import KilledWorker

        if self._lost.is_set():
            raise ExecutorLost("the Dask scheduler went away")
        source = job.item.test_file.read_bytes()
        future = self.client.submit(grade_remote, job, source, self.here, pure=False)
        try:
            result: GradeResult = future.result()
        except KilledWorker:
            tail = "[evalpin] every Dask worker that graded this item died (allowed-failures)"
            return GradeResult(False, [SANDBOX_ERROR("worker_lost")], tail, self.network or "")
        except WorkerRefused as exc:
            raise ExecutorLost(f"a worker refused the job: {exc}") from None
        except Exception as exc:
            if self.client.status == "running" and not _is_connection_loss(exc):
                raise
            self._lost.set()
            raise ExecutorLost(f"the Dask scheduler went away ({type(exc).__name__})") from None
        finally:
            future.release()
        return result  # the runner cuts this process's secret values from every record

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.close(timeout=10)
        if self.host is not None:
            self.host.close()


def _is_connection_loss(exc: BaseException) -> bool:
    from concurrent.futures import CancelledError

    return isinstance(exc, CancelledError | OSError | TimeoutError)
