"""Runs one coding item's tests in fresh, contained processes.

API:
- `probe_isolation(backends=BACKENDS) -> Isolation` (cached): the strongest containment
  that works on this machine, tried for real once: `unshare`, else bubblewrap, else none.
  `Isolation.network` is `off-enforced` or `off-unenforced`; `why` is one line for the
  warning a caller must show when not enforced.
- `run_item(item, files, *, workdir_parent=None, secret_names=(), allow_network=False,
  isolation=None) -> Outcome`: grade one completion's files. `Outcome` has `passed`,
  `reasons`, `tail` (last `TAIL_CHARS` of test output), `seconds` and `network`.
- `execute(iso, box, specs, timeout)`: the primitive `evalpin.run.isolation` builds on:
  each `Spec` in a sandbox of its own, the last one deciding when the run ends.

What the grade means lives in `evalpin.core.graders.coding`; how the candidate and pytest
are split into processes, in `evalpin.run.isolation`. This module only contains them.

Containment, the same for `unshare` and bubblewrap (both get one mount plan: the unshare
launcher builds it with mount calls, bubblewrap from flags):
- user, network (no interface but a downed loopback), pid (a fresh /proc; when the
  namespace's init dies every process in it dies, `setsid` or not), ipc, uts and mount
  namespaces;
- a private root: a read-only tmpfs holding /usr and its links, two /etc files, the
  interpreter's prefixes read-only, the process's own folders read-write, a minimal /dev,
  and a private size-capped /tmp and /dev/shm; nothing else of the host;
- every capability dropped (bounding, ambient and own sets, SECBIT_NOROOT, no_new_privs),
  so nothing can be unmounted or remounted;
- a cgroup per item over every process tree of it: at most MAX_PROCESSES processes and
  the item's `memory_mb` (swap included); an OOM kill is `sandbox_error:memory`;
  `setpriv --pdeathsig` ties the tree to the grader, and a later run removes the cgroups
  of a grader that was SIGKILLed;
- an environment built from an allow-list (never inherited PYTHON*, PYTEST_*, keys);
- a wall-clock timeout, after which every tree is killed; output is read as it comes
  and only its tail kept, with the sandbox paths made relative and secrets cut.
Without namespaces only the environment, rlimits, cgroup, process-group kill and timeout
remain, and network is recorded off-unenforced.
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from dataclasses import dataclass, field
from pathlib import Path

from evalpin.core.fixtures import DEFAULT_MEMORY_MB, ISOLATION_PROCESS, CodingItem
from evalpin.core.graders.coding import (
    FILE_SIZE_BYTES,
    MAX_PROCESSES,
    PYTEST_ENV,
    approved_files,
    grade_order,
    rlimits,
    static_check,
)
from evalpin.core.reasons import SANDBOX_ERROR, TESTS_FAILED, TIMEOUT
from evalpin.core.records import TAIL_CHARS

BACKENDS = ("unshare", "bwrap")
OFF_ENFORCED = "off-enforced"
OFF_UNENFORCED = "off-unenforced"
NETWORK_ON = "on"

_ALLOWED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE")
_KEEP_OUTPUT = 16 * 1024  # bytes of output kept; far more than TAIL_CHARS characters
_PROBE_TIMEOUT_S = 10.0
_REAP_WAIT_S = 2.0


@dataclass(frozen=True)
class Isolation:
    """Which containment a run gets here, and whether network-off is enforced."""

    kind: str  # "unshare", "bwrap" or "none"
    network: str  # OFF_ENFORCED or OFF_UNENFORCED
    why: str
    pids_cgroup: bool = False  # a cgroup per run: process and memory caps


@dataclass(frozen=True)
class Outcome:
    """The grade of one completion's files, as recorded in a case line."""

    passed: bool
    reasons: list[str]
    tail: str
    seconds: float
    network: str
    failed_tests: list[str] = field(default_factory=list)  # when the tests failed


