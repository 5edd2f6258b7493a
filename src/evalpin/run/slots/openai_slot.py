"""The `openai` provider: any OpenAI-compatible chat-completions endpoint, via the SDK.

The SDK is imported inside the functions that use it, never at module top: importing any
module of `evalpin.run` must not load it (tests/project/test_boundaries.py), and only a run with an
openai slot should pay for it. The SDK's own retries are off (`max_retries=0`); retries
happen here, where the attempt count, the backoff and the final reason code are ours to
decide. The body is decoded by us from the raw response, so a malformed or oddly shaped
body is `bad_response` rather than whatever a lenient parse happens to leave behind.

A reply with tool calls is answered from the case's canned `tool_results` and the model
is asked again, up to `max_turns` requests (core/instrument/conversation.py). The client is built
from explicit values only: the SDK would otherwise pick up `OPENAI_BASE_URL`,
`OPENAI_ORG_ID`, `OPENAI_PROJECT_ID` and `OPENAI_CUSTOM_HEADERS` from the environment
and send them to whatever endpoint the slot names. Organization, project and extra
headers are sent only when the slot names the variables that hold them.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Self

import msgspec

from evalpin.core.bounded import loads
from evalpin.core.errors import InputError
from evalpin.core.instrument.conversation import (
    DEFAULT_MAX_TURNS,
    CannedResults,
    bad_arguments,
    settle,
)
from evalpin.core.reasons import PROVIDER_ERROR
from evalpin.core.records import Completion, CompletionRequest, Turn, TurnCall, Usage
from evalpin.core.schema import unknown_key
from evalpin.run.slots.base import Slot, SlotError
from evalpin.run.slots.config import Entry, SlotConfig
from evalpin.run.slots.openai_wire import (
    CHAT,
    COMPLETIONS,
    ENDPOINTS,
    decode_chat,
    decode_text,
    text_prompt,
)
from evalpin.run.slots.openai_wire import ChatCompletion as _ChatCompletion
from evalpin.run.slots.openai_wire import Message as _Message
from evalpin.run.slots.openai_wire import ToolCall as _ToolCall
from evalpin.run.slots.openai_wire import reported as _reported
from evalpin.run.slots.openai_wire import usage_of as _usage


@dataclass(frozen=True, kw_only=True)
class OpenAIConfig(SlotConfig):
    """An OpenAI-compatible chat-completions endpoint, found through the environment."""

    provider: ClassVar[str] = "openai"
    keys: ClassVar[frozenset[str]] = frozenset(
        {"model", "base_url_env", "api_key_env", "timeout_s", "max_attempts"}
        | {"retry_base_s", "retry_max_s"}
        | {"sampling", "organization_env", "project_env", "headers_env"}
        | {"probes", "deterministic", "tool_choice", "endpoint", "stop"}
    )
    model: str
    base_url_env: str
    api_key_env: str
    timeout_s: float = 120.0
    max_attempts: int = 4
    retry_base_s: float = 1.0
    retry_max_s: float = 30.0
    # Sent with every request and part of the settings digest.
    sampling: dict[str, float] = field(default_factory=dict)
    # Variables whose values are sent as the organization / project / extra headers;
    # nothing of the kind is sent unless named here.
    organization_env: str | None = None
    project_env: str | None = None
    headers_env: dict[str, str] = field(default_factory=dict)
    # Sent with requests that offer tools when set ("auto", "required", "none"): some
    # servers call tools only when asked (llama.cpp's chatml-function-calling wants
    # "auto"); others refuse a value they were not started for (vLLM without
    # --enable-auto-tool-choice), so it is not sent unless the slot says.
    tool_choice: str | None = None
    # `completions`: the text endpoint (`/v1/completions`) for a base model, which
    # continues the prompt as it is; `stop`: sequences the endpoint stops at. Both part
    # of the slot's identity when set.
    endpoint: str = CHAT
    stop: tuple[str, ...] = ()

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
            sampling=_sampling(entry),
            organization_env=entry.env_name("organization_env")
            if "organization_env" in entry.entry
            else None,
            project_env=entry.env_name("project_env") if "project_env" in entry.entry else None,
            headers_env=entry.header_env_names("headers_env"),
            probes=_probes(entry),
            tool_choice=_tool_choice(entry),
            deterministic=_flag(entry, "deterministic", True),
            endpoint=_endpoint(entry),
            stop=_stop(entry),
        )

    def secret_env_names(self) -> tuple[str, ...]:
        # The URL too: it can carry a host, a tenant or a key in its query.
        named = (self.organization_env, self.project_env, *self.headers_env.values())
        return (self.api_key_env, self.base_url_env, *(n for n in named if n))

    def public_settings(self) -> dict[str, Any]:
        settings = {
            "provider": self.provider,
            "model": self.model,
            "base_url_env": self.base_url_env,
            "api_key_env": self.api_key_env,
            "timeout_s": self.timeout_s,
            "max_attempts": self.max_attempts,
        }
        return settings | {k: v for k, v in self._named().items() if v}

    def identity(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url_env": self.base_url_env,
            **{k: v for k, v in self._named().items() if v},
        }

    def _named(self) -> dict[str, Any]:
        return {
            "sampling": self.sampling,
            "organization_env": self.organization_env,
            "project_env": self.project_env,
            "headers_env": self.headers_env,
            "tool_choice": self.tool_choice,
            "endpoint": None if self.endpoint == CHAT else self.endpoint,
            "stop": list(self.stop),
        }

    def open(self) -> OpenAISlot:
        return OpenAISlot(self)  # the only path that loads the openai SDK


# Sent before and after every run unless the slot names its own or `probes: false`:
# short, fixed, answerable by any chat model.
DEFAULT_PROBES = (
    "Reply with exactly one word: ready",
    "What is 17 + 25? Answer with the number only.",
    "Name the capital of France in one word.",
)


def _probes(entry: Entry) -> tuple[str, ...]:
    value = entry.entry.get("probes", True)
    if value is True:
        return DEFAULT_PROBES
    if value is False:
        return ()
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise entry.fail("'probes' must be a list of prompts, or false")
    return tuple(value)


TOOL_CHOICES = ("auto", "required", "none")


def _endpoint(entry: Entry) -> str:
    value = entry.entry.get("endpoint", CHAT)
    if value not in ENDPOINTS:
        raise entry.fail(f"'endpoint' must be one of {', '.join(ENDPOINTS)}", "endpoint")
    return value


def _stop(entry: Entry) -> tuple[str, ...]:
    """Stop sequences: up to 4 non-empty strings (what OpenAI-compatible servers take)."""
    value = entry.entry.get("stop", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise entry.fail("'stop' must be a list of non-empty strings", "stop")
    if len(value) > 4:
        raise entry.fail("'stop' takes at most 4 sequences", "stop")
    return tuple(value)


def _tool_choice(entry: Entry) -> str | None:
    value = entry.entry.get("tool_choice")
    if value is not None and value not in TOOL_CHOICES:
        raise entry.fail(f"'tool_choice' must be one of {', '.join(TOOL_CHOICES)}")
    return value


def _flag(entry: Entry, key: str, default: bool) -> bool:
    value = entry.entry.get(key, default)
    if not isinstance(value, bool):
        raise entry.fail(f"'{key}' must be true or false")
    return value


# Sampling parameters a slot may fix (numbers, sent as given).
SAMPLING_KEYS = frozenset({"top_p", "frequency_penalty", "presence_penalty"})


def _sampling(entry: Entry) -> dict[str, float]:
    value = entry.entry.get("sampling", {})
    if not isinstance(value, dict):
        raise entry.fail("'sampling' must be a mapping")
    for key, number in value.items():
        if key not in SAMPLING_KEYS:  # a typo would quietly sample at the server's default
            raise entry.fail(unknown_key(key, SAMPLING_KEYS, "'sampling': ", extensions=False))
        if (
            isinstance(number, bool)
            or not isinstance(number, int | float)
            or not math.isfinite(number)
        ):
            raise entry.fail(f"'sampling.{key}' must be a finite number")
    return {str(k): float(v) for k, v in value.items()}


if TYPE_CHECKING:
    import openai

_SERVER_MESSAGE_CHARS = 1000
# Words of a server error that says the request itself is wrong, whatever its status.
_REFUSED_WORDS = ("validation error", "Input should be", "Field required")


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
            base_url=base_url,
            api_key=self._key,
            max_retries=0,
            timeout=config.timeout_s,
            default_headers=_headers(config, self._key, os.environ),
        )
        self._closed = threading.Event()
        self._random = random.Random()
        text = config.endpoint == COMPLETIONS
        api = self._client.completions if text else self._client.chat.completions
        self._create = api.with_raw_response.create
        self._decode = decode_text if text else decode_chat

    def complete(self, request: CompletionRequest) -> Completion:
        """Ask, answer tool calls from the canned results, ask again, until a reply
        without tool calls or `max_turns` requests; a plain one-reply answer stays a
        plain completion (no `turns`)."""
        params = _params(self.config, request)
        messages: list[dict[str, Any]] = params.get("messages", [])
        canned = CannedResults(request.tool_results)
        max_turns = request.max_turns or DEFAULT_MAX_TURNS
        turns: list[Turn] = []
        model: str | None = None
        usage: Usage | None = None
        finish: str | None = None
        for n in range(1, max_turns + 1):
            try:
                reply = self._ask(params)
            except SlotError as exc:  # keep what the conversation got before it failed
                if turns or usage is not None:
                    exc.partial = Completion(
                        text=turns[-1].text if turns else "",
                        model=model,
                        turns=turns,
                        usage=usage,
                    )
                raise
            model = _reported(reply) or model
            spent = _usage(reply)
            if spent is not None:
                usage = spent if usage is None else usage + spent
            choice = reply.choices[0]
            message, finish = choice.message, choice.finish_reason
            text = message.content or ""
            calls = message.tool_calls or []
            if not calls:
                turns.append(Turn(text=text))
                break
            if n == max_turns:  # the calls are recorded, their results never sent
                turns.append(Turn(text=text, calls=[_unanswered(c) for c in calls]))
                break
            answered = [_answer(c, canned) for c in calls]
            turns.append(Turn(text=text, calls=answered))
            messages.append(_assistant(message, n))
            messages += [
                {"role": "tool", "tool_call_id": _call_id(c, n, i), "content": _json(a.result)}
                for i, (c, a) in enumerate(zip(calls, answered, strict=True))
            ]
        if len(turns) == 1 and not turns[0].calls:
            return Completion(text=turns[0].text, model=model, usage=usage, finish_reason=finish)
        done = settle(Completion(model=model, turns=turns, usage=usage))
        return msgspec.structs.replace(done, finish_reason=finish)

    def _ask(self, params: dict[str, Any]) -> _ChatCompletion:
        """One chat completion: each try holds a pace permit while on the wire; retried
        as the slot says; SlotError when none comes."""
        import openai

        attempts, attempt = self.config.max_attempts, 1
        budget = (attempts - 1) * self.config.retry_max_s
        limited = 0  # 429s answered to this request
        while True:
            with self.pace.request() as permit:
                try:
                    raw = self._create(**params)
                except RecursionError:  # the SDK parsing an error body nested past any sense
                    detail = "the response is nested too deeply to read"
                    raise SlotError(PROVIDER_ERROR("bad_response"), detail) from None
                except openai.APIError as exc:
                    failure = self._classify(exc)
                    if failure.rate_limit:
                        permit.rate_limited()
                else:
                    permit.succeeded()
                    return self._decode(raw.content)
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
            # A request the server's validator refused is refused again however often it
            # is sent (llama.cpp's server answers its validation errors with a 500).
            again = not any(w in detail for w in _REFUSED_WORDS)
            return _Failure("server_error", again, after, detail)
        return _Failure("bad_request", False, None, detail)

    def _server_message(self, body: object) -> str:
        """The server's own words ("maximum context length is 2048 tokens ... you
        requested 9783"): where OpenAI puts them (`error.message`, which the SDK hands
        over as the body), at the top level, or a plain-text body. Servers may echo
        the key, so it is scrubbed."""
        message = _message_of(body)
        if not message:
            return ""
        return ": " + message.replace(self._key, "***")[:_SERVER_MESSAGE_CHARS]


def _message_of(body: object) -> str:
    """The error text of an error body, however the server shaped it."""
    if isinstance(body, dict):
        inner = body.get("error")
        for value in (body.get("message"), inner, body.get("detail")):
            if isinstance(value, dict):
                value = value.get("message") or value.get("msg")
            if isinstance(value, list):  # pydantic-style validation details
                value = "; ".join(
                    str(v.get("msg", v)) if isinstance(v, dict) else str(v) for v in value
                )
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())
        return ""
    return " ".join(body.split()) if isinstance(body, str) else ""


def _plain_wait(seconds: float, stop: threading.Event) -> bool:
    return stop.wait(seconds)


def _env(config: OpenAIConfig, name: str, field: str) -> str:
    value = os.environ.get(name)
    if not value:
        msg = f"slot {config.label!r}: environment variable {name} ({field}) is not set"
        raise InputError(config.where, msg)
    return value


def _headers(config: OpenAIConfig, key: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """The client's headers: the key, what the slot names, and an explicit omission of
    everything the SDK would otherwise take from the environment."""
    import openai

    omit = openai.Omit()
    ambient = environ.get("OPENAI_CUSTOM_HEADERS", "")
    # The SDK's own parse of that variable ("Name: value" lines), so every name it
    # would add is overridden by the same name.
    headers: dict[str, Any] = {
        line[: line.find(":")].strip(): omit for line in ambient.split("\n") if ":" in line
    }
    headers |= {"OpenAI-Organization": omit, "OpenAI-Project": omit}
    headers["Authorization"] = f"Bearer {key}"
    named = {"OpenAI-Organization": config.organization_env, "OpenAI-Project": config.project_env}
    named |= config.headers_env
    for header, variable in named.items():
        if variable:
            headers[header] = _env(config, variable, f"header {header}")
    return headers


def _params(config: OpenAIConfig, request: CompletionRequest) -> dict[str, Any]:
    params: dict[str, Any] = {"model": config.model, "seed": request.seed, **config.sampling}
    if config.stop:
        params["stop"] = list(config.stop)
    if config.endpoint == COMPLETIONS:
        params["prompt"] = text_prompt(request)
    else:
        params["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if request.max_tokens is not None:
        params["max_tokens"] = request.max_tokens
    if request.tools:
        params["tools"] = [_tool(schema, n) for n, schema in enumerate(request.tools, start=1)]
        if config.tool_choice is not None:
            params["tool_choice"] = config.tool_choice
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


_NOT_JSON = object()


def _arguments(raw: Any) -> Any:
    """Decoded JSON arguments; `_NOT_JSON` when a model wrote a string that is not JSON
    exactly (`bounded.loads`: a key twice, NaN, a number past a limit, nesting past any
    sense are the model's malformed call, never a value one reader reads otherwise)."""
    if not isinstance(raw, str):
        return raw
    try:
        return loads(raw, "arguments")
    except InputError:
        return _NOT_JSON


def _unanswered(call: _ToolCall) -> TurnCall:
    args = _arguments(call.function.arguments)
    return TurnCall(call.function.name, call.function.arguments if args is _NOT_JSON else args)


def _answer(call: _ToolCall, canned: CannedResults) -> TurnCall:
    """The call as the model made it and its canned result; arguments that are not JSON
    are recorded as given and get an error result (the canned list does not advance)."""
    name, raw = call.function.name, call.function.arguments
    args = _arguments(raw)
    if args is _NOT_JSON:
        return TurnCall(name, raw, bad_arguments(name))
    return TurnCall(name, args, canned.answer(name))


def _call_id(call: _ToolCall, turn: int, index: int) -> str:
    return call.id or f"call_{turn}_{index}"


def _assistant(message: _Message, turn: int) -> dict[str, Any]:
    """The assistant reply as it goes back into the conversation. Its content is a
    string even when the model wrote none: llama.cpp's server (and other strict
    validators) answer HTTP 500 to `null` and to a missing key; "" is what every common
    OpenAI-compatible server accepts."""
    return {
        "role": "assistant",
        "content": message.content or "",
        "tool_calls": [
            {
                "id": _call_id(c, turn, i),
                "type": "function",
                "function": {
                    "name": c.function.name,
                    "arguments": c.function.arguments
                    if isinstance(c.function.arguments, str)
                    else _json(c.function.arguments),
                },
            }
            for i, c in enumerate(message.tool_calls or [])
        ],
    }


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
