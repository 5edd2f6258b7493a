"""Grading one coding item's files: static checks, then its tests in fresh sandboxed
processes (`run_item`), with an allow-listed environment and a tail of the output that
names no sandbox path and no secret."""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from evalpin.core.instrument.fixtures import ISOLATION_PROCESS, CodingItem
from evalpin.core.instrument.graders.candidate import written_files
from evalpin.core.instrument.graders.coding import PYTEST_ENV, grade_order, rlimits, static_check
from evalpin.core.instrument.graders.surface import approved_files
from evalpin.core.instrument.graders.wire import notes as witness_notes
from evalpin.core.instrument.graders.witness import (
    WITNESS_PLAIN_CAP_S,
    WITNESS_PLAIN_FACTOR,
    WITNESS_TIMEOUT_FACTOR,
    WITNESS_TIMEOUT_MIN_S,
    witness_timeout,
    witness_timeout_most,
    witnessed,
)
from evalpin.core.reasons import SANDBOX_ERROR, TESTS_FAILED, TIMEOUT, WITNESS
from evalpin.core.records import TAIL_CHARS
from evalpin.run.sandbox.backends import NETWORK_ON, Isolation
from evalpin.run.sandbox.box import Box, scratch
from evalpin.run.sandbox.execute import execute
from evalpin.run.sandbox.fairclock import FAIR_CAP
from evalpin.run.sandbox.mounts import DISK_BYTES
from evalpin.run.sandbox.probe import probe_isolation

_ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
_REPORT_FD = re.compile(r"generated xml file: /proc/self/fd/\d+")
_DISK_NOTE = (
    "disk cap reached: a folder the tests write in (the work folder, /tmp, /dev/shm)"
    f" holds at most {DISK_BYTES // 1024**2} MiB"
)


@dataclass(frozen=True)
class Outcome:
    """The grade of one completion's files, as recorded in a case line."""

    passed: bool
    reasons: list[str]
    tail: str
    seconds: float
    network: str
    failed_tests: list[str] = field(default_factory=list)  # when the tests failed
    # The witness's output and the tests it did not pass, when it ran and did not pass.
    witness_tail: str = ""
    witness_failed_tests: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Graded:
    """One sandboxed run's own grade: plain pytest's, the witness's, or a guarded one."""

    passed: bool
    reasons: list[str]
    tail: str
    failed_tests: list[str] = field(default_factory=list)
    # Seconds its sandbox ran, on its fair-share clock (the witness's timeout grows with
    # plain pytest's).
    seconds: float = 0.0


def run_item(
    item: CodingItem,
    files: dict[str, str],
    *,
    workdir_parent: Path | None = None,
    secret_names: Iterable[str] = (),
    allow_network: bool = False,
    isolation: Isolation | None = None,
    always_witness: bool = False,
    witness_alone: bool = False,
) -> Outcome:
    """Grade `files` (name -> content, as the model gave them) against `item`'s tests
    (under `candidate: prompt+completion`, the prompt file's text comes first).

    Static checks first (a failure there means the code never runs), then the item's
    tests in fresh temporary directories under `workdir_parent`, removed afterwards:
    for `isolation: process`, plain pytest with the candidate in-process, and on a pass
    the witness (the candidate in a worker sandbox, pytest in another on stand-ins), as
    `witness.witnessed` combines them; for `in-process`, one sandbox with tamper checks.
    `always_witness`: the witness runs after a plain fail too (`evalpin check`).
    `witness_alone`: the witness runs after plain pytest, with no other sandbox of this
    process alive (`ALONE`): no other box can reach it, even through timing.
    `secret_names` are never passed on and their values are cut from the tails.
    `allow_network` (a set that says `network: allowed`) skips the network namespace;
    `isolation` replaces the probe's choice.
    """
    from evalpin.run import isolation as modes

    started = time.monotonic()
    secret_names = frozenset(secret_names)
    iso = isolation or probe_isolation()
    network = NETWORK_ON if allow_network else iso.network

    def outcome(passed: bool, reasons: list[str], tail: str = "", **more) -> Outcome:
        seconds = round(time.monotonic() - started, 3)
        return Outcome(passed, grade_order(reasons), tail[-TAIL_CHARS:], seconds, network, **more)

    if item.language.casefold() != "python":
        return outcome(
            False, [SANDBOX_ERROR("unsupported_language")], f"unsupported language {item.language}"
        )
    files = written_files(item, files)  # the item's `candidate:` convention
    reasons, note = static_check(files, item)
    if reasons:
        return outcome(False, reasons, note)
    try:
        test_source = item.test_file.read_bytes()
    except OSError as exc:
        return outcome(False, [SANDBOX_ERROR("test_file")], str(exc))
    candidate = {
        n: c.encode("utf-8", "surrogatepass") for n, c in approved_files(files, item).items()
    }
    grader = _Grader(item, test_source, candidate, iso, workdir_parent, secret_names, allow_network)
    if item.isolation != ISOLATION_PROCESS:
        one = grader.once(modes.InProcessMode, item.timeout_s, ITEM_TIMEOUT)
        return outcome(one.passed, one.reasons, one.tail, failed_tests=one.failed_tests)
    if witness_alone:
        plain, seen = _alone(grader, always_witness)
    else:
        with CORES.claim() as spare:
            plain, seen = _both(grader, spare, always_witness)
    passed, reasons = witnessed(
        (plain.passed, plain.reasons), None if seen is None else (seen.passed, seen.reasons)
    )
    doubted = seen is not None and not seen.passed
    return outcome(
        passed,
        reasons,
        plain.tail,
        failed_tests=plain.failed_tests,
        witness_tail=seen.tail if doubted else "",
        witness_failed_tests=seen.failed_tests if doubted else [],
    )


