"""Runs one coding item's tests in a fresh, contained process.

API:
- `probe_isolation(backends=BACKENDS) -> Isolation` (cached): the strongest containment
  that works on this machine, tried for real once: `unshare` (user, network, pid and mount
  namespaces), else bubblewrap, else none. `Isolation.network` is `off-enforced` or
  `off-unenforced`; `why` is one line for the warning a caller must show when not enforced.
- `run_item(item, files, *, workdir_parent=None, secret_names=(), allow_network=False,
  isolation=None) -> Outcome`: grade one completion's files. `Outcome` has `passed`,
  `reasons`, `tail` (last `TAIL_CHARS` of test output), `seconds` and `network`.

What the grade means lives in `evalpin.core.graders.coding` (surface, static checks, the
pytest command and limits, the report judgement); this module only executes it.

Containment, `unshare` backend (the whole process tree is in the namespaces):
- network namespace: no interface but a downed loopback, so not even 127.0.0.1 reaches
  the host's listeners;
- pid namespace with a fresh /proc: the parent (and its API key in /proc/PID/environ) is
  invisible, and when pytest (the namespace's init) exits or is killed, every process it
  left behind dies, `setsid` or not;
- a small launcher inside the namespaces makes every mount read-only except the work and
  report directories, joins a pids cgroup where one can be made (RLIMIT_NPROC does
  nothing for root), sets the rlimits, then drops every capability (bounding set,
  ambient set, SECBIT_NOROOT, no_new_privs) so the code cannot unmount the fresh /proc to
  uncover the host's, remount anything writable or leave its cgroup;
- an environment built from an allow-list (never inherited PYTHON*, PYTEST_*, keys);
- a wall-clock timeout, after which the namespace's init and our process group are
  killed; output is read as it comes and only its tail kept.
bubblewrap gets the same from its own flags (read-only root, fresh /proc and /dev, all
namespaces, no capabilities) but no pids cgroup. Without either, only the environment,
rlimits, process-group kill and timeout remain, and network is recorded off-unenforced.

Known limits: code that runs inside pytest can forge the report it writes (it can patch
pytest); files readable by the calling user stay readable (read-only, not hidden); a
path-based Unix socket on the host stays connectable; /tmp and /dev/shm are read-only.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import secrets
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from evalpin.core.fixtures import CodingItem
from evalpin.core.graders.coding import (
    FILE_SIZE_BYTES,
    MAX_PROCESSES,
    PYTEST_ENV,
    PYTEST_INI,
    PYTEST_INI_NAME,
    approved_files,
    expected_tests,
    grade_order,
    judge_report,
    pytest_argv,
    rlimits,
    static_check,
)
from evalpin.core.reasons import SANDBOX_ERROR, TIMEOUT
from evalpin.core.records import TAIL_CHARS

BACKENDS = ("unshare", "bwrap")
OFF_ENFORCED = "off-enforced"
OFF_UNENFORCED = "off-unenforced"
NETWORK_ON = "on"

_ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
_SECRETISH = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL", re.IGNORECASE)
_KEEP_OUTPUT = 16 * 1024  # bytes of output kept; far more than TAIL_CHARS characters
_PROBE_TIMEOUT_S = 10.0
_REAP_WAIT_S = 2.0


@dataclass(frozen=True)
class Isolation:
    """Which containment a run gets here, and whether network-off is enforced."""

    kind: str  # "unshare", "bwrap" or "none"
    network: str  # OFF_ENFORCED or OFF_UNENFORCED
    why: str
    pids_cgroup: bool = False


@dataclass(frozen=True)
class Outcome:
    """The grade of one completion's files, as recorded in a case line."""

    passed: bool
    reasons: list[str]
    tail: str
    seconds: float
    network: str


