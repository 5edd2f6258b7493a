"""Which limits a coding run enforces on this machine, and how: recorded in the run
header's controls (`limits`), and a run that cannot enforce one refuses to start unless
its operator accepts that (the verdict then names it, `internal`).

A grader that is root (or has a delegated cgroup v2 subtree) caps each item's memory
and processes with a cgroup; one that is not, on a cgroup v1 host, has no way to cap
what a tree of processes holds together (address-space limits are per process, and
tmpfs pages, memfds and socket buffers are in no process's address space): memory is
then not enforced, and said so.
"""

from __future__ import annotations

from evalpin.core.instrument.graders.coding import MAX_PROCESSES
from evalpin.core.judge.limits_rule import NOT_ENFORCED
from evalpin.run.sandbox import cgroup
from evalpin.run.sandbox.backends import Isolation
from evalpin.run.sandbox.mounts import DISK_BYTES


def enforcement(iso: Isolation) -> dict[str, str]:
    """Per limit, how it is enforced here, or `not enforced: why`."""
    version = cgroup.kind() if iso.pids_cgroup else None
    if version is not None:
        memory = f"cgroup {version}: each item's memory_mb over all its processes, swap included"
        processes = f"cgroup {version}: {MAX_PROCESSES} processes per item"
    else:
        why = "no cgroup this user may make here (cgroup v1 and not root, or no delegated v2)"
        memory = f"{NOT_ENFORCED}: {why}"
        processes = f"RLIMIT_NPROC: {MAX_PROCESSES} processes per uid"
    cpu = "fair-share clock" + (
        f", cgroup {version} cpu share per run" if cgroup.cpu_shares() and version else ""
    )
    limits = {
        "memory": memory,
        "processes": processes,
        "timeout": f"every process killed at the item's timeout_s on a {cpu}",
        "disk": f"a {DISK_BYTES // 1024**2} MiB tmpfs per folder written",
    }
    if iso.kind == "none":
        limits["disk"] = f"{NOT_ENFORCED}: no namespaces (tested code writes the host's disk)"
    return limits
