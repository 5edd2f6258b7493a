"""The `openai` provider: any OpenAI-compatible chat-completions endpoint, via the SDK.

The SDK is imported inside the functions that use it, never at module top: importing any
module of `evalpin.run` must not load it (tests/test_boundaries.py), and only a run with an
openai slot should pay for it. The SDK's own retries are off (`max_retries=0`); retries
happen here, where the attempt count, the backoff and the final reason code are ours to
decide. The body is decoded by us from the raw response, so a malformed or oddly shaped
body is `bad_response` rather than whatever a lenient parse happens to leave behind.

Each request on the wire holds a permit of the run's `Pace` (run/pace.py), which it tells
about rate limits, so the run's concurrency follows the endpoint. A 429 does not use up an
attempt: it is retried as long as this request's waits on rate limits fit in the retry
budget, `(max_attempts - 1) * retry_max_s`, the longest the slot would wait anyway.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Self

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.reasons import PROVIDER_ERROR
from evalpin.core.records import Completion, CompletionRequest, ToolCall, Usage
from evalpin.run.slots.base import Slot, SlotError
from evalpin.run.slots.config import Entry, SlotConfig


@dataclass(frozen=True, kw_only=True)
class OpenAIConfig(SlotConfig):
    """An OpenAI-compatible chat-completions endpoint, found through the environment."""

    provider: ClassVar[str] = "openai"
    keys: ClassVar[frozenset[str]] = frozenset(
        {"model", "base_url_env", "api_key_env", "timeout_s", "max_attempts"}
        | {"retry_base_s", "retry_max_s"}
    )
    model: str
    base_url_env: str
    api_key_env: str
    timeout_s: float = 120.0
    max_attempts: int = 4
    retry_base_s: float = 1.0
    retry_max_s: float = 30.0

    @classmethod
    def parse(cls, entry: Entry) -> Self:
        return cls(
            label=entry.label,
            source=entry.path,
            model=entry.text("model"),
            base_url_env=entry.env_name("base_url_env"),
            api_key_env=entry.env_name("api_key_env"),
            timeout_s=entry.number("timeout_s", cls.timeout_s),
            max_attempts=entry.count("max_attempts", cls.max_attempts),
            retry_base_s=entry.number("retry_base_s", cls.retry_base_s, positive=False),
            retry_max_s=entry.number("retry_max_s", cls.retry_max_s, positive=False),
        )

    def secret_env_names(self) -> tuple[str, ...]:
        # The URL too: it can carry a host, a tenant or a key in its query.
        return (self.api_key_env, self.base_url_env)

    def public_settings(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url_env": self.base_url_env,
            "api_key_env": self.api_key_env,
            "timeout_s": self.timeout_s,
            "max_attempts": self.max_attempts,
        }

    def open(self) -> OpenAISlot:
        return OpenAISlot(self)  # the only path that loads the openai SDK


if TYPE_CHECKING:
    import openai

_SERVER_MESSAGE_CHARS = 200


class _Function(msgspec.Struct):
    name: str
    arguments: Any = None


class _ToolCall(msgspec.Struct):
    function: _Function


class _Message(msgspec.Struct):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _ChatCompletion(msgspec.Struct):
    """The part of a chat completion we read; everything else is ignored."""

    choices: list[_Choice]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: Any = None  # read leniently (_usage): an odd count must not lose the answer


class _Failure(NamedTuple):
    kind: str
    retry: bool
    retry_after: float | None
    detail: str

    @property
    def rate_limit(self) -> bool:
        """The endpoint asked us to slow down: a 429, or any answer with Retry-After."""
        return self.kind == "rate_limited" or self.retry_after is not None


class OpenAISlot(Slot):
    """One SDK client shared by all threads (the SDK's sync client is thread-safe)."""

    config: OpenAIConfig
    paces_requests = True

    def __init__(self, config: OpenAIConfig) -> None:
        import openai

        super().__init__(config)
        base_url = _env(config, config.base_url_env, "base_url_env")
        self._key = _env(config, config.api_key_env, "api_key_env")
        self._client = openai.OpenAI(
            base_url=base_url, api_key=self._key, max_retries=0, timeout=config.timeout_s
        )
        self._closed = threading.Event()
        self._random = random.Random()

    def complete(self, request: CompletionRequest) -> Completion:
        return _completion(self._ask(_params(self.config.model, request)))

    def _ask(self, params: dict[str, Any]) -> bytes:
        """One chat completion's body: each try holds a pace permit while on the wire;
        retried as the slot says; SlotError when none comes."""
        import openai

        attempts, attempt = self.config.max_attempts, 1
        budget = (attempts - 1) * self.config.retry_max_s
        limited = 0  # 429s answered to this request
        while True:
            with self.pace.request() as permit:
                try:
                    raw = self._client.chat.completions.with_raw_response.create(**params)
                except openai.APIError as exc:
                    failure = self._classify(exc)
                    if failure.rate_limit:
                        permit.rate_limited()
                else:
                    permit.succeeded()
                    return raw.content
            if failure.kind == "rate_limited":
                limited += 1
                delay = self._delay(limited, failure.retry_after)
                if delay > budget + 1e-9:
                    detail = (
                        f"{failure.detail} ({limited} rate-limited answers; retry budget spent)"
                    )
                    raise SlotError(PROVIDER_ERROR(failure.kind), detail) from None
                budget -= delay
            elif not failure.retry or attempt == attempts:
                detail = f"{failure.detail} (attempt {attempt} of {attempts})"
                raise SlotError(PROVIDER_ERROR(failure.kind), detail) from None
            else:
                delay = self._delay(attempt, failure.retry_after)
                attempt += 1
            # close() wakes these waits, so a stopping run does not sit out a backoff.
            waited = self.pace.wait if failure.rate_limit else _plain_wait
            if waited(delay, self._closed):
                detail = f"{failure.detail}; slot closed while waiting to retry"
                raise SlotError(PROVIDER_ERROR(failure.kind), detail) from None

    def close(self) -> None:
        self._closed.set()
        self._client.close()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Retry-After when the server sent one, else exponential backoff with jitter;
        both capped by `retry_max_s` so one header cannot stall a run."""
        cap = self.config.retry_max_s
        if retry_after is not None:
            return min(retry_after, cap)
        step = min(cap, self.config.retry_base_s * 2 ** (attempt - 1))
        return step / 2 + self._random.uniform(0, step / 2)

    def _classify(self, exc: openai.APIError) -> _Failure:
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return _Failure("timeout", True, None, f"no answer within {self.config.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            return _Failure("connection", True, None, "could not reach the endpoint")
        if not isinstance(exc, openai.APIStatusError):
            return _Failure("bad_response", False, None, type(exc).__name__)
        status = exc.status_code
        detail = f"HTTP {status}{self._server_message(exc.body)}"
        if status in (401, 403):
            return _Failure("auth", False, None, detail)
        after = _retry_after(exc.response.headers.get("retry-after"))
        if status == 408:
            return _Failure("timeout", True, after, detail)
        if status == 429:
            return _Failure("rate_limited", True, after, detail)
        if status >= 500:
            return _Failure("server_error", True, after, detail)
        return _Failure("bad_request", False, None, detail)

    def _server_message(self, body: object) -> str:
        """The server's own words help with a 400; servers may echo the key, so scrub it."""
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, str) or not message:
            return ""
        return ": " + message.replace(self._key, "***")[:_SERVER_MESSAGE_CHARS]