# The launcher runs first inside the sandbox (`python -I -S -c`), configured by a JSON
# argument, then execs the test command. It reports readiness by writing one byte to an
# inherited pipe, so nothing the tested code does can pass for a setup failure or the
# reverse. Syscall numbers are the generic ones (mount_setattr is 442 on every arch).
_LAUNCHER = r"""
import ctypes, json, os, resource, sys

def harden(rw):
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result, what):
        if result != 0:
            raise OSError(ctypes.get_errno(), what)

    class Attr(ctypes.Structure):
        _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "prop", "userns")]

    def mount_setattr(path, set_, clr, flags):
        attr = Attr(set_, clr, 0, 0)
        size = ctypes.c_long(ctypes.sizeof(attr))
        at = (ctypes.c_long(-100), ctypes.c_char_p(path.encode()), ctypes.c_long(flags))
        check(libc.syscall(ctypes.c_long(442), *at, ctypes.byref(attr), size),
              "mount_setattr " + path)

    mount_setattr("/", 1, 0, 0x8000)  # MOUNT_ATTR_RDONLY, AT_RECURSIVE
    for path in rw:
        check(libc.mount(path.encode(), path.encode(), None, ctypes.c_ulong(4096), None),
              "bind " + path)  # MS_BIND, then clear read-only on the new mount only
        mount_setattr(path, 0, 1, 0)
    check(libc.prctl(28, 3, 0, 0, 0), "securebits")  # SECBIT_NOROOT and its lock
    check(libc.prctl(47, 4, 0, 0, 0), "ambient caps")  # PR_CAP_AMBIENT_CLEAR_ALL
    cap = 0
    while libc.prctl(24, cap, 0, 0, 0) == 0:  # PR_CAPBSET_DROP until past the last cap
        cap += 1
    if libc.prctl(23, 0, 0, 0, 0) != 0:  # PR_CAPBSET_READ: cap 0 must be gone
        raise OSError(ctypes.get_errno(), "bounding set")
    check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")

cfg, argv = json.loads(sys.argv[1]), sys.argv[2:]
step = "cgroup"
try:
    if cfg["cgroup"]:
        with open(cfg["cgroup"], "w") as f:
            f.write("0")
    step = "limits"
    for name, value in cfg["limits"].items():
        which = getattr(resource, name)
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
    step = "mounts"
    if cfg["harden"]:
        harden(cfg["rw"])
    step = "chdir"
    os.chdir(cfg["cwd"])  # again: a bind mount over the cwd is not seen through the old one
    os.write(cfg["ready_fd"], b"1")
    os.close(cfg["ready_fd"])
except Exception as exc:
    os.write(2, f"evalpin sandbox: {step} failed: {exc}\n".encode())
    os._exit(70)
os.execv(argv[0], argv)
"""


# -- isolation probe ------------------------------------------------------------------


@functools.cache
def probe_isolation(backends: tuple[str, ...] = BACKENDS) -> Isolation:
    """Try each backend for real (a trivial command through the full launcher), with a
    pids cgroup if one can be made, and return the first that works."""
    failures = []
    for kind in backends:
        if shutil.which(kind) is None:
            failures.append(f"{kind} not installed")
            continue
        error = ""
        for pids in (True, False) if kind != "bwrap" else (False,):
            error = _trial(kind, pids)
            if not error:
                return Isolation(kind, OFF_ENFORCED, _WHY[kind] + _pids_note(pids), pids)
        failures.append(f"{kind}: {error}")
    pids = not _trial("none", True)
    why = "no namespaces (" + "; ".join(failures or ["none tried"]) + "): " + _WHY["none"]
    return Isolation("none", OFF_UNENFORCED, why + _pids_note(pids), pids)


_WHY = {
    "unshare": "unshare: user, network, pid and mount namespaces, read-only mounts,"
    " no capabilities",
    "bwrap": "bubblewrap: all namespaces, read-only root, fresh /proc, no capabilities",
    "none": "network, /proc and the file system are shared with the host",
}


def _pids_note(pids: bool) -> str:
    return f", pids cgroup (max {MAX_PROCESSES})" if pids else ""


