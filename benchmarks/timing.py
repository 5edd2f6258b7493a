"""What every benchmark here shares: timing, the stdlib-json baseline, the machine line."""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, float]:
    """Best and median wall time of `repeat` calls."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def parse_with_json(paths: Iterable[Path]) -> int:
    """The baseline: parse every line of every file with the standard library."""
    n = 0
    for path in paths:
        with open(path, "rb") as fh:
            for line in fh:
                json.loads(line)
                n += 1
    return n


def installed_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for timed subprocesses, without PYTHONDONTWRITEBYTECODE: an
    installed program has its bytecode compiled (pip does it at install), so the first
    (warm-up) run may write it and the timed runs measure the program, not the compiler."""
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def warm(paths: Iterable[Path]) -> None:
    """Read each file once, so a timing measures the program and not the disk: this
    machine (a VM whose DAMON pages out file pages unused for a minute) may have dropped
    a data file from the page cache since it was last read."""
    for path in paths:
        with open(path, "rb") as fh:
            while fh.read(16 << 20):
                pass


def machine() -> str:
    return (
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )


def print_timings(rows: list[tuple[str, float, float]]) -> None:
    width = max(len(name) for name, _, _ in rows)
    for name, best, median in rows:
        print(f"{name:<{width}}  best {best:.3f} s, median {median:.3f} s")
