"""Agreement with DataFrameBench's harness, measured: BigCodeBench's tasks rewritten for
pandas and polars (the `dataframebench` 0.1.1 wheel's `test` and `val` splits, 116
tasks), each task's two ground truths and a wrong variant of each, graded by `evalpin run`
(replayed, default isolation) and by the package's own `run_tests` (its harness script:
`import matplotlib; matplotlib.use("Agg")`, the solution, the tests, `unittest.main()`,
in a fresh interpreter with its environment and 30 s), then compared with `evalpin
crosscheck` on the harness's own results format.

Plain pytest's agreement is shown apart from the witness's: a case plain pytest passes
and the witness does not confirm is `disputed` (not judged, counted apart), which the
witness's own work settles (issue 48); its plain verdict is compared here too.

Needs an interpreter with the tasks' libraries (`data/requirements.txt` of the package,
pandas and polars) and the wheel installed with `pip install --no-deps
--ignore-requires-python dataframebench` (it says Python 3.12; its harness runs on
3.11). The package imports `llm-cgr` (its response parser), which is not on the package
index: a stand-in module lets `dataframebench.sandbox` import; `run_tests` never calls
it (the samples here are code, not chat responses).

Run: python benchmarks/dataframebench_agreement.py [--tasks N]
Prints the machine and its load, both graders' wall time, the counts and every
disagreement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from humaneval_agreement import module_mutants as mutants
from timing import installed_env, machine

DATA = Path(__file__).parent / "data" / "dataframebench-agreement"


def harness():
    """DataFrameBench's own `run_tests` and data folder (see the module docstring)."""
    if "llm_cgr" not in sys.modules:
        stand_in = types.ModuleType("llm_cgr")
        for name in ("analyse_code", "load_jsonl", "save_jsonl", "save_json", "Markdown"):
            setattr(stand_in, name, None)
        sys.modules["llm_cgr"] = stand_in
    try:
        from dataframebench import sandbox
    except ImportError as exc:
        sys.exit(f"needs dataframebench (pip install --no-deps dataframebench): {exc}")
    return sandbox, Path(sandbox.__file__).parent / "data"


