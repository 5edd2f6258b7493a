"""Agreement with MBPP's harness, measured: the 500 test problems (task ids 11 to 510, the
split bigcode-evaluation-harness grades) with their canonical solutions and a wrong
variant of each, graded by `evalpin run` (replayed, default isolation) and by
bigcode-evaluation-harness's own MBPP check on the samples `evalpin export` writes, then
compared with `evalpin crosscheck`.

The harness: `bigcode_eval.tasks.custom_metrics.execute.check_correctness` from the
`nvidia-bigcode-eval` wheel (the harness packaged; install it with `pip install --no-deps
nvidia-bigcode-eval`: its other dependencies are for generation, not for this check),
loaded from its file, called as its `compute_code_eval` calls it for MBPP: the program
is the prediction (the task's prompt docstring, then the code) + "\\n" + the asserts
joined by newlines, 3 s a sample. Its `test_setup_code` is not part of the program: the
harness leaves it out, where MBPP defines it (`evalpin import mbpp` runs it before the
asserts); the crosscheck names such a disagreement as the harness's.

The data: MBPP's `mbpp.jsonl` (google-research/mbpp), or a path on the command line;
by default its test split as vendored in tests/data/benchmarks/mbpp/mbpp-test.jsonl
(PROVENANCE.md there): the harness package does not ship it (it loads it from a hub at
run time), and no package on the index does.

Variants (seeds of one run):
- seed 1: the canonical solution (`code`);
- seed 2: a wrong variant, the first mutant of `code` (a comparison flipped, a constant
  moved by one, an operator swapped, ...; `humaneval_agreement.module_mutants`) that the
  harness fails.

Run: python benchmarks/mbpp_agreement.py [mbpp.jsonl]
Prints the machine and its load, both graders' wall time, the counts and every
disagreement with what explains it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from humaneval_agreement import module_mutants as mutants
from timing import installed_env, machine

DATA = Path(__file__).parent / "data" / "mbpp-agreement"
TEST_SPLIT = range(11, 511)
TIMEOUT_S = 3.0  # compute_code_eval's default, as its MBPP task calls it


def harness_check():
    """bigcode-evaluation-harness's `check_correctness`, loaded from its file (the
    package's `__init__` imports every task and its generation stack)."""
    spec = importlib.util.find_spec("bigcode_eval")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("needs bigcode-evaluation-harness: pip install --no-deps nvidia-bigcode-eval")
    path = Path(next(iter(spec.submodule_search_locations)), "tasks/custom_metrics/execute.py")
    loaded = importlib.util.spec_from_file_location("bigcode_execute", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module.check_correctness


def prompt_of(problem: dict) -> str:
    """The harness's MBPP prompt (InCoder's): the description and the first assert in a
    docstring, which its predictions begin with."""
    return f'"""\n{problem["text"]}\n{problem["test_list"][0]}\n"""\n'


def harness_grades(problems: dict[int, dict], samples: list[tuple[int, str]]) -> list[dict]:
    """Each (task, code) graded as the harness grades an MBPP prediction."""
    check = harness_check()
    os.environ["HF_ALLOW_CODE_EVAL"] = "1"

    def one(n_sample: tuple[int, tuple[int, str]]) -> dict:
        n, (task, code) = n_sample
        problem = problems[task]
        program = prompt_of(problem) + code + "\n" + "\n".join(problem["test_list"])
        return check(program, TIMEOUT_S, task, n)

    with ThreadPoolExecutor(2) as pool:  # compute_code_eval's pool, two on two cores
        return list(pool.map(one, enumerate(samples)))


def explain(problem: dict, d: dict) -> str:
    if d["evalpin"] == "pass" and problem.get("test_setup_code", "").strip():
        return (
            "MBPP's test_setup_code: evalpin runs it before the asserts, the harness"
            " leaves it out (the harness's defect)"
        )
    if d["evalpin"] == "pass" and "timed out" in d["result"]:
        return f"past the harness's own {TIMEOUT_S:g} s limit (evalpin's timeout_s is longer)"
    return "unexplained"


def main() -> None:
    vendored = Path(__file__).parent.parent / "tests/data/benchmarks/mbpp/mbpp-test.jsonl"
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else vendored
    if not source.is_file():
        sys.exit(f"MBPP's mbpp.jsonl is needed at {source} (or give its path)")
    print(machine(), f"load average {os.getloadavg()[0]:.1f}")
    rows = [json.loads(x) for x in source.read_text().splitlines() if x.strip()]
    problems = {r["task_id"]: r for r in rows if r.get("task_id") in TEST_SPLIT}
    print(f"{len(problems)} problems (task ids 11 to 510) from {source}")
    DATA.mkdir(parents=True, exist_ok=True)
    subset = DATA / "mbpp-test.jsonl"
    subset.write_text("".join(json.dumps(problems[t]) + "\n" for t in sorted(problems)))
    tried = [(t, c) for t, p in problems.items() for c in list(mutants(p["code"]))[:6]]
    wrong: dict[int, str] = {}
    for (task, code), graded in zip(tried, harness_grades(problems, tried), strict=True):
        if not graded["passed"]:
            wrong.setdefault(task, code)
    print(f"wrong variants: {len(wrong)} of {len(problems)} problems")
    lines = [{"case_id": f"Mbpp/{t}", "seed": 1, "text": p["code"]} for t, p in problems.items()]
    lines += [{"case_id": f"Mbpp/{t}", "seed": 2, "text": c} for t, c in wrong.items()]
    recording = DATA / "variants.jsonl"
    recording.write_text("".join(json.dumps(x) + "\n" for x in lines))
    set_path = DATA / "set" / "mbpp-test.yaml"
    if not set_path.exists():
        subprocess.run([sys.executable, "-m", "evalpin", "import", "mbpp", subset, "--out",
                        DATA / "set"], check=True, capture_output=True)  # fmt: skip
    run = DATA / "run.jsonl"
    run.unlink(missing_ok=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "evalpin", "run", "--fixtures", set_path, "--slot",
                    f"variants=replay:{recording}", "--seeds", "1,2", "--jobs", "2",
                    "--out", run], capture_output=True, env=installed_env())  # fmt: skip
    evalpin_s = time.perf_counter() - t0
    samples = DATA / "samples.jsonl"
    subprocess.run([sys.executable, "-m", "evalpin", "export", run, "--out", samples],
                   check=True, capture_output=True)  # fmt: skip
    exported = [json.loads(x) for x in samples.read_text().splitlines()]
    t0 = time.perf_counter()
    graded = harness_grades(
        problems, [(int(s["task_id"].split("/")[1]), s["completion"]) for s in exported]
    )
    harness_s = time.perf_counter() - t0
    results = DATA / "samples.jsonl_results.jsonl"
    results.write_text("".join(
        json.dumps({**s, "passed": g["passed"], "result": g["result"]}) + "\n"
        for s, g in zip(exported, graded, strict=True)
    ))  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "evalpin", "crosscheck", run, results, "--json"],
                          capture_output=True, text=True)  # fmt: skip
    shown = json.loads(done.stdout)
    print(f"evalpin run --jobs 2: {evalpin_s:.1f} s for {len(lines)} answers; the harness"
          f" (2 workers): {harness_s:.1f} s for {len(exported)}")  # fmt: skip
    print(f"agree {shown['agree']} of {shown['compared']} (both pass {shown['both_pass']},"
          f" both fail {shown['both_fail']})")  # fmt: skip
    by_seed = {1: "canonical", 2: "wrong"}
    for d in shown["disagreements"]:
        problem = problems[int(d["task_id"].split("/")[1])]
        print(f"  {by_seed[d['seed']]} {d['task_id']}: evalpin {d['evalpin']} {d['reasons']},"
              f" harness {d['harness']} {d['result'][:80]!r}: {explain(problem, d)}")  # fmt: skip
    cases = [json.loads(x) for x in run.read_text().splitlines()[1:-1]]
    apart = [c for c in cases if c.get("status")]
    print(f"not judged by evalpin (the witness's own issue, counted apart): {len(apart)}")
    for c in apart:
        print(f"  {by_seed[c['seed']]} {c['case_id']}: {c.get('status')} {c.get('reasons')}")


if __name__ == "__main__":
    main()
