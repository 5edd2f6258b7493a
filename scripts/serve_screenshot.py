"""Browser screenshots in headless Chromium, with the driver the tests use (tests/browser.py),
from a copy of the bundled demo in a folder of its own (as the SVGs are made):

- screenshots/serve.png: `evalpin serve` of the demo's refused pair (server on a free
  port of 127.0.0.1), taken once the app has sent the refusal banner;
- screenshots/report.png: `evalpin diff --html` of the two demo nights, opened from disk.

Each is stamped with the digest of what the pictures are made from (a PNG `tEXt` chunk,
`screenshots.stamped_png`). `python scripts/screenshots.py` makes these with every other
picture; this script makes these two alone: python scripts/serve_screenshot.py [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from screenshots import (  # noqa: E402
    NIGHT_1,
    NIGHT_2,
    ROTATED,
    demo_copy,
    inputs_digest,
    stamped_png,
)
from tests.browser import Browser, ensure_chromium, free_port, stop, wait_for_port  # noqa: E402


async def capture_report(binary: str, page: Path, out: Path, profile: Path) -> None:
    browser = Browser(binary, profile, width=1280, height=900)
    try:
        await browser.connect()
        await browser.send("Page.navigate", url=page.as_uri())
        await browser.wait_for("document.querySelector('#call') !== null")
        await browser.screenshot(out)
    finally:
        await browser.close()


async def capture(binary: str, url: str, out: Path, profile: Path) -> None:
    browser = Browser(binary, profile, width=1280, height=760)
    try:
        await browser.connect()
        await browser.send("Page.navigate", url=url)
        await browser.wait_received("REFUSE_DIFF")
        await browser.wait_received("browse as backend delta")
        await asyncio.sleep(1.0)  # let the page's fade-in transition finish painting
        await browser.screenshot(out)
    finally:
        await browser.close()


def capture_all(out: Path, digest: str) -> list[Path]:
    """serve.png and report.png in `out`, stamped with `digest`; SystemExit without a
    headless Chromium (saying why)."""
    binary, why = ensure_chromium()
    if binary is None:
        sys.exit(f"no headless Chromium for serve.png and report.png: {why}")
    made = []
    with tempfile.TemporaryDirectory() as work:
        demo = Path(work) / "demo"
        demo.mkdir()
        demo_copy(demo)
        port = free_port()
        token = secrets.token_urlsafe(24)
        env = {**os.environ, "EVALPIN_SERVE_TOKEN": token}
        server = subprocess.Popen(
            [sys.executable, "-m", "evalpin", "serve", "--port", str(port), NIGHT_2, ROTATED],
            env=env,
            cwd=demo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_for_port(port, server)
            url = f"http://127.0.0.1:{port}/?token={token}"
            asyncio.run(capture(binary, url, out / "serve.png", Path(work) / "serve-profile"))
        finally:
            stop(server)
        page = Path(work) / "report.html"
        subprocess.run(
            [sys.executable, "-m", "evalpin", "diff", NIGHT_1, NIGHT_2, "--html", str(page)],
            cwd=demo,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        profile = Path(work) / "report-profile"
        asyncio.run(capture_report(binary, page, out / "report.png", profile))
    for name in ("serve.png", "report.png"):
        path = out / name
        path.write_bytes(stamped_png(path.read_bytes(), digest))
        made.append(path)
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    for path in capture_all(args.out.resolve(), inputs_digest()):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
