"""Following a run still being written (`evalpin review` on a night in progress).

Beside a complete left run of N records, the right run holds all but its last `--grow`
records and no trailer; the review's reader has read it. Then the last records are
appended (as the writer would) and timed, per step of what the follow loop does:

- read on: `RunStream.follow`, the appended whole lines from the last byte offset;
- judge again: the grown pair joined, classified and prepared (a fresh `CaseIndex`), its
  causes and both verdicts: what the review posts after each growth.

The loop waits max(0.5 s, 4 x the last judge-again time) between looks, so a big followed
pair is looked at less often rather than starving the screen. Run:
python benchmarks/bench_follow.py [--records 10000 100000] [--grow 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from evalpin.core.judge.causes import find_causes
from evalpin.core.judge.verdict import judge
from evalpin.core.read.formats import GREW, RunStream
from evalpin.core.review.case_index import CaseIndex

sys.path.insert(0, str(Path(__file__).parent))
from synth import make_run
from timing import machine


def measure(folder: Path, n: int, grow: int) -> tuple[float, float]:
    left = make_run(folder / f"left-{n}.jsonl", n, variant=0)
    full = make_run(folder / f"right-full-{n}.jsonl", n, variant=1)
    lines = full.read_bytes().splitlines(keepends=True)
    head, tail = lines[: -grow - 1], lines[-grow - 1 : -1]  # the trailer dropped
    right = folder / f"right-{n}.jsonl"
    right.write_bytes(b"".join(head))
    streams = [RunStream(left), RunStream(right)]
    for stream in streams:
        while stream.step():
            pass
    with open(right, "ab") as fh:
        fh.write(b"".join(tail))
    t0 = time.perf_counter()
    assert streams[1].follow() == GREW
    read = time.perf_counter() - t0
    t0 = time.perf_counter()
    lrun, rrun = streams[0].run, streams[1].run
    assert lrun is not None and rrun is not None and len(rrun.rows) == n
    index = CaseIndex(pair=True)
    diff = index.join(lrun, rrun)
    index.finish(lrun, rrun, diff).prepare()
    find_causes(diff, lambda: None)
    judge(lrun)
    judge(rrun)
    return read, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--grow", type=int, default=1000)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.records:
            read, again = measure(Path(tmp), n, args.grow)
            print(
                f"{n:>9,} records, {args.grow:,} appended: read on {1000 * read:7.1f} ms,"
                f" judge again {1000 * again:8.1f} ms"
            )


if __name__ == "__main__":
    main()
