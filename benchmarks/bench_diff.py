"""`evalpin diff` on two runs of 100,000 records (~50 MB each) vs parsing them with `json`.

Targets: the whole `evalpin diff` command (a fresh process, as a user runs it) under
1.5 s, and at least 1.8x faster than merely parsing both files line by line with the
standard library's `json` in this process; the clustered statistics (cases, not seeds)
add under 5% to the command (timed in this process on the same pair and set against the
command's best time). Run: python benchmarks/bench_diff.py

At a million records (`--records 1000000`, ~600 MB a file): the whole command under
3 s and under 1 GB peak RSS (the largest of the command's processes: it reads a half of
each run in a forked helper, core/review/halves.py; from RUSAGE_CHILDREN); the json
baseline (minutes at that size) is left out.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from synth import make_pair
from timing import best_of, installed_env, machine, parse_with_json, print_timings

MILLION = 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path(__file__).parent / "data")
    args = parser.parse_args()
    left, right = make_pair(args.data, args.records)
    size = (left.stat().st_size + right.stat().st_size) / 2 / 1e6
    evalpin = [sys.executable, "-m", "evalpin", "diff", str(left), str(right)]

    def run_diff() -> None:
        done = subprocess.run(evalpin, capture_output=True, check=False, env=installed_env())
        # The synthetic pair has moved cases: exit 1, a summary line, nothing on stderr.
        out = done.stdout.decode()
        if done.returncode != 1 or done.stderr or "REGRESSED" not in out:
            detail = out[-500:] + done.stderr.decode()
            sys.exit(f"evalpin diff misbehaved (exit {done.returncode}):\n{detail}")

    run_diff()  # warm the page cache and the bytecode cache
    diff_best, diff_median = best_of(args.repeat, run_diff)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    print(machine())
    print(f"input: 2 runs x {args.records:,} records, {size:.1f} MB each")
    if args.records >= MILLION:
        print_timings([("evalpin diff, whole command, fresh process", diff_best, diff_median)])
        print(f"peak RSS of the command: {peak:.0f} MB")
        share = clustered_share(left, right, args.repeat) / diff_best
        print(f"clustered statistics: {share * 100:.1f}% of the whole command (best times)")
        ok = diff_best < 3.0 and peak < 1024
        print("targets (< 3 s, < 1 GB peak RSS):", "met" if ok else "NOT met")
        return
    json_best, json_median = best_of(args.repeat, lambda: parse_with_json([left, right]))
    print_timings(
        [
            ("evalpin diff, whole command, fresh process", diff_best, diff_median),
            ("stdlib json, parse both files by line", json_best, json_median),
        ]
    )
    print(f"peak RSS of the command: {peak:.0f} MB")
    print(f"ratio (json / evalpin diff, best): {json_best / diff_best:.2f}x")
    share = clustered_share(left, right, args.repeat) / diff_best
    print(f"clustered statistics: {share * 100:.1f}% of the whole command (best times)")
    ok = diff_best < 1.5 and json_best / diff_best >= 1.8 and share < 0.05
    print("targets (< 1.5 s, >= 1.8x, clustered < 5%):", "met" if ok else "NOT met")


def clustered_share(left: Path, right: Path, repeat: int) -> float:
    """Best time of the clustered comparison alone, on the pair already joined."""
    from evalpin.core.judge.compare import compare
    from evalpin.core.judge.paired import clustered_from, tally_of
    from evalpin.core.read.runfile import read_run

    diff = compare(read_run(left), read_run(right))
    best, median = best_of(max(repeat, 10), lambda: clustered_from(diff.moved, tally_of(diff)))
    print_timings([("clustered statistics, in process", best, median)])
    return best


if __name__ == "__main__":
    main()
