"""A case's timeout counts the CPU it was given, not the time its neighbours held it.

Without a cpu cgroup (a grader that is not root), the kernel shares the CPU per thread:
a case that starts a hundred spinning processes takes a hundred shares, and an honest
case beside it, waiting for a CPU, would pass its `timeout_s` on the wall clock. So a
case's clock (`FairClock`) advances by the wall time, less the time it waited for a CPU
while it got less than its fair share: the machine's cores over the sandboxed runs of
this grader alive at once. A case that got its share is timed by the wall clock (the
time it waited was spent by its own processes); one that waited on neighbours is not
charged for it, up to `FAIR_CAP` times its timeout on the wall clock, when it is killed
anyway. And a run that took more than its share is lowered to the lowest priority, so
its hundred threads weigh less than a neighbour's one. Where there is a cpu cgroup,
each run already has its share (`cgroup.py`) and the clock rarely differs from the
wall.

The samples come from `/proc/PID/task/TID/schedstat` (time on a CPU, time waiting for
one) over every thread of the sandbox's process tree, found through the `children`
lists from the processes `execute` started: every process of a box is below them (a
detached one is adopted by its pid namespace's init).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable, Iterator

FAIR_CAP = 4  # a case starved by its neighbours is still killed at this many timeouts
POLL_S = 0.1  # how often the clock samples the tree
# Waiting for a CPU under this share of a run's fair share is not counted against it.
_SHARE_GOT = 0.9
# A run that took more than this share of its fair share is lowered to `LOWEST`.
_SHARE_TAKEN = 1.25
LOWEST = 19  # nice

_LOCK = threading.Lock()
_ALIVE = 0  # sandboxed runs (one `execute` each) of this process at this moment


@contextlib.contextmanager
def running() -> Iterator[None]:
    """One run is alive for as long as this lasts (its share depends on how many are)."""
    global _ALIVE
    with _LOCK:
        _ALIVE += 1
    try:
        yield
    finally:
        with _LOCK:
            _ALIVE -= 1


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except OSError:
        return os.cpu_count() or 1


def sample(roots: Iterable[int]) -> tuple[float, float, list[int]]:
    """Seconds on a CPU and seconds waiting for one, summed over every thread of the
    trees below `roots` (the live ones: a process that ended takes its time with it),
    and those threads."""
    on_cpu = waited = 0
    threads: list[int] = []
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        pid = stack.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            threads.append(int(tid))
            base = f"/proc/{pid}/task/{tid}/"
            with contextlib.suppress(OSError, ValueError):
                with open(base + "schedstat", "rb") as stat:
                    ran, wait, _ = stat.read().split()
                on_cpu += int(ran)
                waited += int(wait)
            with contextlib.suppress(OSError, ValueError), open(base + "children", "rb") as kids:
                stack += [int(c) for c in kids.read().split()]
    return on_cpu / 1e9, waited / 1e9, threads


class FairClock:
    """The time a run is charged: see the module's docstring."""

    def __init__(self, timeout: float, roots: list[int]) -> None:
        self.timeout = timeout
        self.roots = roots
        self.started = self.last = time.monotonic()
        self.ran, self.waited, _ = sample(roots)
        self.counted = 0.0
        self.starved = 0.0  # wall seconds not counted: waiting on neighbours
        self.lowered: set[int] = set()

    def tick(self) -> None:
        now = time.monotonic()
        wall = now - self.last
        ran, waited, threads = sample(self.roots)
        got, wanted = max(ran - self.ran, 0.0), max(waited - self.waited, 0.0)
        with _LOCK:
            share = wall * _cores() / max(_ALIVE, 1)
        lost = 0.0 if got >= share * _SHARE_GOT else min(wall, wanted)
        if got > share * _SHARE_TAKEN:
            self._lower(threads)
        self.counted += wall - lost
        self.starved += lost
        self.last, self.ran, self.waited = now, ran, waited

    def _lower(self, threads: list[int]) -> None:
        """Every thread of a run that took more than its share runs at the lowest
        priority from now on (its children inherit it; RLIMIT_NICE keeps them from
        raising it again): a hundred of them weigh less than one thread of a run that
        did not, so without a cpu cgroup a hog slows itself, not its neighbours."""
        for tid in threads:
            if tid not in self.lowered:
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, tid, LOWEST)
                self.lowered.add(tid)

    def expired(self) -> bool:
        wall = time.monotonic() - self.started
        return self.counted >= self.timeout or wall >= FAIR_CAP * self.timeout

    def left(self) -> float:
        """Seconds before the clock can next expire: the sooner of its timeout (if every
        second counted from now) and the cap on the wall clock."""
        wall = time.monotonic() - self.started
        return max(min(self.timeout - self.counted, FAIR_CAP * self.timeout - wall), 0.0)
