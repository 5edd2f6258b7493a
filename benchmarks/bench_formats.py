"""Reading an inspect-ai `.eval` log of 10,000 samples x 3 epochs, and reviewing two.

The logs are made here (once, cached in the data folder) from a real sample and header
that inspect-ai wrote (tests/data/inspect/night1.eval) with ids, inputs, answers, scores
and the epoch count rewritten, so they have inspect's structure: `header.json`,
`_journal/start.json`, `samples/<id>_epoch_<n>.json` (DEFLATE members; inspect's own
reader takes them as it takes its zstd ones).

Targets: evalpin's reader turns the log into rows at least 3x faster than inspect-ai's
own `read_eval_log` on the same file (timed in a separate interpreter that has inspect-ai,
`--inspect-python`, e.g. the venv made by scripts/make_foreign_logs.sh; skipped with a
message when there is none), and `review` of two such logs paints its first screen in
< 0.5 s (headless, paths given, reading counted).
Run: python benchmarks/bench_formats.py [--samples N] [--inspect-python PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from timing import best_of, machine, print_timings

ROOT = Path(__file__).parent.parent
TEMPLATE = ROOT / "tests" / "data" / "inspect" / "night1.eval"
SIZE = (160, 45)
TARGETS = {"ratio": 3.0, "first_paint": 0.5}
FOREIGN = Path("/tmp/foreign-venv/bin/python")


def make_log(path: Path, samples: int, epochs: int, night: int) -> Path:
    """An inspect-shaped log; `night` shifts which samples pass, so two logs differ."""
    if path.exists():
        return path
    from evalpin.core.read.formats.ziplog import LogZip

    with LogZip(TEMPLATE) as src:
        header = json.loads(src.read("header.json"))
        start = json.loads(src.read("_journal/start.json"))
        sample = json.loads(src.read("samples/apple_epoch_1.json"))
    ids = [f"s{i:05d}" for i in range(samples)]
    for doc in (header, start):
        doc["eval"]["dataset"].update(samples=samples, sample_ids=ids)
        doc["eval"]["config"]["epochs"] = epochs
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("_journal/start.json", json.dumps(start))
        for epoch in range(1, epochs + 1):
            for i, sid in enumerate(ids):
                answer = f"answer {i}" if (i + night) % 7 else f"wrong {i}"
                s = copy.deepcopy(sample)
                s.update(id=sid, epoch=epoch, input=f"question {i}?", target=f"answer {i}")
                s["messages"][0]["content"] = s["input"]
                s["messages"][1]["content"] = answer
                s["output"]["choices"][0]["message"]["content"] = answer
                s["output"]["completion"] = answer
                value = "I" if answer.startswith("wrong") else "C"
                for score in s["scores"].values():
                    score.update(value=value, answer=answer, explanation=answer)
                zf.writestr(f"samples/{sid}_epoch_{epoch}.json", json.dumps(s))
        zf.writestr("header.json", json.dumps(header))
    tmp.rename(path)
    return path


def time_inspect(python: Path, log: Path, repeat: int) -> float | None:
    code = (
        "import sys, time\n"
        "from inspect_ai.log import read_eval_log\n"
        "best = None\n"
        f"for _ in range({repeat}):\n"
        "    t = time.perf_counter(); log = read_eval_log(sys.argv[1])\n"
        "    d = time.perf_counter() - t; best = d if best is None else min(best, d)\n"
        "assert len(log.samples) > 0\n"
        "print(best)\n"
    )
    try:
        done = subprocess.run(
            [str(python), "-c", code, str(log)], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    if done.returncode != 0:
        print(f"inspect-ai not usable with {python}: {done.stderr.strip()[-300:]}")
        return None
    return float(done.stdout.strip())


async def first_paint(left: Path, right: Path) -> tuple[float, float]:
    """Seconds from app start to its first frame, and to every case listed."""
    from evalpin.tui.app import make_app

    paints: list[float] = []
    started = time.perf_counter()
    app = make_app(left, right, cursor_blink=False)
    display = app._display

    def spy(screen, renderable) -> None:
        display(screen, renderable)
        if renderable is not None:
            paints.append(time.perf_counter())

    app._display = spy  # type: ignore[method-assign]
    async with app.run_test(size=SIZE):
        while not paints:
            await asyncio.sleep(0.0005)
        first = paints[0] - started
        while "listed" not in app.review.timings:
            await asyncio.sleep(0.001)
        return first, app.review.timings["listed"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--inspect-python", type=Path, default=FOREIGN)
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    stem = f"inspect-{args.samples}x{args.epochs}"
    left = make_log(args.data / f"{stem}-a.eval", args.samples, args.epochs, night=0)
    right = make_log(args.data / f"{stem}-b.eval", args.samples, args.epochs, night=1)

    from evalpin.core.read.runfile import read_run

    rows = len(read_run(left).rows)
    ours, ours_median = best_of(args.repeat, lambda: read_run(left))
    print(machine())
    print(f"input: {args.samples:,} samples x {args.epochs} epochs = {rows:,} rows, "
          f"{left.stat().st_size / 1e6:.1f} MB zip")  # fmt: skip
    timings = [("evalpin read_run, log to rows", ours, ours_median)]
    theirs = time_inspect(args.inspect_python, left, args.repeat)
    if theirs is not None:
        timings.append(("inspect-ai read_eval_log (best)", theirs, theirs))
    print_timings(timings)
    met = True
    if theirs is None:
        print(f"ratio: skipped (no inspect-ai at {args.inspect_python}; --inspect-python)")
    else:
        ratio = theirs / ours
        met &= ratio >= TARGETS["ratio"]
        print(f"ratio (read_eval_log / evalpin, best): {ratio:.1f}x (target >= 3x)")
    paint, listed = asyncio.run(first_paint(left, right))
    met &= paint < TARGETS["first_paint"]
    print(f"review of two logs: first paint {paint:.3f} s (target < 0.5 s), listed {listed:.3f} s")
    print("targets: " + ("met" if met else "NOT met"))


if __name__ == "__main__":
    main()
