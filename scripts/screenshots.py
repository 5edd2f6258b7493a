"""Render the review TUI's main states to screenshots/*.svg with Textual's own export.

Deterministic: a fixed terminal size, runs built here with fixed headers and records
(no clock, host or machine in them), the launch panel fed recorded progress events, and
the cursor blink off. Run: python scripts/screenshots.py [--out screenshots]

- review.svg: two runs side by side, the first regression selected;
- banner.svg: the refusal banner (the slot was re-pointed to another backend);
- verdict.svg: the verdict screen with its publish checklist;
- launch.svg: the launch panel in the middle of a run;
- history.svg: the history screen (`h`) over ten nights with a slot change and a grader
  change, two runs of different series marked;
- review-80x24.svg: the review in an 80 x 24 terminal (list above detail, pins folded);
- causes.svg: what moved between the bundled demo nights, by cause (`c`);
- triage.svg: the demo's `status-late-apology` with a review note, the case itself and
  its lost apology as a word diff.

`--only NAME` writes just that file (e.g. `--only review-80x24.svg`).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from evalpin.core.read.runfile import RunWriter
from evalpin.core.records import SCHEMA, CaseRecord, FixturesInfo, RunHeader, Summary
from evalpin.tui.app import make_app

SIZE = (150, 44)
SMALL = (80, 24)
SEEDS = (11, 29, 47)
CASES = [
    ("orders/lookup-1001", "lookup_order", [True] * 3, [True] * 3),
    ("orders/cancel-1002", "cancel_order", [True] * 3, [True, False, True]),
    ("orders/refund-policy", "lookup_policy", [False] * 3, [True] * 3),
    ("orders/address-change", "update_address", [True] * 3, [True] * 3),
    ("orders/split-shipment", "lookup_order", [True, False, True], [True, False, True]),
    ("orders/gift-note", "lookup_order", [True] * 3, [True] * 3),
    ("repairs/bisect_left", "", [True] * 3, [True] * 3),
    ("repairs/parse_duration", "", [True] * 3, [False] * 3),
    ("repairs/slugify", "", [False, True, True], [True] * 3),
    ("repairs/to_roman", "", [True] * 3, [True] * 3),
]
TAIL = """\
============================= test session starts ==============================
collected 6 items

test_parse_duration.py ..F...                                            [100%]

=================================== FAILURES ===================================
_____________________________ test_hours_and_minutes ____________________________

    def test_hours_and_minutes():
>       assert parse_duration("1h30m") == 5400
E       AssertionError: assert 90 == 5400
E        +  where 90 = parse_duration('1h30m')

