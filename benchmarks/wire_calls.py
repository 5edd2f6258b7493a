"""Instructions per witnessed call, counted where the machine's load cannot move them.

The witness's judge and worker of one checkout, stepped in turn in one process and one
thread over real pipes (the judge's read serves the worker's next message first), the
candidate's function called from a test module under the judge's working folder, as
pytest's would be. `valgrind --tool=callgrind` counts the user-space instructions of a
run of N calls and of one of N + 1,000; their difference over 1,000 is one call, both
sides, start-up and warm-up cancelled. Kinds: `chatty` is bench_run.py's chatty item's
call (`total([i, 1])`: a list argument copied back, a float answer); `strings` a call
whose argument list holds two strings and whose answer is a new string (the identity
table's keys, the table full after the warm-up).

Run: python benchmarks/wire_calls.py [--src CHECKOUT/src] [--kind chatty|strings]
(--calls N --run: one timed run, without valgrind). The checkout's wire is imported from
`--src` (by default this one's), so two commits compare with two checkouts.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

KINDS = {
    "chatty": (
        "def total(prices, discount=0.0):\n    return round(sum(prices) * (1 - discount), 2)\n",
        "        assert total([i, 1]) == i + 1\n",
        200,
    ),
    "strings": (
        'def total(words, sep=" "):\n    return sep.join(w.upper() for w in words)\n',
        '        word = f"w{i}"\n        assert total([word, "x"]) == f"W{i} X"\n',
        3000,  # past the identity table's bound (4,096 a side): its oldest ones go
    ),
}


def run(src: str, kind: str, calls: int) -> float:
    """CPU seconds of `calls` calls after the warm-up, judge and worker stepped in turn."""
    sys.path.insert(0, src)
    folder = Path(tempfile.mkdtemp(prefix="wire-calls-"))
    os.chdir(folder)  # the judge's tests' folder: the test module below is the tests'
    from evalpin.core.instrument.graders.wire import stubs
    from evalpin.core.instrument.graders.wire.judge import Judge
    from evalpin.core.instrument.graders.wire.worker import Worker

    solution, body, warm = KINDS[kind]
    (folder / "cand").mkdir()
    (folder / "cand" / "solution.py").write_text(solution)
    (folder / "test_calls.py").write_text(f"def run(total, n):\n    for i in range(n):\n{body}")
    sys.path[:0] = [str(folder), str(folder / "cand")]
    to_worker, to_judge = os.pipe(), os.pipe()
    worker = Worker([to_worker[0], to_judge[1]], frozenset({"solution"}))
    worker.set_main()
    older = "sync_files" in inspect.signature(Judge).parameters  # (the wave's base)
    judge = Judge([to_judge[0], to_worker[1]], **({"sync_files": False} if older else {}))
    receive = judge._receive

    def stepped():
        worker.serve(worker._receive())
        return receive()

    judge._receive = stepped
    module = types.ModuleType("solution_stub")
    stubs._client = judge
    stubs.stub("solution", module.__dict__)
    import test_calls

    test_calls.run(module.total, warm)
    started = time.process_time()
    test_calls.run(module.total, calls)
    return time.process_time() - started


def instructions(src: str, kind: str, calls: int) -> int:
    """User-space instructions of this script's run of `calls` calls (callgrind)."""
    counting = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    options = ["--src", src, "--kind", kind, "--calls", str(calls)]
    done = subprocess.run(
        [*counting, sys.executable, __file__, "--run", *options],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = str(Path(__file__).resolve().parents[1] / "src")
    parser.add_argument("--src", default=default, help="a checkout's src folder")
    parser.add_argument("--kind", choices=sorted(KINDS), default="chatty")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--run", action="store_true", help="one timed run, no valgrind")
    args = parser.parse_args()
    if args.run:
        seconds = run(args.src, args.kind, args.calls)
        print(f"{args.calls} calls: {seconds / args.calls * 1e6:.1f} us of CPU a call")
        return
    few = instructions(args.src, args.kind, args.calls)
    more = instructions(args.src, args.kind, args.calls + 1000)
    print(f"{args.src} {args.kind}: {(more - few) / 1000 / 1000:.1f} k instructions a call")


if __name__ == "__main__":
    main()
