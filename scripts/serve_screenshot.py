"""Browser screenshots in headless Chromium, with the driver the tests use (tests/browser.py).

- screenshots/serve.png: `evalpin serve` of the demo's refused pair (server on a free
  port of 127.0.0.1), taken once the app has sent the refusal banner;
- screenshots/report.png: `evalpin diff --html` of the two demo nights, opened from disk.

Run: python scripts/serve_screenshot.py [--out screenshots]
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

from tests.browser import Browser, ensure_chromium, free_port, stop, wait_for_port  # noqa: E402

PAIR = ["runs/demo-night-2.jsonl", "runs/demo-night-2-lab_free_2.jsonl"]  # from ROOT


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    binary, why = ensure_chromium()
    if binary is None:
        sys.exit(f"no headless Chromium: {why}")
    port = free_port()
    token = secrets.token_urlsafe(24)
    server = subprocess.Popen(
        [sys.executable, "-m", "evalpin", "serve", "--port", str(port), *PAIR],
        env={**os.environ, "EVALPIN_SERVE_TOKEN": token},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, server)
        with tempfile.TemporaryDirectory() as profile:
            url = f"http://127.0.0.1:{port}/?token={token}"
            asyncio.run(capture(binary, url, args.out / "serve.png", Path(profile)))
    finally:
        stop(server)
    with tempfile.TemporaryDirectory() as work:
        page = Path(work) / "report.html"
        nights = ["runs/demo-night-1.jsonl", "runs/demo-night-2.jsonl"]
        subprocess.run(
            [sys.executable, "-m", "evalpin", "diff", *nights, "--html", str(page)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            check=False,
        )
        profile = Path(work) / "profile"
        asyncio.run(capture_report(binary, page, args.out / "report.png", profile))
    print(f"wrote {args.out / 'serve.png'} and {args.out / 'report.png'}")


if __name__ == "__main__":
    main()
