"""What one sandboxed process is given (`Spec`) and the mount plan of its private root:
one list of steps (`ro`, `rw`, `tmpfs`, `dev`, `proc`, `symlink`) that the launcher
carries out with mount calls under unshare and bubblewrap gets as flags."""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

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


def plan(spec: Spec) -> list[tuple[str, str, str, object]]:
    """Everything a sandbox for `spec` sees: the system, then its own folders."""
    steps = list(system_plan())
    steps += [("rw", str(p), str(p), None) for p in spec.rw]
    steps += [("ro", str(p), str(p), None) for p in spec.ro]
    steps += [("rw", str(src), str(dst), None) for src, dst in spec.binds]
    return steps
