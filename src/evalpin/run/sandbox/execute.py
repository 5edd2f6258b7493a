"""Running sandboxed processes: `execute` starts each `Spec` in a sandbox of its own
(prefix, backend wrapper, launcher, command), fills the private folders each hands back,
reads their shared output as it comes (keeping only the tail), waits for the last one or
the timeout, then kills every tree.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evalpin.core.instrument.graders.coding import MAX_PROCESSES
from evalpin.run.sandbox import devlocks, fairclock
from evalpin.run.sandbox.backends import Isolation, prefix, privileged, wrapper
from evalpin.run.sandbox.box import Box, fill
from evalpin.run.sandbox.cgroup import Cgroup, kill_all
from evalpin.run.sandbox.fairclock import FairClock
from evalpin.run.sandbox.launcher import LAUNCHER
from evalpin.run.sandbox.mounts import Spec, after_fill, handed_back, plan
from evalpin.run.sandbox.zygote import HASH_SEED, Pooled, Zygote, kind_for, zygote

_KEEP_OUTPUT = 16 * 1024  # bytes of output kept; far more than TAIL_CHARS characters
_REAP_WAIT_S = 2.0
# Open files per process: with MAX_PROCESSES processes a case holds at most ~131,000,
# far below a host's file table (file-max is ~100,000 per GiB of RAM), and the common
# default soft limit, so tests that pass under plain pytest pass here.
MAX_OPEN_FILES = 1024
_SANDBOX_LIMITS = {
    "RLIMIT_NOFILE": MAX_OPEN_FILES,
    "RLIMIT_RTPRIO": 0,
    "RLIMIT_NICE": 0,
    "RLIMIT_MEMLOCK": 8 * 1024**2,
}


@dataclass(frozen=True)
class Run:
    started: bool
    ready: bool  # every launcher finished setting up and exec'd its command
    exit_code: int | None  # of the last process (the one that decides)
    timed_out: bool
    output: bytes
    stopped: bool = False  # killed early: `stop` was written to (its grade is not wanted)
    # Wall seconds not counted against the timeout: waiting for a CPU its neighbours
    # held (`fairclock.py`).
    starved: float = 0.0


def execute(
    iso: Isolation,
    box: Box,
    specs: list[Spec],
    timeout: float,
    *,
    allow_network: bool = False,
    stop: int | None = None,
    longer: list[float] | None = None,
) -> Run:
    """Start every spec, each in a sandbox of its own, and wait for the last one (the
    one that decides) or the timeout, counted on a fair-share clock (`fairclock.py`);
    then kill them all. Their output shares one pipe, read as it comes, of which only
    the tail is kept. `stop`: a descriptor that, once readable, ends the wait early (the
    caller's; left open). `longer`: a one-item list whose number the caller may raise
    meanwhile, the run's new timeout (from its start)."""
    with fairclock.running():
        return _execute(iso, box, specs, timeout, allow_network, stop, longer)


def _execute(
    iso: Isolation,
    box: Box,
    specs: list[Spec],
    timeout: float,
    allow_network: bool,
    stop: int | None,
    longer: list[float] | None = None,
) -> Run:
    deadline = time.monotonic() + timeout
    if iso.kind != "none":
        devlocks.hold()  # no box can lock the device nodes all of them share
    out_r, out_w = os.pipe()
    procs: list[subprocess.Popen[bytes] | Pooled] = []
    readies: list[int] = []
    # Per sandbox: the grader's end of its hand-back socket, and what it hands back.
    channels: list[tuple[socket.socket, list[tuple[str | None, str]]]] = []
    joined: dict[str, int] = {}  # the namespaces a base sandbox handed back, by name
    started = True
    failure = b""
    try:
        for index, spec in enumerate(specs):
            joins = spec.joins and iso.kind != "none"
            if joins and "mnt" not in joined:
                raise OSError("the sandbox it joins did not start")
            ready_r, ready_w = os.pipe()
            readies.append(ready_r)
            steps = plan(spec)
            private = handed_back(steps) if iso.kind != "none" else []
            shared = _namespaces(iso, box, allow_network) if spec.base else []
            ours, theirs = socket.socketpair() if private or shared else (None, None)
            inline = _inline(spec.argv)
            pool = _pool(iso, box, inline)
            try:
                if joins:  # starts in the base's root: the launcher joins it itself
                    wrapped, newroot = [], None
                elif pool is not None:  # the fork server builds the namespaces itself
                    wrapped, newroot = [], tempfile.mkdtemp(prefix="root-", dir=box.root)
                else:
                    wrapped, newroot = wrapper(iso, box, spec, allow_network)
                config = {
                    "inline": inline,
                    "limits": _limits(iso, spec),
                    "newroot": newroot,
                    "room": joins,
                    "loopback": iso.kind != "none" and not allow_network,
                    "plan": steps,
                    "host_mount_ns": os.stat("/proc/self/ns/mnt").st_ino,
                    "host_root": [os.stat("/").st_dev, os.stat("/").st_ino],
                    "private": iso.kind != "none",
                    "hand_back": [dst for _, dst in private],
                    "hand_back_ns": shared,
                    "hand_back_fd": theirs.fileno() if theirs else None,
                    "after": after_fill(spec) if joins else [],
                    "drop": iso.kind != "none",  # without namespaces, as it was started
                    "uid": box.uid,
                    "privileged": joins or privileged(iso, box),
                    "cwd": str(spec.cwd),
                    "ready_fd": ready_w,
                }
                command = [] if config["inline"] else spec.argv
                if pool is not None:
                    join = joined if joins else {}
                    cgroup = box.cgroup.procs_for(index) if box.cgroup is not None else []
                    procs.append(
                        _spawn(
                            pool, spec, config, command, out_w, theirs, allow_network, join, cgroup
                        )
                    )
                else:
                    if joins:
                        config["join"] = joined
                    # `-I` but for `-E`, as the fork server: the interpreter starts with
                    # the grader's hash seed and none of the box's PYTHON* variables,
                    # which the launcher puts back before the command (`_launcher_env`).
                    start_env, config["python_env"] = _launcher_env(spec.env)
                    launcher = [sys.executable, "-s", "-P", "-S", "-c", LAUNCHER]
                    launcher.append(json.dumps(config))
                    inherited = (ready_w, *spec.pass_fds, *([theirs.fileno()] if theirs else []))
                    inherited += tuple(joined.values()) if joins else ()
                    procs.append(
                        subprocess.Popen(
                            [*prefix(box, index), *wrapped, *launcher, *command],
                            stdin=subprocess.DEVNULL,
                            stdout=out_w,
                            stderr=out_w,
                            cwd=spec.cwd,
                            env=start_env,
                            pass_fds=inherited,
                            start_new_session=True,
                            umask=0o022,  # the folders made for the box's uid: enterable
                        )
                    )
            except OSError:
                if ours is not None:
                    ours.close()
                raise
            finally:
                os.close(ready_w)
                if theirs is not None:
                    theirs.close()
            if joins:
                for fd in joined.values():
                    os.close(fd)
                joined = {}
            if ours is not None and spec.base:
                # Filled now: the sandbox that joins it starts in what it holds.
                joined = _with_owner(box, _fill_handed_back(box, ours, private, deadline, shared))
            elif ours is not None:
                channels.append((ours, private))
    except OSError as exc:
        started = False
        failure = f"cannot start sandbox: {exc}".encode()
    finally:
        os.close(out_w)
        for fd in joined.values():
            os.close(fd)
        for spec in specs:
            for fd in spec.pass_fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
    if not started:
        for channel, _ in channels:
            channel.close()
        for proc in procs:
            _kill_tree(proc, box.cgroup)
        for fd in (out_r, *readies):
            os.close(fd)
        return Run(False, False, None, False, failure)
    for channel, private in channels:
        _fill_handed_back(box, channel, private, deadline)
    clock = FairClock(deadline - time.monotonic(), [proc.pid for proc in procs])
    if longer is not None:  # the clock's own timeout, less what setting up took
        clock.longer = (longer, timeout - clock.timeout)
    kept, ready, timed_out, stopped = _watch(procs[-1], out_r, readies, clock, stop)
    for proc in procs:
        _kill_tree(proc, box.cgroup)
    exit_code = None if timed_out or stopped else procs[-1].returncode
    return Run(True, ready, exit_code, timed_out, kept, stopped, round(clock.starved, 3))


def _namespaces(iso: Isolation, box: Box, allow_network: bool) -> list[str]:
    """The namespaces a base sandbox hands back for the next one to join: its mount
    namespace, and its network namespace when it has one of its own."""
    if iso.kind == "none":
        return []
    return ["mnt"] + ([] if allow_network else ["net"])


def _with_owner(box: Box, held: dict[str, int]) -> dict[str, int]:
    """`held` and, when the grader is not root, the user namespace that owns the mount
    namespace in it (NS_GET_USERNS: bubblewrap's process is in a user namespace nested
    in that one): the grader's uid, its owner, may join it, and nothing more."""
    if box.uid is None and "mnt" in held:
        held["user"] = fcntl.ioctl(held["mnt"], 0xB701)  # NS_GET_USERNS
    return held


def _pool(iso: Isolation, box: Box, inline: dict | None) -> Zygote | None:
    """The fork server for this sandbox's command, where it builds what unshare would
    (`zygote.py`): a root grader's unshare backend; else None (each sandbox starts as a
    new process)."""
    if iso.kind != "unshare" or box.uid is None or os.geteuid() != 0:
        return None
    return zygote(kind_for(inline["code"] if inline else None))


def _spawn(
    pool: Zygote,
    spec: Spec,
    config: dict,
    command: list[str],
    out_w: int,
    theirs: socket.socket | None,
    allow_network: bool,
    join: dict[str, int],
    cgroup_procs: list[str],
) -> Pooled:
    """One sandboxed process from the fork server: the launcher's config, with its
    ready and hand-back descriptors named, the spec's own descriptors by number, and
    the namespaces it joins (`join`, by name)."""
    fds = {"out": out_w, "ready_fd": config["ready_fd"]}
    if theirs is not None:
        fds["hand_back_fd"] = theirs.fileno()
    fds |= {str(fd): fd for fd in spec.pass_fds}
    fds |= {f"join_{name}": fd for name, fd in join.items()}
    request = {
        "config": config,
        "argv": command,
        "env": spec.env,
        "cwd": str(spec.cwd),
        "cgroup_procs": cgroup_procs,
        "unshare_net": not allow_network,
        "join": {name: f"join_{name}" for name in join},
    }
    return pool.spawn(request, fds)


def _limits(iso: Isolation, spec: Spec) -> dict[str, int]:
    """The spec's rlimits and the sandbox's own: open files, no real-time or raised
    scheduling priority and the kernel's default of locked memory (whatever the grader
    was allowed: a real-time busy loop would starve the host), always; processes,
    counted per uid (the box's own, or the grader's in a user namespace of its own), so
    this case's processes (the cgroup caps them where there is one)."""
    limits = {**spec.limits, **_SANDBOX_LIMITS}
    if iso.kind != "none":
        limits["RLIMIT_NPROC"] = MAX_PROCESSES
    return limits


def _fill_handed_back(
    box: Box,
    channel: socket.socket,
    private: list[tuple[str | None, str]],
    deadline: float,
    namespaces: Sequence[str] = (),
) -> dict[str, int]:
    """Take the private folders a sandbox hands back (one descriptor each, in plan
    order), fill each from its host folder, and let the sandbox go on; return the
    `namespaces` it handed back after them, by name (a base sandbox's). Anything else
    (the launcher failed, or is too slow) closes the channel, and the launcher, told
    nothing, stops with its reason: a setup failure."""
    wanted = len(private) + len(namespaces)
    with channel:
        try:
            channel.settimeout(max(deadline - time.monotonic(), 0.001))
            _, fds, _, _ = socket.recv_fds(channel, 16, wanted)
        except OSError:
            return {}
        if len(fds) != wanted:
            for fd in fds:
                os.close(fd)
            return {}
        folders, held = fds[: len(private)], dict(zip(namespaces, fds[len(private) :], strict=True))
        box.tmpfs.extend(
            (Path(src) if src else None, fd) for (src, _), fd in zip(private, folders, strict=True)
        )
        try:
            for (src, _), fd in zip(private, folders, strict=True):
                if src is not None:
                    fill(Path(src), fd, box.uid)
            channel.sendall(b"g")
        except OSError:
            for fd in held.values():
                os.close(fd)
            return {}
        return held


def _launcher_env(env: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The environment a launcher's interpreter starts with (the box's but its PYTHON*
    variables, which `-I` would have ignored, plus the grader's hash seed), and those
    PYTHON* variables, for the launcher to put back."""
    python = {k: v for k, v in env.items() if k.startswith("PYTHON")}
    kept = {k: v for k, v in env.items() if k not in python}
    return kept | {"PYTHONHASHSEED": HASH_SEED}, python


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
    main: subprocess.Popen[bytes] | Pooled,
    out: int,
    readies: list[int],
    clock: FairClock,
    stop: int | None = None,
):
    """Read output and readiness until `main` exits, the clock runs out or `stop` is
    readable."""
    kept = bytearray()
    ready = [False] * len(readies)
    timed_out = stopped = False
    exited = main.pidfd() if isinstance(main, Pooled) else os.pidfd_open(main.pid)
    with contextlib.ExitStack() as stack, selectors.DefaultSelector() as sel:
        for fd in (out, exited, *readies):
            stack.callback(os.close, fd)
            sel.register(fd, selectors.EVENT_READ)
        if stop is not None:
            sel.register(stop, selectors.EVENT_READ)
        done = False
        while not (done or stopped):
            if time.monotonic() - clock.last >= fairclock.POLL_S:
                clock.tick()
            if clock.expired():
                timed_out = True
                break
            for key, _ in sel.select(min(clock.left(), fairclock.POLL_S)):
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


def _kill_tree(proc: subprocess.Popen[bytes] | Pooled, cgroup: Cgroup | None) -> None:
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