# The launcher runs first inside the sandbox (`python -I -S -c`), configured by a JSON
# argument, then execs the command. It reports readiness by writing one byte to an
# inherited pipe, so nothing the tested code does can pass for a setup failure or the
# reverse. Under unshare it builds the private root from the mount plan (the same plan
# bubblewrap gets as flags), pivots into it and drops every capability. Syscall numbers:
# mount_setattr is 442 on every arch; pivot_root is 155 on x86_64, 41 on generic ones.
_LAUNCHER = r"""
import ctypes, json, os, platform, resource, sys

DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"))

def harden(plan, newroot):
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

    def mount(src, dst, fstype, flags, data):
        check(libc.mount(src.encode(), dst.encode(), fstype and fstype.encode(),
                         ctypes.c_ulong(flags), data and data.encode()), "mount " + dst)

    def target(dst, is_file=False):
        path = newroot + dst
        os.makedirs(os.path.dirname(path) if is_file else path, exist_ok=True)
        if is_file and not os.path.exists(path):
            open(path, "w").close()
        return path

    mount("tmpfs", newroot, "tmpfs", 6, "mode=0755,size=1m")  # MS_NOSUID | MS_NODEV
    for op, src, dst, opt in plan:
        if op in ("ro", "rw"):
            path = target(dst, os.path.isfile(src) or dst.startswith("/dev/"))
            mount(src, path, None, 4096 | 16384, None)  # MS_BIND | MS_REC
            if op == "ro":
                mount_setattr(path, 1, 0, 0x8000)  # MOUNT_ATTR_RDONLY, AT_RECURSIVE
        elif op == "tmpfs":
            mount("tmpfs", target(dst), "tmpfs", 6, "mode=" + src + ",size=" + str(opt))
        elif op == "dev":
            mount("tmpfs", target(dst), "tmpfs", 2, "mode=0755,size=65536")  # MS_NOSUID
            for node in DEV_NODES:
                mount("/dev/" + node, target(dst + "/" + node, True), None, 4096, None)
            for name, link in DEV_LINKS:
                os.symlink(link, newroot + dst + "/" + name)
        elif op == "proc":
            mount("proc", target(dst), "proc", 14, None)  # NOSUID | NODEV | NOEXEC
        elif op == "symlink":
            os.makedirs(os.path.dirname(newroot + dst), exist_ok=True)
            os.symlink(src, newroot + dst)
    os.chdir(newroot)
    pivot = 155 if platform.machine() == "x86_64" else 41
    check(libc.syscall(ctypes.c_long(pivot), b".", b"."), "pivot_root")
    check(libc.umount2(b".", 2), "detach the old root")  # MNT_DETACH
    os.chdir("/")
    mount_setattr("/", 1, 0, 0)  # the new root's own tmpfs becomes read-only
    check(libc.prctl(28, 3, 0, 0, 0), "securebits")  # SECBIT_NOROOT and its lock
    check(libc.prctl(47, 4, 0, 0, 0), "ambient caps")  # PR_CAP_AMBIENT_CLEAR_ALL
    cap = 0
    while libc.prctl(24, cap, 0, 0, 0) == 0:  # PR_CAPBSET_DROP until past the last cap
        cap += 1
    if libc.prctl(23, 0, 0, 0, 0) != 0:  # PR_CAPBSET_READ: cap 0 must be gone
        raise OSError(ctypes.get_errno(), "bounding set")
    check(libc.prctl(38, 1, 0, 0, 0), "no_new_privs")

    class CapHeader(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class CapData(ctypes.Structure):
        _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]

    # Our own capabilities too: the command may run in this process, with no execve to
    # drop them (_LINUX_CAPABILITY_VERSION_3, every set empty).
    check(libc.capset(ctypes.byref(CapHeader(0x20080522, 0)), (CapData * 2)()), "capset")

cfg, argv = json.loads(sys.argv[1]), sys.argv[2:]
step = "limits"
try:
    for name, value in cfg["limits"].items():
        which = getattr(resource, name)
        hard = resource.getrlimit(which)[1]
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))
    step = "mounts"
    if cfg["newroot"]:
        harden(cfg["plan"], cfg["newroot"])
    step = "chdir"
    os.chdir(cfg["cwd"])
    os.write(cfg["ready_fd"], b"1")
    os.close(cfg["ready_fd"])
except Exception as exc:
    os.write(2, f"evalpin sandbox: {step} failed: {exc}\n".encode())
    os._exit(70)
inline = cfg["inline"]
if inline is None:
    os.execv(argv[0], argv)
# Our own `python -c CODE` runs here, saving an interpreter start: the flags it would
# have had (-I is already in force), then site-packages, then the code as __main__.
sys.dont_write_bytecode = "-B" in inline["flags"]
if "-u" in inline["flags"]:
    sys.stdout.reconfigure(write_through=True)
    sys.stderr.reconfigure(write_through=True)
if "-S" not in inline["flags"]:
    import site
    site.main()
sys.argv = ["-c", *inline["args"]]
exec(compile(inline["code"], "<string>", "exec"), {"__name__": "__main__"})
"""