test_parse_duration.py:14: AssertionError
=========================== short test summary info ============================
FAILED test_parse_duration.py::test_hours_and_minutes - AssertionError: assert 90 == 5400
========================= 1 failed, 5 passed in 0.04s ==========================
"""


def short_hash(text: str, n: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def header(slot: str, run_id: str, started: str) -> RunHeader:
    return RunHeader(
        schema=SCHEMA,
        run_id=run_id,
        started_at=started,
        fixtures=FixturesInfo(
            path="fixtures/orders/golden.jsonl",
            kind="golden",
            dataset_id="orders-golden",
            dataset_version="2026.11",
            dataset_hash="9f2c4e1b7a3d5f60" + "0" * 48,
            envelope_hash="4b8e2d0c6a1f9e73" + "0" * 48,
            files={"golden.jsonl": "9f2c4e1b7a3d5f60"},
            lock="matched",
        ),
        grader_version="5c1e09a4b2d7",
        model_slot=slot,
        slot={"provider": "replay", "path": f"fixtures/completions/{slot}.jsonl"},
        seeds=list(SEEDS),
        controls={"temperature": 0.0, "seeds": list(SEEDS), "max_tokens": 2048},
        env_digest="a41f0c9e27b3d815",
        env={"python": "CPython 3.11.7", "evalpin": "0.1.0", "platform": "Linux x86_64"},
        scorer_commit="3e8b1f7c92d04a6b5c1e09a4b2d7f3e8b1f7c92d",
    )


def write(path: Path, slot: str, model: str, side: int, started: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    passed = 0
    with RunWriter(path, new=True) as w:
        w.write(header(slot, f"run-{side}", started))
        n = 0
        for case_id, tool, left, right in CASES:
            for seed, ok in zip(SEEDS, (left, right)[side], strict=True):
                coding = case_id.startswith("repairs/")
                reasons = [] if ok else (["tests_failed"] if coding else [f"missing_tool:{tool}"])
                digest = short_hash(f"{case_id}/{seed}/{ok}/{side if not ok else 0}", 12)
                w.write(
                    CaseRecord(
                        case_id,
                        ok,
                        seed=seed,
                        fixture_hash=short_hash(case_id, 16),
                        grader_version="5c1e09a4b2d7",
                        model_slot=slot,
                        reasons=reasons,
                        tool_names=[] if coding or not ok else [tool],
                        text_digest=digest,
                        completion_digest=digest,
                        seconds=round(0.8 + 0.37 * (seed % 7) + 0.11 * len(case_id) % 1.9, 2),
                        loops=(1 if coding and not ok else 0),
                        reported_model=model,
                        tail=TAIL if coding and not ok else None,
                        text=f"Order update for {case_id.split('/')[-1]}." if not coding else None,
                    )
                )
                passed += ok
                n += 1
        w.write(Summary(started.replace("02:00", "02:04"), records=n, passed=passed))
    return path


def project(folder: Path) -> tuple[Path, Path, Path]:
    """runs/ with yesterday's and today's run (and a re-pointed slot), fixtures, slots."""
    left = write(
        folder / "runs/2026-11-28-lab_free_1.jsonl",
        "lab_free_1",
        "orders-mini@fp_1",
        0,
        "2026-11-28T02:00:00Z",
    )
    right = write(
        folder / "runs/2026-11-29-lab_free_1.jsonl",
        "lab_free_1",
        "orders-mini@fp_1",
        1,
        "2026-11-29T02:00:00Z",
    )
    other = write(
        folder / "runs/2026-11-29-lab_free_2.jsonl",
        "lab_free_2",
        "free-coder@fp_9",
        1,
        "2026-11-29T02:10:00Z",
    )
    fixtures = folder / "fixtures/orders"
    fixtures.mkdir(parents=True, exist_ok=True)
    (fixtures / "golden.jsonl").write_text(
        json.dumps({"id": "lookup-1001", "user": "Where is order 1001?"}) + "\n"
    )
    (folder / "slots.yaml").write_text(
        "slots:\n  lab_free_1: {provider: replay, path: fixtures/orders/golden.jsonl}\n"
    )
    return left, right, other


# The history: (slot, reported model, grader, python, pass rate in %) per night.
NIGHTS = [
    ("lab_free_1", "orders-mini@fp_1", "5c1e09a4b2d7", "CPython 3.11.7", 87),
    ("lab_free_1", "orders-mini@fp_1", "5c1e09a4b2d7", "CPython 3.11.7", 90),
    ("lab_free_1", "orders-mini@fp_1", "5c1e09a4b2d7", "CPython 3.11.7", 83),
    ("lab_free_1", "orders-mini@fp_1", "5c1e09a4b2d7", "CPython 3.11.9", 87),
    ("lab_free_1", "orders-mini@fp_1", "5c1e09a4b2d7", "CPython 3.11.9", 90),
    ("lab_free_2", "free-coder@fp_9", "5c1e09a4b2d7", "CPython 3.11.9", 63),
    ("lab_free_2", "free-coder@fp_9", "5c1e09a4b2d7", "CPython 3.11.9", 57),
    ("lab_free_2", "free-coder@fp_9", "5c1e09a4b2d7", "CPython 3.11.9", 67),
    ("lab_free_2", "free-coder@fp_9", "7a0d3f2e91c4", "CPython 3.11.9", 77),
    ("lab_free_2", "free-coder@fp_9", "7a0d3f2e91c4", "CPython 3.11.9", 73),
]


def write_night(folder: Path, night: int) -> Path:
    """One night of `NIGHTS`: its pass rate hit (failures spread over the seeds in a fixed
    order), each night replaying its own recording (so a new completion is not a repeat)."""
    slot, model, grader, python, rate = NIGHTS[night]
    day = f"2026-11-{21 + night:02d}"
    head = header(slot, f"night-{night + 1}", f"{day}T02:00:00Z")
    head.grader_version = grader
    head.slot = {"provider": "replay", "path": f"fixtures/completions/{slot}-{day}.jsonl"}
    head.env = {**head.env, "python": python}
    head.env_digest = short_hash(json.dumps(head.env, sort_keys=True), 16)
    keys = [(case_id, seed) for case_id, *_ in CASES for seed in SEEDS]
    fails = len(keys) - round(rate * len(keys) / 100)
    by_seed = [
        sorted(((c, seed) for c, *_ in CASES), key=lambda k: short_hash(f"{k}/{night}", 8))
        for seed in SEEDS
    ]
    failing = {by_seed[k % len(SEEDS)][k // len(SEEDS)] for k in range(fails)}
    path = folder / f"runs/{day}-{slot}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with RunWriter(path, new=True) as w:
        w.write(head)
        for case_id, seed in keys:
            ok = (case_id, seed) not in failing
            digest = short_hash(f"{case_id}/{seed}/{ok}/{night}", 12)
            w.write(
                CaseRecord(
                    case_id,
                    ok,
                    seed=seed,
                    fixture_hash=short_hash(case_id, 16),
                    grader_version=grader,
                    model_slot=slot,
                    reasons=[] if ok else ["tests_failed"],
                    tool_names=[],
                    text_digest=digest,
                    completion_digest=digest,
                    seconds=1.0,
                    loops=0,
                    reported_model=model,
                )
            )
        w.write(Summary(f"{day}T02:04:00Z", records=len(keys), passed=len(keys) - len(failing)))
    return path


async def shoot_history(out: Path) -> Path:
    """The history screen over `NIGHTS`, in a folder of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cwd = Path.cwd()
        os.chdir(folder)
        try:
            paths = [write_night(folder, k).relative_to(folder) for k in range(len(NIGHTS))]
            app = make_app(paths[-2], paths[-1], cursor_blink=False, cwd=folder)
            async with app.run_test(size=SIZE) as pilot:
                while not app.review.reached("listed"):
                    await pilot.pause(0.02)
                await pilot.press("h")
                screen = app.screen
                while getattr(screen, "history", None) is None:
                    await pilot.pause(0.02)
                # Mark the last night of the first series and the first of the second.
                await pilot.press("home", *["down"] * 4, "space", "down", "space")
                await pilot.pause()
                path = out / "history.svg"
                path.write_text(app.export_screenshot(title="evalpin review"))
        finally:
            os.chdir(cwd)
    return path


