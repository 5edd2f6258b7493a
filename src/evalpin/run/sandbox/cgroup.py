"""A cgroup per sandboxed run: a cap on its processes and its memory, swap included, and
(where the cpu controller is there) a cpu share for each of its sandboxes.

`Cgroup.create` makes one child cgroup (one per v1 `pids`/`memory` hierarchy, or one v2
folder) named `evalpin-PID-RANDOM`, so a later run removes what a SIGKILLed grader
left; `oom_killed` tells a memory kill apart; `remove` kills what is left and removes it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from collections.abc import Iterable
from pathlib import Path

from evalpin.core.instrument.graders.coding import MAX_PROCESSES

# Each run's cpu share, the kernel's defaults made explicit: every sandboxed run weighs as
# much as any other, whatever number of processes it starts.
CPU_SHARES = 1024  # cgroup v1 cpu.shares
CPU_WEIGHT = 100  # cgroup v2 cpu.weight


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
        for key in ("pids", "memory", "cpu") if fstype == "cgroup" else ("cgroup2",):
            if (fstype == "cgroup2" or key in options.split(",")) and key in own:
                rel = os.path.relpath(own[key], mount_root)
                found.setdefault(key, Path(mount_point, "" if rel == "." else rel))
    if "pids" in found and "memory" in found:
        # With the cpu controller where there is one: each run a share of its own.
        return {k: found[k] for k in ("pids", "memory", "cpu") if k in found}
    v2 = found.get("cgroup2")
    if v2 is not None:
        try:
            controllers = (v2 / "cgroup.subtree_control").read_text().split()
        except OSError:
            controllers = []
        if {"pids", "memory"} <= set(controllers):
            return {"cgroup2": v2}
    return {}


def kind() -> str | None:
    """The cgroups a run gets here: "v1" or "v2" (processes and memory capped), or None."""
    parents = _cgroup_parents()
    return None if not parents else "v2" if "cgroup2" in parents else "v1"


def cpu_shares() -> bool:
    """Whether each run gets a cpu share of its own (the cpu controller is ours too)."""
    parents = _cgroup_parents()
    return "cpu" in parents or _v2_has(parents.get("cgroup2"), "cpu")


def _v2_has(folder: Path | None, controller: str) -> bool:
    try:
        return (
            folder is not None
            and controller in (folder / "cgroup.subtree_control").read_text().split()
        )
    except OSError:
        return False


class Cgroup:
    """A child cgroup per run (one per v1 hierarchy, or one v2 folder) that caps the
    number of processes (the fork-bomb limit that still holds for root, where
    RLIMIT_NPROC does not) and the memory of the whole process tree, swap included.
    Named `evalpin-PID-RANDOM`, so a later run can remove what a killed grader left."""

    def __init__(self, paths: list[Path], memory: Path, cpu: Path | None = None) -> None:
        self.paths = paths
        self.memory = memory
        self.procs = [str(p / "cgroup.procs") for p in paths]
        self.cpu = cpu  # the v1 cpu hierarchy's folder: each sandbox a share of its own
        self.boxes: list[Path] = []

    def procs_for(self, index: int) -> list[str]:
        """The `cgroup.procs` files the run's sandbox number `index` joins: the run's own
        (processes, memory) and, on cgroup v1 with the cpu controller, a cpu cgroup of
        that sandbox's own, one share beside every other sandbox's (as the session each
        had before: a hog's hundred processes weigh as one)."""
        if self.cpu is None:
            return self.procs
        box = self.cpu.parent / f"{self.cpu.name}-{index}"
        if box not in self.boxes:
            box.mkdir()
            self.boxes.append(box)
            (box / "cpu.shares").write_text(str(CPU_SHARES))
        return [*self.procs, str(box / "cgroup.procs")]

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
                if key == "cpu":  # its sandboxes' own are made as they start
                    continue
                path = parent / name
                path.mkdir()
                made.append(path)
                if key in ("pids", "cgroup2"):
                    (path / "pids.max").write_text(str(MAX_PROCESSES))
                if key == "cgroup2":
                    with contextlib.suppress(OSError):
                        (path / "cpu.weight").write_text(str(CPU_WEIGHT))
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
        memory = next(p for p, k in zip(made, parents, strict=False) if k != "pids")
        cpu = parents["cpu"] / name if "cpu" in parents else None
        return cls(made, memory, cpu)

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
        for path in [*self.paths, *self.boxes]:
            _remove_cgroup(path)


def _remove_cgroup(path: Path) -> None:
    for _ in range(200):
        with contextlib.suppress(OSError):
            kill_all(int(p) for p in (path / "cgroup.procs").read_text().split())
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
        if owner.isdigit() and not alive(int(owner)):
            _remove_cgroup(path)


def alive(pid: int) -> bool:
    """Whether a process of this id runs (or may run: another user's) here."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_all(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