# -- isolation probe ------------------------------------------------------------------


@functools.cache
def probe_isolation(backends: tuple[str, ...] = BACKENDS) -> Isolation:
    """Try each backend for real (a trivial command through the full launcher and its
    private root), with a cgroup if one can be made, and return the first that works."""
    failures = []
    for kind in backends:
        if shutil.which(kind) is None:
            failures.append(f"{kind} not installed")
            continue
        error = ""
        for cgroup in (True, False):
            error = _trial(kind, cgroup)
            if not error:
                return Isolation(kind, OFF_ENFORCED, _WHY[kind] + _cgroup_note(cgroup), cgroup)
        failures.append(f"{kind}: {error}")
    cgroup = not _trial("none", True)
    why = "no namespaces (" + "; ".join(failures or ["none tried"]) + "): " + _WHY["none"]
    return Isolation("none", OFF_UNENFORCED, why + _cgroup_note(cgroup), cgroup)


_WHY = {
    "unshare": "unshare: user, network, pid, ipc, uts and mount namespaces, a private"
    " read-only root, no capabilities",
    "bwrap": "bubblewrap: all namespaces, a private read-only root, no capabilities",
    "none": "network, /proc and the file system are shared with the host",
}


def _cgroup_note(cgroup: bool) -> str:
    return f", cgroup (max {MAX_PROCESSES} processes, memory cap)" if cgroup else ""


def _trial(kind: str, cgroup: bool) -> str:
    """'' when `kind` runs a trivial command end to end, else the first line of why not."""
    trial = Isolation(kind, OFF_ENFORCED, "", cgroup)
    try:
        with scratch(None, cgroup, DEFAULT_MEMORY_MB) as box:
            if cgroup and box.cgroup is None:
                return "no cgroup"
            work = box.folder("work")
            command = [sys.executable, "-I", "-S", "-c", "pass"]
            spec = Spec(command, {"PATH": os.defpath}, work, rw=[work])
            run = execute(trial, box, [spec], _PROBE_TIMEOUT_S)
    except OSError as exc:
        return str(exc)
    if run.ready and run.exit_code == 0:
        return ""
    output = run.output.decode("utf-8", "replace").strip().splitlines()
    return output[-1] if output else f"exit {run.exit_code}"


# -- one item -------------------------------------------------------------------------


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
        with scratch(workdir_parent, iso.pids_cgroup, item.memory_mb) as box:
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
            if run.timed_out:
                note = f"[evalpin] killed after {item.timeout_s:g} s (the item's timeout_s)"
                return outcome(False, [TIMEOUT()], (tail + "\n" + note)[-TAIL_CHARS:])
            passed, reasons = prepared.judge(box, run.exit_code)
            graded = outcome(passed, reasons, tail)
            if TESTS_FAILED() in graded.reasons:
                return dataclasses.replace(graded, failed_tests=prepared.failed_tests())
            return graded
    except OSError as exc:
        return outcome(False, [SANDBOX_ERROR("workdir")], f"{type(exc).__name__}: {exc}")


# -- the scratch space ----------------------------------------------------------------