async def shoot(out: Path) -> list[Path]:
    saved = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cwd = Path.cwd()
        os.chdir(folder)
        try:
            left, right, other = (p.relative_to(folder) for p in project(folder))

            async def settle(app, pilot, what: str) -> None:
                """Until loading reached `what` and the detail shows its case."""
                review = app.review
                while not review.reached(what) or review.detail.decoding:
                    await pilot.pause(0.02)
                await pilot.pause()

            def save(app, name: str) -> None:
                path = out / name
                path.write_text(app.export_screenshot(title="evalpin review"))
                saved.append(path)

            app = make_app(left, right, cursor_blink=False, cwd=folder)
            async with app.run_test(size=SMALL) as pilot:
                await settle(app, pilot, "verdicts")
                save(app, "review-80x24.svg")
            app = make_app(left, right, cursor_blink=False, cwd=folder)
            async with app.run_test(size=SIZE) as pilot:
                await settle(app, pilot, "verdicts")
                save(app, "review.svg")
                await pilot.press("v")
                await pilot.pause()
                save(app, "verdict.svg")
                await pilot.press("escape", "l")
                await pilot.pause()
                panel = app.screen
                events = [
                    {
                        "event": "start",
                        "out": "runs/2026-11-30-lab_free_1-9f2c4e1b.jsonl",
                        "run_id": "r",
                        "total": 30,
                        "todo": 30,
                        "network": "n/a",
                    },
                ]
                passed = failed = 0
                for k in range(12):
                    ok = k % 5 != 3
                    passed, failed = passed + ok, failed + (not ok)
                    events.append(
                        {
                            "event": "case",
                            "case_id": CASES[k % 10][0],
                            "seed": 11,
                            "pass": ok,
                            "reasons": [],
                            "done": k + 1,
                            "total": 30,
                            "passed": passed,
                            "failed": failed,
                            "elapsed": 4.2,
                        }
                    )
                for event in events:
                    panel.handle_event(event)
                panel.query_one("#launch-start").disabled = True
                panel.query_one("#launch-cancel").disabled = False
                await pilot.pause()
                save(app, "launch.svg")
            app = make_app(left, other, cursor_blink=False, cwd=folder)
            async with app.run_test(size=SIZE) as pilot:
                await settle(app, pilot, "verdicts")  # the screen behind the banner, loaded
                save(app, "banner.svg")
        finally:
            os.chdir(cwd)
    saved.append(await shoot_history(out))
    saved += await shoot_triage(out)
    return saved