def _both(grader: _Grader, spare: bool, always: bool) -> tuple[_Graded, _Graded | None]:
    """Plain pytest's grade and the witness's (None: not wanted, after a plain fail).

    With a core to spare, the witness starts beside plain pytest and is stopped if plain
    pytest fails (unless `always`): a pass then costs the longer of the two runs, not
    their sum. Without one (`--jobs` as many as the cores), it runs after a plain pass.
    """
    from evalpin.run import isolation as modes

    timeout_s = grader.item.timeout_s
    if not spare:
        plain = grader.once(modes.PlainMode, timeout_s, ITEM_TIMEOUT)
        if not (plain.passed or always):
            return plain, None
        return plain, grader.witness(witness_timeout(timeout_s, plain.seconds))
    stop_r, stop_w = os.pipe()
    # Plain pytest always ends first (before the item's timeout, which the witness's is
    # at least 4 times): its seconds then lengthen the witness's timeout if they count.
    budget = [witness_timeout(timeout_s)]
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="evalpin-witness") as pool:
            witness = pool.submit(grader.witness, budget[0], stop=stop_r, longer=budget)
            plain = grader.once(modes.PlainMode, timeout_s, ITEM_TIMEOUT)
            budget[0] = witness_timeout(timeout_s, plain.seconds)
            if not (plain.passed or always):
                os.write(stop_w, b"x")  # its grade is not wanted: stop it now
            seen = witness.result()
    finally:
        os.close(stop_r)
        os.close(stop_w)
    return plain, seen if plain.passed or always else None


def _alone(grader: _Grader, always: bool) -> tuple[_Graded, _Graded | None]:
    """Plain pytest's grade, then (on a pass, or `always`) the witness's with nothing
    else of this process's sandboxes alive."""
    from evalpin.run import isolation as modes

    plain = grader.once(modes.PlainMode, grader.item.timeout_s, ITEM_TIMEOUT)
    if not (plain.passed or always):
        return plain, None
    return plain, grader.witness(witness_timeout(grader.item.timeout_s, plain.seconds), alone=True)


class _Alone:
    """Who may run now: any number of sandboxed grades beside each other, or one witness
    alone. A witness waiting to run alone lets no new grade start, so it waits only for
    those already running."""

    def __init__(self) -> None:
        self.turn = threading.Condition()
        self.running = 0
        self.waiting = 0
        self.lone = False

    @contextlib.contextmanager
    def beside(self) -> Iterator[None]:
        with self.turn:
            self.turn.wait_for(lambda: not (self.lone or self.waiting))
            self.running += 1
        try:
            yield
        finally:
            with self.turn:
                self.running -= 1
                self.turn.notify_all()

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        with self.turn:
            self.waiting += 1
            self.turn.wait_for(lambda: not (self.lone or self.running))
            self.waiting -= 1
            self.lone = True
        try:
            yield
        finally:
            with self.turn:
                self.lone = False
                self.turn.notify_all()


ALONE = _Alone()


