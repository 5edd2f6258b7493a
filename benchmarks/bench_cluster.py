"""`--cluster local:2` against `--jobs 2`: what Dask's scheduling costs per item.

Target (issue 14): on this 2-core machine, 40 coding items graded on a `local:2` cluster
take within 15% of `--jobs 2` (the grading phase: from the header to the trailer, which
is the run file's own `seconds`; starting the cluster is reported apart, since it is paid
once per run). Prints the per-item cost, the per-item overhead and a projection for a
100-worker cluster on a 10,000-item suite. Run: python benchmarks/bench_cluster.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_run import coding_set
from timing import installed_env, machine

DATA = Path(__file__).parent / "data"


def one_run(folder: Path, tag: str, *executor: str) -> tuple[float, float, list[float]]:
    """(whole command, grading phase, per-item seconds) of one run."""
    out = folder / "runs" / f"{tag}.jsonl"
    out.unlink(missing_ok=True)
    started = time.perf_counter()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "evalpin", "run", "--fixtures", "coding.yaml"),
            *("--slot", "bench=replay:replay.jsonl", "--seeds", "1", "--progress", "none"),
            *("--out", str(out.relative_to(folder)), *executor),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        env=installed_env(),
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"evalpin run {' '.join(executor)} failed ({done.returncode}):\n{done.stderr}")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    cases = [r for r in records if r["record"] == "case"]
    assert all(c["pass"] for c in cases), [c["reasons"] for c in cases if not c["pass"]]
    return wall, records[-1]["seconds"], [c["seconds"] for c in cases]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from evalpin.run.sandbox import probe_isolation

    iso = probe_isolation()
    print(machine())
    print(f"sandbox: {iso.kind}, network {iso.network}; load average {os.getloadavg()[0]:.2f}")
    folder = DATA / f"cluster-{args.items}"
    coding_set(folder, args.items)
    one_run(folder, "warm", "--jobs", "2")  # bytecode and page cache, not measured

    jobs, dask, jobs_wall, dask_wall, per_item = [], [], [], [], []
    for i in range(args.repeat):  # interleaved, so a burst of load hits both alike
        wall, phase, seconds = one_run(folder, f"jobs{i}", "--jobs", "2")
        jobs.append(phase)
        jobs_wall.append(wall)
        per_item += seconds
        wall, phase, _ = one_run(folder, f"dask{i}", "--cluster", "local:2")
        dask.append(phase)
        dask_wall.append(wall)
    j, d = statistics.median(jobs), statistics.median(dask)
    ratio = d / j
    item_s = statistics.median(per_item)
    # Two graders in parallel: each extra second of the phase is two worker-seconds.
    overhead_s = max(0.0, (d - j) * 2 / args.items)
    startup_s = statistics.median(dask_wall) - d - (statistics.median(jobs_wall) - j)
    print(f"{args.items} coding items, median of {args.repeat} (grading phase, header to trailer):")
    print(f"  --jobs 2:          {j:.2f} s  (whole command {statistics.median(jobs_wall):.2f} s)")
    print(f"  --cluster local:2: {d:.2f} s  (whole command {statistics.median(dask_wall):.2f} s)")
    verdict = "met" if ratio <= 1.15 else "NOT met"
    print(f"  ratio {ratio:.3f}  [target <= 1.15: {verdict}]")
    print(f"  per item: {item_s:.3f} s graded; Dask overhead {overhead_s * 1000:.0f} ms/item")
    print(f"  cluster start (once per run, local:2): {startup_s:.1f} s")
    n, w = 10_000, 100
    projected = (item_s + overhead_s) * n / w + startup_s
    print(
        f"projection, {n:,} items on {w} workers: ({item_s:.3f} + {overhead_s:.3f}) s x {n:,}"
        f" / {w} + {startup_s:.0f} s start = {projected / 60:.1f} min"
    )


if __name__ == "__main__":
    main()
