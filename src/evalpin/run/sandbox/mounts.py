"""What one sandboxed process is given (`Spec`) and the mount plan of its private root:
one list of steps (`ro`, `work`, `tmpfs`, `dev`, `proc`, `rebind`, `empty`, `symlink`, `dir`)
that the launcher carries out with mount calls under unshare and bubblewrap gets as flags.

No inode a box can lock, lease or watch is another box's: what is bound read-only
becomes, in the launcher (`private`), an overlay of the box's own (a folder) or a copy
in a tmpfs of its own (a file); `rebind` covers an entry of the box's own /proc. The
device nodes of `/dev` are the host's: the grader holds every lock on them
(`devlocks.py`).

The witness's two processes share one set of folders (`base` and `joins`): the first
builds its root as any sandbox does and hands back its namespaces; the second starts in
a copy of that mount namespace (so on the very same tmpfs folders: what one writes the
other reads, live) with pid, ipc and uts namespaces of its own, and adds only its own
folders there (`room_plan`), then, once they are filled, binds files of them read-only
over paths of the shared folders (`overlay`).

Every folder a sandbox writes (`work`: its own folders; `tmpfs`: /tmp and /dev/shm) is
a size-capped tmpfs of its own inside its namespaces, handed back to the grader (see
`box.py`): what tested code writes never reaches the host's disk. /proc/sys (and
/proc/sysrq-trigger) are bound read-only over the fresh /proc; /sys is not there."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

# The disk cap: each folder a sandbox writes in (its own folders, /tmp, /dev/shm) is a
# private tmpfs of this size (counted against the item's memory_mb where a cgroup is).
DISK_BYTES = 256 * 1024**2
# An empty folder of the box's root: the second, empty layer of every overlay the
# launcher makes over a read-only folder (read-only with the root once entered).
EMPTY = "/.empty"
# Kernel settings under /proc a process that is root somewhere could write.
PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger")


@dataclass(frozen=True)
class Spec:
    """One sandboxed process: its command, environment and working folder, the folders
    it may write (`rw`) and read (`ro_at`) besides the system, and descriptors it inherits."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    rw: list[Path] = field(default_factory=list)
    pass_fds: tuple[int, ...] = ()
    limits: dict[str, int] = field(default_factory=dict)
    # Writable folders shown at another path (source, where the sandbox sees it).
    binds: list[tuple[Path, Path]] = field(default_factory=list)
    # Its namespaces are handed back for the next spec to join (`base`), or it joins the
    # previous spec's (`joins`; only its `rw` folders are its own then).
    base: bool = False
    joins: bool = False
    # (base) empty folders its root holds where the joining spec's own folders go.
    mountpoints: list[Path] = field(default_factory=list)
    # (joins) once its folders are filled: these made read-only, then each file (source,
    # a path in them) bound read-only over a path of the shared folders; nothing in the
    # `noexec` folders runs here.
    sealed: list[Path] = field(default_factory=list)
    overlay: list[tuple[Path, Path]] = field(default_factory=list)
    noexec: list[Path] = field(default_factory=list)
    # Read-only folders shown at another path (source, where the sandbox sees it).
    ro_at: list[tuple[Path, Path]] = field(default_factory=list)


@functools.cache
def system_plan() -> tuple[tuple[str, str, str, object], ...]:
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
    plan += [("empty", "", EMPTY, None)]  # the overlays' second layer (launcher.private)
    plan += [("dev", "", "/dev", None), ("proc", "", "/proc", None)]
    # The box's own /proc's entries, bound read-only over themselves (never the host's:
    # every box would share their inodes).
    plan += [("rebind", "", path, None) for path in PROC_READ_ONLY if os.path.exists(path)]
    plan += [
        ("tmpfs", "1777", "/tmp", DISK_BYTES),
        ("tmpfs", "1777", "/dev/shm", DISK_BYTES),
    ]
    covered = ["/usr"]
    for prefix in (sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix):
        real = os.path.realpath(prefix)
        if not any(real == c or real.startswith(c + "/") for c in covered):
            covered.append(real)
            plan.append(("ro", real, real, None))
    return tuple(plan)


def plan(spec: Spec) -> list[tuple[str, str, str, object]]:
    """Everything a sandbox for `spec` sees: the system, then its own folders (a `work`
    step is a private tmpfs at `dst` that starts with a copy of the host folder `src`).
    A joining spec's plan is its room in the base's root: a /proc of its own pid
    namespace and its own folders."""
    if spec.joins:
        steps: list[tuple[str, str, str, object]] = [("proc", "", "/proc", None)]
        steps += [("rebind", "", p, None) for p in PROC_READ_ONLY if os.path.exists(p)]
        return steps + [("work", str(p), str(p), DISK_BYTES) for p in spec.rw]
    steps = list(system_plan())
    steps += [("work", str(p), str(p), DISK_BYTES) for p in spec.rw]
    steps += [("ro", str(src), str(dst), None) for src, dst in spec.ro_at]
    steps += [("work", str(src), str(dst), DISK_BYTES) for src, dst in spec.binds]
    return steps + [("dir", "", str(p), None) for p in spec.mountpoints]


def after_fill(spec: Spec) -> list[tuple[str, str, str]]:
    """What a joining spec's launcher does once its folders are filled: `seal` a folder
    (read-only), `bind` a file of it read-only over a path of the shared folders,
    `noexec` a folder (no file in it is executed or mapped executable)."""
    steps = [("seal", "", str(p)) for p in spec.sealed]
    steps += [("noexec", "", str(p)) for p in spec.noexec]
    return steps + [("bind", str(src), str(dst)) for src, dst in spec.overlay]


def handed_back(steps: list[tuple[str, str, str, object]]) -> list[tuple[str | None, str]]:
    """The private tmpfs folders of a plan, in the order the launcher hands them back:
    (the host folder it starts from, or None for /tmp and /dev/shm; where it is)."""
    return [(src if op == "work" else None, dst) for op, src, dst, _ in steps if op in _PRIVATE]


_PRIVATE = ("work", "tmpfs")
