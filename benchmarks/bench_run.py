"""`evalpin run` speed: replay throughput, coding items against bare pytest, --jobs 2.

Targets: replay of a golden set, 10,000 cases x 3 seeds, under 5 s (the whole command;
issue 3). A coding item is graded twice since issue 38 (plain pytest with the candidate
in-process, then on a pass the witness: the candidate in a worker sandbox, pytest in
another on stand-ins), so: the bundled coding set (fixtures/repairs, coder_a's answers)
graded in at most 1.5x the time of bare `python -m pytest -q` on the same files, the two
alternated in one run (issue 38); `--jobs 2` at least 1.7x faster than `--jobs 1` on this
2-core machine; an item whose test calls the candidate 20,000 times graded, witness
included, in under 2 s (issue 38; 1 s under the witness alone, issue 24). Also printed:
the per-item overhead over bare pytest on a small item (issue 24's 15%, set before a
case was graded twice). Run: python benchmarks/bench_run.py
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from timing import installed_env, machine

DATA = Path(__file__).parent / "data"
# A small but real repair item: the test does a little work, like the demo's items.
SOLUTION = '''\
def total(prices, discount=0.0):
    """Sum prices after a fractional discount, rounded to cents."""
    return round(sum(prices) * (1 - discount), 2)
'''
TEST = """\
from solution import total


def test_plain():
    assert total([1.0, 2.5]) == 3.5


def test_discount():
    assert total([10.0, 10.0], 0.25) == 15.0


def test_many():
    assert total([0.01] * 1000) == 10.0
"""


def evalpin(*args: str, cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "evalpin", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=installed_env(),
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"evalpin run failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def golden_replay(folder: Path, cases: int) -> float:
    folder.mkdir(parents=True, exist_ok=True)
    fixtures, recording = folder / "golden.jsonl", folder / "replay.jsonl"
    if not fixtures.exists():
        with open(fixtures, "w") as f, open(recording, "w") as r:
            for i in range(cases):
                case = {
                    "id": f"order-{i:05d}",
                    "user": f"Where is order {i}?",
                    "require_tools": ["lookup_order"],
                    "forbid_tools": ["issue_refund"],
                    "must_include": [str(i)],
                    "must_not": ["refund issued"],
                }
                f.write(json.dumps(case) + "\n")
                answer = {
                    "case_id": case["id"],
                    "text": f"Order {i} ships Monday.",
                    "tools": [{"name": "lookup_order", "args": {"order": i}}],
                    "model": "bench@fp",
                }
                r.write(json.dumps(answer) + "\n")
    out = folder / "runs" / "replay.jsonl"
    out.unlink(missing_ok=True)
    return evalpin(
        "--fixtures",
        "golden.jsonl",
        "--slot",
        "bench=replay:replay.jsonl",
        "--seeds",
        "11,29,47",
        "--out",
        str(out.relative_to(folder)),
        cwd=folder,
    )


def coding_set(folder: Path, items: int) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "prompts").mkdir(parents=True)
    (folder / "tests").mkdir()
    lines = ["schema: coding-eval/v1", "dataset_id: bench", "dataset_version: '1'", "items:"]
    answers = []
    for i in range(items):
        (folder / "prompts" / f"item{i}.md").write_text(f"Fix total() (item {i}).\n")
        (folder / "tests" / f"test_item{i}.py").write_text(TEST)
        lines += [
            f"  - id: item{i}",
            "    language: python",
            f"    prompt_file: prompts/item{i}.md",
            f"    test_file: tests/test_item{i}.py",
            "    timeout_s: 30",
            "    forbidden_imports: [subprocess, socket]",
            "    expected_files: [solution.py]",
        ]
        answers.append({"case_id": f"item{i}", "files": {"solution.py": SOLUTION}, "text": ""})
    (folder / "coding.yaml").write_text("\n".join(lines) + "\n")
    (folder / "replay.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))


def direct_pytest(repeat: int, *, autoload: bool) -> float:
    """Median wall time of `python -m pytest -q` on one item, files laid out by hand.

    evalpin runs pytest with plugin autoloading off; `autoload=False` does the same here,
    so the comparison measures the sandbox, not the plugins installed in this venv.
    """
    env = installed_env()
    env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "solution.py").write_text(SOLUTION)
            (work / "test_item0.py").write_text(TEST)
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_item0.py"],
                cwd=work,
                capture_output=True,
                env=env,
            )
            times.append(time.perf_counter() - started)
            assert done.returncode == 0, done.stdout
    return statistics.median(times)


CALLS = 20_000
CHATTY_TEST = f"""\
from solution import total


