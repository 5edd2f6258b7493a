"""A pinned run: every (case, seed) asked of a slot, graded, and appended to a run file.

The header pins the instrument before the first case runs; each case line is appended
the moment it is graded (one `os.write`, so a kill leaves whole lines); the summary
trailer is written only when every pair is done. `--resume` finishes the missing pairs
of an unfinished file, and refuses when anything that decides a grade has changed.

Two limits, apart: `--concurrency` completions in flight (the slot's `Pace`, adapting to
rate limits) and `--jobs` grading processes (a semaphore around the sandbox), so a live
endpoint sets the pace of a golden set and a coding set never starts more sandboxed
pytest processes than cores.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.fixtures import (
    ISOLATION_IN_PROCESS,
    KIND_CODING,
    CodingItem,
    FixtureSet,
    GoldenCase,
)
from evalpin.core.graders.coding import files_from_completion
from evalpin.core.graders.tools import grade_golden
from evalpin.core.pins import (
    completion_digest,
    env_components,
    env_digest,
    grader_version,
    probe_tagged,
    scorer_commit,
    text_digest,
)
from evalpin.core.reasons import SANDBOX_ERROR, status_of
from evalpin.core.records import (
    SCHEMA,
    CaseRecord,
    Completion,
    CompletionRequest,
    FixturesInfo,
    Message,
    RunHeader,
    Summary,
    Usage,
)
from evalpin.core.runfile import RunWriter, read_run, trim_torn_tail
from evalpin.run import events, probes
from evalpin.run.controls import Controls
from evalpin.run.executors import ExecutorLost, GradeJob, GradingExecutor, LocalExecutor
from evalpin.run.pace import DEFAULT_CONCURRENCY, TICK_S, Pace, PaceTicker
from evalpin.run.scrub import scrub_record, secret_values
from evalpin.run.slots import Slot, SlotConfig, SlotError

Pair = tuple[str, int]

REPAIR_PROMPT = (
    "The tests failed. This is the end of the test output:\n\n{tail}\n\n"
    "Reply with the complete corrected files."
)


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Plan:
    """Everything a run needs, resolved and validated before anything is written."""

    fixtures: FixtureSet
    fixtures_arg: str  # the fixture path as the user gave it (recorded, relative)
    slot_config: SlotConfig
    controls: Controls
    out: Path
    jobs: int
    workdir: Path | None = None
    isolation: Any = None  # sandbox.Isolation for coding sets
    concurrency: int = DEFAULT_CONCURRENCY
    # No --concurrency given: the limit is found, up to `concurrency` (run/pace.py).
    adaptive: bool = False
    grading: GradingExecutor | None = None  # None: graded in the runner's own threads
    lock: str | None = None  # the set against its lock: matched, edited, bumped, unsealed
    default_name: bool = False  # `out` was picked here: another free name if it is taken

    def grader(self) -> GradingExecutor:
        """Where coding items are graded (executors.py); local unless one was given."""
        if self.grading is None:
            self.grading = LocalExecutor(
                self.jobs,
                workdir=self.workdir,
                secret_names=self.slot_config.secret_env_names(),
                isolation=self.isolation,
            )
        return self.grading

    @property
    def workers(self) -> int:
        """Threads, each carrying one case: enough for `concurrency` completions in
        flight, and for `jobs` graders on a coding set. Threads help only when a case
        waits (a sandbox, a network or a program): golden cases on a provider that
        answers from memory run faster in one thread."""
        coding = self.fixtures.kind == KIND_CODING
        if not self.slot_config.threads_help:
            return self.jobs if coding else 1
        return max(self.jobs, self.concurrency) if coding else self.concurrency

    def execution(self) -> dict[str, Any]:
        """How the run is executed; recorded, never compared (not in the env digest)."""
        executor = self.grader().describe(self.controls.values())
        concurrency = f"auto (up to {self.concurrency})" if self.adaptive else self.concurrency
        return {"jobs": self.jobs, "concurrency": concurrency, "executor": executor}

    @property
    def pairs(self) -> list[Pair]:
        return [(case.id, seed) for case in self.fixtures.cases for seed in self.controls.seeds]

    def header(self) -> RunHeader:
        fs = self.fixtures
        values = self.controls.values()
        packages = ["pytest"] if fs.kind == KIND_CODING else []
        components = env_components(packages, values)
        if self.isolation is not None:
            components["sandbox"] = self.isolation.kind
        return RunHeader(
            schema=SCHEMA,
            run_id=uuid.uuid4().hex[:12],
            started_at=utc_now(),
            fixtures=FixturesInfo(
                path=self.fixtures_arg,
                kind=fs.kind,
                dataset_id=fs.dataset_id,
                dataset_version=fs.dataset_version,
                dataset_hash=fs.dataset_hash,
                network=fs.network_policy,
                holdout_policy=fs.holdout_policy,
                envelope_hash=fs.envelope_hash,
                files={name: sha[:16] for name, sha in sorted(fs.files.items())},
                lock=self.lock,
            ),
            grader_version=grader_version(),
            model_slot=self.slot_config.label,
            slot=self._slot_settings(),
            seeds=list(self.controls.seeds),
            controls=values,
            env_digest=env_digest(components),
            env=components,
            scorer_commit=scorer_commit(fs.path.parent),
            control_sources=dict(self.controls.sources),
            graded_in_process=[
                c.id for c in fs.cases if getattr(c, "isolation", None) == ISOLATION_IN_PROCESS
            ],
            execution=self.execution(),
        )

    def _slot_settings(self) -> dict[str, Any]:
        """The slot's public settings and its settings digest (null for a slot that has
        none by design, which a reader tells from a run made before digests existed)."""
        digest = self.slot_config.settings_digest()
        return self.slot_config.header_settings() | {"settings_digest": digest}


@dataclass
class Tally:
    """Counts shown by progress displays and the summary."""

    total: int
    done: int = 0
    passed: int = 0
    errors: int = 0  # neither passed nor failed: could not be judged
    started: float = field(default_factory=time.monotonic)

    @property
    def failed(self) -> int:
        return self.done - self.passed - self.errors

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class Interrupted(Exception):
    """The run was stopped (Ctrl-C or SIGTERM); the file is whole and resumable."""

    def __init__(self, out: Path, done: int, total: int) -> None:
        self.out, self.done, self.total = out, done, total
        super().__init__(f"interrupted after {done} of {total} cases")


class Executor:
    """Asks the slot, grades, and builds the case record for one (case, seed)."""

    def __init__(
        self,
        plan: Plan,
        slot: Slot,
        grader: str,
        slot_settings: str | None = None,
        probe_digest: str | None = None,
    ) -> None:
        self.plan = plan
        # Joined to every reported model when the probes pin the backend (run/probes.py).
        self.probe_digest = probe_digest
        self.slot = slot
        self.grader = grader
        # The slot's settings digest as the header pinned it, on every record.
        self.slot_settings = slot_settings
        self.cases = {case.id: case for case in plan.fixtures.cases}
        # Never handed to model code: the sandbox drops these names and cuts their values.
        self.secret_names = list(plan.slot_config.secret_env_names())
        # At most --jobs graders at once, however many completions are in flight.
        self.graders = threading.BoundedSemaphore(plan.jobs)
        self.grading = plan.grader()  # where they grade: here, or on a cluster
        self.lost: list[str] = []  # why the executor stopped grading, when it did

    def complete(self, request: CompletionRequest) -> Completion:
        """The slot's completion, holding a pace permit unless the slot holds its own or
        answers from memory (nothing in flight to bound)."""
        if self.slot.paces_requests or not self.plan.slot_config.threads_help:
            return self.slot.complete(request)
        with self.slot.pace.request():
            return self.slot.complete(request)

    def request(
        self,
        case_id: str,
        seed: int,
        messages: list[Message],
        tools: list[Any],
        tool_results: dict[str, Any] | None = None,
    ) -> CompletionRequest:
        c = self.plan.controls
        return CompletionRequest(
            case_id=case_id,
            seed=seed,
            messages=messages,
            tools=tools,
            temperature=c.temperature,
            max_tokens=c.max_tokens,
            tool_results=tool_results or {},
            max_turns=c.max_turns,
        )

    def __call__(self, pair: Pair) -> CaseRecord:
        case_id, seed = pair
        case = self.cases[case_id]
        started = time.monotonic()
        if isinstance(case, GoldenCase):
            record = self._golden(case, seed)
        else:
            record = self._coding(case, seed)
        record.seconds = round(time.monotonic() - started, 3)
        return record

    def _base(self, case: GoldenCase | CodingItem, seed: int, reasons: list[str]) -> CaseRecord:
        return CaseRecord(
            case.id,
            not reasons,
            seed=seed,
            fixture_hash=case.fixture_hash,
            grader_version=self.grader,
            model_slot=self.plan.slot_config.label,
            reasons=reasons,
            slot_settings=self.slot_settings,
            status=status_of(reasons),
        )

    def _fill(self, record: CaseRecord, completion: Completion | None) -> CaseRecord:
        if completion is not None:
            record.tool_names = [t.name for t in completion.tools]
            record.text_digest = text_digest(completion.text)
            record.completion_digest = completion_digest(completion)
            record.reported_model = probe_tagged(completion.model, self.probe_digest)
            record.text = completion.text
            record.tools = list(completion.tools) or None
            record.turns = list(completion.turns) or None
            record.files = dict(completion.files) or None
            record.usage = completion.usage
            record.finish_reason = completion.finish_reason
        else:
            record.tool_names = []
        return record

    def _failed(self, case: GoldenCase | CodingItem, seed: int, exc: SlotError) -> CaseRecord:
        """An error case: no usable completion. The failure's own words and what the
        request got before it failed (turns, tokens) are kept; the runner's scrub cuts
        secret values from them before the record is written."""
        record = self._fill(self._base(case, seed, [exc.reason]), exc.partial)
        record.error = (exc.detail or exc.reason)[:ERROR_CHARS]
        return record

    def _golden(self, case: GoldenCase, seed: int) -> CaseRecord:
        messages = [Message("user", case.user)]
        request = self.request(case.id, seed, messages, case.tools, case.tool_results)
        try:
            completion = self.complete(request)
        except SlotError as exc:
            return self._failed(case, seed, exc)
        return self._fill(self._base(case, seed, grade_golden(case, completion)), completion)

    def _coding(self, item: CodingItem, seed: int) -> CaseRecord:
        if item.language.lower() != "python":
            return self._fill(self._base(item, seed, [SANDBOX_ERROR("unsupported_language")]), None)
        messages = [Message("user", item.prompt)]
        completion: Completion | None = None
        outcome = None
        error = None
        loops = 0
        usage: Usage | None = None  # over every round: each one was paid for
        for attempt in range(self.plan.controls.loops + 1):
            try:
                answer = self.complete(self.request(item.id, seed, messages, []))
            except SlotError as exc:
                if completion is None:
                    return self._failed(item, seed, exc)
                error = f"repair round {attempt}: {exc.reason}"  # keep the last graded try
                break
            completion, loops = answer, attempt
            if answer.usage is not None:
                usage = answer.usage if usage is None else usage + answer.usage
            files = files_from_completion(answer, item.expected_files)
            with self.graders:
                outcome = self.grading.grade(GradeJob(item, files, seed))
            if outcome.passed:
                break
            messages = [
                *messages,
                Message("assistant", answer.text),
                Message("user", REPAIR_PROMPT.format(tail=outcome.tail)),
            ]
        assert outcome is not None
        record = self._fill(self._base(item, seed, list(outcome.reasons)), completion)
        record.tail = outcome.tail
        record.failed_tests = list(outcome.failed_tests) or None
        record.loops = loops
        record.error = error
        record.usage = usage
        return record


ERROR_CHARS = 2000  # of a failure's own message, on its record


def pinning_digest(header: RunHeader) -> str | None:
    """The probes' digest when they pin the backend: answered, alike twice, and the slot
    not declared non-deterministic."""
    p = header.probes or {}
    if p.get("deterministic") and p.get("repeatable") and p.get("start"):
        return str(p["start"])
    return None


def default_out(fixtures: FixtureSet, slot_label: str, runs_dir: Path = Path("runs")) -> Path:
    """runs/DATE-SLOT-HASH8.jsonl, numbered when taken (never overwritten)."""
    stem = f"{dt.date.today().isoformat()}-{slot_label}-{fixtures.dataset_hash[:8]}"
    candidate = runs_dir / f"{stem}.jsonl"
    n = 2
    while candidate.exists():
        candidate = runs_dir / f"{stem}-{n}.jsonl"
        n += 1
    return candidate


def resume_conflicts(old: RunHeader, new: RunHeader) -> list[str]:
    """What changed since the header was written; any change refuses the resume."""
    out = []
    pairs = {
        "fixtures (dataset hash)": (old.fixtures.dataset_hash, new.fixtures.dataset_hash),
        "fixtures (envelope hash)": (old.fixtures.envelope_hash, new.fixtures.envelope_hash),
        "grader version": (old.grader_version, new.grader_version),
        "model slot": (old.model_slot, new.model_slot),
        "slot settings": (old.slot, new.slot),
        "controls": (old.controls, new.controls),
        "environment digest": (old.env_digest, new.env_digest),
    }
    for name, (was, now) in pairs.items():
        if was != now:
            out.append(f"{name}: {was!r} then, {now!r} now")
    return out


def run(
    plan: Plan,
    slot: Slot,
    *,
    resume: bool,
    emit: Callable[[events.Event], None],
    stop: threading.Event | None = None,
    retry_errors: bool = False,
) -> Summary:
    """Execute `plan` into `plan.out`. Raises Interrupted (file whole, resumable).
    `retry_errors` (with `resume`): the file's error cases are taken out, with its
    trailer, and asked again; no other line changes."""
    stop = stop or threading.Event()
    slot.pace = pace = Pace(plan.concurrency, adaptive=plan.adaptive)
    header = plan.header()
    header.replay_of = slot.replay_of
    todo = plan.pairs
    resumed = 0
    # The lock first (one writer per file), then what the file holds. A file killed
    # before its header holds nothing to resume: it starts afresh, as a new run does.
    writer = RunWriter(plan.out, new=False) if resume else None
    if writer is not None and os.path.getsize(plan.out) > 0:
        try:
            trimmed = trim_torn_tail(plan.out)
            existing = read_run(plan.out)
        except BaseException:
            writer.close()
            raise
        problem = None
        errors_left = sum(r.errored for r in existing.rows)
        retry = retry_errors and errors_left > 0
        if existing.header is None:
            problem = "cannot resume: not an evalpin run file"
        elif existing.summary is not None and not retry:
            problem = "cannot resume: the run is already complete" + (
                f"; re-ask its {errors_left} error case(s) with --retry-errors"
                if errors_left
                else "; it has no error cases to retry"
                if retry_errors
                else ""
            )
        elif conflicts := resume_conflicts(existing.header, header):
            problem = "cannot resume, changed since the run began: " + "; ".join(conflicts)
        if problem is None and retry:
            try:  # only once nothing refuses: a refused retry changes nothing
                retried = drop_errors(writer, plan.out)
                existing = read_run(plan.out)
            except BaseException:
                writer.close()
                raise
        else:
            retried = 0
        if problem is not None:
            writer.close()
            raise InputError(plan.out, problem)
        done = {(r.case_id, r.seed) for r in existing.rows}
        todo = [pair for pair in todo if pair not in done]
        resumed = len(done)
        tally = Tally(total=len(plan.pairs), done=len(existing.rows))
        tally.passed = sum(r.passed for r in existing.rows)
        tally.errors = sum(r.errored for r in existing.rows)
        if trimmed:
            emit(events.WarningEvent(f"trimmed a torn last line ({trimmed} bytes)"))
        if retried:
            emit(events.WarningEvent(f"asking again {retried} error case(s)"))
        header = existing.header
    else:
        if writer is None:
            plan.out.parent.mkdir(parents=True, exist_ok=True)
            writer = (
                RunWriter.claim(plan.out) if plan.default_name else RunWriter(plan.out, new=True)
            )
            plan.out = Path(writer.path)
        header.warnings = list(slot.warnings)
        config = plan.slot_config
        if config.probes:  # before the header: their digest is in it
            slot.pace = Pace(len(config.probes))  # side by side, not a window of the run's
            result = probes.send(slot, config.probes, twice=True)
            slot.pace = pace
            header.probes = result.header(config.probes, config.deterministic)
            if result.failed:
                emit(events.WarningEvent(f"calibration probes not answered: {result.failed}"))
            elif not result.repeatable:
                emit(
                    events.WarningEvent(
                        "the backend answered a calibration probe twice differently at "
                        "temperature 0: it cannot be pinned by its answers"
                    )
                )
        writer.write(header)
        tally = Tally(total=len(plan.pairs))
    for warning in slot.warnings:
        emit(events.WarningEvent(warning))
    emit(
        events.StartEvent(
            out=str(plan.out),
            run_id=header.run_id,
            total=tally.total,
            todo=len(todo),
            network=plan.controls.network,
        )
    )
    execute = Executor(
        plan,
        slot,
        header.grader_version or grader_version(),
        header.slot.get("settings_digest"),
        pinning_digest(header),
    )
    secrets = secret_values(execute.secret_names)
    ticker = PaceTicker(pace, emit)
    with writer:
        for record in _results(execute, todo, plan.workers, stop, ticker.tick):
            record = scrub_record(record, secrets)  # the one place case records are written
            writer.write(record)
            tally.done += 1
            tally.passed += record.passed
            tally.errors += record.errored
            now = pace.state()
            emit(
                events.CaseEvent(
                    case_id=record.case_id,
                    seed=record.seed,
                    passed_case=record.passed,
                    reasons=record.reasons,
                    done=tally.done,
                    total=tally.total,
                    passed=tally.passed,
                    failed=tally.failed,
                    errors=tally.errors,
                    elapsed=round(tally.elapsed, 3),
                    in_flight=now.in_flight,
                    limit=now.limit,
                )
            )
        if stop.is_set():
            for why in sorted(set(execute.lost)):
                emit(events.WarningEvent(why))
            raise Interrupted(plan.out, tally.done, tally.total)
        summary = _summary(plan.out, tally, resumed)
        if header.probes and header.probes.get("start"):
            slot.pace = Pace(len(plan.slot_config.probes))
            end = probes.send(slot, plan.slot_config.probes, twice=False)
            summary.probes_end = end.digest
            if end.digest is not None and end.digest != header.probes["start"]:
                emit(
                    events.WarningEvent(
                        "the backend answered its calibration probes otherwise after the "
                        "run than before it: it changed while the run ran"
                    )
                )
        writer.write(summary)
    final = pace.state()
    emit(
        events.DoneEvent(
            out=str(plan.out),
            records=summary.records,
            passed=summary.passed,
            failed=summary.records - summary.passed - summary.errors,
            errors=summary.errors,
            seconds=round(tally.elapsed, 3),
            usage=summary.usage,
            rate_limited=final.rate_limited,
            waited=final.waited_s or None,
            lowest_limit=final.lowest if final.rate_limited else 0,
        )
    )
    return summary


class _Line(msgspec.Struct):
    """What dropping error cases reads of a line."""

    record: str | None = None
    status: str | None = None


_LINE = msgspec.json.Decoder(_Line)


def drop_errors(writer: RunWriter, out: Path) -> int:
    """Take the error cases and the trailer out of a run file (the writer holds its lock),
    every other line kept byte for byte; the number of error cases taken out."""
    kept: list[bytes] = []
    dropped = 0
    with open(out, "rb") as fh:
        for line in fh:
            if b'"status"' in line or b'"summary"' in line:
                try:
                    parsed = _LINE.decode(line)
                except msgspec.MsgspecError:
                    parsed = _Line()
                if parsed.record == "summary":
                    continue
                if parsed.record == "case" and parsed.status is not None:
                    dropped += 1
                    continue
            kept.append(line)
    if dropped:
        writer.rewrite(b"".join(kept))
    return dropped


class _UsageLine(msgspec.Struct):
    """Only what the usage total reads of a run-file line."""

    record: str | None = None
    usage: Usage | None = None


_USAGE = msgspec.json.Decoder(_UsageLine)


def usage_total(out: Path) -> Usage | None:
    """Tokens summed over the file's case records (also those of an earlier, resumed
    process); None when no record carries usage."""
    total: Usage | None = None
    with open(out, "rb") as fh:
        for line in fh:
            if b'"usage"' not in line:
                continue
            try:
                parsed = _USAGE.decode(line)
            except msgspec.MsgspecError:
                continue
            if parsed.record == "case" and parsed.usage is not None:
                total = parsed.usage if total is None else total + parsed.usage
    return total


def _summary(out: Path, tally: Tally, resumed: int) -> Summary:
    from evalpin.core import stats

    rows = read_run(out).rows
    rates = stats.pass_rate_by_seed(rows)
    return Summary(
        finished_at=utc_now(),
        records=len(rows),
        passed=sum(r.passed for r in rows),
        errors=sum(r.errored for r in rows),
        seconds=round(tally.elapsed, 3),
        pass_rate_by_seed={str(s): round(r, 6) for s, r in rates.items()},
        resumed=resumed,
        usage=usage_total(out),
    )


def _results(
    execute: Executor,
    todo: list[Pair],
    jobs: int,
    stop: threading.Event,
    tick: Callable[[], None] = lambda: None,
) -> Iterator[CaseRecord]:
    """Records in plan order, so two runs of the same inputs write the same file.

    With several jobs, a record that finishes early waits in a small buffer for the
    ones before it. An executor that can no longer grade (ExecutorLost) stops the run
    like an interrupt. On interrupt no new case starts; those running finish (model code
    runs in its own session, so Ctrl-C does not reach it) and everything finished is
    still yielded, in order with gaps; then the caller sees `stop` set.
    """
    if jobs <= 1:
        for pair in todo:
            if stop.is_set():
                return
            try:
                yield execute(pair)
            except KeyboardInterrupt:
                stop.set()
                return
            except ExecutorLost as exc:
                execute.lost.append(str(exc))
                stop.set()
                return
        return
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="evalpin-case") as pool:
        running: dict[Future[CaseRecord], int] = {}
        finished: dict[int, CaseRecord] = {}
        submitted = next_out = 0
        while submitted < len(todo) or running:
            while not stop.is_set() and submitted < len(todo) and len(running) < jobs:
                running[pool.submit(execute, todo[submitted])] = submitted
                submitted += 1
            if not running:
                break
            try:
                done, _ = wait(running, timeout=TICK_S, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:
                stop.set()
                continue
            tick()
            for future in done:
                index = running.pop(future)
                try:
                    finished[index] = future.result()
                except ExecutorLost as exc:  # its pair stays to do; the rest drain
                    execute.lost.append(str(exc))
                    stop.set()
            while next_out in finished:
                yield finished.pop(next_out)
                next_out += 1
        for index in sorted(finished):  # after an interrupt: what finished, past the gap
            yield finished[index]


def default_jobs() -> int:
    return os.cpu_count() or 1
