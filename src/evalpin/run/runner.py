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

import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from evalpin.core.bounded import MAX_LINE_BYTES
from evalpin.core.errors import InputError
from evalpin.core.instrument.pins import grader_version
from evalpin.core.read.runfile import RecordTooLarge, RunWriter, read_run, trim_torn_tail
from evalpin.core.reasons import PROVIDER_ERROR
from evalpin.core.records import ERROR, CaseRecord, RunHeader, Summary, Usage
from evalpin.run import events, probes
from evalpin.run.case_executor import Executor
from evalpin.run.executors import ExecutorLost
from evalpin.run.pace import TICK_S, Pace, PaceTicker
from evalpin.run.plan import Pair, Plan, utc_now
from evalpin.run.resume import drop_errors, resume_conflicts
from evalpin.run.scrub import scrub_record, secret_values
from evalpin.run.slots import Slot


@dataclass
class Tally:
    """Counts shown by progress displays and the summary."""

    total: int
    done: int = 0
    passed: int = 0
    errors: int = 0  # neither passed nor failed: could not be judged
    disputed: int = 0  # neither passed nor failed: plain pytest passed, the witness did not
    started: float = field(default_factory=time.monotonic)

    @property
    def failed(self) -> int:
        return self.done - self.passed - self.errors - self.disputed

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class Interrupted(Exception):
    """The run was stopped (Ctrl-C or SIGTERM); the file is whole and resumable."""

    def __init__(self, out: Path, done: int, total: int) -> None:
        self.out, self.done, self.total = out, done, total
        super().__init__(f"interrupted after {done} of {total} cases")


def pinning_digest(header: RunHeader) -> str | None:
    """The probes' digest when they pin the backend: answered, alike twice, and the slot
    not declared non-deterministic."""
    p = header.probes or {}
    if p.get("deterministic") and p.get("repeatable") and p.get("start"):
        return str(p["start"])
    return None


def run(
    plan: Plan,
    slot: Slot,
    *,
    resume: bool,
    emit: Callable[[events.Event], None],
    stop: threading.Event | None = None,
    retry_errors: bool = False,
) -> Summary:
    """Execute `plan` into `plan.out`. Raises Interrupted (file whole, resumable), also
    for a Ctrl-C or SIGTERM at any point, counting only the cases of the file this run
    held: none before it had the file's lock (another writer's cases are not its own).
    `retry_errors` (with `resume`): the file's error cases are taken out, with its
    trailer, and asked again; no other line changes. Disputed cases stay: their answer
    passed plain pytest, and asking again would only replace it."""
    held: list[Tally] = []  # this run's tally, once it holds the file
    try:
        return _run(plan, slot, resume, emit, stop or threading.Event(), retry_errors, held)
    except KeyboardInterrupt:
        done = held[0].done if held else 0
        raise Interrupted(plan.out, done, len(plan.pairs)) from None


def _run(
    plan: Plan,
    slot: Slot,
    resume: bool,
    emit: Callable[[events.Event], None],
    stop: threading.Event,
    retry_errors: bool,
    held: list[Tally],
) -> Summary:
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
        errors_left = sum(r.errored for r in existing.rows)  # disputed cases stay
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
        writer.adopt()  # read exactly (no trailer yet): the new trailer vouches for them
        done = {(r.case_id, r.seed) for r in existing.rows}
        todo = [pair for pair in todo if pair not in done]
        resumed = len(done)
        tally = Tally(total=len(plan.pairs), done=len(existing.rows))
        tally.passed = sum(r.passed for r in existing.rows)
        tally.errors = sum(r.errored for r in existing.rows)
        tally.disputed = sum(r.disputed for r in existing.rows)
        held.append(tally)
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
        tally = Tally(total=len(plan.pairs))
        held.append(tally)
        writer.write(header)
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
            try:
                writer.write(record)
            except RecordTooLarge as exc:
                record = _oversized(record, exc.size)
                writer.write(record)
            tally.done += 1
            tally.passed += record.passed
            tally.errors += record.errored
            tally.disputed += record.disputed
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
                    disputed=tally.disputed,
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
            failed=summary.records - summary.passed - summary.errors - summary.disputed,
            errors=summary.errors,
            disputed=summary.disputed,
            seconds=round(tally.elapsed, 3),
            usage=summary.usage,
            rate_limited=final.rate_limited,
            waited=final.waited_s or None,
            lowest_limit=final.lowest if final.rate_limited else 0,
        )
    )
    return summary


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
            except (msgspec.MsgspecError, RecursionError):
                continue
            if parsed.record == "case" and parsed.usage is not None:
                total = parsed.usage if total is None else total + parsed.usage
    return total


def _summary(out: Path, tally: Tally, resumed: int) -> Summary:
    from evalpin.core.columns import judged
    from evalpin.core.judge import stats

    rows = read_run(out).rows
    rates = stats.pass_rate_by_seed(judged(rows))  # error and disputed cases apart
    return Summary(
        finished_at=utc_now(),
        records=len(rows),
        passed=sum(r.passed for r in rows),
        errors=sum(r.errored for r in rows),
        disputed=sum(r.disputed for r in rows),
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


def _oversized(record: CaseRecord, size: int) -> CaseRecord:
    """A case whose record would pass the reader's line limit (a completion of tens of
    megabytes of escapes): kept as an error case of its own, `provider_error:oversized`,
    with its digests and tails but not what made it too large, so the file reads back
    whole."""
    why = (
        f"the case's record ({size:,} bytes) is over the run file's line limit"
        f" ({MAX_LINE_BYTES:,} bytes): its completion, files and test names are not kept"
    )
    return msgspec.structs.replace(
        record,
        passed=False,
        status=ERROR,
        reasons=[PROVIDER_ERROR("oversized")],
        text=None,
        tools=None,
        turns=None,
        files=None,
        failed_tests=None,
        witness_failed_tests=None,
        error=why,
    )