ROOT = Path(__file__).resolve().parent.parent
LATE = "status-late-apology"


async def shoot_triage(out: Path) -> list[Path]:
    """The bundled demo pair (its runs and fixtures copied, so names are relative): the
    causes, and the detail of the case that lost its apology, a review note on it."""
    from evalpin.core.read.notes import TICKET, append_note, make_note
    from evalpin.tui.screens.causes import CausesScreen

    saved = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(ROOT / "fixtures", folder / "fixtures")
        (folder / "runs").mkdir()
        for night in ("demo-night-1.jsonl", "demo-night-2.jsonl"):
            shutil.copy(ROOT / "runs" / night, folder / "runs" / night)
        right = Path("runs/demo-night-2.jsonl")
        fixture_hash = next(
            rec["fixture_hash"]
            for rec in map(json.loads, (folder / right).read_text().splitlines())
            if rec.get("case_id") == LATE
        )
        note = make_note(
            LATE,
            fixture_hash,
            TICKET,
            "accepted: new tone, see ticket 1432",
            author="ana",
            written_at="2026-12-03T09:14:02Z",
        )
        append_note(folder / "runs" / "notes.jsonl", note)
        cwd = Path.cwd()
        os.chdir(folder)
        try:
            app = make_app(Path("runs/demo-night-1.jsonl"), right, cursor_blink=False, cwd=folder)
            async with app.run_test(size=SIZE) as pilot:
                review = app.review
                while not (review.reached("verdicts") and review.reached("causes")):
                    await pilot.pause(0.02)
                await pilot.press("c")
                while not isinstance(app.screen, CausesScreen):
                    await pilot.pause(0.02)
                await pilot.pause()
                saved.append(out / "causes.svg")
                saved[-1].write_text(app.export_screenshot(title="evalpin review"))
                await pilot.press("escape", "slash", *LATE, "enter")
                while not review.reached("notes") or review.detail.decoding:
                    await pilot.pause(0.02)
                detail = review.detail
                at = next(n for n, t in enumerate(detail.lines) if "── case ·" in t.plain)
                detail.scroll_to(y=min(at, detail.max_scroll_y), animate=False)
                await pilot.pause()
                saved.append(out / "triage.svg")
                saved[-1].write_text(app.export_screenshot(title="evalpin review"))
        finally:
            os.chdir(cwd)
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "screenshots")
    parser.add_argument("--only", help="write only this file (the others go to a temp folder)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) if args.only else args.out.resolve()
        for path in asyncio.run(shoot(out)):
            if args.only is None:
                print(f"wrote {path}")
            elif path.name == args.only:
                target = args.out.resolve() / path.name
                target.write_text(path.read_text())
                print(f"wrote {target}")


if __name__ == "__main__":
    main()