def interpreter() -> Path:
    """This interpreter, for the harness to run: `resolve_eval_python` resolves links,
    so a virtual environment's `bin/python` (a link to the base interpreter) would become
    the base interpreter, without the environment's libraries (every task then scores
    `missing_module`); a wrapper script that execs this one resolves to itself."""
    wrapper = DATA / "python"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def grade(tasks: dict[str, dict], samples: list[tuple[str, str]]) -> list[str]:
    """Each (task, code)'s outcome under the package's harness, two at a time."""
    sandbox, _ = harness()
    python = interpreter()

    def one(sample: tuple[str, str]) -> str:
        task, code = sample
        result = sandbox.run_tests(code, tasks[task]["test_code"], python_executable=python)
        return result.outcome.value

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(one, samples))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=0, help="only the first N tasks")
    args = parser.parse_args()
    print(machine(), f"load average {os.getloadavg()[0]:.1f}")
    _, data = harness()
    rows = [
        json.loads(x)
        for split in ("test", "val")
        for x in (data / f"{split}.jsonl").read_text().splitlines()
        if x.strip()
    ]
    if args.tasks:
        rows = rows[: args.tasks]
    tasks = {r["task_id"]: r for r in rows}
    print(f"{len(tasks)} tasks from {data} (test and val)")
    DATA.mkdir(parents=True, exist_ok=True)
    source = DATA / "dataframebench.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers: dict[int, dict[str, str]] = {
        1: {t: r["ground_truth"]["pandas"] for t, r in tasks.items()},
        2: {t: r["ground_truth"]["polars"] for t, r in tasks.items()},
    }
    tried = [
        (t, c) for t, r in tasks.items() for c in list(mutants(r["ground_truth"]["pandas"]))[:3]
    ]
    wrong: dict[str, str] = {}
    for (task, code), outcome in zip(tried, grade(tasks, tried), strict=True):
        if outcome != "passed":
            wrong.setdefault(task, code)
    answers[3] = wrong
    print(f"wrong variants: {len(wrong)} of {len(tasks)} tasks")
    lines = [
        {"case_id": t, "seed": seed, "text": code}
        for seed, by_task in answers.items()
        for t, code in by_task.items()
    ]
    recording = DATA / "variants.jsonl"
    recording.write_text("".join(json.dumps(x) + "\n" for x in lines))
    set_path = DATA / "set" / "dataframebench.yaml"
    if not set_path.exists():
        subprocess.run([sys.executable, "-m", "evalpin", "import", "dataframebench", source,
                        "--out", DATA / "set"], check=True, capture_output=True)  # fmt: skip
    run = DATA / "run.jsonl"
    run.unlink(missing_ok=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "evalpin", "run", "--fixtures", set_path, "--slot",
                    f"variants=replay:{recording}", "--seeds", "1,2,3", "--jobs", "2",
                    "--out", run], capture_output=True, env=installed_env())  # fmt: skip
    evalpin_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    outcomes = grade(tasks, [(x["case_id"], x["text"]) for x in lines])
    harness_s = time.perf_counter() - t0
    theirs = {(x["case_id"], x["seed"]): o for x, o in zip(lines, outcomes, strict=True)}
    # the harness's own results format, for the samples evalpin judged (export's order)
    samples = DATA / "samples.jsonl"
    subprocess.run([sys.executable, "-m", "evalpin", "export", run, "--out", samples],
                   check=True, capture_output=True)  # fmt: skip
    by_task: dict[str, list[str]] = {}
    for s in map(json.loads, samples.read_text().splitlines()):
        by_task.setdefault(s["task_id"], []).append(theirs[(s["task_id"], s["seed"])])
    results = DATA / "dataframebench_eval.json"
    results.write_text(json.dumps({"split": "all", "summary": {}, "results": [
        {"task_id": t, "n_samples": len(o), "outcomes": o} for t, o in by_task.items()
    ]}))  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "evalpin", "crosscheck", run, results, "--json"],
                          capture_output=True, text=True)  # fmt: skip
    shown = json.loads(done.stdout)
    print(f"evalpin run --jobs 2: {evalpin_s:.1f} s; the harness (2 at a time):"
          f" {harness_s:.1f} s; {len(lines)} answers each")  # fmt: skip
    print(f"judged by both: agree {shown['agree']} of {shown['compared']} (both pass"
          f" {shown['both_pass']}, both fail {shown['both_fail']})")  # fmt: skip
    names = {1: "pandas truth", 2: "polars truth", 3: "wrong"}
    for d in shown["disagreements"]:
        print(f"  {names[d['seed']]} {d['task_id']}: evalpin {d['evalpin']} {d['reasons']},"
              f" harness {d['result']}")  # fmt: skip
    cases = [json.loads(x) for x in run.read_text().splitlines()[1:-1]]
    (DATA / "harness.json").write_text(json.dumps({f"{t} {s}": o for (t, s), o in theirs.items()}))
    plain_differ = []
    disputed = 0
    for c in cases:
        outcome = theirs[(c["case_id"], c["seed"])]
        plain_pass = c["pass"] or c.get("status") == "disputed"
        disputed += c.get("status") == "disputed"
        if plain_pass != (outcome == "passed"):
            plain_differ.append((c, outcome))
    print(f"plain pytest alone (a disputed case is plain pytest's pass): agrees on"
          f" {len(cases) - len(plain_differ)} of {len(cases)}; disputed by the witness:"
          f" {disputed}")  # fmt: skip
    for c, outcome in plain_differ:
        plain = "pass" if c["pass"] or c.get("status") == "disputed" else "fail"
        print(f"  plain pytest {plain}, harness {outcome}: {names[c['seed']]} {c['case_id']}"
              f" {c.get('reasons')} {c.get('tail', '')[-160:]!r}")  # fmt: skip
    for c in cases:
        if c.get("status"):
            print(f"  not judged {names[c['seed']]} {c['case_id']}: {c.get('reasons')}")


if __name__ == "__main__":
    main()
