"""`evalpin serve`: the review TUI in a real headless Chromium, and its guards.

The browser test starts `evalpin serve` on a free port of 127.0.0.1, opens the page in
Debian's Chromium (installed by `tests/browser.py` where it can be, skipped with the
reason where not) and reads what the app sends to the page over its WebSocket: the
refusal banner for the demo's refused pair, and a new selected case after a key press.
Server and browser run in their own process groups, killed at the end.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evalpin.cli.commands.serve import is_loopback, review_command, served_environment
from evalpin.tui.screens.launch import LaunchScreen
from evalpin.tui.screens.review import LAUNCH_OFF_TEXT
from tests.browser import Browser, ensure_chromium, free_port, stop, wait_for_port
from tests.clirun import cli
from tests.tuikit import SIZE, new_app, screen_text, settle

RUNS = Path(__file__).parent.parent / "runs"
NIGHT2, FREE2 = RUNS / "demo-night-2.jsonl", RUNS / "demo-night-2-lab_free_2.jsonl"
SECRET = "sk-test-serve-0123456789abcdef"
_SGR = re.compile(r"\x1b\[[0-9;]*m")
# The detail pane's header: a case id, spaces, and how the two sides compare.
_DETAIL = re.compile(r"([a-z][a-z0-9-]+) {2,}(?:differs|same)\b")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.10", False),
        ("evalpin.example", False),
    ],
)
def test_only_loopback_hosts_count_as_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_off_loopback_the_served_environment_holds_no_secret():
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "COMPLETION_API_KEY": SECRET,
        "GITHUB_TOKEN": SECRET,
        "DB_PASSWORD": SECRET,
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "SOMETHING_ELSE": SECRET,
    }
    served = served_environment(environ, loopback=False)
    assert served == {"PATH": "/usr/bin", "HOME": "/root"}
    assert served_environment(environ, loopback=True) == environ


def test_off_loopback_the_served_command_turns_the_launch_panel_off():
    assert "--no-launch" in review_command((NIGHT2,), launch=False)
    assert "--no-launch" not in review_command((NIGHT2,), launch=True)
    assert review_command((Path("runs/a b.jsonl"),), launch=True).endswith(
        "review 'runs/a b.jsonl'"
    )


async def test_with_launch_off_the_screen_says_so_and_l_opens_nothing():
    app = new_app(NIGHT2, launch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert LAUNCH_OFF_TEXT in screen_text(app)
        await pilot.press("l")
        await pilot.pause()
        assert not any(isinstance(s, LaunchScreen) for s in app.screen_stack)


def test_serve_refuses_an_unreadable_run_before_serving(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    result = cli(capsys, "serve", "--port", str(free_port()), str(bad))
    assert result.code == 3
    assert "bad.jsonl" in result.err


@pytest.fixture(scope="module")
def chromium() -> str:
    binary, why = ensure_chromium()
    if binary is None:
        pytest.skip(f"headless Chromium unavailable: {why}")
    return binary


@pytest.fixture
def served(tmp_path):
    """`evalpin serve` of the demo's refused pair on a free loopback port, with a fake
    secret in its environment."""
    port = free_port()
    env = {**os.environ, "COMPLETION_API_KEY": SECRET}
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalpin", "serve", "--port", str(port), str(NIGHT2), str(FREE2)],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop(proc)
        log.close()


def detail_ids(text: str) -> list[str]:
    return _DETAIL.findall(_SGR.sub("", text))


async def test_the_demo_in_a_browser_banner_then_a_key_moves_the_selection(
    chromium, served, tmp_path
):
    browser = Browser(chromium, tmp_path / "profile")
    try:
        await browser.connect()
        await browser.send("Page.navigate", url=served)
        await browser.wait_for("document.querySelector('.textual-terminal') !== null")
        await browser.wait_received("REFUSE_DIFF: triple mismatch, not a prompt regression")
        await browser.wait_received("lab_free_2")
        await browser.screenshot(tmp_path / "banner.png")

        since = len(browser.frames)
        await browser.key("b", "KeyB", 66)  # browse the refused pair as a backend delta
        await browser.wait_received("BACKEND DELTA", since)

        async def selected() -> str:
            await browser.wait_for("true")  # one round trip: frames so far are in
            ids = detail_ids(browser.received())
            assert ids, "no case detail reached the page"
            return ids[-1]

        before = await selected()
        since = len(browser.frames)
        await browser.key("ArrowDown", "ArrowDown", 40)
        deadline = asyncio.get_running_loop().time() + 30
        while not [i for i in detail_ids(browser.received(since)) if i != before]:
            assert asyncio.get_running_loop().time() < deadline, "selection never moved"
            await asyncio.sleep(0.2)
        assert await selected() != before
        everything = browser.received() + str(await browser.evaluate("document.body.innerHTML"))
        assert SECRET not in everything
        assert (tmp_path / "banner.png").stat().st_size > 10_000
    finally:
        await browser.close()


async def test_the_html_report_opens_in_chromium_styled_and_inert(chromium, tmp_path, capsys):
    """`diff --html` of the refused pair, opened from disk: the banner is there, its
    inline stylesheet passed the page's own CSP (the hash matches), and a hostile case id
    is text, not a tag."""
    page = tmp_path / "report.html"
    assert cli(capsys, "diff", str(NIGHT2), str(FREE2), "--html", str(page)).code == 2
    browser = Browser(chromium, tmp_path / "profile")
    try:
        await browser.connect()
        await browser.send("Page.navigate", url=page.as_uri())
        banner = "document.querySelector('#refusal')"
        text = await browser.wait_for(f"{banner} && {banner}.innerText")
        assert "REFUSE_DIFF: triple mismatch, not a prompt regression" in text
        colour = await browser.evaluate(f"getComputedStyle({banner}).borderTopColor")
        assert colour == "rgb(207, 34, 46)"  # the stylesheet applied under the CSP
        assert await browser.evaluate("document.scripts.length") == 0
        await browser.screenshot(tmp_path / "report.png")
    finally:
        await browser.close()


def test_without_textual_serve_the_command_says_how_to_install_it(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)  # import now fails
    result = cli(capsys, "serve", "--port", str(free_port()), str(NIGHT2))
    assert result.code == 3
    assert "pip install 'evalpin[serve]'" in result.err