def _trial(kind: str, pids: bool) -> str:
    """'' when `kind` runs a trivial command end to end, else the first line of why not."""
    trial = Isolation(kind, OFF_ENFORCED, "", pids)
    try:
        with _scratch(None, pids) as box:
            if pids and box.cgroup is None:
                return "no pids cgroup"
            command = [sys.executable, "-I", "-S", "-c", "pass"]
            run = _execute(trial, box, command, {"PATH": os.defpath}, {}, _PROBE_TIMEOUT_S)
    except OSError as exc:
        return str(exc)
    if run.ready and run.exit_code == 0:
        return ""
    output = run.output.decode("utf-8", "replace").strip().splitlines()
    return output[-1] if output else f"exit {run.exit_code}"


# -- one run --------------------------------------------------------------------------


def run_item(
    item: CodingItem,
    files: dict[str, str],
    *,
    workdir_parent: Path | None = None,
    secret_names: Iterable[str] = (),
    allow_network: bool = False,
    isolation: Isolation | None = None,
) -> Outcome:
    """Grade `files` (name -> content, as the model gave them) against `item`'s tests.

    Static checks first (a failure there means the code never runs), then pytest on a
    copy of the test file in a fresh temporary directory under `workdir_parent`, removed
    afterwards. `secret_names` are never passed on and their values are cut from the tail.
    `allow_network` (a set that says `network: allowed`) skips the network namespace;
    `isolation` replaces the probe's choice.
    """
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
    reasons, note = static_check(files, item)
    if reasons:
        return outcome(False, reasons, note)
    try:
        test_source = item.test_file.read_bytes()
    except OSError as exc:
        return outcome(False, [SANDBOX_ERROR("test_file")], str(exc))
    to_write = {
        n: c.encode("utf-8", "surrogatepass") for n, c in approved_files(files, item).items()
    }
    to_write[item.test_file.name] = test_source
    secret_values = _secret_values(secret_names)
    try:
        with _scratch(workdir_parent, iso.pids_cgroup) as box:
            _write_tree(box.work, to_write)
            ini = box.ctl / PYTEST_INI_NAME
            ini.write_text(PYTEST_INI, encoding="utf-8")
            report = box.ctl / "report.xml"
            command = pytest_argv(
                sys.executable, str(ini), str(box.work), str(report), item.test_file.name
            )
            env = _environment(box.work, secret_names)
            run = _execute(
                iso,
                box,
                command,
                env,
                rlimits(item.timeout_s),
                item.timeout_s,
                allow_network=allow_network,
            )
            tail = _tail(run.output, box, secret_values)
            if not run.ready:
                kind = "setup" if run.started else "start"
                return outcome(False, [SANDBOX_ERROR(kind)], tail)
            if run.timed_out:
                note = f"[evalpin] killed after {item.timeout_s:g} s (the item's timeout_s)"
                return outcome(False, [TIMEOUT()], (tail + "\n" + note)[-TAIL_CHARS:])
            expected = expected_tests(test_source.decode("utf-8", "replace"))
            passed, reasons = judge_report(_read_report(report), expected, exit_code=run.exit_code)
            return outcome(passed, reasons, tail)
    except OSError as exc:
        return outcome(False, [SANDBOX_ERROR("workdir")], f"{type(exc).__name__}: {exc}")


# -- the work directory ---------------------------------------------------------------


@dataclass(frozen=True)
class _Box:
    """One run's scratch space: `work` is the cwd, `ctl` (a sibling with a random name,
    outside the cwd) holds the pytest config and the report."""

    root: Path
    work: Path
    ctl: Path
    cgroup: _PidsCgroup | None


@contextlib.contextmanager
def _scratch(parent: Path | None, pids: bool) -> Iterator[_Box]:
    root = Path(tempfile.mkdtemp(prefix="evalpin-", dir=parent))
    cgroup = None
    try:
        work, ctl = root / "work", root / secrets.token_hex(8)
        work.mkdir()
        ctl.mkdir()
        (work / ".tmp").mkdir()
        cgroup = _PidsCgroup.create() if pids else None
        yield _Box(root, work, ctl, cgroup)
    finally:
        if cgroup is not None:
            cgroup.remove()
        shutil.rmtree(root, onerror=_chmod_and_retry)


