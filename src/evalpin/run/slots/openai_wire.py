"""What the `openai` provider reads from an endpoint's bodies, decoded by us (a
malformed or oddly shaped body is `bad_response`, never whatever a lenient parse left),
for both endpoints a slot may use: chat completions (`/v1/chat/completions`, the
default) and text completions (`/v1/completions`, `endpoint: completions`: a base
model continues the prompt as it is, as public coding benchmarks ask it).

A text completion is read into the chat shape (one choice whose message is its text),
so everything after the request is one path for both.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from evalpin.core.bounded import keys_once
from evalpin.core.errors import InputError
from evalpin.core.reasons import PROVIDER_ERROR
from evalpin.core.records import CompletionRequest, Usage
from evalpin.run.slots.base import SlotError

CHAT = "chat"
COMPLETIONS = "completions"
ENDPOINTS = (CHAT, COMPLETIONS)
_T = TypeVar("_T")


class Function(msgspec.Struct):
    name: str
    arguments: Any = None


class ToolCall(msgspec.Struct):
    function: Function
    id: str | None = None


class Message(msgspec.Struct):
    content: str | None = None
    tool_calls: list[ToolCall] | None = None


class Choice(msgspec.Struct):
    message: Message
    finish_reason: str | None = None


class ChatCompletion(msgspec.Struct):
    """The part of a chat completion we read; everything else is ignored."""

    choices: list[Choice]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: Any = None  # read leniently (usage_of): an odd count must not lose the answer


class _TextChoice(msgspec.Struct):
    text: str | None = None
    finish_reason: str | None = None


class _TextCompletion(msgspec.Struct):
    """The part of a text completion we read."""

    choices: list[_TextChoice]
    model: str | None = None
    system_fingerprint: str | None = None
    usage: Any = None


def _decoded(body: bytes, shape: type[_T], what: str) -> _T:
    """The body as `shape`, exactly: a key written twice anywhere in it (a decoder keeps
    the last, another client the first) is a bad response, as malformed JSON is."""
    try:
        data = msgspec.json.decode(body, type=shape)
        keys_once(body, "")
    except (msgspec.DecodeError, RecursionError) as exc:  # a body nested past any sense
        raise SlotError(PROVIDER_ERROR("bad_response"), f"not {what}: {exc}") from None
    except InputError as exc:
        raise SlotError(PROVIDER_ERROR("bad_response"), f"not {what}: {exc.message}") from None
    return data


def decode_chat(body: bytes) -> ChatCompletion:
    data = _decoded(body, ChatCompletion, "a chat completion")
    if not data.choices:
        raise SlotError(PROVIDER_ERROR("empty_choices"), "the response has no choices")
    return data


def decode_text(body: bytes) -> ChatCompletion:
    """A text completion, in the chat shape."""
    data = _decoded(body, _TextCompletion, "a text completion")
    if not data.choices:
        raise SlotError(PROVIDER_ERROR("empty_choices"), "the response has no choices")
    first = data.choices[0]
    return ChatCompletion(
        choices=[Choice(Message(content=first.text), first.finish_reason)],
        model=data.model,
        system_fingerprint=data.system_fingerprint,
        usage=data.usage,
    )


def text_prompt(request: CompletionRequest) -> str:
    """What a text endpoint continues: the one message's content as it is (a benchmark's
    prompt is the start of the file); a repair round's messages joined by blank lines."""
    if request.tools:
        detail = "a text completions endpoint takes no tools: use endpoint: chat"
        raise SlotError(PROVIDER_ERROR("bad_request"), detail)
    return "\n\n".join(m.content for m in request.messages)


def reported(data: ChatCompletion) -> str | None:
    model = data.model or None
    if model and data.system_fingerprint:
        model = f"{model}@{data.system_fingerprint}"
    return model


def usage_of(data: ChatCompletion) -> Usage | None:
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
