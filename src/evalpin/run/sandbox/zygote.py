"""The fork server: sandboxes started from a warm interpreter, so a case does not pay an
interpreter's start, pytest's import and the namespace tools' each time.

A zygote is a `python -I -S` process the grader starts once (as root, in the host's
namespaces, with an allow-listed environment and nothing else: its memory is every
sandbox's memory), that imports site-packages and pytest with its built-in plugins,
and makes the configuration every pytest session starts from (`prepared.py`: its
plugins registered, before any case's arguments or folder), never anything of a
candidate's, and then only forks. For each sandboxed process the
grader sends it the launcher's configuration and descriptors over a socket; it forks a
*keeper*, which first closes that socket (nothing it starts can ever ask the zygote for
anything), joins the case's cgroup, takes the case's output, session, environment and
working folder, makes new mount, pid, ipc, uts and network namespaces (`unshare(2)`, as
`unshare --mount --propagation private --pid --fork --kill-child ...` does), and forks
the sandbox's first process, pid 1 of its own namespace, which runs the launcher's own
steps (launcher.py: the private root, the hand-back, pivot, every privilege dropped, a
host uid of its own, seccomp) and then the command in its interpreter (a sandbox that
joins another's, the witness's pytest process, first enters the worker's mount and
network namespaces, so its own mount namespace is a copy of the worker's: see
mounts.py). The keeper waits
for it, writes its exit status to a pipe of the grader's and exits with it; it dies with
the zygote (parent-death signal), and the zygote with the grader (its socket closes).

So every case still gets a fresh namespace, root, cgroup and uid; it starts from the
zygote's clean state, a fork of a process no candidate code ever ran in, and whatever it
leaves in memory, files or processes dies with its namespaces, its tmpfs and its
cgroup. What differs from a fresh interpreter: the string hash seed (one per grader,
the same in all its zygotes, so a witness's two processes order sets of strings alike)
and modules pytest imports being loaded before the candidate's code runs, as they are
under `python -m pytest`; `random` is reseeded in every sandbox.

Used when the backend is `unshare` and the grader is root (the launcher builds the root
either way); elsewhere, and with `EVALPIN_POOL=0`, each sandbox starts as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import socket
import struct
import subprocess
import sys
import threading
from typing import Any

from evalpin.run.sandbox import shared
from evalpin.run.sandbox.launcher import LAUNCHER_FUNCTIONS
from evalpin.run.sandbox.prepared import PREPARED_PYTEST

ZYGOTE = (
    LAUNCHER_FUNCTIONS
    + PREPARED_PYTEST
    + r'''
import importlib, signal, socket, struct

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_REC, MS_PRIVATE = 16384, 1 << 18
PR_SET_PDEATHSIG = 1

def warm(with_pytest, modules):
    import site
    site.main()
    import random, threading, atexit
    for name in modules:
        with __import__("contextlib").suppress(ImportError):
            importlib.import_module(name)
    if not with_pytest:
        return
    try:
        load_pytest()
    except ImportError:
        return
    # pytest's configuration up to where a case's paths matter, and its argument parser
    # (prepared.py): about half a session's CPU, once here instead of once per session.
    # Where it cannot be made, each session makes its own, as before.
    with __import__("contextlib").suppress(Exception):
        prepare_pytest()

def die_with_parent():
    check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")

def run_init(cfg, argv):
    """pid 1 of the sandbox: the launcher's steps, then the command; exits as an
    interpreter would (non-daemon threads joined, atexit, streams flushed)."""
    import random, threading, atexit
    die_with_parent()
    random.seed()
    code = 0
    try:
        launch(cfg, argv)
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            code = done.code or 0
        else:
            print(done.code, file=sys.stderr)
            code = 1
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code & 0xFF)

def keeper(request, fds):
    """The forked keeper: see zygote.py's docstring. Never returns."""
    import fcntl
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # its own child is its own to wait for
    try:
        names = request["fds"]
        wanted = [int(n) for n in names if n.isdigit()]
        base = max([*wanted, *fds, 10]) + 1
        held = {name: fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, base) for name, fd in zip(names, fds)}
        keep = sorted(held.values())
        # Nothing of the zygote's goes on: every other descriptor is closed.
        low = 3
        for fd in keep:
            os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, max(low, 65536))
        die_with_parent()
        os.setsid()
        for procs in request["cgroup_procs"]:
            with open(procs, "w") as joined:
                joined.write("0")
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        out = held.pop("out")
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        status = held.pop("status")
        # A sandbox that joins another's namespaces (the witness's pytest process: the
        # worker's folders, network): entered before its own are made.
        joined = {k: held.pop(v) for k, v in (request.get("join") or {}).items()}
        # The grader's descriptor numbers, which the command's arguments and environment
        # name; the config's own (ready, hand-back) at whatever number they have.
        cfg = request["config"]
        for name, fd in held.items():
            if name.isdigit():
                os.dup2(fd, int(name), inheritable=True)
                os.close(fd)
            else:
                os.set_inheritable(fd, True)
                cfg[name] = fd
        os.umask(0o022)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
        if request["unshare_net"] and "net" not in joined:
            flags |= CLONE_NEWNET
        for name, flag in (("mnt", CLONE_NEWNS), ("net", CLONE_NEWNET)):
            if name in joined:
                check(libc.setns(joined[name], flag), "setns " + name)
                os.close(joined[name])
        check(libc.unshare(flags), "unshare")
        mount("none", "/", None, MS_REC | MS_PRIVATE, None)
        init = os.fork()
        if init == 0:
            os.close(status)
            run_init(cfg, request["argv"])
        # Only the sandbox holds its descriptors (a pipe's end held here would never
        # tell the other side it closed).
        for name, fd in held.items():
            os.close(int(name) if name.isdigit() else fd)
        code = wait_for(init)
        os.write(status, str(code).encode())
        os._exit(code & 0xFF if code >= 0 else 128 - code)
    except BaseException as exc:
        with __import__("contextlib").suppress(BaseException):
            os.write(2, f"evalpin sandbox: start failed: {exc}\n".encode())
        os._exit(70)

