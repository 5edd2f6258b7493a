"""Where one pytest session's time goes, as evalpin runs it: HumanEval's problems (prompt +
canonical solution, the generated test), each session in a fork of a warm process
(pytest and its default plugins imported, as in evalpin's fork server), with evalpin's
own arguments; the time between pytest's hooks, median over the problems.

Phases: `configure` (from `pytest.main` to the end of `pytest_configure`: argument
parsing, plugin registration, the ini file), `session start` (to the start of
collection), `collect` (collection: the test module imported, assertion rewriting, the
candidate imported), `run` (the tests), `report` (from the last test to the session's
end: the terminal summary, the JUnit report) and `unconfigure` (to `pytest.main`'s
return).

Run `bench_humaneval.py setup` first, then:

    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -I -B benchmarks/pytest_phases.py [N] [--prepared]

`--prepared`: the configuration made once before the forks, as evalpin's fork server
makes it (`evalpin.run.sandbox.prepared`; `configure` then starts from that config).
"""

import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from pytest_floor import args, items, warm

HOOKS = (
    "pytest_configure",
    "pytest_sessionstart",
    "pytest_collection_finish",
    "pytest_runtestloop",
    "pytest_sessionfinish",
    "pytest_unconfigure",
)


class Clock:
    """Marks the time at each hook, as the last plugin to run it (trylast)."""

    def __init__(self) -> None:
        self.marks: dict[str, float] = {}

    def _mark(self, name: str) -> None:
        self.marks[name] = time.perf_counter()

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self) -> None:
        self._mark("configure")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self) -> None:
        self._mark("sessionstart")

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self) -> None:
        self._mark("collection")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self) -> None:
        self._mark("collected")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self._mark("tested")

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        self._mark("unconfigured")


def measure(folder: Path) -> dict[str, float]:
    """One session in a fork; its phases, from the child over a pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.chdir(folder / "work")
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        clock = Clock()
        start = time.perf_counter()
        pytest.main(args(folder), [clock])
        end = time.perf_counter()
        m = clock.marks
        phases = {
            "configure": m["configure"] - start,
            "session start": m["collection"] - m["configure"],
            "collect": m["collected"] - m["collection"],
            "run": m["tested"] - m["collected"],
            "report": m["unconfigured"] - m["tested"],
            "unconfigure": end - m["unconfigured"],
            "whole": end - start,
        }
        os.write(write, json.dumps(phases).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def main() -> None:
    prepared = "--prepared" in sys.argv
    argv = [a for a in sys.argv if a != "--prepared"]
    n = int(argv[1]) if len(argv) > 1 else 40
    warm(prepared)
    gc.collect()
    gc.freeze()
    runs = [measure(folder) for folder in items()[:n]]
    how = "prepared" if prepared else "unprepared"
    print(f"one pytest session in a warm fork ({how}), {len(runs)} HumanEval problems, medians"
          f" (load average {os.getloadavg()[0]:.1f}):")  # fmt: skip
    whole = statistics.median(r["whole"] for r in runs)
    for phase in runs[0]:
        took = statistics.median(r[phase] for r in runs)
        print(f"  {phase:14} {took * 1000:7.1f} ms  {took / whole:6.1%}")


if __name__ == "__main__":
    main()
