"""The slot interface and how a slot fails.

A slot turns a `CompletionRequest` into a `Completion`. When it cannot, it raises
`SlotError` with a registered reason code (`no_completion` or `provider_error:KIND`, whose
KINDs are closed in core/reasons.py), which the runner records as the case's reason
instead of aborting the run: one dead endpoint or one missing recorded line is a fact
about that case, not a crash.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar

from evalpin.core import reasons
from evalpin.core.records import Completion, CompletionRequest
from evalpin.run.pace import Pace

if TYPE_CHECKING:
    from evalpin.run.slots.config import SlotConfig

NO_COMPLETION = reasons.NO_COMPLETION()


class SlotError(Exception):
    """A request got no usable completion.

    `reason` is the stable code the runner records; `detail` is the failure in words,
    the server's own message included (keys scrubbed; the runner caps it and cuts every
    secret value before it is written). `partial`: what the request got before it failed
    (the turns of a tool conversation so far, the tokens they spent), kept on the record.
    """

    def __init__(self, reason: str, detail: str = "", partial: Completion | None = None) -> None:
        if reasons.lookup(reason) not in (reasons.NO_COMPLETION, reasons.PROVIDER_ERROR):
            raise ValueError(f"not a slot failure code: {reason!r}")
        self.reason = reason
        self.detail = detail
        self.partial = partial
        super().__init__(f"{reason}: {detail}" if detail else reason)


class Slot(ABC):
    """An opened completion backend; `complete` may be called from several threads."""

    # True when the slot holds a `pace` permit per request on the wire itself (and tells
    # it about rate limits); otherwise the runner holds one around each `complete`.
    paces_requests: ClassVar[bool] = False

    def __init__(self, config: SlotConfig) -> None:
        self.config = config
        # Problems that leave the slot usable (e.g. skipped replay lines), for the runner
        # to print and record.
        self.warnings: list[str] = []
        # Requests in flight; the runner replaces it with one sized by --concurrency.
        self.pace = Pace()
        # The run whose records this slot replays ({run_id, model_slot, path}), if any.
        self.replay_of: dict[str, Any] | None = None

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