def serve(channel):
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(channel, 1 << 22, 64)
        except OSError:
            return
        if not message:
            return
        request = json.loads(message)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            channel.close()
            keeper(request, fds)
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        try:
            socket.send_fds(channel, [struct.pack("i", pid)], [pidfd])
        finally:
            os.close(pidfd)

def reap(*_):
    """Keepers are waited for as they end (the grader watches each through its pidfd)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return

warm(sys.argv[2] == "pytest", json.loads(sys.argv[3]))
# What the zygote holds is never collected by a sandbox's garbage collector: its pages
# stay shared (no copy on a collector's write), and pytest's collections cost the
# case's own objects only.
import gc
gc.collect()
gc.freeze()
signal.signal(signal.SIGCHLD, reap)
serve(socket.socket(fileno=int(sys.argv[1])))
'''
)

# What the zygote's environment holds: its memory is every sandbox's, so nothing more.
_ZYGOTE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
# One string hash seed for every sandbox of this grader, forked from a zygote or started
# by the launcher, so a witness's judge and worker order a set of strings alike, as one
# process does; random per grader, as any process's is.
HASH_SEED = str(secrets.randbelow(2**32 - 1) + 1)


class Pooled:
    """A sandbox's keeper, started by the zygote, as `execute` waits for and kills a
    `subprocess.Popen`: `pid`, `pidfd()`, `wait(timeout)`, `returncode`."""

    def __init__(self, pid: int, pidfd: int, status: int) -> None:
        self.pid = pid
        self._pidfd = pidfd
        self._status = status
        self.returncode: int | None = None

    def pidfd(self) -> int:
        """A new descriptor that is readable once the keeper has exited."""
        return os.dup(self._pidfd)

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._pidfd], [], [], 0)[0]:
            self._finish()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired("sandbox", timeout or 0)
            self._finish()
        assert self.returncode is not None
        return self.returncode

    def _finish(self) -> None:
        os.set_blocking(self._status, False)
        try:
            said = os.read(self._status, 32)
        except OSError:
            said = b""
        os.close(self._status)
        os.close(self._pidfd)
        self.returncode = int(said) if said.strip().lstrip(b"-").isdigit() else -9

    def __del__(self) -> None:
        if self.returncode is None:
            for fd in (self._status, self._pidfd):
                with contextlib.suppress(OSError):
                    os.close(fd)


class Zygote:
    """The grader's end of one fork server; `spawn` may be called from any thread."""

    def __init__(self, kind: str) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: os.environ[k] for k in _ZYGOTE_ENV if k in os.environ}
        env.setdefault("PATH", os.defpath)
        env["PYTHONHASHSEED"] = HASH_SEED
        try:
            # `-I` but for `-E`: the environment is the allow-list above and the seed.
            self.process = subprocess.Popen(
                [
                    *(sys.executable, "-s", "-P", "-S", "-c", ZYGOTE),
                    *(str(theirs.fileno()), kind, json.dumps(_PRELOADED.get(kind, ()))),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                env=env,
                cwd="/",
                start_new_session=True,
            )
        finally:
            theirs.close()
        self.channel = ours
        self.lock = threading.Lock()

    def spawn(self, request: dict[str, Any], fds: dict[str, int]) -> Pooled:
        """Start one sandboxed process: `request` (the launcher's `config`, `argv`,
        `env`, `cwd`, `cgroup_procs`, `unshare_net`) and `fds` by name (`out`, `status`'s
        write end is made here; a digit name is a descriptor number the command
        expects; any other name is a key of the config holding a descriptor)."""
        status_r, status_w = os.pipe()
        names = [*fds, "status"]
        try:
            with self.lock:
                payload = json.dumps({**request, "fds": names}).encode()
                socket.send_fds(self.channel, [payload], [*fds.values(), status_w])
                message, got, _, _ = socket.recv_fds(self.channel, 16, 1)
        except OSError:
            os.close(status_r)
            raise
        finally:
            os.close(status_w)
        if len(message) != 4 or len(got) != 1:
            for fd in got:
                os.close(fd)
            os.close(status_r)
            raise OSError("the fork server did not start the sandbox")
        (pid,) = struct.unpack("i", message)
        return Pooled(pid, got[0], status_r)

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.channel.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(5)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


# The kinds of zygote: one with pytest and its plugins imported, for the processes that
# run pytest; a bare one (site-packages only) for the others (the witness's worker, which
# must look like a plain interpreter to the candidate's code: no pytest loaded in it).
PYTEST, BARE = "pytest", "bare"
# What the bare one imports besides: the standard modules the witness's worker imports
# (the wire's own imports, `WORKER_BOOT`) before any candidate code runs, about 45 ms of
# CPU per case. Only modules the worker loads anyway (tests/test_fork_server.py checks
# it), so its candidate sees the modules it would have seen; the wire itself is not
# preloaded (its files are at a path of the grader's own, not the box's).
_PRELOADED = {
    BARE: (
        "ast",
        "base64",
        "copy",
        "dataclasses",
        "queue",
        "select",
        "traceback",
        "typing",
        "unittest",
    )
}
_ZYGOTES: dict[str, Zygote] = {}
_STARTING = threading.Lock()


def kind_for(code: str | None) -> str:
    """Which zygote serves a sandbox whose command is `python -c code` (None: another
    command): the warm one when the code imports pytest."""
    return PYTEST if code is not None and "import pytest" in code else BARE


def zygote(kind: str = PYTEST) -> Zygote | None:
    """This process's fork server of `kind` (started on first use, again if it died),
    or None when pools are off (`EVALPIN_POOL=0`) or it cannot start."""
    if os.environ.get("EVALPIN_POOL", "1") == "0":
        return None
    with _STARTING:
        found = _ZYGOTES.get(kind)
        if found is not None and found.alive():
            return found
        try:
            _ZYGOTES[kind] = Zygote(kind)
        except OSError:
            _ZYGOTES.pop(kind, None)
            return None
        return _ZYGOTES[kind]


_USERS = 0  # runs and checks in this process using the fork servers now


def acquire() -> None:
    """A run or a check starts: the fork servers it starts (and the shared runtime
    folder) stay until the last ends."""
    global _USERS
    with _STARTING:
        _USERS += 1


def release() -> None:
    """A run or a check ended: the last one stops the fork servers and removes the
    shared runtime folder (nothing of evalpin's outlives what a caller asked of it)."""
    global _USERS
    with _STARTING:
        _USERS = max(_USERS - 1, 0)
        if _USERS == 0:
            _close_all()


def close() -> None:
    """Stop this process's fork servers now and remove its shared runtime folder (tests;
    a zygote also ends with its grader, the folder at exit)."""
    with _STARTING:
        _close_all()


def _close_all() -> None:
    for found in _ZYGOTES.values():
        found.close()
    _ZYGOTES.clear()
    shared.close()
