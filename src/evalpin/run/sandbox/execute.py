"""Running sandboxed processes: `execute` starts each `Spec` in a sandbox of its own
(prefix, backend wrapper, launcher, command), reads their shared output as it comes
(keeping only the tail), waits for the last one or the timeout, then kills every tree.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from evalpin.core.instrument.graders.coding import MAX_PROCESSES
from evalpin.run.sandbox.backends import Isolation, prefix, wrapper
from evalpin.run.sandbox.box import Box
from evalpin.run.sandbox.cgroup import Cgroup, kill_all
from evalpin.run.sandbox.launcher import LAUNCHER
from evalpin.run.sandbox.mounts import Spec, plan

_KEEP_OUTPUT = 16 * 1024  # bytes of output kept; far more than TAIL_CHARS characters
_REAP_WAIT_S = 2.0


@dataclass(frozen=True)
class Run:
    started: bool
    ready: bool  # every launcher finished setting up and exec'd its command
    exit_code: int | None  # of the last process (the one that decides)
    timed_out: bool
    output: bytes
    stopped: bool = False  # killed early: `stop` was written to (its grade is not wanted)


def execute(
    iso: Isolation,
    box: Box,
    specs: list[Spec],
    timeout: float,
    *,
    allow_network: bool = False,
    stop: int | None = None,
) -> Run:
    """Start every spec, each in a sandbox of its own, and wait for the last one (the
    one that decides) or the timeout; then kill them all. Their output shares one pipe,
    read as it comes, of which only the tail is kept. `stop`: a descriptor that, once
    readable, ends the wait early (the caller's; left open)."""
    out_r, out_w = os.pipe()
    procs: list[subprocess.Popen[bytes]] = []
    readies: list[int] = []
    started = True
    failure = b""
    try:
        for spec in specs:
            ready_r, ready_w = os.pipe()
            readies.append(ready_r)
            limits = dict(spec.limits)
            if iso.kind != "none":
                # Counted per user namespace, so it is this run's processes (for non-root
                # users; root is exempt, hence the cgroup).
                limits["RLIMIT_NPROC"] = MAX_PROCESSES
            try:
                wrapped, newroot = wrapper(iso, box, spec, allow_network)
            except OSError:
                os.close(ready_w)
                raise
            config = {
                "inline": _inline(spec.argv),
                "limits": limits,
                "newroot": newroot,
                "plan": plan(spec),
                "cwd": str(spec.cwd),
                "ready_fd": ready_w,
            }
            launcher = [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(config)]
            command = [] if config["inline"] else spec.argv
            try:
                procs.append(
                    subprocess.Popen(
                        [*prefix(box), *wrapped, *launcher, *command],
                        stdin=subprocess.DEVNULL,
                        stdout=out_w,
                        stderr=out_w,
                        cwd=spec.cwd,
                        env=spec.env,
                        pass_fds=(ready_w, *spec.pass_fds),
                        start_new_session=True,
                    )
                )
            finally:
                os.close(ready_w)
    except OSError as exc:
        started = False
        failure = f"cannot start sandbox: {exc}".encode()
    finally:
        os.close(out_w)
        for spec in specs:
            for fd in spec.pass_fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
    if not started:
        for proc in procs:
            _kill_tree(proc, box.cgroup)
        for fd in (out_r, *readies):
            os.close(fd)
        return Run(False, False, None, False, failure)
    kept, ready, timed_out, stopped = _watch(procs[-1], out_r, readies, timeout, stop)
    for proc in procs:
        _kill_tree(proc, box.cgroup)
    exit_code = None if timed_out or stopped else procs[-1].returncode
    return Run(True, ready, exit_code, timed_out, kept, stopped)


def _inline(argv: list[str]) -> dict | None:
    """`python [-I -B -u -S] -c CODE ARGS` as the launcher runs it in its own interpreter
    (flags, code, args), or None for any other command, which it execs."""
    if not argv or argv[0] != sys.executable or "-c" not in argv[:6]:
        return None
    at = argv.index("-c")
    flags = argv[1:at]
    if any(f not in ("-I", "-B", "-u", "-S") for f in flags) or "-I" not in flags:
        return None
    return {"flags": flags, "code": argv[at + 1], "args": argv[at + 2 :]}


def _watch(
    main: subprocess.Popen[bytes],
    out: int,
    readies: list[int],
    timeout: float,
    stop: int | None = None,
):
    """Read output and readiness until `main` exits, the deadline passes or `stop` is
    readable."""
    deadline = time.monotonic() + timeout
    kept = bytearray()
    ready = [False] * len(readies)
    timed_out = stopped = False
    exited = os.pidfd_open(main.pid)
    with contextlib.ExitStack() as stack, selectors.DefaultSelector() as sel:
        for fd in (out, exited, *readies):
            stack.callback(os.close, fd)
            sel.register(fd, selectors.EVENT_READ)
        if stop is not None:
            sel.register(stop, selectors.EVENT_READ)
        done = False
        while not (done or stopped):
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(left):
                if key.fd == stop:
                    stopped = True
                    break
                if key.fd == exited:
                    done = True
                    continue
                chunk = os.read(key.fd, 65536)
                if key.fd in readies:
                    ready[readies.index(key.fd)] |= chunk == b"1"
                    sel.unregister(key.fd)
                elif chunk:
                    kept += chunk
                    del kept[:-_KEEP_OUTPUT]
                else:
                    sel.unregister(key.fd)
        if done:  # what main wrote just before it exited
            with contextlib.suppress(OSError):
                os.set_blocking(out, False)
                while chunk := os.read(out, 65536):
                    kept += chunk
                    del kept[:-_KEEP_OUTPUT]
            for i, fd in enumerate(readies):
                with contextlib.suppress(OSError):
                    os.set_blocking(fd, False)
                    ready[i] |= os.read(fd, 1) == b"1"
        main.wait() if done else None
    return bytes(kept), all(ready), timed_out, stopped


def _kill_tree(proc: subprocess.Popen[bytes], cgroup: Cgroup | None) -> None:
    """SIGKILL the wrapper's children (under unshare or bwrap, the pid namespace's init,
    killed directly even if it cleared its parent-death signal) and give the wrapper a
    moment to reap it: an init's exit waits for every process in its namespace, so once
    the wrapper is gone the namespace is empty. Then our process group and anything left
    in the run's cgroup, for the runs without a namespace."""
    try:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    except OSError:
        children = []
    kill_all(int(c) for c in children)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_REAP_WAIT_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if cgroup is not None:
        kill_all(cgroup.members())
    proc.wait()
