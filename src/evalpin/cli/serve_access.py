"""Who may open a served review (issue 28): a random token by default, a cap on the
sessions at once, and idle sessions closed.

Every request needs the token, on loopback too: on a shared machine any local user can
reach 127.0.0.1. It comes once as `?token=...` in the printed URL and is kept as a
cookie (HttpOnly, SameSite=Strict) for the page's assets and its websocket. Without it a
request gets 403 and no review process starts; past the cap a new session gets 503 and
a page saying so. A session whose browser sent nothing for `idle_s` is closed (its
review process ends with it).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from aiohttp import WSMsgType, web
from textual_serve.server import Server

COOKIE = "evalpin_serve_token"
TOKEN_ENV = "EVALPIN_SERVE_TOKEN"
DEFAULT_SESSIONS = 4
DEFAULT_IDLE_S = 30 * 60

_REFUSED = "<!doctype html><title>evalpin serve</title><p>{}</p>"


def new_token() -> str:
    return secrets.token_urlsafe(24)


@dataclass
class Access:
    """The door: the token (None: `--no-token`, loopback only), the session cap, idle."""

    token: str | None
    max_sessions: int = DEFAULT_SESSIONS
    idle_s: float = DEFAULT_IDLE_S
    sessions: int = 0

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
        allowed, by_query = self._allowed(request)
        if not allowed:
            text = "This review needs its token: open the URL evalpin serve printed."
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


class GuardedServer(Server):
    """textual-serve's server behind the door above; its own handlers unchanged."""

    def __init__(self, *args, access: Access, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.access = access

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.access.middleware)
        return app

    async def _process_messages(self, websocket, app_service) -> None:
        await super()._process_messages(_IdleSocket(websocket, self.access.idle_s), app_service)
