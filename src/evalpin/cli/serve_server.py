"""textual-serve's server behind evalpin's door (`serve_access.Access`), writing the token
nowhere (issues 40 and 50).

The one place the token is printed is the URL for the owner, once the server listens.
Everything else that could carry it is cut before it is written:
- every log record: a `token=` query value and the token itself are cut from its message,
  and it keeps no traceback, only the exception's type. A request too big or malformed
  for aiohttp's parser (a Cookie or a URL past 8 KiB, a control character in a header)
  raises an exception whose message quotes the request's bytes; a traceback quotes them
  again, wrapped over lines no pattern would find whole;
- the answer to such a request: aiohttp's own says what its parser read; this one says
  its status alone.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
from collections.abc import Callable
from http import HTTPStatus

from aiohttp import WSMsgType, web
from aiohttp.web_protocol import RequestHandler
from textual_serve.server import Server

from evalpin.cli.serve_access import Access


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
    """Cuts the token, any `token=` query value and any traceback from a record."""

    def __init__(self, token: str | None) -> None:
        super().__init__()
        self._token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and record.exc_info[0] is not None:
            message = f"{message} ({record.exc_info[0].__name__})"
        record.exc_info = record.exc_text = record.stack_info = None
        message = _QUERY_TOKEN.sub(r"\1[redacted]", message)
        if self._token:
            message = message.replace(self._token, "[redacted]")
        record.msg, record.args = message, None
        return True


class _Connection(RequestHandler):
    """aiohttp's handler of one connection, answering a request it cannot serve (one its
    parser refused, or a handler's crash) with the status alone."""

    def handle_error(
        self,
        request,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        kind = type(exc).__name__ if exc is not None else "error"
        self.logger.warning("refused a request from %s: %d (%s)", request.remote, status, kind)
        if request.writer.output_size > 0:  # as aiohttp's: too late for an answer
            raise ConnectionError("the answer had begun; the connection is closed")
        answer = web.Response(status=status, text=f"{status}: {HTTPStatus(status).phrase}\n")
        answer.force_close()
        return answer


class _Connections(web.Server):
    """aiohttp's connection factory, making `_Connection`s."""

    def __call__(self) -> RequestHandler:
        return _Connection(self, loop=self._loop, **self._kwargs)


class _Runner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Connections  # the same state; only the factory differs
        return server


class GuardedServer(Server):
    """textual-serve's server behind the door; its own handlers unchanged. `ready` is
    called once the server listens (the command prints its one URL there)."""

    def __init__(self, *args, access: Access, ready: Callable[[], None], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.access = access
        self.ready = ready

    def initialize_logging(self) -> None:
        """textual-serve's logging, every record cut by `_NoToken` in every handler
        (aiohttp's access log logs each request's line and Referer)."""
        super().initialize_logging()
        for handler in logging.getLogger().handlers:
            handler.addFilter(_NoToken(self.access.token))

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: textual-serve prints its own URL here, one without the token."""

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self.access.middleware)
        return app

    async def _process_messages(self, websocket, app_service) -> None:
        await super()._process_messages(_IdleSocket(websocket, self.access.idle_s), app_service)

    def serve(self, debug: bool = False) -> None:
        """Serve until SIGINT or SIGTERM (textual-serve's loop, with `_Runner`)."""
        self.debug = debug
        self.initialize_logging()
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        runner = _Runner(await self._make_app(), handle_signals=False)
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
            self.ready()
            await stop.wait()
        finally:
            await runner.cleanup()
