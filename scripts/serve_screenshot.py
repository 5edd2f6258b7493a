"""Take screenshots/serve.png: `evalpin serve` of the demo's refused pair in headless Chromium.

Starts the server on a free port of 127.0.0.1, opens the page with the browser driver the
tests use (tests/browser.py), waits until the app has sent the refusal banner, and
captures the page. Run: python scripts/serve_screenshot.py [--out screenshots/serve.png]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser import Browser, ensure_chromium, free_port, stop, wait_for_port  # noqa: E402

PAIR = ["runs/demo-night-2.jsonl", "runs/demo-night-2-lab_free_2.jsonl"]  # from ROOT


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
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots" / "serve.png")
    args = parser.parse_args()
    binary, why = ensure_chromium()
    if binary is None:
        sys.exit(f"no headless Chromium: {why}")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "evalpin", "serve", "--port", str(port), *PAIR],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, server)
        with tempfile.TemporaryDirectory() as profile:
            asyncio.run(capture(binary, f"http://127.0.0.1:{port}/", args.out, Path(profile)))
    finally:
        stop(server)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