@dataclass(frozen=True)
class Box:
    """One run's scratch space on the host: `root` holds every folder a sandbox binds
    (the work folders, a control folder with a random name for the report) and the
    empty mount points of the private roots; `cgroup` caps the whole process tree."""

    root: Path
    cgroup: Cgroup | None

    def folder(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(exist_ok=True)
        return path

    def control(self) -> Path:
        """A folder whose name a sandbox that does not bind it cannot guess."""
        return self.folder("ctl-" + secrets.token_hex(8))


@contextlib.contextmanager
def scratch(parent: Path | None, cgroup: bool, memory_mb: int) -> Iterator[Box]:
    root = Path(tempfile.mkdtemp(prefix="evalpin-", dir=parent))
    group = None
    try:
        group = Cgroup.create(memory_mb * 1024**2) if cgroup else None
        yield Box(root, group)
    finally:
        if group is not None:
            group.remove()
        shutil.rmtree(root, onerror=_chmod_and_retry)


def _chmod_and_retry(func, path, _exc_info) -> None:
    """Tested code may leave read-only folders behind; make them removable and retry."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        func(path)


def write_tree(root: Path, files: dict[str, bytes]) -> None:
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


def read_regular(path: Path, limit: int = FILE_SIZE_BYTES) -> bytes | None:
    """A file's bytes, or None; never follows a link or blocks on a FIFO that tested
    code may have put in its place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as report:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return report.read(limit)


# -- cgroups --------------------------------------------------------------------------


@functools.cache
def _cgroup_parents() -> dict[str, Path]:
    """Our own cgroup's folder per controller we can use: cgroup v1 `pids` and `memory`
    hierarchies, or the v2 unified one (key `cgroup2`)."""
    try:
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
        groups = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
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
        for key in ("pids", "memory") if fstype == "cgroup" else ("cgroup2",):
            if (fstype == "cgroup2" or key in options.split(",")) and key in own:
                rel = os.path.relpath(own[key], mount_root)
                found.setdefault(key, Path(mount_point, "" if rel == "." else rel))
    if "pids" in found and "memory" in found:
        return {k: found[k] for k in ("pids", "memory")}
    v2 = found.get("cgroup2")
    if v2 is not None:
        try:
            controllers = (v2 / "cgroup.subtree_control").read_text().split()
        except OSError:
            controllers = []
        if {"pids", "memory"} <= set(controllers):
            return {"cgroup2": v2}
    return {}


class Cgroup:
    """A child cgroup per run (one per v1 hierarchy, or one v2 folder) that caps the
    number of processes (the fork-bomb limit that still holds for root, where
    RLIMIT_NPROC does not) and the memory of the whole process tree, swap included.
    Named `evalpin-PID-RANDOM`, so a later run can remove what a killed grader left."""

    def __init__(self, paths: list[Path], memory: Path) -> None:
        self.paths = paths
        self.memory = memory
        self.procs = [str(p / "cgroup.procs") for p in paths]

    @classmethod
    def create(cls, memory_bytes: int) -> Cgroup | None:
        parents = _cgroup_parents()
        if not parents:
            return None
        name = f"evalpin-{os.getpid()}-{secrets.token_hex(4)}"
        made: list[Path] = []
        try:
            for key, parent in parents.items():
                _remove_stale(parent)
                path = parent / name
                path.mkdir()
                made.append(path)
                if key in ("pids", "cgroup2"):
                    (path / "pids.max").write_text(str(MAX_PROCESSES))
                if key == "cgroup2":
                    (path / "memory.max").write_text(str(memory_bytes))
                    with contextlib.suppress(OSError):
                        (path / "memory.swap.max").write_text("0")
                elif key == "memory":
                    (path / "memory.limit_in_bytes").write_text(str(memory_bytes))
                    with contextlib.suppress(OSError):
                        (path / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
        except OSError:
            for path in made:
                with contextlib.suppress(OSError):
                    path.rmdir()
            return None
        memory = next(p for p, k in zip(made, parents, strict=True) if k != "pids")
        return cls(made, memory)

    def members(self) -> list[int]:
        pids: set[int] = set()
        for procs in self.procs:
            with contextlib.suppress(OSError):
                pids.update(int(p) for p in Path(procs).read_text().split())
        return sorted(pids)

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of this run for reaching the memory cap."""
        for name in ("memory.events", "memory.oom_control"):
            with contextlib.suppress(OSError):
                for line in (self.memory / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip() != "0":
                        return True
        return False

    def remove(self) -> None:
        """Kill what is left in it and remove it; the kernel frees it once empty."""
        for path in self.paths:
            _remove_cgroup(path)


def _remove_cgroup(path: Path) -> None:
    for _ in range(200):
        with contextlib.suppress(OSError):
            _kill_all(int(p) for p in (path / "cgroup.procs").read_text().split())
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def _remove_stale(parent: Path) -> None:
    """Remove the cgroups of evalpin graders that died without cleaning up (SIGKILL)."""
    for path in parent.glob("evalpin-*"):
        owner = path.name.split("-")[1] if path.name.count("-") >= 2 else ""
        if owner.isdigit() and not _alive(int(owner)):
            _remove_cgroup(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- the private root -----------------------------------------------------------------

TMP_BYTES = 64 * 1024**2


@dataclass(frozen=True)
class Spec:
    """One sandboxed process: its command, environment and working folder, the folders
    it may write (`rw`) and read (`ro`) besides the system, and descriptors it inherits."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    rw: list[Path] = field(default_factory=list)
    ro: list[Path] = field(default_factory=list)
    pass_fds: tuple[int, ...] = ()
    limits: dict[str, int] = field(default_factory=dict)
    # Writable folders shown at another path (source, where the sandbox sees it).
    binds: list[tuple[Path, Path]] = field(default_factory=list)


@functools.cache
def _system_plan() -> tuple[tuple[str, str, str, object], ...]:
    """What every sandbox sees read-only: /usr (with the /bin, /lib... links or folders
    beside it), the two /etc files the dynamic linker and `time` read, the interpreter's
    prefixes (stdlib and site-packages); then fresh /dev, /proc and size-capped /tmp and
    /dev/shm. Nothing else of the host: no home, repository, fixtures or sockets."""
    plan: list[tuple[str, str, str, object]] = []
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            plan.append(("symlink", os.readlink(top), top, None))
        elif os.path.isdir(top):
            plan.append(("ro", top, top, None))
    for name in ("/etc/ld.so.cache", "/etc/localtime"):
        if os.path.isfile(name):
            plan.append(("ro", os.path.realpath(name), name, None))
    plan += [
        ("dev", "", "/dev", None),
        ("proc", "", "/proc", None),
        ("tmpfs", "1777", "/tmp", TMP_BYTES),
        ("tmpfs", "1777", "/dev/shm", TMP_BYTES),
    ]
    covered = ["/usr"]
    for prefix in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix):
        real = os.path.realpath(prefix)
        if not any(real == c or real.startswith(c + "/") for c in covered):
            covered.append(real)
            plan.append(("ro", real, real, None))
    return tuple(plan)


def _plan(spec: Spec) -> list[tuple[str, str, str, object]]:
    plan = list(_system_plan())
    plan += [("rw", str(p), str(p), None) for p in spec.rw]
    plan += [("ro", str(p), str(p), None) for p in spec.ro]
    plan += [("rw", str(src), str(dst), None) for src, dst in spec.binds]
    return plan


def _wrapper(
    iso: Isolation, box: Box, spec: Spec, allow_network: bool
) -> tuple[list[str], str | None]:
    """The command that puts the launcher in its namespaces, and the mount point of the
    private root the launcher builds (unshare only; bubblewrap builds it from flags)."""
    tool = shutil.which(iso.kind) if iso.kind != "none" else None
    if iso.kind != "none" and tool is None:
        raise FileNotFoundError(f"{iso.kind} not found on PATH")
    if iso.kind == "unshare":  # by its path: the shell before it need not search PATH
        net = [] if allow_network else ["--net"]
        mount_point = Path(tempfile.mkdtemp(prefix="root-", dir=box.root))
        return [tool, "--map-root-user", *net, *_UNSHARE_REST], str(mount_point)
    if iso.kind == "bwrap":
        args = [tool, "--unshare-all", *(["--share-net"] if allow_network else [])]
        args += ["--die-with-parent", "--cap-drop", "ALL"]
        for op, src, dst, opt in _plan(spec):
            if op in ("ro", "rw"):
                args += ["--ro-bind" if op == "ro" else "--bind", src, dst]
            elif op == "tmpfs":
                args += ["--perms", str(src), "--size", str(opt), "--tmpfs", dst]
            elif op in ("dev", "proc"):
                args += [f"--{op}", dst]
            else:
                args += ["--symlink", src, dst]
        return [*args, "--remount-ro", "/", "--chdir", str(spec.cwd), "--"], None
    return [], None


_UNSHARE_REST = ["--ipc", "--uts", "--pid", "--fork", "--kill-child", "--mount-proc", "--"]


def _prefix(box: Box) -> list[str]:
    """What runs before the wrapper, in the same process: `setpriv` makes it die with
    the grader (a SIGKILLed grader leaves no sandbox running: unshare's --kill-child and
    bubblewrap's --die-with-parent take the rest down), then a shell moves it into the
    run's cgroup, so the namespace tools and everything they start are counted."""
    setpriv = shutil.which("setpriv")
    prefix = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
    if box.cgroup is None:
        return prefix
    script = 'for f in "$@"; do [ "$f" = -- ] && break; echo 0 > "$f" || exit 71; done; '
    script += 'while [ "$1" != -- ]; do shift; done; shift; exec "$@"'
    return [*prefix, "/bin/sh", "-c", script, "sh", *box.cgroup.procs, "--"]


# -- execution ------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    started: bool
    ready: bool  # every launcher finished setting up and exec'd its command
    exit_code: int | None  # of the last process (the one that decides)
    timed_out: bool
    output: bytes


def execute(
    iso: Isolation,
    box: Box,
    specs: list[Spec],
    timeout: float,
    *,
    allow_network: bool = False,
) -> Run:
    """Start every spec, each in a sandbox of its own, and wait for the last one (the
    one that decides) or the timeout; then kill them all. Their output shares one pipe,
    read as it comes, of which only the tail is kept."""
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
                wrapper, newroot = _wrapper(iso, box, spec, allow_network)
            except OSError:
                os.close(ready_w)
                raise
            config = {
                "inline": _inline(spec.argv),
                "limits": limits,
                "newroot": newroot,
                "plan": _plan(spec),
                "cwd": str(spec.cwd),
                "ready_fd": ready_w,
            }
            launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(config)]
            command = [] if config["inline"] else spec.argv
            try:
                procs.append(
                    subprocess.Popen(
                        [*_prefix(box), *wrapper, *launcher, *command],
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
    kept, ready, timed_out = _watch(procs[-1], out_r, readies, timeout)
    for proc in procs:
        _kill_tree(proc, box.cgroup)
    exit_code = None if timed_out else procs[-1].returncode
    return Run(True, ready, exit_code, timed_out, kept)


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


def _watch(main: subprocess.Popen[bytes], out: int, readies: list[int], timeout: float):
    """Read output and readiness until `main` exits or the deadline passes."""
    deadline = time.monotonic() + timeout
    kept = bytearray()
    ready = [False] * len(readies)
    timed_out = False
    exited = os.pidfd_open(main.pid)
    with contextlib.ExitStack() as stack, selectors.DefaultSelector() as sel:
        for fd in (out, exited, *readies):
            stack.callback(os.close, fd)
            sel.register(fd, selectors.EVENT_READ)
        done = False
        while not done:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            for key, _ in sel.select(left):
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
    return bytes(kept), all(ready), timed_out


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
    _kill_all(int(c) for c in children)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_REAP_WAIT_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if cgroup is not None:
        _kill_all(cgroup.members())
    proc.wait()


def _kill_all(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# -- environment and output -----------------------------------------------------------


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
