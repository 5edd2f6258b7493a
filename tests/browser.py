"""A real headless Chromium driven over the DevTools protocol, for the served-app tests.

Chromium comes from Debian's `chromium` package: `ensure_chromium()` installs it with apt
when running as root where apt works, and otherwise returns None so the caller skips with
a clear message. The DevTools port is chosen by Chromium (`--remote-debugging-port=0`)
and read back from its profile folder; the browser's whole process group is killed on
close. The WebSocket client is aiohttp's (textual-serve depends on it).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import aiohttp

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def ensure_chromium() -> tuple[str | None, str]:
    """The browser's path, installing Debian's package if missing and possible; else
    None and why not."""
    found = find_chromium()
    if found:
        return found, ""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return None, "chromium not installed and apt-get not usable (need root and apt)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(argv, env=env, capture_output=True, check=False, timeout=900)
        if done.returncode != 0:
            return None, f"`{' '.join(argv)}` failed: {done.stderr.decode()[-300:]}"
    found = find_chromium()
    return (found, "") if found else (None, "apt installed chromium but no binary found")


def free_port() -> int:
    """A port free on 127.0.0.1 right now (the OS picks it)."""
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until something accepts on 127.0.0.1:port; fails early if `proc` died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout} s")


def stop(proc: subprocess.Popen) -> None:
    """End a process started with start_new_session=True, and its whole group."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


class Browser:
    """One headless Chromium with one page, driven through the DevTools protocol."""

    def __init__(self, binary: str, profile: Path, width: int = 1280, height: int = 800):
        self.proc = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",  # tests run as root in a container
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            # Chromium keeps its crash reports under the XDG config folder whatever the
            # profile: pointed into the profile, nothing is written to the host's home.
            env={
                **os.environ,
                "HOME": str(profile),
                "XDG_CONFIG_HOME": str(profile / "config"),
                "XDG_CACHE_HOME": str(profile / "cache"),
            },
        )
        self.profile = profile
        self._ids = itertools.count(1)
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Future | None = None
        self._waiting: dict[int, asyncio.Future] = {}
        self.frames: list[str] = []

    async def connect(self, timeout: float = 60.0) -> None:
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError("chromium wrote no DevToolsActivePort")
            await asyncio.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        self._session = aiohttp.ClientSession()
        async with self._session.get(f"http://127.0.0.1:{port}/json/list") as resp:
            targets = await resp.json(content_type=None)
        page = next(t for t in targets if t.get("type") == "page")
        self._ws = await self._session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.ensure_future(self._read())
        await self.send("Network.enable")
        await self.send("Page.enable")

    async def _read(self) -> None:
        """Route replies to their waiting calls; keep events (WebSocket frames) in order."""
        assert self._ws is not None
        async for raw in self._ws:
            msg = json.loads(raw.data)
            if "id" in msg:
                future = self._waiting.pop(msg["id"], None)
                if future is not None and not future.done():
                    future.set_result(msg)
            elif msg.get("method") == "Network.webSocketFrameReceived":
                self.frames.append(_frame_text(msg["params"]["response"]))

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        assert self._ws is not None
        ident = next(self._ids)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        msg = await asyncio.wait_for(future, 60)
        if "error" in msg:
            raise RuntimeError(f"{method}: {msg['error']}")
        return msg.get("result", {})

    def received(self, since: int = 0) -> str:
        """Everything the served app sent to the page (terminal output) since frame
        number `since`, as text."""
        return "".join(self.frames[since:])

    async def wait_received(self, needle: str, since: int = 0, timeout: float = 60.0) -> None:
        """Until the app has sent `needle` to the page (a condition, not a sleep)."""
        deadline = time.monotonic() + timeout
        while needle not in self.received(since):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the page never received {needle!r}")
            await asyncio.sleep(0.2)

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    async def wait_for(self, expression: str, timeout: float = 60.0) -> Any:
        """Poll a JavaScript expression until it is truthy (a condition, not a sleep)."""
        deadline = time.monotonic() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"still false after {timeout} s: {expression}")
            await asyncio.sleep(0.25)

    async def key(self, key: str, code: str, key_code: int) -> None:
        """Press a key in the page's terminal (xterm.js reads its helper textarea)."""
        await self.evaluate(
            "(document.querySelector('.xterm-helper-textarea') || document.body).focus()"
        )
        for kind in ("keyDown", "keyUp"):
            await self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=code,
                windowsVirtualKeyCode=key_code,
                **({"text": key} if kind == "keyDown" and len(key) == 1 else {}),
            )

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._session is not None:
            await self._session.close()
        stop(self.proc)


def _frame_text(response: dict[str, Any]) -> str:
    """A WebSocket frame's payload as text (binary frames arrive base64-encoded)."""
    data = response.get("payloadData", "")
    if response.get("opcode") == 2:
        return base64.b64decode(data).decode("utf-8", "replace")
    return data