class _Cores:
    """The sandboxed grades this process runs at once, against its cores: the witness
    starts beside plain pytest only on a core no other grade is using, so it never
    slows `--jobs` as many as the cores."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.busy = 0
        self.cores = os.cpu_count() or 1

    @contextlib.contextmanager
    def claim(self) -> Iterator[bool]:
        """One core for this item's grades, and whether a second one was free (and is
        held for it too)."""
        with self.lock:
            spare = self.busy + 2 <= self.cores
            held = 2 if spare else 1
            self.busy += held
        try:
            yield spare
        finally:
            with self.lock:
                self.busy -= held


CORES = _Cores()


ITEM_TIMEOUT = "the item's timeout_s"
WITNESS_TIMEOUT = (
    f"the witness's timeout: {WITNESS_TIMEOUT_FACTOR}x the item's timeout_s, at least"
    f" {WITNESS_TIMEOUT_MIN_S:g} s and {WITNESS_PLAIN_FACTOR}x plain pytest's run here"
    f" (that part at most {WITNESS_PLAIN_CAP_S:g} s)"
)


@dataclass
class _Grader:
    """What every sandboxed run of one item's files shares."""

    item: CodingItem
    test_source: bytes
    candidate: dict[str, bytes]
    iso: Isolation
    workdir_parent: Path | None
    secret_names: frozenset[str]
    allow_network: bool

    def __post_init__(self) -> None:
        self.secret_values = _secret_values(self.secret_names)

    def once(
        self,
        mode: type,
        timeout: float,
        why: str,
        stop: int | None = None,
        alone: bool = False,
        longer: list[float] | None = None,
        cpu: float | None = None,
    ) -> _Graded:
        """One sandboxed run of a mode (`run/isolation.py`) and its own grade; `why`
        names the timeout in the line a timeout adds to the tail; `stop` and `longer` as
        `execute`'s (a stopped run's grade is a fail nobody reads); `alone`: with no
        other sandbox of this process alive (`ALONE`); `cpu`: the seconds its CPU limit
        allows for (the timeout's)."""
        with ALONE.alone() if alone else ALONE.beside():
            return self._once(mode, timeout, why, stop, longer, cpu or timeout)

    def witness(
        self,
        timeout: float,
        stop: int | None = None,
        alone: bool = False,
        longer: list[float] | None = None,
    ) -> _Graded:
        """The witness's run; its CPU limit allows for the longest timeout it may get."""
        from evalpin.run import isolation as modes

        most = witness_timeout_most(self.item.timeout_s)
        return self.once(modes.ProcessMode, timeout, WITNESS_TIMEOUT, stop, alone, longer, most)

    def _once(
        self,
        mode: type,
        timeout: float,
        why: str,
        stop: int | None,
        longer: list[float] | None,
        cpu: float,
    ) -> _Graded:
        item, iso = self.item, self.iso
        prepared = mode(item, self.test_source, self.candidate)
        try:
            with scratch(
                self.workdir_parent, iso.pids_cgroup, item.memory_mb, namespaces=iso.kind != "none"
            ) as box:
                env = _environment(box, iso, self.secret_names)
                specs = prepared.specs(box, env, rlimits(cpu))
                started = time.monotonic()
                run = execute(
                    iso, box, specs, timeout, allow_network=self.allow_network, stop=stop,
                    longer=longer,
                )  # fmt: skip
                seconds = time.monotonic() - started - run.starved
                timeout = max(timeout, longer[0]) if longer else timeout
                tail = _tail(run.output, box, self.secret_values)
                if run.starved >= _STARVED_NOTE_S:  # the run says so, whatever the grade
                    tail = _noted(tail, _starved(run.starved))
                if run.stopped:
                    return _Graded(False, [TESTS_FAILED()], tail)
                if not run.ready:
                    kind = "setup" if run.started else "start"
                    return _Graded(False, [SANDBOX_ERROR(kind)], tail)
                if box.cgroup is not None and box.cgroup.oom_killed():
                    cap = f"memory cap of {item.memory_mb} MiB reached (the item's memory_mb)"
                    return _Graded(False, [SANDBOX_ERROR("memory")], _noted(tail, cap))
                # A full private folder explains a timeout or a failed test (a writer
                # retrying, a test that could not write); a pass stands, and so does what
                # the judge found beyond a failed test (tampering, what the wire could not
                # carry).
                full = box.full()
                disk = _Graded(False, [SANDBOX_ERROR("disk")], _noted(tail, _DISK_NOTE))
                if run.timed_out:
                    if full:
                        return disk
                    killed = f"killed after {timeout:.0f} s ({why}"
                    killed += ", on the fair-share clock)" if run.starved else ")"
                    return _Graded(False, [TIMEOUT()], _noted(tail, killed))
                passed, reasons = prepared.judge(box, run.exit_code)
                uncarried = _uncarried(prepared, box)
                if not uncarried and SANDBOX_ERROR("unsupported") in reasons:
                    uncarried = _asides(prepared, "inherent")  # refused by design, each test
                if full and reasons == [TESTS_FAILED()] and not uncarried:
                    return disk
                named = TESTS_FAILED() in reasons or (uncarried and not passed)
                named = named or WITNESS("compared") in reasons
                failed = prepared.failed_tests(box) if named else []
                failed = [_scrubbed(name, box, self.secret_values) for name in failed]
                if uncarried:  # named where the tail shows it, after pytest's summary
                    said = _scrubbed(uncarried, box, self.secret_values)
                    tail = _noted(tail, f"the witness could not carry: {said}")
                elif WITNESS("compared") in reasons:
                    said = _scrubbed(_asides(prepared), box, self.secret_values)
                    tail = _noted(tail, f"the judge did not believe: {said}")
                return _Graded(passed, reasons, tail, failed, seconds)
        except OSError as exc:
            return _Graded(False, [SANDBOX_ERROR("workdir")], f"{type(exc).__name__}: {exc}")


