"""Which containment works on this machine: each backend tried for real, once."""

from __future__ import annotations

import functools
import os
import shutil
import sys

from evalpin.core.instrument.fixtures import DEFAULT_MEMORY_MB
from evalpin.core.instrument.graders.coding import MAX_PROCESSES
from evalpin.run.sandbox.backends import BACKENDS, OFF_ENFORCED, OFF_UNENFORCED, Isolation
from evalpin.run.sandbox.box import scratch
from evalpin.run.sandbox.execute import execute
from evalpin.run.sandbox.mounts import Spec

_PROBE_TIMEOUT_S = 10.0


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
                why = _WHY[kind] + _who() + _cgroup_note(cgroup)
                return Isolation(kind, OFF_ENFORCED, why, cgroup)
        failures.append(f"{kind}: {error}")
    cgroup = not _trial("none", True)
    why = "no namespaces (" + "; ".join(failures or ["none tried"]) + "): " + _WHY["none"]
    return Isolation("none", OFF_UNENFORCED, why + _cgroup_note(cgroup), cgroup)


_WHY = {
    "unshare": "unshare: network, pid, ipc, uts and mount namespaces, a private read-only"
    " root, a private tmpfs per folder written, no capabilities",
    "bwrap": "bubblewrap: network, pid, ipc, uts and mount namespaces, a private read-only"
    " root, a private tmpfs per folder written, no capabilities",
    "none": "network, /proc and the file system are shared with the host",
}


def _who() -> str:
    """Who the tested code runs as, on a namespace backend."""
    if os.geteuid() == 0:
        return ", a host uid of each case's own (never root)"
    return ", a user namespace (this user's uid, root in there only)"


def _cgroup_note(cgroup: bool) -> str:
    return f", cgroup (max {MAX_PROCESSES} processes, memory cap)" if cgroup else ""


def _trial(kind: str, cgroup: bool) -> str:
    """'' when `kind` runs a trivial command end to end, else the first line of why not."""
    trial = Isolation(kind, OFF_ENFORCED, "", cgroup)
    try:
        with scratch(None, cgroup, DEFAULT_MEMORY_MB, namespaces=kind != "none") as box:
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
