"""Grading one coding item's files: static checks, then its tests in fresh sandboxed
processes (`run_item`), with an allow-listed environment and a tail of the output that
names no sandbox path and no secret."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from evalpin.core.instrument.fixtures import ISOLATION_PROCESS, CodingItem
from evalpin.core.instrument.graders.candidate import written_files
from evalpin.core.instrument.graders.coding import PYTEST_ENV, grade_order, rlimits, static_check
from evalpin.core.instrument.graders.surface import approved_files
from evalpin.core.reasons import SANDBOX_ERROR, TESTS_FAILED, TIMEOUT
from evalpin.core.records import TAIL_CHARS
from evalpin.run.sandbox.backends import NETWORK_ON, Isolation
from evalpin.run.sandbox.box import Box, scratch
from evalpin.run.sandbox.execute import execute
from evalpin.run.sandbox.mounts import DISK_BYTES
from evalpin.run.sandbox.probe import probe_isolation

_ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
_DISK_NOTE = (
    f"[evalpin] disk cap reached: a folder the tests write in (the work folder, /tmp,"
    f" /dev/shm) holds at most {DISK_BYTES // 1024**2} MiB"
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


def run_item(
    item: CodingItem,
    files: dict[str, str],
    *,
    workdir_parent: Path | None = None,
    secret_names: Iterable[str] = (),
    allow_network: bool = False,
    isolation: Isolation | None = None,
) -> Outcome:
    """Grade `files` (name -> content, as the model gave them) against `item`'s tests
    (under `candidate: prompt+completion`, the prompt file's text comes first).

    Static checks first (a failure there means the code never runs), then the item's
    tests in a fresh temporary directory under `workdir_parent`, removed afterwards:
    for `isolation: process` the candidate runs in a worker sandbox and pytest in
    another that sees stand-ins; for `in-process`, one sandbox with tamper checks.
    `secret_names` are never passed on and their values are cut from the tail.
    `allow_network` (a set that says `network: allowed`) skips the network namespace;
    `isolation` replaces the probe's choice.
    """
    from evalpin.run import isolation as modes

    started = time.monotonic()
    secret_names = frozenset(secret_names)
    iso = isolation or probe_isolation()
    network = NETWORK_ON if allow_network else iso.network

    def outcome(passed: bool, reasons: list[str], tail: str = "") -> Outcome:
        seconds = round(time.monotonic() - started, 3)
        return Outcome(passed, grade_order(reasons), tail[-TAIL_CHARS:], seconds, network)

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
    secret_values = _secret_values(secret_names)
    mode = modes.ProcessMode if item.isolation == ISOLATION_PROCESS else modes.InProcessMode
    try:
        with scratch(
            workdir_parent, iso.pids_cgroup, item.memory_mb, namespaces=iso.kind != "none"
        ) as box:
            prepared = mode(item, test_source, candidate)
            specs = prepared.specs(
                box, _environment(box, iso, secret_names), rlimits(item.timeout_s)
            )
            run = execute(iso, box, specs, item.timeout_s, allow_network=allow_network)
            tail = _tail(run.output, box, secret_values)
            if not run.ready:
                kind = "setup" if run.started else "start"
                return outcome(False, [SANDBOX_ERROR(kind)], tail)
            if box.cgroup is not None and box.cgroup.oom_killed():
                note = (
                    f"[evalpin] memory cap of {item.memory_mb} MiB reached (the item's memory_mb)"
                )
                return outcome(False, [SANDBOX_ERROR("memory")], (tail + "\n" + note)[-TAIL_CHARS:])
            # A full private folder explains a timeout or a failed test (a writer retrying,
            # a test that could not write); a pass stands, and so does what the judge
            # found beyond a failed test (tampering, what the wire could not carry).
            full = box.full()
            disk = outcome(False, [SANDBOX_ERROR("disk")], (tail + "\n" + _DISK_NOTE)[-TAIL_CHARS:])
            if run.timed_out:
                if full:
                    return disk
                note = f"[evalpin] killed after {item.timeout_s:g} s (the item's timeout_s)"
                return outcome(False, [TIMEOUT()], (tail + "\n" + note)[-TAIL_CHARS:])
            passed, reasons = prepared.judge(box, run.exit_code)
            if full and reasons == [TESTS_FAILED()]:
                return disk
            graded = outcome(passed, reasons, tail)
            if TESTS_FAILED() in graded.reasons:
                return dataclasses.replace(graded, failed_tests=prepared.failed_tests(box))
            return graded
    except OSError as exc:
        return outcome(False, [SANDBOX_ERROR("workdir")], f"{type(exc).__name__}: {exc}")


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
    text = output.decode("utf-8", "replace")
    text = re.sub(re.escape(str(box.root)) + r"/[\w.-]+/", "", text)
    text = text.replace(str(box.root), "<sandbox>")
    for value in secret_values:
        text = text.replace(value, "[redacted]")
    return text[-TAIL_CHARS:]
