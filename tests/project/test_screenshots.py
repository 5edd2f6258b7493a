"""The pictures show today's demo and today's app (issue 43, point 9; issue 53, point 10).

Every picture in screenshots/ (the SVGs and the browser's PNGs) is made by
scripts/screenshots.py from the bundled demo, and carries the digest of what it was made
from (the demo's runs, fixtures and slots, the TUI's source, the served page's and the
HTML report's source, the scripts). A committed picture older than the demo or the app
fails here: regenerate them all with `python scripts/screenshots.py`.
"""

from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "screenshots"


def script():
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts/screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text_of(svg: str) -> str:
    runs = re.findall(r"<text [^>]*clip-path[^>]*>([^<]*)</text>", svg)
    return " ".join(html.unescape(run).replace("\xa0", " ") for run in runs)


def test_every_picture_is_one_the_script_makes() -> None:
    shots = script()
    assert {p.name for p in SHOTS.glob("*.svg")} == set(shots.NAMES)
    assert {p.name for p in SHOTS.glob("*.png")} == set(shots.PNG_NAMES)


def test_no_picture_is_older_than_the_demo_or_the_app() -> None:
    shots = script()
    digest = shots.inputs_digest(ROOT)
    stale = [
        name
        for name in shots.NAMES
        if shots.stamp_of((SHOTS / name).read_text(encoding="utf-8")) != digest
    ]
    stale += [
        name
        for name in shots.PNG_NAMES
        if shots.png_stamp_of((SHOTS / name).read_bytes()) != digest
    ]
    assert not stale, (
        f"made from an older demo or app: {', '.join(stale)} (python scripts/screenshots.py)"
    )


def test_a_png_stamp_is_read_back_and_the_png_stays_whole(tmp_path: Path) -> None:
    import struct
    import zlib

    shots = script()

    # A 1 x 1 PNG, made here: signature, IHDR, one IDAT, IEND.
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(b"\0\xff\0\0")) + chunk(b"IEND", b"")
    assert shots.png_stamp_of(png) is None
    stamped = shots.stamped_png(png, "ab" * 32)
    assert shots.png_stamp_of(stamped) == "ab" * 32
    at, kinds = 8, []  # every chunk's CRC holds: any PNG reader takes it
    while at < len(stamped):
        size = struct.unpack(">I", stamped[at : at + 4])[0]
        kind, body = stamped[at + 4 : at + 8], stamped[at + 8 : at + 8 + size]
        assert struct.unpack(">I", stamped[at + 8 + size : at + 12 + size])[0] == zlib.crc32(
            kind + body
        )
        kinds.append(kind)
        at += 12 + size
    assert kinds == [b"IHDR", b"tEXt", b"IDAT", b"IEND"]


def test_the_digest_moves_with_the_demo_and_the_app(tmp_path: Path) -> None:
    shots = script()
    for name in ("runs", "fixtures", "scripts"):
        (tmp_path / name).mkdir()
    (tmp_path / "runs" / "demo-night-1.jsonl").write_text("{}\n")
    (tmp_path / "fixtures" / "golden.jsonl").write_text("{}\n")
    (tmp_path / "slots.yaml").write_text("slots: {}\n")
    tui = tmp_path / "src" / "evalpin" / "tui"
    tui.mkdir(parents=True)
    (tui / "app.py").write_text("x = 1\n")
    (tmp_path / "scripts" / "screenshots.py").write_text("")
    first = shots.inputs_digest(tmp_path)
    for edit in (
        tmp_path / "runs" / "demo-night-1.jsonl",
        tmp_path / "fixtures" / "golden.jsonl",
        tui / "app.py",
    ):
        edit.write_text(edit.read_text() + " ")
        assert shots.inputs_digest(tmp_path) != first
        first = shots.inputs_digest(tmp_path)
    (tui / "evalpin.tcss").write_text("Screen {}\n")  # a new file of the app counts too
    assert shots.inputs_digest(tmp_path) != first


def test_the_readme_opens_on_todays_demo() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"!\[[^\]]*\]\((screenshots/[^)]+)\)", readme)
    assert first is not None and first.group(1) == "screenshots/banner.svg"
    shown = text_of((SHOTS / "banner.svg").read_text(encoding="utf-8"))
    # What the README's command opens on a fresh clone: night 2 beside the rotated slot.
    assert "runs/demo-night-2.jsonl" in shown and "runs/demo-night-2-lab_free_2.jsonl" in shown
    assert "90 of 90 common" in shown and "status-in-transit" in shown


def test_every_picture_shows_the_demo() -> None:
    demo_cases = {"status-in-transit", "status-late-apology", "runs/demo-", "demo-night"}
    for name in script().NAMES:
        shown = text_of((SHOTS / name).read_text(encoding="utf-8"))
        assert any(mark in shown for mark in demo_cases), name
        assert "orders/lookup-1001" not in shown and "30 of 30" not in shown, name
