"""`evalpin run` speed: replay throughput, per-item overhead on coding items, --jobs 2.

Targets: replay of a golden set, 10,000 cases x 3 seeds, under 5 s (the whole command;
issue 3); per coding item, process-isolated (the candidate in a worker sandbox, pytest
in another on stand-ins), evalpin's overhead over calling `python -m pytest -q` directly
on the same item under 15% (issue 24; 25% in issue 8); `--jobs 2` at least 1.7x faster
than `--jobs 1` on this 2-core machine; an item whose test calls the candidate 20,000
times graded in under 1 s (issue 24). Run: python benchmarks/bench_run.py
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--items", type=int, default=16)
    args = parser.parse_args()
    from evalpin.run.sandbox import probe_isolation

    iso = probe_isolation()
    print(machine())
    print(f"sandbox: {iso.kind}, network {iso.network}")

    replay = golden_replay(DATA / f"golden-replay-{args.cases}", args.cases)
    print(
        f"replay run, {args.cases:,} golden cases x 3 seeds (whole command): {replay:.2f} s"
        f"  [target < 5 s: {'met' if replay < 5 else 'NOT met'}]"
    )

    folder = DATA / "coding"
    coding_set(folder, args.items)
    plugins_s = direct_pytest(repeat=7, autoload=True)
    pytest_s = direct_pytest(repeat=7, autoload=False)
    one_wall, per_item = coding_run(folder, 1, "jobs1")
    item_s = statistics.median(per_item)
    overhead = item_s / pytest_s - 1
    verdict = "met" if overhead < 0.15 else "NOT met"
    print(f"direct pytest on one item, this venv's plugins autoloaded: {plugins_s:.3f} s")
    print(f"direct pytest on one item, plugin autoload off (as evalpin): {pytest_s:.3f} s")
    print(f"evalpin per coding item, process-isolated, median of {args.items}: {item_s:.3f} s")
    print(f"  overhead over the like-for-like figure: {overhead:+.1%}  [target < 15%: {verdict}]")
    two_wall, _ = coding_run(folder, 2, "jobs2")
    speedup = one_wall / two_wall
    print(
        f"{args.items} coding items: --jobs 1 {one_wall:.2f} s, --jobs 2 {two_wall:.2f} s"
        f" -> {speedup:.2f}x  [target >= 1.7x: {'met' if speedup >= 1.7 else 'NOT met'}]"
    )
    chatty = chatty_item(DATA / "chatty")
    print(
        f"one item whose test calls the candidate {CALLS:,} times, median of 3: {chatty:.3f} s"
        f"  [target < 1 s: {'met' if chatty < 1 else 'NOT met'}]"
    )


if __name__ == "__main__":
    main()
