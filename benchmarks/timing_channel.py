"""The timing channel between two sandboxes alive at once, measured (issue 49).

Plain pytest's copy of the candidate (the sender: it can read the test, so it knows a
secret) and the witness's worker (the receiver: it cannot) run beside each other when
the grader has a core to spare. They share no file, key, lock or process, but they share
the CPU: the sender spins two processes in the time slots of its 1 bits and sleeps in
those of its 0 bits; the receiver counts how far a loop of its own gets in each slot and
reads a slow slot as a 1. The two agree on slots without talking: CLOCK_MONOTONIC is the
host's in every box (slot k is [k*T, (k+1)*T)), and the sender sends bit k mod 64 of its
secret in slot k.

The receiver hands back what it read as its test's failure (the witness's tail); this
script compares it with what was sent, per slot length T, and reports the bit error rate
p, the capacity of that binary channel (1 - H(p) bits a slot), in bits a second and in
bits per case (over the item's timeout, the longest the two boxes overlap). Then the same
with `--witness alone` (run_item's witness_alone): the receiver has no sender beside it.

Run: python benchmarks/timing_channel.py [--cases 3] [--seconds 4]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import secrets
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from timing import machine

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.sandbox import probe_isolation, run_item

SOLUTION = textwrap.dedent(
    """
    import os, re, sys, time

    def exchange(seconds, slot):
        here = os.path.join(os.getcwd(), "test_solution.py")
        if os.path.exists(here):  # plain pytest: the sender
            secret = int(re.search(r"SECRET = (\\d+)", open(here).read()).group(1))
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                now = time.monotonic()
                k = int(now // slot)
                stop = (k + 1) * slot
                if (secret >> (k % 64)) & 1:
                    kids = []
                    for _ in range(2):
                        pid = os.fork()
                        if pid == 0:
                            while time.monotonic() < stop:
                                pass
                            os._exit(0)
                        kids.append(pid)
                    for pid in kids:
                        os.waitpid(pid, 0)
                else:
                    time.sleep(max(stop - time.monotonic(), 0))
            return ""
        counts = {}  # the worker: the receiver
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            k = int(time.monotonic() // slot)
            stop = (k + 1) * slot
            n = 0
            while time.monotonic() < stop:
                n += 1
            counts[k] = n
        slots = sorted(counts)[1:-1]  # whole slots only
        middle = sorted(counts[k] for k in slots)[len(slots) // 2]
        bits = "".join("1" if counts[k] < middle else "0" for k in slots)
        return f"FIRST={slots[0]} BITS={int(bits[::-1], 2):x} N={len(bits)}"
    """
)
TEST = textwrap.dedent(
    """
    from solution import exchange

    SECRET = {secret}

    def test_exchange():
        got = exchange({seconds}, {slot})
        assert got == "", got
    """
)


def entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def one_case(folder: Path, slot: float, seconds: float, alone: bool) -> tuple[int, int]:
    """(bits read wrong, bits read) for one case."""
    secret = secrets.randbits(64)
    (folder / "prompt.md").write_text("exchange\n")
    (folder / "test_solution.py").write_text(TEST.format(secret=secret, seconds=seconds, slot=slot))
    doc = {
        "schema": "coding-eval/v1",
        "dataset_id": "timing",
        "dataset_version": "1",
        "items": [
            {
                "id": "timing",
                "language": "python",
                "prompt_file": "prompt.md",
                "test_file": "test_solution.py",
                "timeout_s": seconds + 20,
                "expected_files": ["solution.py"],
            }
        ],
    }
    (folder / "set.yaml").write_text(json.dumps(doc))
    item = load_fixtures(folder / "set.yaml").cases[0]
    outcome = run_item(item, {"solution.py": SOLUTION}, witness_alone=alone)
    found = re.search(r"FIRST=(\d+) BITS=([0-9a-f]+) N=(\d+)", outcome.witness_tail)
    if found is None:
        sys.exit(f"no reading in the witness's tail: {outcome.reasons}\n{outcome.witness_tail}")
    first, read, n = int(found[1]), int(found[2], 16), int(found[3])
    wrong = sum(((read >> i) & 1) != ((secret >> ((first + i) % 64)) & 1) for i in range(n))
    return wrong, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=3, help="cases per slot length")
    parser.add_argument("--seconds", type=float, default=4.0, help="sending time per case")
    parser.add_argument("--slots", default="0.02,0.05,0.1", help="slot lengths, seconds")
    parser.add_argument("--per-case", type=float, default=10.0, help="timeout_s to scale to")
    args = parser.parse_args()
    iso = probe_isolation()
    print(machine())
    print(f"sandbox: {iso.kind}; load average: {Path('/proc/loadavg').read_text().split()[0]}")
    for alone in (False, True):
        for slot in map(float, args.slots.split(",")):
            wrong = total = 0
            for _ in range(args.cases):
                with tempfile.TemporaryDirectory() as tmp:
                    w, n = one_case(Path(tmp), slot, args.seconds, alone)
                wrong, total = wrong + w, total + n
            p = min(wrong / total, 1 - wrong / total)
            per_slot = 1 - entropy(p)
            mode = "alone " if alone else "beside"
            print(
                f"witness {mode} slot {slot * 1000:4.0f} ms: {total} bits read, error rate"
                f" {p:.3f}, capacity {per_slot:.3f} bit/slot = {per_slot / slot:6.1f} bit/s"
                f" = {per_slot / slot * args.per_case:6.0f} bits per case of"
                f" timeout_s {args.per_case:g}"
            )


if __name__ == "__main__":
    main()
