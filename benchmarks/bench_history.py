"""`evalpin history` over 200 nightly runs of 1,000 records each.

The folder holds 200 nights of one fixture set: a slot change at night 80 (backend
delta), a grader change at night 140 (rubric change), an environment change at night
50, a few percent of cases moving each night. It is generated once into
benchmarks/data/history-200x1000/ (git-ignored) and reused.

Target: the whole command (a fresh process, as a user runs it: start-up, reading,
a verdict per run, the repeat check, printing) in no more time than it takes merely to
parse every file's header and case lines once with the standard library's `json`, in
this process. Printed beside, for an honest scale: evalpin's own lean reader over the
same files plus one bare start-up, which is the floor the command builds on.
Run: python benchmarks/bench_history.py

At scale (`--records 1000000 --runs 20`): the folder is `--runs` copies of the
generated 1M-record run (benchmarks/synth.py) under benchmarks/data/, each with its
header line rewritten (its own run_id and started_at), and the command's time and peak
RSS are printed; the target is streaming: peak RSS within two runs' rows (< 1 GB).
Parsing 12 GB with `json` is left out there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from evalpin.core.read.runfile import RunWriter, read_run
from evalpin.core.records import SCHEMA, CaseRecord, FixturesInfo, RunHeader, Summary

sys.path.insert(0, str(Path(__file__).parent))
from synth import make_pair
from timing import best_of, installed_env, machine, parse_with_json, print_timings

SEEDS = (11, 29, 47)
SLOT_CHANGE, GRADER_CHANGE, ENV_CHANGE = 80, 140, 50


def _night(path: Path, night: int, records: int) -> None:
    """One night's run: the instrument of that night, outcomes drifting slowly."""
    slot, model = ("lab_free_1", "m-a@fp_1") if night < SLOT_CHANGE else ("lab_free_2", "m-b@fp_2")
    grader = "0123456789ab" if night < GRADER_CHANGE else "ba9876543210"
    python = "CPython 3.11.7" if night < ENV_CHANGE else "CPython 3.12.1"
    env = {"python": python, "platform": "Linux x86_64", "evalpin": "0.1.0"}
    controls = {"temperature": 0.0, "seeds": list(SEEDS), "max_tokens": 2048, "loops": 0}
    base = random.Random(7)  # the same cases and answers every night...
    drift = random.Random(night)  # ...but a few percent move
    with RunWriter(path, new=True) as w:
        w.write(
            RunHeader(
                schema=SCHEMA,
                run_id=f"night-{night:03d}",
                started_at=f"2026-{1 + night // 28:02d}-{1 + night % 28:02d}T02:00:00Z",
                fixtures=FixturesInfo(
                    path="fixtures/bench.jsonl",
                    kind="golden",
                    dataset_id="bench",
                    dataset_hash="b" * 64,
                ),
                grader_version=grader,
                model_slot=slot,
                slot={"provider": "openai", "model": model.split("@")[0]},
                seeds=list(SEEDS),
                controls=controls,
                env_digest=hashlib.sha256(python.encode()).hexdigest()[:16],
                env={**env, "controls": controls},
                scorer_commit="c" * 40,
            )
        )
        passed = 0
        for i in range(records):
            ok = base.random() < 0.8
            digest = f"{base.getrandbits(48):012x}"
            if drift.random() < 0.03:
                ok, digest = not ok, f"{drift.getrandbits(48):012x}"
            passed += ok
            tail = f"E   AssertionError: expected 'refund' in output (case {i})" * 12
            w.write(
                CaseRecord(
                    f"case-{i // len(SEEDS):05d}",
                    ok,
                    seed=SEEDS[i % len(SEEDS)],
                    fixture_hash=f"{i // len(SEEDS):016x}",
                    grader_version=grader,
                    model_slot=slot,
                    reasons=[] if ok else ["missing_tool:lookup_order"],
                    tool_names=["lookup_order"] if ok else [],
                    text_digest=digest,
                    completion_digest=digest,
                    seconds=round(base.uniform(0.2, 3.0), 3),
                    loops=0,
                    reported_model=model,
                    tail=None if ok else tail[-800:],
                )
            )
        w.write(Summary("2026-12-01T03:00:00Z", records=records, passed=passed))