def test_many_calls():
    for i in range({CALLS}):
        assert total([i, 1]) == i + 1
"""


def chatty_item(folder: Path) -> float:
    """Seconds evalpin records for one item whose test makes CALLS candidate calls (each
    with a list argument, so each also copies the list back), median of three seeds."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "tests").mkdir(parents=True)
    (folder / "prompt.md").write_text("Fix total().\n")
    (folder / "tests" / "test_chatty.py").write_text(CHATTY_TEST)
    (folder / "chatty.yaml").write_text(
        "schema: coding-eval/v1\ndataset_id: chatty\ndataset_version: '1'\nitems:\n"
        "  - id: chatty\n    language: python\n    prompt_file: prompt.md\n"
        "    test_file: tests/test_chatty.py\n    timeout_s: 60\n"
        "    expected_files: [solution.py]\n"
    )
    answer = {"case_id": "chatty", "files": {"solution.py": SOLUTION}, "text": ""}
    (folder / "replay.jsonl").write_text(json.dumps(answer) + "\n")
    out = folder / "runs" / "chatty.jsonl"
    out.unlink(missing_ok=True)
    evalpin(
        "--fixtures",
        "chatty.yaml",
        "--slot",
        "bench=replay:replay.jsonl",
        "--seeds",
        "1,2,3",
        "--jobs",
        "1",  # the figure is the wire's latency: nothing else competes for the cores
        "--out",
        str(out.relative_to(folder)),
        cwd=folder,
    )
    cases = [json.loads(line) for line in out.read_text().splitlines()[1:-1]]
    assert all(c["pass"] for c in cases), [c["reasons"] for c in cases]
    return statistics.median(c["seconds"] for c in cases)


def coding_run(folder: Path, jobs: int, tag: str) -> tuple[float, list[float]]:
    out = folder / "runs" / f"{tag}.jsonl"
    out.unlink(missing_ok=True)
    wall = evalpin(
        "--fixtures",
        "coding.yaml",
        "--slot",
        "bench=replay:replay.jsonl",
        "--seeds",
        "1",
        "--jobs",
        str(jobs),
        "--out",
        str(out.relative_to(folder)),
        cwd=folder,
    )
    cases = [json.loads(line) for line in out.read_text().splitlines()[1:-1]]
    assert all(c["pass"] for c in cases), [c["reasons"] for c in cases if not c["pass"]]
    return wall, [c["seconds"] for c in cases]


ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "fixtures" / "repairs" / "coding.yaml"
CODER_A = ROOT / "fixtures" / "completions" / "coder_a.jsonl"


