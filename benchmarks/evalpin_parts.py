"""Where a case's time goes in evalpin beyond the floor's two pytest sessions: each part
of a case, run alone on HumanEval's first N canonical solutions, one at a time, in a
process of its own whose whole CPU (its fork servers' and every sandbox's included: each
is reaped up the chain) and wall time are taken, less those of the same process grading
nothing (its imports, the fork servers' start).

Parts: `box` (a sandbox that runs nothing: `python -c "import pytest"` from the pytest
fork server: namespaces, root, mounts, hand-back, privileges dropped, cgroup, scratch),
`bare box` (the same from the bare fork server, as the witness's worker starts),
`plain` (plain pytest's sandboxed session, the truth), `witness` (the worker's and
the judge's sandboxes and the judge's session on stand-ins), `case` (`run_item`: both,
as `evalpin run` grades a passing case), and `floor` (one bare pytest session in a warm
fork, `pytest_floor.py`'s, prepared as the fork server prepares it, and unprepared, over
every problem of the set).

Run as root on the unshare backend (the fork server's), after `bench_humaneval.py setup`
(`--benchmark mbpp`: MBPP's 500 test problems, after `bench_humaneval.py --benchmark mbpp
setup`):

    python benchmarks/evalpin_parts.py [N] [--benchmark mbpp]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from timing import installed_env

HERE = Path(__file__).parent
SETS = {
    "humaneval": HERE / "data" / "humaneval" / "set" / "HumanEval.yaml",
    "mbpp": HERE / "data" / "mbpp-bench" / "set" / "mbpp-test.yaml",
}
PARTS = ("none", "box", "bare box", "plain", "witness", "case")


class _Nothing:
    """A mode (`run/isolation.py`'s shape) whose one sandbox runs `code` and nothing
    else: what the sandbox costs by itself."""

    code = "import pytest"

    def __init__(self, item, test_source, candidate) -> None:
        self.item = item

    def specs(self, box, env, limits):
        from evalpin.run.sandbox.mounts import Spec

        work = box.folder("work")
        return [Spec([sys.executable, "-I", "-B", "-c", self.code], env, work, rw=[work])]

    def judge(self, box, exit_code):
        return exit_code == 0, []

    def failed_tests(self, box):
        return []


class _NothingBare(_Nothing):
    code = "pass"


def child(part: str, n: int, set_path: Path) -> None:
    """Grade `part` for the first `n` problems, in this process."""
    from evalpin.run import isolation as modes
    from evalpin.run.sandbox import item as graded
    from evalpin.run.sandbox import run_item, zygote

    zygote.acquire()
    try:
        items = _items(set_path)[:n]
        mode = {
            "box": _Nothing,
            "bare box": _NothingBare,
            "plain": modes.PlainMode,
            "witness": modes.ProcessMode,
        }.get(part)
        for item in items:
            answer = {name: f.read_text() for name, f in item.reference_files.items()}
            if part == "case":
                outcome = run_item(item, answer)
                ok = outcome.passed
            elif mode is not None:
                from evalpin.core.instrument.graders.candidate import written_files
                from evalpin.run.sandbox.probe import probe_isolation

                files = written_files(item, answer)
                candidate = {n: c.encode() for n, c in files.items()}
                grader = graded._Grader(
                    item, item.test_file.read_bytes(), candidate, probe_isolation(), None,
                    frozenset(), False,
                )  # fmt: skip
                ok = grader.once(mode, item.timeout_s, "bench").passed
            else:
                ok = True
            if not ok:
                sys.exit(f"{part}: {item.id} did not pass")
        if part == "none":  # the fork servers started, as every other part's
            zygote.zygote(zygote.PYTEST)
            zygote.zygote(zygote.BARE)
    finally:
        zygote.release()


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, every descendant reaped) of one command."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{argv[2:]} failed ({proc.returncode})")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--part":
        child(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
        return
    argv = sys.argv[1:]
    benchmark = "humaneval"
    if "--benchmark" in argv:
        at = argv.index("--benchmark")
        benchmark = argv[at + 1]
        del argv[at : at + 2]
    set_path = SETS[benchmark]
    n = int(argv[0]) if argv else 40
    env = installed_env()
    me = [sys.executable, __file__, "--part"]
    took = {part: measure([*me, part, str(n), str(set_path)], env) for part in PARTS}
    floor_env = {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    floor = [sys.executable, "-I", "-B", str(HERE / "pytest_floor.py"), "1", "1", str(set_path)]
    nothing = [*floor[:-2], "0", str(set_path)]  # its start and set-up, no session
    took["floor"] = measure(floor, floor_env)
    took["floor, unprepared"] = measure([*floor, "--unprepared"], floor_env)
    floor_none = measure(nothing, floor_env)
    none = took.pop("none")
    print(f"per case, {n} {benchmark} problems, one at a time (load average"
          f" {os.getloadavg()[0]:.1f} at the end):")  # fmt: skip
    for part, (wall, cpu) in took.items():
        floor = part.startswith("floor")  # one session for each problem of the whole set
        base_wall, base_cpu = floor_none if floor else none
        count = len(_items(set_path)) if floor else n
        wall, cpu = (wall - base_wall) / count, (cpu - base_cpu) / count
        print(f"  {part:18} wall {wall * 1000:7.1f} ms   cpu {cpu * 1000:7.1f} ms")


def _items(set_path: Path) -> list:
    from evalpin.core.instrument.fixtures import load_fixtures

    return load_fixtures(set_path).cases


if __name__ == "__main__":
    main()