def _plain_wait(seconds: float, stop: threading.Event) -> bool:
    return stop.wait(seconds)


def _env(config: OpenAIConfig, name: str, field: str) -> str:
    value = os.environ.get(name)
    if not value:
        msg = f"slot {config.label!r}: environment variable {name} ({field}) is not set"
        raise InputError(config.where, msg)
    return value


def _params(model: str, request: CompletionRequest) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "seed": request.seed,
    }
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if request.max_tokens is not None:
        params["max_tokens"] = request.max_tokens
    if request.tools:
        params["tools"] = [_tool(schema, n) for n, schema in enumerate(request.tools, start=1)]
    return params


def _tool(schema: Any, n: int) -> dict[str, Any]:
    """OpenAI's `{"type": "function", "function": {...}}`, also from a bare
    `{"name", "description", "parameters"}` schema as golden cases may write it."""
    if isinstance(schema, dict):
        if schema.get("type") == "function" and isinstance(schema.get("function"), dict):
            return schema
        if "type" not in schema and isinstance(schema.get("name"), str):
            return {"type": "function", "function": schema}
    detail = f"tool schema {n} is neither an OpenAI function tool nor a bare named schema"
    raise SlotError(PROVIDER_ERROR("bad_request"), detail)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date), None if unusable."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
        except (TypeError, ValueError):
            return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _completion(body: bytes) -> Completion:
    try:
        data = msgspec.json.decode(body, type=_ChatCompletion)
    except msgspec.DecodeError as exc:
        detail = f"not a chat completion: {exc}"
        raise SlotError(PROVIDER_ERROR("bad_response"), detail) from None
    if not data.choices:
        raise SlotError(PROVIDER_ERROR("empty_choices"), "the response has no choices")
    message = data.choices[0].message
    tools = [
        ToolCall(name=call.function.name, args=_arguments(call.function.arguments))
        for call in message.tool_calls or []
    ]
    model = data.model or None
    if model and data.system_fingerprint:
        model = f"{model}@{data.system_fingerprint}"
    return Completion(text=message.content or "", tools=tools, model=model, usage=_usage(data))


def _usage(data: _ChatCompletion) -> Usage | None:
    """The `usage` counts that are whole numbers >= 0; None when there are none."""
    if not isinstance(data.usage, dict):
        return None
    counts = {
        key: value
        for key in ("prompt_tokens", "completion_tokens", "total_tokens")
        if isinstance(value := data.usage.get(key), int)
        and not isinstance(value, bool)
        and value >= 0
    }
    return Usage(**counts) if counts else None


def _arguments(raw: Any) -> Any:
    """Decoded JSON arguments; the raw string when a model wrote something that is not JSON."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw
