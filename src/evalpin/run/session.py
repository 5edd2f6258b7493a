"""One `evalpin run` invocation: from what the user asked to an exit code.

Everything that can be wrong with the inputs is found before the run file is created
(InputError, exit 3), so a refused run writes nothing. `--resume` takes its defaults
from the unfinished file's header, so `evalpin run --resume --out FILE` is enough.
"""

from __future__ import annotations

import dataclasses
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import KIND_CODING, load_fixtures
from evalpin.core.judge.limits_rule import unenforced
from evalpin.core.read.runfile import read_run
from evalpin.core.records import RunHeader, Summary
from evalpin.run import events
from evalpin.run.controls import (
    NETWORK_NOT_APPLICABLE,
    WITNESS_BESIDE,
    resolve_controls,
    resolve_fixtures,
    resolve_workdir,
)
from evalpin.run.pace import DEFAULT_CONCURRENCY
from evalpin.run.plan import Plan, default_jobs, default_out
from evalpin.run.runner import Interrupted, run
from evalpin.run.slots import DEFAULT_SLOTS_FILE, inline_spec, open_slot, resolve_slot

EXIT_DONE, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130


@dataclass(frozen=True)
class RunRequest:
    """The options of `evalpin run`, unresolved (None: not given)."""

    fixtures: Path | None = None
    slot: str | None = None
    slots_file: Path | None = None
    seeds: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    loops: int | None = None
    max_turns: int | None = None
    jobs: int | None = None
    out: Path | None = None
    resume: bool = False
    retry_errors: bool = False  # with resume: re-ask the file's error cases
    cluster: str | None = None  # tcp://HOST:PORT of a Dask scheduler, or local:N
    concurrency: int | None = None
    witness: str | None = None  # "beside" (default) or "alone" (coding sets)
    allow_unenforced: bool = False  # run even where a limit cannot be enforced


def _shown_path(path: Path) -> str:
    """The fixture path as recorded: relative to the working folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _resume_defaults(request: RunRequest) -> tuple[RunRequest, RunHeader | None]:
    if request.out is None:
        raise InputError("--resume", "needs --out FILE: the unfinished run to finish")
    if (
        request.out.is_file()
        and request.out.stat().st_size == 0
        and request.fixtures
        and request.slot
    ):
        return request, None  # killed before its header: started afresh (runner.run)
    header = read_run(request.out).header
    if header is None:
        raise InputError(request.out, "cannot resume: not an evalpin run file (no header)")
    slot = request.slot
    inline = inline_spec(header.model_slot, header.slot) if header.model_slot else None
    if slot is None and inline is not None:
        slot_file = request.slots_file or DEFAULT_SLOTS_FILE
        # An inline slot is not in any slots file: rebuild its inline form.
        if not (slot_file.exists() and header.model_slot in _labels(slot_file)):
            slot = inline
    c = header.controls
    return (
        RunRequest(
            fixtures=request.fixtures or Path(header.fixtures.path),
            slot=slot or header.model_slot,
            slots_file=request.slots_file,
            seeds=request.seeds or ",".join(map(str, header.seeds)),
            temperature=request.temperature
            if request.temperature is not None
            else c.get("temperature"),
            max_tokens=request.max_tokens
            if request.max_tokens is not None
            else c.get("max_tokens"),
            loops=request.loops if request.loops is not None else c.get("loops"),
            max_turns=request.max_turns if request.max_turns is not None else c.get("max_turns"),
            witness=request.witness or c.get("witness"),
            allow_unenforced=request.allow_unenforced,
            jobs=request.jobs,
            out=request.out,
            resume=True,
            retry_errors=request.retry_errors,
            cluster=request.cluster,
            concurrency=request.concurrency,
        ),
        header,
    )


def _labels(slots_file: Path) -> set[str]:
    from evalpin.run.slots import load_slots

    return set(load_slots(slots_file))


def plan_run(request: RunRequest, env: Mapping[str, str]) -> Plan:
    """Resolve and validate every input; nothing is written."""
    if request.resume:
        request, _ = _resume_defaults(request)
    fixtures_path, _ = resolve_fixtures(request.fixtures, env)
    fixtures = load_fixtures(fixtures_path)
    from evalpin.core.instrument.seal import lock_state  # a garbage lock is bad input: exit 3

    lock = lock_state(fixtures).status
    if not request.slot:
        raise InputError(
            "--slot", "no slot: pass --slot LABEL (from slots.yaml) or LABEL=replay:PATH"
        )
    config = resolve_slot(request.slot, request.slots_file)
    isolation = None
    network = NETWORK_NOT_APPLICABLE
    if fixtures.kind == KIND_CODING:
        from evalpin.run.sandbox import probe_isolation

        isolation = probe_isolation()
        network = isolation.network
    controls = resolve_controls(
        seeds=request.seeds,
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        loops=request.loops,
        network=network,
        env=env,
        max_turns=request.max_turns,
    )
    if isolation is not None:
        from evalpin.run.sandbox.limits import enforcement

        witness = request.witness or WITNESS_BESIDE
        controls = dataclasses.replace(controls, witness=witness, limits=enforcement(isolation))
    out = request.out or default_out(fixtures, config.label)
    if out.is_dir():
        raise InputError(out, "is a directory; --out names the run file to write")
    if out.exists() and not request.resume:
        raise InputError(out, "already exists: finish it with --resume, or choose another --out")
    return Plan(
        fixtures=fixtures,
        fixtures_arg=_shown_path(fixtures_path),
        slot_config=config,
        controls=controls,
        out=out,
        jobs=request.jobs or default_jobs(),
        concurrency=request.concurrency or DEFAULT_CONCURRENCY,
        adaptive=request.concurrency is None,
        workdir=resolve_workdir(env),
        isolation=isolation,
        lock=lock,
        default_name=request.out is None,
    )


def start_run(
    request: RunRequest, env: Mapping[str, str], emit: Callable[[events.Event], None]
) -> int:
    """Plan, open the slot, run; returns the exit code. InputError propagates (exit 3)."""
    plan = plan_run(request, env)
    if plan.isolation is not None and plan.isolation.network != "off-enforced":
        emit(
            events.WarningEvent(
                "network is NOT enforced off for model code on this machine "
                f"({plan.isolation.why}); the verdict will say 'uncontrolled'"
            )
        )
    if request.cluster:
        _use_cluster(plan, request.cluster, emit)
    missing = unenforced(plan.controls.limits)
    if missing and not request.allow_unenforced:
        why = "; ".join(missing)
        message = (
            f"refused: a limit the items set cannot be enforced here: {why}. Run as root or"
            " with a delegated cgroup v2 subtree, or pass --allow-unenforced-limits (the"
            " header records it and the verdict says 'internal')"
        )
        if plan.grading is not None:
            plan.grading.close()
        emit(events.FailedEvent(out=str(plan.out), message=message))
        return EXIT_FAILED
    if missing:
        emit(events.WarningEvent(f"limits NOT enforced: {'; '.join(missing)}"))
    try:
        slot = open_slot(plan.slot_config)
    except BaseException:
        if plan.grading is not None:
            plan.grading.close()
        raise
    stop = threading.Event()
    restore = _interrupt_on_sigterm()
    try:
        summary = run(
            plan,
            slot,
            resume=request.resume,
            retry_errors=request.retry_errors,
            emit=emit,
            stop=stop,
        )
        if summary.records == summary.errors:  # not one case judged: the run failed
            emit(events.FailedEvent(out=str(plan.out), message=_nothing_judged(summary)))
            return EXIT_FAILED
        return EXIT_DONE
    except (Interrupted, KeyboardInterrupt) as exc:
        # Only what this run holds: the file may be another writer's (it was refused).
        done = exc.done if isinstance(exc, Interrupted) else 0
        emit(
            events.InterruptedEvent(
                out=str(plan.out),
                done=done,
                total=len(plan.pairs),
                resume=f"evalpin run --resume --out {plan.out}",
            )
        )
        return EXIT_INTERRUPTED
    except OSError as exc:
        emit(events.FailedEvent(out=str(plan.out), message=_failure(plan.out, exc)))
        return EXIT_FAILED
    finally:
        slot.close()
        if plan.grading is not None:
            plan.grading.close()
        restore()


def _nothing_judged(summary: Summary) -> str:
    """Why a finished run is still a failed one: no case could be judged."""
    if not summary.records:
        return "not one case could be judged: the run holds no case"
    return (
        f"not one case could be judged: all {summary.records} are error cases (no "
        "completion, a provider or sandbox error); the file is whole, and "
        "`evalpin run --resume --retry-errors` asks them again"
    )


def _failure(out: Path, exc: OSError) -> str:
    """One line: the file, what failed, and how to go on (nothing written is lost)."""
    from evalpin.core.read.runfile import RunBusy

    what = exc.strerror or str(exc)
    if isinstance(exc, RunBusy):
        return f"{out}: {what}; wait for it to finish, or stop it"
    if isinstance(exc, FileExistsError):
        return f"{out}: already exists (made by another run just now); choose another --out"
    where = f"{exc.filename}: " if exc.filename and str(exc.filename) != str(out) else ""
    if out.exists():
        return (
            f"{out}: {where}{what}; the records written so far are kept: "
            f"evalpin run --resume --out {out} continues once the cause is gone"
        )
    return f"{out}: {where}{what}"


def _use_cluster(plan: Plan, address: str, emit: Callable[[events.Event], None]) -> None:
    """Grade coding items on a Dask cluster; golden cases are graded here (a string
    check costs less than shipping it), so a golden set never connects."""
    from evalpin.run.executors import DaskExecutor, parse_address

    parse_address(address)  # a malformed address is refused whatever the set
    if plan.fixtures.kind != KIND_CODING:
        emit(events.WarningEvent("golden cases are graded here; --cluster is not used"))
        return
    executor = DaskExecutor.open(address)
    plan.grading = executor
    plan.jobs = executor.capacity
    limits = executor.limits or plan.controls.limits  # the workers' own, where they said
    plan.controls = dataclasses.replace(plan.controls, network=executor.network, limits=limits)


def _interrupt_on_sigterm() -> Callable[[], None]:
    """SIGTERM stops a run like Ctrl-C (the TUI's cancel sends it)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, previous)
