"""The slot interface and its closed failure vocabulary.

A slot turns a `CompletionRequest` into a `Completion`. When it cannot, it raises
`SlotError` with a DESIGN reason code, which the runner records as the case's reason
instead of aborting the run: one dead endpoint or one missing recorded line is a fact
about that case, not a crash.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import TYPE_CHECKING

from evalpin.core.records import Completion, CompletionRequest

if TYPE_CHECKING:
    from evalpin.run.slots.config import SlotConfig

NO_COMPLETION = "no_completion"

# The KIND in `provider_error:KIND`. Closed on purpose: records are grepped and diffed on
# these strings, so a new kind is a contract change (README changelog), not a free-form
# message.
PROVIDER_ERROR_KINDS = {
    "timeout": "no answer in time: client timeout, HTTP 408, or a command past timeout_s",
    "connection": "the endpoint could not be reached or dropped the connection",
    "rate_limited": "HTTP 429 on every attempt",
    "server_error": "HTTP 5xx on every attempt",
    "auth": "HTTP 401/403: the key was refused (never retried)",
    "bad_request": "any other HTTP 4xx, or a tool schema that cannot be sent",
    "bad_response": "the response body is not JSON or not shaped like a chat completion",
    "empty_choices": "a chat completion with no choices",
    "command_failed": "a command slot's program could not start or exited non-zero",
    "bad_output": "a command slot's stdout is not one JSON completion",
}


def provider_error(kind: str) -> str:
    """The reason code for a provider failure of `kind` (one of PROVIDER_ERROR_KINDS)."""
    if kind not in PROVIDER_ERROR_KINDS:
        raise ValueError(f"unknown provider error kind {kind!r}")
    return f"provider_error:{kind}"


class SlotError(Exception):
    """A request got no usable completion.

    `reason` is the stable code the runner records; `detail` is a short human note (never
    a key, a URL or response text that could carry one).
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        if reason != NO_COMPLETION:
            provider_error(reason.removeprefix("provider_error:"))
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


class Slot(ABC):
    """An opened completion backend; `complete` may be called from several threads."""

    def __init__(self, config: SlotConfig) -> None:
        self.config = config
        # Problems that leave the slot usable (e.g. skipped replay lines), for the runner
        # to print and record.
        self.warnings: list[str] = []

    @abstractmethod
    def complete(self, request: CompletionRequest) -> Completion:
        """The completion for `request`, or `SlotError`."""

    @abstractmethod
    def close(self) -> None:
        """Release what the slot holds; the runner calls it once, after the last case."""

    def __enter__(self) -> Slot:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
