"""Every picture in screenshots/, from the bundled demo (runs/, fixtures/, slots.yaml):
the review TUI's main states as SVGs with Textual's own export, then the browser's two
PNGs in headless Chromium (`scripts/serve_screenshot.py`). One command makes them all:

    python scripts/screenshots.py

(`--svg-only` skips Chromium; without Chromium the command writes the SVGs and fails.)

Deterministic: a copy of the demo in a folder of its own (names relative to it), a fixed
terminal size and theme, the cursor blink off, the launch panel fed progress events made
from the demo's own night 2 (no clock in them). Run: python scripts/screenshots.py
[--out screenshots] [--only NAME]

- banner.svg: what `evalpin review` opens on a fresh clone: night 2 beside the rotated
  slot, refused (the README's first picture);
- review.svg: the two nights side by side, the first regression selected;
- verdict.svg: the verdict screen of the two nights;
- launch.svg: the launch panel in the middle of a run;
- history.svg: the history screen (`h`) of the demo's runs, two runs of different series
  marked;
- review-80x24.svg: the two nights in an 80 x 24 terminal (list above detail, pins folded);
- causes.svg: what moved between the nights, by cause (`c`);
- triage.svg: `status-late-apology` with a review note, the case itself and its lost
  apology as a word diff;
- serve.png: `evalpin serve` of the refused pair in Chromium, the banner up;
- report.png: `evalpin diff --html` of the two nights, opened from disk.

Each picture carries the digest of what it was made from (`inputs_digest`: the demo runs,
fixtures and slots, the TUI's source, the served page's and the HTML report's source, and
these scripts; an SVG in a comment, a PNG in a `tEXt` chunk), so tests/test_screenshots.py
fails when a committed picture is older than the demo or the app it shows.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = (150, 44)
SMALL = (80, 24)
THEME = "textual-dark"
NAMES = (
    "banner.svg",
    "review.svg",
    "verdict.svg",
    "launch.svg",
    "history.svg",
    "review-80x24.svg",
    "causes.svg",
    "triage.svg",
)
NIGHT_1 = Path("runs/demo-night-1.jsonl")
NIGHT_2 = Path("runs/demo-night-2.jsonl")
ROTATED = Path("runs/demo-night-2-lab_free_2.jsonl")
PNG_NAMES = ("serve.png", "report.png")
LATE = "status-late-apology"
MARK = "<!-- evalpin-screenshot: made by scripts/screenshots.py from the bundled demo; inputs "


def inputs(root: Path = ROOT) -> Iterator[Path]:
    """What the pictures are made from, in a fixed order: the demo, the TUI, this script."""
    yield from sorted((root / "runs").glob("demo-*.jsonl"))
    yield from sorted(p for p in (root / "fixtures").rglob("*") if p.is_file())
    yield root / "slots.yaml"
    tui = root / "src" / "evalpin" / "tui"
    yield from sorted(p for p in tui.rglob("*") if p.suffix in (".py", ".tcss"))
    cli = root / "src" / "evalpin" / "cli"  # what the browser's pictures show
    for name in ("render_html.py", "serve_access.py", "serve_server.py", "commands/serve.py"):
        if (cli / name).is_file():
            yield cli / name
    yield root / "scripts" / "screenshots.py"
    if (root / "scripts" / "serve_screenshot.py").is_file():
        yield root / "scripts" / "serve_screenshot.py"


def inputs_digest(root: Path = ROOT) -> str:
    """sha256 over the relative path and bytes of every input (`inputs`)."""
    digest = hashlib.sha256()
    for path in inputs(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def stamped(svg: str, digest: str) -> str:
    """The SVG with the digest of its inputs, as a comment after its opening tag."""
    head, _, rest = svg.partition("\n")
    return f"{head}\n{MARK}sha256:{digest} -->\n{rest}"


def stamp_of(svg: str) -> str | None:
    """The digest an SVG was stamped with, or None."""
    for line in svg.splitlines()[:3]:
        if line.startswith(MARK):
            return line[len(MARK) :].removeprefix("sha256:").removesuffix(" -->")
    return None


_PNG_KEY = b"evalpin-screenshot"


def stamped_png(data: bytes, digest: str) -> bytes:
    """The PNG with the digest of its inputs in a `tEXt` chunk right after its header
    (IHDR), where any PNG reader skips it."""
    end_of_ihdr = 8 + 8 + 13 + 4  # signature, IHDR's length and type, its data, its CRC
    body = _PNG_KEY + b"\0" + f"sha256:{digest}".encode()
    chunk = len(body).to_bytes(4, "big") + b"tEXt" + body
    chunk += zlib.crc32(b"tEXt" + body).to_bytes(4, "big")
    return data[:end_of_ihdr] + chunk + data[end_of_ihdr:]


def png_stamp_of(data: bytes) -> str | None:
    """The digest a PNG was stamped with, or None."""
    at = 8
    while at + 8 <= len(data):
        size = int.from_bytes(data[at : at + 4], "big")
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + size]
        if kind == b"tEXt" and body.startswith(_PNG_KEY + b"\0"):
            return body[len(_PNG_KEY) + 1 :].decode().removeprefix("sha256:")
        if kind == b"IEND":
            return None
        at += 12 + size
    return None


def demo_copy(folder: Path) -> None:
    """The bundled demo (runs, fixtures, slots) in `folder`, as on a fresh clone."""
    shutil.copytree(ROOT / "fixtures", folder / "fixtures")
    (folder / "runs").mkdir()
    for run in sorted((ROOT / "runs").glob("demo-*.jsonl")):
        shutil.copy(run, folder / "runs" / run.name)
    shutil.copy(ROOT / "slots.yaml", folder / "slots.yaml")


def launch_events(folder: Path, done: int) -> list[dict]:
    """A replay of night 2's recording, `done` cases in: the events `evalpin run
    --progress json` prints, made from the demo run's own records."""
    lines = (folder / NIGHT_2).read_text().splitlines()
    records = [json.loads(line) for line in lines if '"record":"case"' in line]
    total = len(records)
    events: list[dict] = [
        {
            "event": "start",
            "out": "runs/2026-12-04-lab_free_1-5f1592d0.jsonl",
            "run_id": "r",
            "total": total,
            "todo": total,
            "network": "n/a",
        }
    ]
    passed = failed = 0
    for k, rec in enumerate(records[:done]):
        passed, failed = passed + rec["pass"], failed + (not rec["pass"])
        events.append(
            {
                "event": "case",
                "case_id": rec["case_id"],
                "seed": rec["seed"],
                "pass": rec["pass"],
                "reasons": rec["reasons"],
                "done": k + 1,
                "total": total,
                "passed": passed,
                "failed": failed,
                "elapsed": round(0.05 * (k + 1), 2),
            }
        )
    return events


async def shoot(out: Path, digest: str) -> list[Path]:
    from evalpin.run import events
    from evalpin.tui.app import make_app
    from evalpin.tui.screens.history import HistoryScreen
    from evalpin.tui.screens.launch import LaunchScreen

    saved: list[Path] = []

    def save(app, name: str) -> None:
        path = out / name
        path.write_text(stamped(app.export_screenshot(title="evalpin review"), digest))
        saved.append(path)

    async def settle(app, pilot, what: str = "verdicts") -> None:
        """Until loading reached `what` and the detail shows its case."""
        review = app.review
        while not review.reached(what) or review.detail.decoding:
            await pilot.pause(0.02)
        await pilot.pause()

    def new(left: Path, right: Path, folder: Path):
        app = make_app(left, right, cursor_blink=False, cwd=folder, theme=THEME)
        app.animation_level = "none"
        return app

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        demo_copy(folder)
        cwd = Path.cwd()
        os.chdir(folder)
        try:
            app = new(NIGHT_2, ROTATED, folder)  # what `evalpin review` opens
            async with app.run_test(size=SIZE) as pilot:
                await settle(app, pilot)  # the screen behind the banner, loaded
                while not app.review.reached("banner"):
                    await pilot.pause(0.02)
                save(app, "banner.svg")
            app = new(NIGHT_1, NIGHT_2, folder)
            async with app.run_test(size=SMALL) as pilot:
                await settle(app, pilot)
                save(app, "review-80x24.svg")
            app = new(NIGHT_1, NIGHT_2, folder)
            async with app.run_test(size=SIZE) as pilot:
                await settle(app, pilot)
                save(app, "review.svg")
                await pilot.press("v")
                await pilot.pause()
                save(app, "verdict.svg")
                await pilot.press("escape", "l")
                while not isinstance(app.screen, LaunchScreen):
                    await pilot.pause(0.02)
                await pilot.pause()  # mounted: its own first status line said
                panel = app.screen
                for line in launch_events(folder, 36):
                    event = events.decode(json.dumps(line))
                    assert event is not None, line
                    panel.handle_event(event)
                panel.query_one("#launch-start").disabled = True
                panel.query_one("#launch-cancel").disabled = False
                await pilot.pause()
                save(app, "launch.svg")
                await pilot.press("escape", "h")
                while not (isinstance(app.screen, HistoryScreen) and app.screen.history):
                    await pilot.pause(0.02)
                # Mark night 2 and the rotated slot's night: two series, a break between.
                await pilot.press("end", "space", "up", "space")
                await pilot.pause()
                save(app, "history.svg")
        finally:
            os.chdir(cwd)
    saved += await shoot_triage(out, digest)
    return saved


async def shoot_triage(out: Path, digest: str) -> list[Path]:
    """The two nights' causes, and the detail of the case that lost its apology, a review
    note on it."""
    from evalpin.core.read.notes import TICKET, append_note, make_note
    from evalpin.tui.app import make_app
    from evalpin.tui.screens.causes import CausesScreen

    saved = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        demo_copy(folder)
        fixture_hash = next(
            rec["fixture_hash"]
            for rec in map(json.loads, (folder / NIGHT_2).read_text().splitlines())
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
            app = make_app(NIGHT_1, NIGHT_2, cursor_blink=False, cwd=folder, theme=THEME)
            async with app.run_test(size=SIZE) as pilot:
                review = app.review
                while not (review.reached("verdicts") and review.reached("causes")):
                    await pilot.pause(0.02)
                await pilot.press("c")
                while not isinstance(app.screen, CausesScreen):
                    await pilot.pause(0.02)
                await pilot.pause()
                saved.append(out / "causes.svg")
                saved[-1].write_text(stamped(app.export_screenshot(title="evalpin review"), digest))
                await pilot.press("escape", "slash", *LATE, "enter")
                while not review.reached("notes") or review.detail.decoding:
                    await pilot.pause(0.02)
                detail = review.detail
                at = next(n for n, t in enumerate(detail.lines) if "── case ·" in t.plain)
                detail.scroll_to(y=min(at, detail.max_scroll_y), animate=False)
                await pilot.pause()
                saved.append(out / "triage.svg")
                saved[-1].write_text(stamped(app.export_screenshot(title="evalpin review"), digest))
        finally:
            os.chdir(cwd)
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--only", help="write only this file (the others go to a temp folder)")
    parser.add_argument("--svg-only", action="store_true", help="no Chromium: the SVGs only")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    digest = inputs_digest()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) if args.only else args.out.resolve()
        made = asyncio.run(shoot(out, digest))
        if not args.svg_only and (args.only is None or args.only in PNG_NAMES):
            sys.path.insert(0, str(ROOT / "scripts"))
            from serve_screenshot import capture_all

            made += capture_all(out, digest)
        for path in made:
            if args.only is None:
                print(f"wrote {path}")
            elif path.name == args.only:
                target = args.out.resolve() / path.name
                target.write_bytes(path.read_bytes())
                print(f"wrote {target}")


if __name__ == "__main__":
    main()
