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
from tests.capabilities import need
from tests.clirun import cli
from tests.tuikit import SIZE, new_app, screen_text, settle

RUNS = Path(__file__).parents[2] / "runs"
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
        need("chromium", why)
    return binary


@pytest.fixture
def served(tmp_path):
    """`evalpin serve` of the demo's refused pair on a free loopback port, with a fake
    secret in its environment."""
    port = free_port()
    env = {**os.environ, "COMPLETION_API_KEY": SECRET, "EVALPIN_SERVE_TOKEN": TOKEN}
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
        yield f"http://127.0.0.1:{port}/?token={TOKEN}"
    finally:
        stop(proc)
        log.close()


TOKEN = "t0ken-for-the-test"


def _serve(tmp_path: Path, *extra: str, token: str | None = TOKEN):
    """`evalpin serve` of the demo pair on a free port, as a process; (proc, port)."""
    port = free_port()
    env = dict(os.environ)
    env.pop("EVALPIN_SERVE_TOKEN", None)
    if token is not None:
        env["EVALPIN_SERVE_TOKEN"] = token
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalpin", "serve", "--port", str(port), *extra, str(NIGHT2)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    wait_for_port(port, proc)
    return proc, port


def _get(url: str, cookie: str | None = None) -> tuple[int, dict, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def test_a_served_review_needs_its_token(tmp_path: Path) -> None:
    proc, port = _serve(tmp_path)
    try:
        base = f"http://127.0.0.1:{port}"
        for path in ("/", "/ws", "/static/css/xterm.css", "/?token=wrong"):
            status, _, body = _get(base + path)
            assert status == 403 and "needs its token" in body, path
        status, headers, _ = _get(f"{base}/?token={TOKEN}")
        assert status == 200
        cookie = headers["Set-Cookie"].split(";")[0]
        assert cookie == f"evalpin_serve_token={TOKEN}" and "HttpOnly" in headers["Set-Cookie"]
        assert _get(base + "/", cookie)[0] == 200  # the cookie alone, after the first visit
    finally:
        stop(proc)
    assert f"open http://127.0.0.1:{port}/?token={TOKEN}" in proc.stderr.read()


def test_without_a_token_set_a_random_one_is_printed(tmp_path: Path) -> None:
    proc, port = _serve(tmp_path, token=None)
    try:
        assert _get(f"http://127.0.0.1:{port}/")[0] == 403
    finally:
        stop(proc)
    printed = re.search(r"\?token=([\w-]+)", proc.stderr.read())
    assert printed is not None and len(printed.group(1)) >= 24


def test_no_token_is_for_loopback_only(capsys) -> None:
    r = cli(capsys, "serve", "--host", "0.0.0.0", "--no-token", "--port", str(free_port()))
    assert r.code == 3 and "loopback only" in r.err


async def _open_sessions(port: int, n: int) -> list[int]:
    import aiohttp

    statuses = []
    async with aiohttp.ClientSession(cookies={"evalpin_serve_token": TOKEN}) as session:
        sockets = []
        for _ in range(n):
            try:
                ws = await session.ws_connect(
                    f"ws://127.0.0.1:{port}/ws?width=80&height=24",
                    origin=f"http://127.0.0.1:{port}",  # as the served page's would be
                )
                sockets.append(ws)
                statuses.append(101)
            except aiohttp.WSServerHandshakeError as exc:
                statuses.append(exc.status)

        async def until_closed():
            while True:  # the app's output flows on; the browser says nothing
                message = await sockets[0].receive()
                if message.type.name in ("CLOSE", "CLOSED", "CLOSING"):
                    return message.type.name

        statuses.append(await asyncio.wait_for(until_closed(), timeout=30))
        for ws in sockets:
            await ws.close()
    return statuses


def test_sessions_are_capped_and_idle_ones_closed(tmp_path: Path) -> None:
    proc, port = _serve(tmp_path, "--max-sessions", "1", "--idle", "2")
    try:
        statuses = asyncio.run(_open_sessions(port, 2))
    finally:
        stop(proc)
    assert statuses[:2] == [101, 503]
    assert statuses[2] in ("CLOSE", "CLOSED", "CLOSING")


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
            # The detail pane fills from a worker, after the banner's repaint.
            deadline = asyncio.get_running_loop().time() + 30
            while not detail_ids(browser.received()):
                assert asyncio.get_running_loop().time() < deadline, "no case detail came"
                await asyncio.sleep(0.2)
            return detail_ids(browser.received())[-1]

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
    checkout = Path(__file__).resolve().parents[2]  # evalpin runs from this checkout
    assert f"pip install '{checkout}[serve]'" in result.err
    # From a wheel the checkout is unknown: the extra's own packages, by their names.
    monkeypatch.setattr("evalpin.core.extras.checkout", lambda: None)
    result = cli(capsys, "serve", "--port", str(free_port()), str(NIGHT2))
    assert result.code == 3 and "pip install 'textual-serve<2,>=1.1'" in result.err


# -- issue 40: only the review's own page is answered, and the token is never logged ----


def _serve_logged(tmp_path: Path) -> tuple[subprocess.Popen, int, Path]:
    """`evalpin serve` with everything it prints (its logs included) kept in a file."""
    port = free_port()
    log = tmp_path / "serve.log"
    env = {**os.environ, "EVALPIN_SERVE_TOKEN": TOKEN}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evalpin", "serve", "--port", str(port), str(NIGHT2)],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    wait_for_port(port, proc)
    return proc, port, log


async def _knock(port: int) -> dict[str, object]:
    """What the server answers a client that holds the cookie, from elsewhere and from
    its own page: websocket handshakes by Origin, and pages by Host, Origin and fetch
    metadata."""
    import aiohttp

    own = f"http://127.0.0.1:{port}"
    other_port = free_port()
    answers: dict[str, object] = {}
    # The jar takes the cookie of an IP address host, as a browser does.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        async with session.get(f"{own}/?token={TOKEN}") as first:  # the owner's visit
            answers["first"] = first.status
            answers["framing"] = first.headers.get("X-Frame-Options")
        websockets = {
            "evil": "http://evil.example",
            "other-port": f"http://127.0.0.1:{other_port}",
            "localhost": f"http://localhost:{port}",
            "https": f"https://127.0.0.1:{port}",
            "none": None,
            "own": own,
        }
        for name, origin in websockets.items():
            try:
                ws = await session.ws_connect(f"ws://127.0.0.1:{port}/ws", origin=origin)
                answers[f"ws:{name}"] = 101
                await ws.close()
            except aiohttp.WSServerHandshakeError as exc:
                answers[f"ws:{name}"] = exc.status
        pages = {
            "origin-other-port": {"Origin": f"http://127.0.0.1:{other_port}"},
            "origin-evil": {"Origin": "http://evil.example"},
            "rebound-host": {"Host": f"evil.example:{port}"},
            "other-port-host": {"Host": f"127.0.0.1:{other_port}"},
            "same-site": {"Sec-Fetch-Site": "same-site"},
            "cross-site": {"Sec-Fetch-Site": "cross-site"},
            "own-origin": {"Origin": own, "Sec-Fetch-Site": "same-origin"},
            "typed": {"Sec-Fetch-Site": "none"},
        }
        for name, headers in pages.items():
            for path in ("/", "/static/css/xterm.css"):
                async with session.get(own + path, headers=headers) as response:
                    answers[f"{path}:{name}"] = response.status
    return answers


def test_only_the_served_origin_is_answered(tmp_path: Path) -> None:
    """The cookie alone does not open it: a websocket or a page asked for by another
    origin (another port of 127.0.0.1 is another origin but the same site, so the
    browser sends the SameSite=Strict cookie), a rebound host name, or a cross-site fetch
    is refused with 403; the served page itself is answered."""
    proc, port, _ = _serve_logged(tmp_path)
    try:
        answers = asyncio.run(_knock(port))
    finally:
        stop(proc)
    first, framing = answers.pop("first"), answers.pop("framing")
    refused = {k: v for k, v in answers.items() if "own" not in k and "typed" not in k}
    assert set(refused.values()) == {403}, refused
    assert (first, framing) == (200, "DENY")  # and no other page may frame it
    assert {k: v for k, v in answers.items() if k not in refused} == {
        "ws:own": 101,
        "/:own-origin": 200,
        "/static/css/xterm.css:own-origin": 200,
        "/:typed": 200,
        "/static/css/xterm.css:typed": 200,
    }


def test_the_token_never_reaches_a_log_line(tmp_path: Path) -> None:
    """Visits with the token in the query (and in the Referer of the page's assets):
    the one line that shows the token is the URL printed for the owner at start."""
    proc, port, log = _serve_logged(tmp_path)
    try:
        base = f"http://127.0.0.1:{port}"
        for path in ("/", "/?token=wrong-guess", f"/?token={TOKEN}", f"/?fontsize=9&token={TOKEN}"):
            _get(base + path)
        referer = {"Cookie": f"evalpin_serve_token={TOKEN}", "Referer": f"{base}/?token={TOKEN}"}
        import urllib.request

        request = urllib.request.Request(base + "/static/css/xterm.css", headers=referer)
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
    finally:
        stop(proc)
    printed = f"open {base}/?token={TOKEN}\n"
    text = log.read_text()
    assert text.startswith(printed)
    assert "Serving" not in text  # textual-serve's own URL, without the token (a 403)
    logged = text[len(printed) :]
    assert logged.count("HTTP/1.1") == 5  # the access log is on: a line per request
    # The console wraps long lines: a token cut in two must not slip through either.
    assert TOKEN not in re.sub(r"\s+", "", logged)
    assert "wrong-guess" not in re.sub(r"\s+", "", logged)


CROSS_PORT_PAGE = """<!doctype html><script>
window.result = "pending";
const ws = new WebSocket("ws://127.0.0.1:PORT/ws?width=80&height=24");
ws.onopen = () => { window.result = "open"; };
ws.onmessage = () => { window.result = "read"; };
ws.onerror = () => { if (window.result === "pending") window.result = "refused"; };
ws.onclose = () => { if (window.result === "pending") window.result = "refused"; };
</script>"""


async def test_a_page_on_another_port_cannot_open_the_websocket(chromium, tmp_path):
    """The owner opened the token URL (the browser now holds the cookie); a page served
    from another port of 127.0.0.1 opens the review's websocket: refused."""
    import http.server
    import threading

    proc, port, _ = _serve_logged(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(CROSS_PORT_PAGE.replace("PORT", str(port)))

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(site), **kwargs)

        def log_message(self, *args) -> None:
            pass

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    browser = Browser(chromium, tmp_path / "profile")
    try:
        await browser.connect()
        await browser.send("Page.navigate", url=f"http://127.0.0.1:{port}/?token={TOKEN}")
        await browser.wait_for("document.querySelector('.textual-terminal') !== null")
        await browser.send("Page.navigate", url=f"http://127.0.0.1:{other.server_port}/")
        result = await browser.wait_for("window.result !== 'pending' && window.result")
        assert result == "refused"
    finally:
        await browser.close()
        other.shutdown()
        other.server_close()
        stop(proc)


# -- issue 50: oversized and malformed requests, and Host forms no browser sends --------


def _raw(port: int, head: str) -> bytes:
    """One request written as given (no client library would send these), the whole
    answer read."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode("latin-1"))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def test_a_request_too_big_or_malformed_carries_the_token_nowhere(tmp_path: Path) -> None:
    """A Cookie or URL past aiohttp's 8 KiB line limit, too many headers, a control
    character in a header: each holds the token; each gets a 400 that says its status
    alone, and the log names the refusal without a byte of the request."""
    proc, port, log = _serve_logged(tmp_path)
    host = f"127.0.0.1:{port}"
    pad = "q" * 9000
    heads = {
        "cookie": f"GET / HTTP/1.1\r\nHost: {host}\r\nCookie: {COOKIE_NAME}={TOKEN}; x={pad}\r\n",
        "url-first": f"GET /?token={TOKEN}&x={pad} HTTP/1.1\r\nHost: {host}\r\n",
        "url-last": f"GET /static/{pad}?token={TOKEN} HTTP/1.1\r\nHost: {host}\r\n",
        "header-name": f"GET / HTTP/1.1\r\nHost: {host}\r\nX-{TOKEN}{pad}: 1\r\n",
        "control": f"GET / HTTP/1.1\r\nHost: {host}\r\nX-Note: {TOKEN}\x01\r\n",
        "many": f"GET /?token={TOKEN} HTTP/1.1\r\nHost: {host}\r\n"
        + "".join(f"X-{i}: {TOKEN}\r\n" for i in range(200)),
        "method": f"G\x00T /?token={TOKEN} HTTP/1.1\r\nHost: {host}\r\n",
        "version": f"GET /?token={TOKEN} HTTP/9.{pad}\r\nHost: {host}\r\n",
    }
    try:
        answers = {k: _raw(port, h + "Connection: close\r\n\r\n") for k, h in heads.items()}
    finally:
        stop(proc)
    for name, answer in answers.items():
        assert _status(answer) == 400, name
        assert TOKEN.encode() not in answer, name
        assert answer.endswith(b"\r\n\r\n400: Bad Request\n"), name
    printed, logged = log.read_text().split("\n", 1)
    assert printed == f"open http://{host}/?token={TOKEN}"
    flat = re.sub(r"\s+", "", logged)
    assert TOKEN not in flat and "q" * 40 not in flat  # no request bytes at all
    assert "Traceback" not in logged
    assert logged.count("refused a request from 127.0.0.1: 400") == len(heads)


COOKIE_NAME = "evalpin_serve_token"


def test_only_the_host_forms_a_browser_sends_are_answered(tmp_path: Path) -> None:
    """The token given, the Host (and Origin, and the request target) spelled as no
    browser spells the served origin: 403, no cookie set, nothing of the request echoed."""
    proc, port, _ = _serve_logged(tmp_path)
    own = f"127.0.0.1:{port}"
    forms = {
        "userinfo": {"Host": f"evil@{own}"},
        "userinfo-empty": {"Host": f"@{own}"},
        "path": {"Host": f"{own}/x"},
        "query": {"Host": f"{own}?a"},
        "zero-port": {"Host": f"127.0.0.1:0{port}"},
        "plus-port": {"Host": f"127.0.0.1:+{port}"},
        "short-address": {"Host": f"127.1:{port}"},
        "padded-address": {"Host": f"127.000.000.001:{port}"},
        "hex-address": {"Host": f"0x7f.0.0.1:{port}"},
        "decimal-address": {"Host": f"2130706433:{port}"},
        "trailing-dot": {"Host": f"127.0.0.1.:{port}"},
        "empty-port": {"Host": "127.0.0.1:"},
        "two-hosts": {"Host": [own, own]},
        "no-host": {},
        "origin-userinfo": {"Host": own, "Origin": f"http://evil@{own}"},
        "origin-path": {"Host": own, "Origin": f"http://{own}/"},
        "origin-zero-port": {"Host": own, "Origin": f"http://127.0.0.1:0{port}"},
        "origin-null": {"Host": own, "Origin": "null"},
        "two-origins": {"Host": own, "Origin": [f"http://{own}", f"http://{own}"]},
    }
    targets = {
        "absolute-other": f"http://evil.example/?token={TOKEN}",
        "absolute-own": f"http://{own}/?token={TOKEN}",
        "asterisk": "*",
    }

    def head(target: str, headers: dict) -> str:
        lines = [f"GET {target} HTTP/1.1"]
        for name, value in headers.items():
            lines += [f"{name}: {v}" for v in (value if isinstance(value, list) else [value])]
        return "\r\n".join([*lines, "Connection: close", "", ""])

    try:
        answers = {k: _raw(port, head(f"/?token={TOKEN}", h)) for k, h in forms.items()}
        answers |= {k: _raw(port, head(t, {"Host": own})) for k, t in targets.items()}
        answers["own"] = _raw(port, head(f"/?token={TOKEN}", {"Host": own}))
        answers["own-origin"] = _raw(
            port, head(f"/?token={TOKEN}", {"Host": own, "Origin": f"http://{own}"})
        )
        cookie = {"Host": own, "Cookie": f"{COOKIE_NAME}={TOKEN}"}
        download = _raw(port, head(f"/download/{TOKEN}", cookie))  # textual-serve's names it
    finally:
        stop(proc)
    assert _status(download) == 404 and TOKEN.encode() not in download
    for name in ("own", "own-origin"):
        assert _status(answers.pop(name)) == 200, name
    for name, answer in answers.items():
        assert _status(answer) in (400, 403), name
        assert TOKEN.encode() not in answer, name  # neither a cookie nor an echo
