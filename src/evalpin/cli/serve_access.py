"""Who may open a served review (issues 28 and 40): its own page only, with a random
token by default, a cap on the sessions at once, and idle sessions closed.

Every request needs the token, on loopback too: on a shared machine any local user can
reach 127.0.0.1. It comes once as `?token=...` in the printed URL and is kept as a
cookie (HttpOnly, SameSite=Strict) for the page's assets and its websocket. Without it a
request gets 403 and no review process starts; past the cap a new session gets 503 and
a page saying so. A session whose browser sent nothing for `idle_s` is closed (its
review process ends with it).

The cookie alone is not enough: SameSite does not tell ports apart, so a page served
from another port of the same host would send it. Every request must name the served
address in `Host` (a rebound DNS name does not), and come from the served origin:
`Origin`, where the browser sends one (always for a websocket, which must carry it), is
the served address; `Sec-Fetch-Site` is `same-origin` or `none`. Pages may not be framed.
The token never reaches a log line: query strings and the token are cut from every
record, access logs included.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from textual_serve.server import Server

COOKIE = "evalpin_serve_token"
TOKEN_ENV = "EVALPIN_SERVE_TOKEN"
DEFAULT_SESSIONS = 4
DEFAULT_IDLE_S = 30 * 60

_REFUSED = "<!doctype html><title>evalpin serve</title><p>{}</p>"


def new_token() -> str:
    return secrets.token_urlsafe(24)


_WILDCARD = ("0.0.0.0", "::")
# Fetch metadata a request from the served page itself (or typed in) carries.
_OWN_FETCH = ("same-origin", "none")
_FRAMING = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}


def _host_port(authority: str) -> tuple[str, int | None] | None:
    """(host, port) of a `Host` value or an origin's authority; None when malformed."""
    try:
        split = urlsplit("//" + authority)
        host, port = split.hostname, split.port
    except ValueError:
        return None
    return (host, port) if host else None


def _same_host(given: str, served: str) -> bool:
    """Whether two host names or addresses are the same (`::1` and `[::1]` alike)."""
    given, served = given.strip("[]").lower(), served.strip("[]").lower()
    try:
        return ipaddress.ip_address(given) == ipaddress.ip_address(served)
    except ValueError:
        return given == served


@dataclass
class Access:
    """The door: the served address, the token (None: `--no-token`, loopback only), the
    session cap, idle."""

    token: str | None = field(repr=False)
    max_sessions: int = DEFAULT_SESSIONS
    idle_s: float = DEFAULT_IDLE_S
    sessions: int = 0
    host: str = "127.0.0.1"
    port: int = 8000

    def _foreign(self, request: web.Request) -> str | None:
        """Why a request does not come from the served page, or None when it does."""
        host = _host_port(request.headers.get("Host", ""))
        if host is None or (host[1] or 80) != self.port:
            return "Host"
        wildcard = self.host in _WILDCARD  # any of the machine's addresses is served
        if not wildcard and not _same_host(host[0], self.host):
            return "Host"
        origin = request.headers.get("Origin")
        if origin is None:
            if request.path == "/ws":
                return "Origin"  # browsers always send one with a websocket
        else:
            split = urlsplit(origin)
            try:
                port = split.port or 80
            except ValueError:
                return "Origin"
            if split.scheme != "http" or port != self.port or split.hostname is None:
                return "Origin"
            if not _same_host(split.hostname, host[0] if wildcard else self.host):
                return "Origin"
        if request.headers.get("Sec-Fetch-Site", "none") not in _OWN_FETCH:
            return "Sec-Fetch-Site"
        return None

    def _allowed(self, request: web.Request) -> tuple[bool, bool]:
        """(allowed, came by query) for this request."""
        if self.token is None:
            return True, False
        given = request.query.get("token")
        if given is not None and hmac.compare_digest(given.encode(), self.token.encode()):
            return True, True
        cookie = request.cookies.get(COOKIE, "")
        return hmac.compare_digest(cookie.encode(), self.token.encode()), False

    @web.middleware
    async def middleware(self, request: web.Request, handler):
        response = await self._answer(request, handler)
        response.headers.update(_FRAMING)
        return response

    async def _answer(self, request: web.Request, handler) -> web.StreamResponse:
        allowed, by_query = self._allowed(request)
        if not allowed:
            text = "This review needs its token: open the URL evalpin serve printed."
            return web.Response(status=403, text=_REFUSED.format(text), content_type="text/html")
        foreign = self._foreign(request)
        if foreign is not None:
            text = (
                f"Refused: this request does not come from the review's own page ({foreign}"
                " is not the served address). Open the URL evalpin serve printed."
            )
            return web.Response(status=403, text=_REFUSED.format(text), content_type="text/html")
        if request.path == "/ws":
            if self.sessions >= self.max_sessions:
                text = (
                    f"{self.max_sessions} review session(s) are open, the most this server "
                    "allows: close one (or wait for an idle one to end), then reload."
                )
                return web.Response(
                    status=503, text=_REFUSED.format(text), content_type="text/html"
                )
            self.sessions += 1
            try:
                return await handler(request)
            finally:
                self.sessions -= 1
        response = await handler(request)
        if by_query and self.token is not None:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response


class _IdleSocket:
    """The browser's websocket, ending the message loop after `idle_s` of silence."""

    def __init__(self, websocket: web.WebSocketResponse, idle_s: float) -> None:
        self._ws, self._idle = websocket, idle_s

    def __aiter__(self) -> _IdleSocket:
        return self

    async def __anext__(self):
        try:
            message = await self._ws.receive(timeout=self._idle)
        except TimeoutError:
            await self._ws.close(message=b"idle: closed by evalpin serve")
            raise StopAsyncIteration from None
        if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
            raise StopAsyncIteration
        return message

    def __getattr__(self, name: str):
        return getattr(self._ws, name)


# A token in a query string (`?token=...`, also in a logged Referer), whatever its value.
_QUERY_TOKEN = re.compile(r"([?&]token=)[^&\s\"']*")


class _NoToken(logging.Filter):
    """Cuts the token, and any `token=` query value, from a record's message."""

    def __init__(self, token: str | None) -> None:
        super().__init__()
        self._token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = _QUERY_TOKEN.sub(r"\1[redacted]", message)
        if self._token:
            clean = clean.replace(self._token, "[redacted]")
        if clean != message:
            record.msg, record.args = clean, None
        return True


class GuardedServer(Server):
    """textual-serve's server behind the door above; its own handlers unchanged."""

    def __init__(self, *args, access: Access, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.access = access

    def initialize_logging(self) -> None:
        """textual-serve's logging, with the token cut from every record every handler
        writes (aiohttp's access log logs each request's line and Referer) and no
        local variables in tracebacks."""
        super().initialize_logging()
        for handler in logging.getLogger().handlers:
            if hasattr(handler, "tracebacks_show_locals"):
                handler.tracebacks_show_locals = False
            handler.addFilter(_NoToken(self.access.token))

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.access.middleware)
        return app

    async def _process_messages(self, websocket, app_service) -> None:
        await super()._process_messages(_IdleSocket(websocket, self.access.idle_s), app_service)
