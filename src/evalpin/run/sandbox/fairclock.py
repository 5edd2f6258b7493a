"""A case's timeout counts the CPU it was given, not the time its neighbours held it.

Without a cpu cgroup (a grader that is not root), the kernel shares the CPU per thread:
a case that starts a hundred spinning processes takes a hundred shares, and an honest
case beside it, waiting for a CPU, would pass its `timeout_s` on the wall clock. So a
case's clock (`FairClock`) advances by the wall time, less the time it waited for a CPU
while it got less than its fair share (the machine's cores over the sandboxed runs of
this grader alive at once) and a neighbour took more than its own. A case that got its
share is timed by the wall clock (the time it waited was spent by its own processes),
and so is one that waited on the host's other load (as every case did before); one
that waited on a neighbour is not charged for it, up to `FAIR_CAP` times its timeout on
the wall clock, when it is killed anyway. And a run that took more than its share is
lowered to the lowest priority, so its hundred threads weigh less than a neighbour's
one. Where there is a cpu cgroup, each run already has its share (`cgroup.py`) and the
clock rarely differs from the wall.

The samples come, every `POLL_S`, from `/proc/PID/task/TID/schedstat` (time on a CPU,
time waiting for one since the thread began) over every thread of the sandbox's tree,
found through the `children` lists from the processes `execute` started: every process
of a box is below them (a detached one is adopted by its pid namespace's init).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Iterable, Iterator

FAIR_CAP = 4  # a case starved by its neighbours is still killed at this many timeouts
POLL_S = 0.5  # how often the clock samples the tree (none for a run shorter than this)
# Waiting for a CPU under this share of a run's fair share is not counted against it.
_SHARE_GOT = 0.9
# A run that took more than this share of its fair share is lowered to `LOWEST`, and so
# is one whose threads waited for a CPU more than this many times the whole machine.
_SHARE_TAKEN = 1.25
_WANTS_MACHINES = 2
LOWEST = 19  # nice

_LOCK = threading.Lock()
_ALIVE = 0  # sandboxed runs (one `execute` each) of this process at this moment
_CLOCKS: weakref.WeakSet[FairClock] = weakref.WeakSet()  # their clocks


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
        # Every thread of the tree starts now: its counters (since its birth) start at 0.
        self.ran = self.waited = 0.0
        self.counted = 0.0
        self.starved = 0.0  # wall seconds not counted: waiting on neighbours
        self.lowered: set[int] = set()
        self.hogging = False  # took, or asked for, too much at the last sample
        # A timeout the caller may raise meanwhile (a one-item list) and what to take off
        # it (the time before this clock started), or None.
        self.longer: tuple[list[float], float] | None = None
        with _LOCK:
            _CLOCKS.add(self)

    def tick(self) -> None:
        now = time.monotonic()
        wall = now - self.last
        ran, waited, threads = sample(self.roots)
        got, wanted = max(ran - self.ran, 0.0), max(waited - self.waited, 0.0)
        cores = _cores()
        with _LOCK:
            share = wall * cores / max(_ALIVE, 1)
        # More than its share, or more threads waiting for a CPU than the machine has
        # cores, twice over (on a busy host no run gets its share, but a hog still asks
        # for far more than any honest run does).
        self.hogging = got > share * _SHARE_TAKEN or wanted > wall * cores * _WANTS_MACHINES
        with _LOCK:
            neighbour = any(c.hogging for c in _CLOCKS if c is not self)
        # Starved by a neighbour: less than its share while another run took more than
        # its own. Waiting on the host's other load is counted, as on the wall clock.
        lost = min(wall, wanted) if neighbour and got < share * _SHARE_GOT else 0.0
        if self.hogging:
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
        return self.left() <= 0

    def left(self) -> float:
        """Seconds before the clock can next expire: the sooner of its timeout (every
        second since the last sample, and from now, counted) and the cap on the wall
        clock."""
        if self.longer is not None:
            self.timeout = max(self.timeout, self.longer[0][0] - self.longer[1])
        now = time.monotonic()
        counted = self.counted + now - self.last
        return max(min(self.timeout - counted, FAIR_CAP * self.timeout - (now - self.started)), 0.0)