def _uncarried(prepared: object, box: Box) -> str:
    """The first operations the wire could not carry (the witness's notes file, read
    where the sandbox left it), or ""."""
    from evalpin.run.isolation import ProcessMode

    if not isinstance(prepared, ProcessMode):
        return ""
    notes = prepared.notes.read()
    asides = set(witness_notes.asides(notes))
    lines = notes.decode("utf-8", "replace").split("\n")
    return "; ".join([line for line in lines if line.strip() and line not in asides][:3])


def _asides(prepared: object, kind: str = "") -> str:
    """The first asides of the witness's notes (of `kind`, when given): comparisons whose
    answer, the candidate's word, the judge did not believe, or what it refuses by
    design in the failing tests; or ""."""
    from evalpin.run.isolation import ProcessMode

    if not isinstance(prepared, ProcessMode):
        return ""
    rows = witness_notes.asides(prepared.notes.read())
    chosen = [r for r in rows if r.startswith(f"[{kind}] ")] if kind else rows
    return "; ".join(chosen[:3])


# A run that waited this long for a CPU its neighbours held says so in its tail.
_STARVED_NOTE_S = 0.5


def _starved(seconds: float) -> str:
    return (
        f"starved: {seconds:.1f} s spent waiting for a CPU other sandboxes held;"
        f" not counted against the timeout (at most {FAIR_CAP}x it on the wall clock)"
    )


def _noted(tail: str, note: str) -> str:
    """The tail with a line of evalpin's own at its end."""
    return (tail + "\n[evalpin] " + note)[-TAIL_CHARS:]


def _environment(box: Box, iso: Isolation, secret_names: Iterable[str]) -> dict[str, str]:
    """Built from an allow-list, never inherited wholesale: nothing named PYTHON*,
    PYTEST_* or like a key gets through. HOME and TMPDIR point into the private /tmp
    (into the box when there is no private root)."""
    refused = set(secret_names)
    env = {k: os.environ[k] for k in _ALLOWED_ENV if k in os.environ and k not in refused}
    env.setdefault("PATH", os.defpath)
    tmp = "/tmp" if iso.kind != "none" else str(box.folder("tmp"))
    env.update(HOME=tmp, TMPDIR=tmp, **PYTEST_ENV)
    return env


def _secret_values(secret_names: Iterable[str]) -> list[str]:
    from evalpin.run.scrub import secret_values

    return secret_values(secret_names)


def _tail(output: bytes, box: Box, secret_values: list[str]) -> str:
    """The end of the output with the random temp paths made relative (so tails of
    identical runs compare equal) and secret values replaced."""
    return _scrubbed(output.decode("utf-8", "replace"), box, secret_values)[-TAIL_CHARS:]


def _scrubbed(text: str, box: Box, secret_values: list[str]) -> str:
    text = re.sub(re.escape(str(box.root)) + r"/[\w.-]+/", "", text)
    # the witness's report is a descriptor of its own: named as plain pytest's is
    text = _REPORT_FD.sub("generated xml file: report.xml", text)
    text = text.replace(str(box.root), "<sandbox>")
    # Any other folder of evalpin's own (the shared runtime folder, another case's
    # scratch), wherever a sandbox read its host path (the mount table names them).
    text = _evalpin_folders_hidden(text)
    for value in secret_values:
        text = text.replace(value, "[redacted]")
    return text


# One of evalpin's scratch folders (`box.scratch`'s names), at the end of a host path.
_EVALPIN_FOLDER = re.compile(r"/evalpin-\d+-\w+")
_PATH_STOPS = frozenset(" \t\r\n'\"=:,;()[]<>")


def _evalpin_folders_hidden(text: str) -> str:
    """`text` with each host path up to one of evalpin's scratch folders shown as
    `<evalpin>` (in linear time: each path is walked back from its folder once); a
    name at the top (`/evalpin-PID-...` of a cgroup) is left."""
    parts, last = [], 0
    for found in _EVALPIN_FOLDER.finditer(text):
        start = found.start()
        while start > last and text[start - 1] not in _PATH_STOPS:
            start -= 1
        if start == found.start():
            continue  # no folder above it: a name (a cgroup's), not a host path
        parts += [text[last:start], "<evalpin>"]
        last = found.end()
    return "".join([*parts, text[last:]])