def bundled_set(folder: Path, rounds: int) -> tuple[float, float, int, int]:
    """The bundled coding set with coder_a's answers (seed 11, no repair round), graded
    by `evalpin run --jobs 1`, alternated with bare `python -m pytest -q` (plugin
    autoload off, as evalpin; killed after the item's timeout_s, as evalpin kills it)
    on the same files item by item; the median wall time of
    each (whole commands) and how many items passed, and were witnessed."""
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.instrument.graders.coding import files_from_completion
    from evalpin.core.records import Completion

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    items = {item.id: item for item in load_fixtures(BUNDLED).cases}
    answers: dict[str, Completion] = {}
    for line in CODER_A.read_text().splitlines():
        got = json.loads(line)
        if got.get("seed") in (None, 11) and got["case_id"] not in answers:
            answers[got["case_id"]] = Completion(text=got.get("text", ""))
    env = installed_env()
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    works = []
    for item_id, item in items.items():
        work = folder / "bare" / item_id
        work.mkdir(parents=True)
        for name, text in files_from_completion(answers[item_id], item.expected_files).items():
            (work / name).write_text(text)
        shutil.copy2(item.test_file, work / item.test_file.name)
        works.append((work, item.test_file.name, item.timeout_s))
    graded, bare, out = [], [], folder / "runs" / "bundled.jsonl"
    args = ("--fixtures", str(BUNDLED), "--slot", f"bench=replay:{CODER_A}")
    args += ("--seeds", "11", "--loops", "0", "--jobs", "1")
    for _ in range(rounds):
        out.unlink(missing_ok=True)
        graded.append(evalpin(*args, "--out", str(out), cwd=folder))
        started = time.perf_counter()
        for work, test, timeout in works:
            with contextlib.suppress(subprocess.TimeoutExpired):  # killed, as evalpin does
                subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                    cwd=work,
                    capture_output=True,
                    env=env,
                    timeout=timeout,
                )
        bare.append(time.perf_counter() - started)
    cases = [json.loads(line) for line in out.read_text().splitlines()[1:-1]]
    passed = sum(c["pass"] for c in cases)
    witnessed = sum(c["pass"] or c.get("status") == "disputed" for c in cases)
    return statistics.median(graded), statistics.median(bare), passed, witnessed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds")
    parser.add_argument(
        "--only", choices=["replay", "bundled", "jobs", "chatty"], help="one measurement"
    )
    args = parser.parse_args()
    from evalpin.run.sandbox import probe_isolation

    iso = probe_isolation()
    print(machine())
    print(f"sandbox: {iso.kind}, network {iso.network}")

    if args.only in (None, "replay"):
        replay = golden_replay(DATA / f"golden-replay-{args.cases}", args.cases)
        print(
            f"replay run, {args.cases:,} golden cases x 3 seeds (whole command): {replay:.2f} s"
            f"  [target < 5 s: {'met' if replay < 5 else 'NOT met'}]"
        )
    if args.only in (None, "bundled"):
        graded, bare, passed, witnessed = bundled_set(DATA / "bundled", args.rounds)
        ratio = graded / bare
        print(
            f"bundled coding set, 8 items ({passed} pass, {witnessed} witnessed), medians of"
            f" {args.rounds} alternated rounds: evalpin run --jobs 1 {graded:.2f} s, bare pytest"
            f" on the same files {bare:.2f} s -> {ratio:.2f}x"
            f"  [target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'}]"
        )
    if args.only in (None, "jobs"):
        folder = DATA / "coding"
        coding_set(folder, args.items)
        pytest_s = direct_pytest(repeat=7, autoload=False)
        one_wall, per_item = coding_run(folder, 1, "jobs1")
        item_s = statistics.median(per_item)
        overhead = item_s / pytest_s - 1
        print(f"direct pytest on one item, plugin autoload off (as evalpin): {pytest_s:.3f} s")
        each = f"evalpin per coding item, plain pytest + witness, median of {args.items}"
        print(f"{each}: {item_s:.3f} s")
        print(f"  overhead over the like-for-like figure: {overhead:+.1%}  [issue 24's 15%]")
        two_wall, _ = coding_run(folder, 2, "jobs2")
        speedup = one_wall / two_wall
        print(
            f"{args.items} coding items: --jobs 1 {one_wall:.2f} s, --jobs 2 {two_wall:.2f} s"
            f" -> {speedup:.2f}x  [target >= 1.7x: {'met' if speedup >= 1.7 else 'NOT met'}]"
        )
    if args.only in (None, "chatty"):
        chatty = chatty_item(DATA / "chatty")
        print(
            f"one item whose test calls the candidate {CALLS:,} times, witness included,"
            f" median of 3: {chatty:.3f} s  [target < 2 s: {'met' if chatty < 2 else 'NOT met'}]"
        )


if __name__ == "__main__":
    main()