def _chmod_and_retry(func, path, _exc_info) -> None:
    """Tested code may leave read-only folders behind; make them removable and retry."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        func(path)


def _write_tree(root: Path, files: dict[str, bytes]) -> None:
    """Write `files` (canonical relative paths) under `root` without following any link:
    every folder is opened with O_NOFOLLOW relative to its parent, every file is created
    with O_EXCL."""
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for rel, data in files.items():
            *folders, leaf = rel.split("/")
            fd = os.dup(top)
            try:
                for folder in folders:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(folder, 0o755, dir_fd=fd)
                    inner = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    os.close(fd)
                    fd = inner
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                with os.fdopen(os.open(leaf, flags, 0o644, dir_fd=fd), "wb") as out:
                    out.write(data)
            finally:
                os.close(fd)
    finally:
        os.close(top)


def _read_report(path: Path) -> bytes | None:
    """The report's bytes, or None; never follows a link or blocks on a FIFO that the
    tested code may have put in its place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as report:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return report.read(FILE_SIZE_BYTES)  # pytest could not have written more


# -- pids cgroup ----------------------------------------------------------------------


@functools.cache
def _pids_parent() -> Path | None:
    """The folder of our own cgroup in a hierarchy with the pids controller (cgroup v1
    `pids`, else v2), or None."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        groups = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    own = {}
    for line in groups:
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else ["cgroup2"]:
            own[name] = path
    found: dict[str, Path] = {}
    for line in mounts:
        fields, _, tail = line.partition(" - ")
        fstype, _source, options = [*tail.split(), "", ""][:3]
        mount_root, mount_point = fields.split()[3:5]
        key = "pids" if fstype == "cgroup" and "pids" in options.split(",") else fstype
        if key in ("pids", "cgroup2") and key in own:
            rel = os.path.relpath(own[key], mount_root)
            found[key] = Path(mount_point, "" if rel == "." else rel)
    return found.get("pids") or found.get("cgroup2")


class _PidsCgroup:
    """A child cgroup capping how many processes one run may have: the fork-bomb limit
    that still holds for root, where RLIMIT_NPROC does not."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.procs = str(path / "cgroup.procs")

    @classmethod
    def create(cls) -> _PidsCgroup | None:
        parent = _pids_parent()
        if parent is None:
            return None
        path = parent / f"evalpin-{secrets.token_hex(6)}"
        try:
            path.mkdir()
        except OSError:
            return None
        try:
            (path / "pids.max").write_text(str(MAX_PROCESSES))
        except OSError:
            path.rmdir()
            return None
        return cls(path)

    def members(self) -> list[int]:
        try:
            return [int(p) for p in Path(self.procs).read_text().split()]
        except OSError:
            return []

    def remove(self) -> None:
        """Kill what is left in it and remove it; the kernel frees it once empty."""
        for _ in range(100):
            _kill_all(self.members())
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


# -- execution ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Run:
    started: bool
    ready: bool  # the launcher finished setting up and exec'd the command
    exit_code: int | None
    timed_out: bool
    output: bytes


def _execute(
    iso: Isolation,
    box: _Box,
    command: list[str],
    env: dict[str, str],
    limits: dict[str, int],
    timeout: float,
    *,
    allow_network: bool = False,
) -> _Run:
    """Run `command` in `box` under `iso`, keeping only the tail of its output."""
    ready_r, ready_w = os.pipe()
    limits = dict(limits)
    if iso.kind != "none":
        # Counted per user namespace, so it is this run's processes (for non-root users;
        # root is exempt, hence the cgroup). Outside a namespace it would count all of
        # the user's processes, so it is left off there.
        limits["RLIMIT_NPROC"] = MAX_PROCESSES
    config = {
        "cgroup": box.cgroup.procs if box.cgroup else None,
        "limits": limits,
        "harden": iso.kind == "unshare",
        "rw": [str(box.work), str(box.ctl)],
        "cwd": str(box.work),
        "ready_fd": ready_w,
    }
    launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(config), *command]
    argv = [*_wrapper(iso.kind, box, allow_network), *launcher]
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=box.work,
            env=env,
            pass_fds=(ready_w,),
            start_new_session=True,
        )
    except OSError as exc:
        os.close(ready_r)
        return _Run(False, False, None, False, f"cannot start sandbox: {exc}".encode())
    finally:
        os.close(ready_w)
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    out = proc.stdout.fileno()
    kept = bytearray()
    ready = timed_out = False
    with proc.stdout, os.fdopen(ready_r, "rb", buffering=0), selectors.DefaultSelector() as sel:
        sel.register(out, selectors.EVENT_READ)
        sel.register(ready_r, selectors.EVENT_READ)
        while out in sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 65536)
                if key.fd == ready_r:
                    ready = ready or chunk == b"1"
                    sel.unregister(ready_r)
                elif chunk:
                    kept += chunk
                    del kept[:-_KEEP_OUTPUT]
                else:
                    sel.unregister(out)
        if not timed_out:
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        _kill_tree(proc, box.cgroup)
        proc.wait()
    return _Run(True, ready, None if timed_out else proc.returncode, timed_out, bytes(kept))


