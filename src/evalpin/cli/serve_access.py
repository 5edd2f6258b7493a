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
import re
import secrets
from dataclasses import dataclass, field

from aiohttp import web

COOKIE = "evalpin_serve_token"
TOKEN_ENV = "EVALPIN_SERVE_TOKEN"
DEFAULT_SESSIONS = 4
DEFAULT_IDLE_S = 30 * 60

_REFUSED = "<!doctype html><title>evalpin serve</title><p>{}</p>"


def _plain(status: int, reason: str) -> web.Response:
    """An answer that says its status and nothing of the request."""
    return web.Response(status=status, text=f"{status}: {reason}\n")


def _echoes(response: web.StreamResponse, token: str) -> bool:
    """Whether an answer carries the token anywhere but the cookie that keeps it."""
    body = response.body if isinstance(response, web.Response) else None
    if isinstance(body, bytes) and token.encode() in body:
        return True
    return any(token in v for k, v in response.headers.items() if k.lower() != "set-cookie")


def new_token() -> str:
    return secrets.token_urlsafe(24)


_WILDCARD = ("0.0.0.0", "::")
# Fetch metadata a request from the served page itself (or typed in) carries.
_OWN_FETCH = ("same-origin", "none")
_FRAMING = {"X-Frame-Options": "DENY", "Content-Security-Policy": "frame-ancestors 'none'"}


# An authority as a browser writes it for an http origin: a lower-case name or dotted
# address, or a bracketed IPv6 address, then a port without a leading zero (none for 80).
# No userinfo (`evil@`), no path, no trailing dot, no other spelling of an address.
_AUTHORITY = re.compile(
    r"(?P<host>\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(?P<port>[1-9][0-9]{0,4}))?"
)


def _host_port(authority: str) -> tuple[str, int] | None:
    """(host, port) of a `Host` value or an origin's authority in the one form a browser
    sends; None for any other form."""
    match = _AUTHORITY.fullmatch(authority)
    if match is None:
        return None
    host, port = match["host"], int(match["port"] or 80)
    if match["port"] == "80" or port > 65535:
        return None  # a browser leaves the default port out
    bare = host.strip("[]")
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        if host.startswith("[") or re.fullmatch(r"[0-9.]+|0x.*", host):
            return None  # brackets around no IPv6 address, or `127.1`: no browser's form
        return host, port
    if str(address) != bare or (address.version == 6) != host.startswith("["):
        return None  # `127.000.0.1`, `[::0001]`: a browser writes an address one way
    return host, port


def _same_host(given: str, served: str) -> bool:
    """Whether a browser's host (canonical, from `_host_port`) names the served host
    (as given on the command line: `::1` or `[::1]`, any case)."""
    given, served = given.strip("[]"), served.strip("[]").lower()
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
        if not request.raw_path.startswith("/"):
            return "the request target"  # absolute-form (`GET http://...`): a proxy's
        hosts = request.headers.getall("Host", [])
        host = _host_port(hosts[0]) if len(hosts) == 1 else None
        if host is None or host[1] != self.port:
            return "Host"
        wildcard = self.host in _WILDCARD  # any of the machine's addresses is served
        if not wildcard and not _same_host(host[0], self.host):
            return "Host"
        origins = request.headers.getall("Origin", [])
        if len(origins) > 1:
            return "Origin"
        if not origins:
            if request.path == "/ws":
                return "Origin"  # browsers always send one with a websocket
        else:
            scheme, _, authority = origins[0].partition("://")
            origin = _host_port(authority)
            if scheme != "http" or origin is None or origin != host:
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
        try:
            response = await self._answer(request, handler)
        except web.HTTPException as exc:  # a handler's 404 (a download's names its key)
            response = _plain(exc.status, exc.reason)
        if self.token is not None and _echoes(response, self.token):
            response = _plain(500, "Internal Server Error")
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
