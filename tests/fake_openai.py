"""A scriptable OpenAI-compatible chat-completions server for tests, on 127.0.0.1 only.

Each test queues the replies it wants (`push`), or sets a `policy` that picks the reply
for each request (latency, a share of 429s, a rate limit on requests in flight), and
reads back what arrived (`received`, `max_in_flight`): the real SDK talks to it over real
HTTP, so nothing in the client is mocked.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Body = bytes | dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class Reply:
    """One scripted response; a callable body is built from the request's JSON."""

    status: int = 200
    body: Body = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    reset: bool = False  # drop the connection (TCP reset) instead of answering


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def chat(
    text: str | None = "ok",
    *,
    tool_calls: tuple[tuple[str, str], ...] = (),
    model: str = "fake-model-1",
    fingerprint: str | None = "fp_test",
    usage: tuple[int, int] | None = None,
    delay_s: float = 0.0,
) -> Reply:
    """A 200 chat completion; `tool_calls` are (name, raw arguments string) pairs and
    `usage` is (prompt tokens, completion tokens)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": args}}
            for n, (name, args) in enumerate(tool_calls)
        ]
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "system_fingerprint": fingerprint,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    if usage is not None:
        prompt, completion = usage
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return Reply(body=body, delay_s=delay_s)


def conversation_problem(messages: list[dict[str, Any]]) -> str | None:
    """What a strict server would refuse in a tool conversation: a tool message that does
    not answer a call of the assistant message before it, or a call left unanswered."""
    pending: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                return f"tool message for unknown call {message.get('tool_call_id')!r}"
            pending.remove(message["tool_call_id"])
            if not isinstance(message.get("content"), str):
                return "tool message content must be a string"
            continue
        if pending:
            return f"calls left unanswered: {pending}"
        if role == "assistant":
            pending = [call["id"] for call in message.get("tool_calls") or []]
    return f"calls left unanswered: {pending}" if pending else None


def tool_model(
    *calls: tuple[str, str],
    answer: str = "Done. The tools said: {results}",
    forever: bool = False,
    model: str = "fake-model-1",
) -> Reply:
    """A tool-calling model: until the conversation holds tool results (or, `forever`,
    always) it calls `calls` (parallel when several); then it answers with text quoting
    every tool result it was given. A conversation a strict server would refuse gets a
    body that is not a chat completion, so the client's mistake cannot pass unseen."""

    def body(request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        problem = conversation_problem(messages)
        if problem:
            return {"error": {"message": problem}}
        results = [m["content"] for m in messages if m.get("role") == "tool"]
        if forever or not results:
            reply = chat(None, tool_calls=calls, model=model)
        else:
            reply = chat(answer.format(results=" | ".join(results)), model=model)
        assert isinstance(reply.body, dict)
        return reply.body

    return Reply(body=body)


def error(status: int, message: str = "scripted error", **headers: str) -> Reply:
    body = {"error": {"message": message, "type": "test_error"}}
    return Reply(status=status, body=body, headers=dict(headers))


def free_port() -> int:
    """A 127.0.0.1 port with nothing listening on it: "the endpoint is down"."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Picks the reply to the n-th request (from 0), given the requests in flight with it.
Policy = Callable[[int, int, Received], Reply]


class FakeOpenAI:
    """The server; replies are served in order, then `policy`, then `default`, then a
    loud 599."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.default: Reply | None = None
        self.policy: Policy | None = None
        self.received: list[Received] = []
        self.served: dict[int, int] = {}  # status -> answers sent (resets counted as 0)
        self.max_in_flight = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # A short poll interval keeps `stop` (and so each test's teardown) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def in_flight(self) -> int:
        """Requests received and not yet answered (or given up by their client)."""
        with self._lock:
            return self._in_flight

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()  # releases handlers sleeping in a slow reply
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: Received) -> Reply:
        with self._lock:
            self.received.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            if self.replies:
                return self.replies.popleft()
            if self.policy is not None:
                return self.policy(len(self.received) - 1, self._in_flight, request)
        return self.default or error(599, "no reply scripted for this request")

    def _count(self, reply: Reply) -> None:
        with self._lock:
            status = 0 if reply.reset else reply.status
            self.served[status] = self.served.get(status, 0) + 1

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = Received(self.path, headers, json.loads(raw))
                reply = fake._next(request)
                try:
                    if reply.delay_s:
                        fake._stopping.wait(reply.delay_s)
                finally:
                    # done before the bytes go: a client holding its answer may send its
                    # next request before this thread runs again
                    fake._done()
                fake._count(reply)
                try:
                    if reply.reset:
                        self._reset()
                    else:
                        self._send(reply, request)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a timeout test)

            def _send(self, reply: Reply, request: Received) -> None:
                body = reply.body(request.body) if callable(reply.body) else reply.body
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _reset(self) -> None:
                """Close with SO_LINGER 0: the client sees a connection reset."""
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                self.connection.close()

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output quiet

        return Handler