def _wrapper(kind: str, box: _Box, allow_network: bool) -> list[str]:
    """The command that puts the launcher in its namespaces (none for `none`)."""
    work, ctl = str(box.work), str(box.ctl)
    if kind == "unshare":
        net = [] if allow_network else ["--net"]
        return ["unshare", "--map-root-user", *net, *_UNSHARE_REST]
    if kind == "bwrap":
        net = ["--share-net"] if allow_network else []
        binds = ["--bind", work, work, "--bind", ctl, ctl, "--chdir", work]
        return ["bwrap", "--unshare-all", *net, *_BWRAP_REST, *binds, "--"]
    return []


_UNSHARE_REST = ["--pid", "--fork", "--kill-child", "--mount-proc", "--"]
_BWRAP_REST = ["--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/"]
_BWRAP_REST += ["--dev", "/dev", "--proc", "/proc"]


def _kill_tree(proc: subprocess.Popen[bytes], cgroup: _PidsCgroup | None) -> None:
    """SIGKILL the wrapper's children (under unshare or bwrap, the pid namespace's init,
    killed directly even if it cleared its parent-death signal) and give the wrapper a
    moment to reap it: an init's exit waits for every process in its namespace, so once
    the wrapper is gone the namespace is empty. Then our process group and anything left
    in the run's cgroup, for the runs without a namespace."""
    try:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    except OSError:
        children = []
    _kill_all(int(c) for c in children)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_REAP_WAIT_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if cgroup is not None:
        _kill_all(cgroup.members())


def _kill_all(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# -- environment and output -----------------------------------------------------------


def _environment(work: Path, secret_names: Iterable[str]) -> dict[str, str]:
    """Built from an allow-list, never inherited wholesale: nothing named PYTHON*,
    PYTEST_* or like a key gets through, and HOME and TMPDIR point into the work dir."""
    refused = set(secret_names)
    env = {k: os.environ[k] for k in _ALLOWED_ENV if k in os.environ and k not in refused}
    env.setdefault("PATH", os.defpath)
    env.update(HOME=str(work), TMPDIR=str(work / ".tmp"), **PYTEST_ENV)
    return env


def _secret_values(secret_names: Iterable[str]) -> list[str]:
    """Values to cut from the tail: the named secrets and anything in our environment
    that looks like one, when long enough not to be a common word."""
    names = set(secret_names) | {k for k in os.environ if _SECRETISH.search(k)}
    values = {os.environ[n] for n in names if len(os.environ.get(n, "")) >= 8}
    return sorted(values, key=len, reverse=True)


def _tail(output: bytes, box: _Box, secret_values: list[str]) -> str:
    """The end of the output with the random temp paths made relative (so tails of
    identical runs compare equal) and secret values replaced."""
    text = output.decode("utf-8", "replace")
    text = text.replace(f"{box.work}{os.sep}", "").replace(f"{box.ctl}{os.sep}", "")
    text = text.replace(str(box.root), "<sandbox>")
    for value in secret_values:
        text = text.replace(value, "[redacted]")
    return text[-TAIL_CHARS:]
