"""The review TUI on two runs of 100,000 records each (~60 MB each), headless Pilot.

Measured from the moment the app starts (files given as paths, so reading them is part
of the time), each scenario in a fresh process so peak memory is its own:

- first paint: the pins header painted (and, for a refused pair, the banner on screen);
- listed: every case listed and navigable (the index built, the list filled);
- key latency: a key that moves the selection (j, k, n, p), until the list and the detail
  show the new case; p50, p95 and max over a few hundred presses;
- peak memory: the process's maximum resident set size.

- first cases: the first frame with cases in the list (a partial list while reading).

Targets at 100k: first paint < 0.5 s, listed < 2.5 s, key p95 < 50 ms, peak RSS < 400 MB.
At 1M (--records 1000000): first cases < 1.0 s, listed < 8 s, key p95 < 50 ms, RSS < 1.2 GB.
Run: python benchmarks/bench_tui.py [--records N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from synth import make_pair
from timing import installed_env

SIZE = (160, 45)
TARGETS = {"first_paint": 0.5, "listed": 2.5, "key_p95": 0.050, "rss_mb": 400}
TARGETS_1M = {"first_paint": 1.0, "listed": 8.0, "key_p95": 0.050, "rss_mb": 1200}


def mismatched_copy(right: Path) -> Path:
    """The right run with its slot label changed on every record: the banner must show."""
    out = right.with_name(right.stem + "-reslotted.jsonl")
    if not out.exists():
        data = right.read_bytes().replace(
            b'"model_slot":"bench_slot"', b'"model_slot":"bench_sl0t"'
        )
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.rename(out)
    return out


async def wait_until(condition, timeout: float = 30.0) -> None:
    end = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > end:
            raise TimeoutError("benchmark condition not reached")
        await asyncio.sleep(0.0005)


async def scenario(left: Path, right: Path, presses: int) -> dict:
    """One app, timed by its own paints: `App._display` is wrapped to record when each
    frame went to the (headless) terminal, and keys go straight to the driver, so Pilot's
    own waiting for idleness is not counted. Loading milestones are observed from the
    outside: each frame records what it showed (`ReviewScreen.reached`, the detail's case),
    so "listed" is the first frame with the list filled; the app keeps no clock."""
    from textual import events

    from evalpin.tui.app import make_app
    from evalpin.tui.screens.banner import BannerScreen
    from evalpin.tui.screens.review import ReviewScreen
    from evalpin.tui.widgets.case_list import CaseList
    from evalpin.tui.widgets.detail import DetailPane

    paints: list[tuple[float, str]] = []
    # What each frame showed: whether the list was filled, and the detail's case.
    seen: list[tuple[bool, int | None]] = []
    started = time.perf_counter()
    app = make_app(left, right, cursor_blink=False)
    display = app._display

    def spy(screen, renderable) -> None:
        display(screen, renderable)
        if renderable is not None:
            paints.append((time.perf_counter(), type(screen).__name__))
            seen.append(showing())

    app._display = spy  # type: ignore[method-assign]

    def showing() -> tuple[bool, int | None]:
        review = app.screen_stack[0] if app.screen_stack else None
        if not isinstance(review, ReviewScreen) or not review.is_mounted:
            return False, None
        shown = review.detail.shown
        return review.reached("listed"), shown.case if shown is not None else None

    def painted_with(t: float, listed: bool = True, case: int | None = None) -> float | None:
        """The first review frame after `t` with the list filled (and the detail on
        `case`, when given)."""
        for (when, name), (filled, shown) in zip(paints, seen, strict=True):
            on_case = case is None or shown == case
            if when >= t and name == "ReviewScreen" and filled == listed and on_case:
                return when
        return None

    def painted_after(t: float, screen: str | None = None) -> float | None:
        for when, name in paints:
            if when >= t and (screen is None or name == screen):
                return when
        return None

    out: dict = {}
    async with app.run_test(size=SIZE) as pilot:
        review = app.review
        await wait_until(lambda: painted_after(started) is not None)
        out["first_paint"] = painted_after(started) - started
        milestones: dict[str, float] = {}

        async def reached(name: str) -> None:
            await wait_until(lambda: review.reached(name))
            milestones.setdefault(name, time.perf_counter() - started)

        await wait_until(lambda: review.reached("shown") or review.reached("banner"))
        if review.reached("shown"):
            out["first_cases"] = time.perf_counter() - started
        await wait_until(lambda: review.reached("listed") or review.reached("banner"))
        if review.reached("banner"):
            await wait_until(lambda: painted_after(started, "BannerScreen") is not None)
            assert isinstance(app.screen, BannerScreen)
            out["banner"] = painted_after(started, "BannerScreen") - started
            out["first_paint"] = out["banner"]
            await pilot.press("b")
        await wait_until(lambda: painted_with(started) is not None)
        out["listed"] = painted_with(started) - started
        milestones["listed"] = out["listed"]
        out["cases"] = len(review.cases.cases)
        out["mode"] = review.cases.mode
        await reached("verdicts")
        await pilot.pause()
        cases = review.query_one(CaseList)
        detail = review.query_one(DetailPane)

        latencies: dict[str, list[float]] = {"j": [], "k": [], "n": [], "p": []}
        plan = ["j"] * (presses // 2) + ["n"] * (presses // 4)
        plan += ["k"] * (presses // 8) + ["p"] * (presses // 8)
        for key in plan:
            before = cases.current
            t0 = time.perf_counter()
            app._driver.send_message(events.Key(key, key))

            def detail_follows(before=before) -> bool:
                moved = cases.current != before
                shown = detail.shown
                return moved and shown is not None and shown.case == cases.current

            await wait_until(detail_follows)  # the worker's records laid out
            await wait_until(lambda t0=t0: painted_with(t0, case=cases.current) is not None)
            latencies[key].append(painted_with(t0, case=cases.current) - t0)
            await asyncio.sleep(0.002)
        all_keys = sorted(x for v in latencies.values() for x in v)
        out["key_p50"] = statistics.median(all_keys)
        out["key_p95"] = all_keys[int(0.95 * (len(all_keys) - 1))]
        out["key_max"] = all_keys[-1]
        out["key_p95_by_key"] = {
            k: sorted(v)[int(0.95 * (len(v) - 1))] for k, v in latencies.items() if v
        }
        out["timings"] = milestones
        await pilot.press("q")
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--presses", type=int, default=200)
    parser.add_argument("--data", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--size", default="160x45", help="terminal WxH (e.g. 80x24)")
    parser.add_argument("--one", nargs=2, metavar=("LEFT", "RIGHT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    global SIZE
    SIZE = tuple(int(n) for n in args.size.split("x"))  # type: ignore[assignment]
    if args.one:
        result = asyncio.run(scenario(Path(args.one[0]), Path(args.one[1]), args.presses))
        print(json.dumps(result))
        return

    import textual

    left, right = make_pair(args.data, args.records)
    reslotted = mismatched_copy(right)
    size = (left.stat().st_size + right.stat().st_size) / 2 / 1e6
    print(
        f"machine: {cpu_name()}, {os.cpu_count()} cores, {platform.machine()}, "
        f"Python {platform.python_version()}, Textual {textual.__version__}"
    )
    print(f"input: 2 runs x {args.records:,} records, {size:.1f} MB each; terminal {SIZE}")
    ok = True
    for name, pair in (("same instrument", (left, right)), ("refused pair", (left, reslotted))):
        cmd = [sys.executable, __file__, "--presses", str(args.presses), "--size", args.size]
        cmd += ["--one", *map(str, pair)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=installed_env())
        if done.returncode != 0:
            sys.exit(f"scenario {name!r} failed:\n{done.stdout}{done.stderr}")
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"\n{name}: {r['cases']:,} cases, {r['mode']} mode")
        paint = "first paint (pins + banner)" if "banner" in r else "first paint (pins)"
        print(f"  {paint:<34} {r['first_paint']:.3f} s")
        if "first_cases" in r:
            print(f"  {'first cases on screen (partial)':<34} {r['first_cases']:.3f} s")
        print(f"  {'every case listed and navigable':<34} {r['listed']:.3f} s")
        by_key = ", ".join(f"{k} {v * 1000:.1f}" for k, v in r["key_p95_by_key"].items())
        print(
            f"  {'selection key incl. detail':<34} p50 {r['key_p50'] * 1000:.1f} ms, "
            f"p95 {r['key_p95'] * 1000:.1f} ms, max {r['key_max'] * 1000:.1f} ms "
            f"(p95 by key: {by_key})"
        )
        print(f"  {'peak memory (RSS)':<34} {r['rss_mb']:.0f} MB")
        phases = ", ".join(f"{k} {v:.3f}" for k, v in r["timings"].items())
        print(f"  {'loader milestones (s)':<34} {phases}")
        targets = TARGETS_1M if args.records >= 1_000_000 else TARGETS
        big = targets is TARGETS_1M
        first = r.get("first_cases", r["first_paint"]) if big else r["first_paint"]
        ok &= (
            first < targets["first_paint"]
            and r["listed"] < targets["listed"]
            and r["key_p95"] < targets["key_p95"]
            and r["rss_mb"] < targets["rss_mb"]
        )
    t = TARGETS_1M if args.records >= 1_000_000 else TARGETS
    print(
        f"\ntargets (first {'cases' if t is TARGETS_1M else 'paint'} < {t['first_paint']} s, "
        f"listed < {t['listed']} s, key p95 < 50 ms, RSS < {t['rss_mb']} MB):",
        "met" if ok else "NOT met",
    )


if __name__ == "__main__":
    main()