def make_folder(folder: Path, runs: int, records: int) -> Path:
    """Generate the nightly runs once; a complete folder is reused as it is."""
    done = folder / ".complete"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.jsonl"):
        old.unlink()
    for night in range(runs):
        _night(folder / f"night-{night:03d}.jsonl", night, records)
    done.write_text(f"{runs} x {records}\n")
    return folder


BIG = 100_000  # records from which the folder is copies of one generated run


def copy_folder(folder: Path, runs: int, records: int, data: Path) -> Path:
    """`runs` copies of the synthetic run of `records` records, each with its own
    run_id and started_at (so history orders them and they form one series)."""
    done = folder / ".complete"
    if done.exists():
        return folder
    source, _ = make_pair(data, records)
    folder.mkdir(parents=True, exist_ok=True)
    for night in range(runs):
        with open(source, "rb") as src, open(folder / f"night-{night:03d}.jsonl", "wb") as out:
            head = json.loads(src.readline())
            head["run_id"] = f"night-{night:03d}"
            head["started_at"] = f"2026-11-{1 + night % 28:02d}T{night // 28:02d}:00:00Z"
            out.write(json.dumps(head, separators=(",", ":")).encode() + b"\n")
            shutil.copyfileobj(src, out, 1 << 24)
    done.write_text(f"{runs} x {records}\n")
    return folder


def history_command(folder: Path, expected: tuple[str, ...]) -> Callable[[], None]:
    """`evalpin history FOLDER` in a fresh process, checked to say every `expected` text."""
    command = [sys.executable, "-m", "evalpin", "history", str(folder)]

    def run_history() -> None:
        done = subprocess.run(command, capture_output=True, check=False, env=installed_env())
        out = done.stdout.decode()
        if done.returncode != 0 or done.stderr or not all(e in out for e in expected):
            sys.exit(f"evalpin history misbehaved (exit {done.returncode}):\n{out[-800:]}")

    return run_history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path(__file__).parent / "data")
    args = parser.parse_args()
    if args.records >= BIG:
        scale(args)
        return
    folder = make_folder(args.data / f"history-{args.runs}x{args.records}", args.runs, args.records)
    files = sorted(folder.glob("*.jsonl"))
    size = sum(p.stat().st_size for p in files) / 1e6
    # Three series, two named breaks, the env change inside the first series.
    run_history = history_command(
        folder, ("3 series", "backend delta", "rubric change", "environment change")
    )

    def startup() -> None:
        subprocess.run(
            [sys.executable, "-m", "evalpin", "--version"],
            check=True,
            capture_output=True,
            env=installed_env(),
        )

    def read_all() -> None:
        for path in files:
            read_run(path)

    run_history()  # warm the page cache and the bytecode cache
    history_best, history_median = best_of(args.repeat, run_history)
    start_best, start_median = best_of(args.repeat, startup)
    read_best, read_median = best_of(args.repeat, read_all)
    json_best, json_median = best_of(args.repeat, lambda: parse_with_json(files))

    print(machine())
    print(f"input: {len(files)} runs x {args.records:,} records, {size:.1f} MB in all")
    print_timings(
        [
            ("evalpin history, whole command, fresh process", history_best, history_median),
            ("evalpin --version, start-up alone", start_best, start_median),
            ("read_run of every file, in process", read_best, read_median),
            ("stdlib json, parse every line", json_best, json_median),
        ]
    )
    print(f"history / (lean read + start-up), best: {history_best / (read_best + start_best):.2f}x")
    print(f"history / stdlib json parse, best: {history_best / json_best:.2f}x")
    print("target (history <= json parse):", "met" if history_best <= json_best else "NOT met")


def scale(args: argparse.Namespace) -> None:
    """Many big runs: the whole command's time and the child's peak RSS."""
    folder = copy_folder(
        args.data / f"history-{args.runs}x{args.records}", args.runs, args.records, args.data
    )
    files = sorted(folder.glob("*.jsonl"))
    size = sum(p.stat().st_size for p in files) / 1e6
    run_history = history_command(folder, ("1 series",))

    best, median = best_of(args.repeat, run_history)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(machine())
    print(f"input: {len(files)} runs x {args.records:,} records, {size / 1e3:.1f} GB in all")
    print_timings([("evalpin history, whole command, fresh process", best, median)])
    print(f"peak RSS of the command: {peak:.0f} MB")
    print("target (peak RSS < 1 GB: streamed):", "met" if peak < 1024 else "NOT met")


if __name__ == "__main__":
    main()
