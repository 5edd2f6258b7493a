"""Progress events of a run: one tagged union, encoded once, decoded once.

The runner and the session produce these; `evalpin run --progress json` writes each as one
JSON line (`encode`), and the TUI's launch panel, which runs that command as a child,
reads them back (`decode`). The wire shape (as the docs give it): an object whose `event` key
names the kind (`start`, `case`, `pace`, `warning`, `done`, `interrupted`, `failed`),
fields in the order below. Adding an event is one struct here, one line in `Event`, and
its handling in the two displays (cli/render_run.py, tui/screens/launch.py). Fields added
later have defaults and are left out while they hold them, so the lines an older reader
knows keep their shape.
"""

from __future__ import annotations

import json

import msgspec

from evalpin.core.records import Usage


class _Event(msgspec.Struct, frozen=True, tag_field="event", omit_defaults=True):
    @property
    def kind(self) -> str:
        """The `event` tag: start, case, warning, done, interrupted or failed."""
        return self.__struct_config__.tag


class StartEvent(_Event, tag="start"):
    """The header is written; `todo` of `total` (case, seed) pairs remain."""

    out: str
    run_id: str
    total: int
    todo: int
    network: str


class CaseEvent(_Event, tag="case"):
    """One record written, with the running tally."""

    case_id: str
    seed: int | None
    passed_case: bool = msgspec.field(name="pass")
    reasons: list[str] | None
    done: int
    total: int
    passed: int
    failed: int
    elapsed: float
    errors: int = 0  # could not be judged: neither passed nor failed
    disputed: int = 0  # plain pytest passed, the witness did not: neither passed nor failed
    # Completions in flight and the concurrency limit now (it falls on rate limits).
    in_flight: int = 0
    limit: int = 0


class PaceEvent(_Event, tag="pace"):
    """Requests in flight and time spent waiting on rate limits, sent while cases are
    in the air even when no record is written (a slow case holds back plan order)."""

    in_flight: int
    limit: int
    rate_limited: int  # rate-limit answers so far
    waited: float  # request-seconds spent waiting them out

    @property
    def shown(self) -> str:
        """One plain line for a display: in flight of the limit, and the waits so far."""
        text = f"{self.in_flight}/{self.limit} in flight"
        if self.rate_limited:
            text += f", {self.rate_limited} rate-limited ({self.waited:.1f} s waiting)"
        return text


class WarningEvent(_Event, tag="warning"):
    message: str


class DoneEvent(_Event, tag="done"):
    """The summary trailer is written: the run is complete."""

    out: str
    records: int
    passed: int
    failed: int
    seconds: float
    errors: int = 0
    disputed: int = 0
    usage: Usage | None = None  # tokens, from the summary trailer
    rate_limited: int = 0
    waited: float | None = None  # None: never waited (a float default is not omitted)
    lowest_limit: int = 0  # how far rate limits lowered the concurrency (0: they did not)


class InterruptedEvent(_Event, tag="interrupted"):
    """Stopped (Ctrl-C, SIGTERM); the file is whole and `resume` finishes it."""

    out: str
    done: int
    total: int
    resume: str


class FailedEvent(_Event, tag="failed"):
    out: str
    message: str


Event = (
    StartEvent | CaseEvent | PaceEvent | WarningEvent | DoneEvent | InterruptedEvent | FailedEvent
)
# The last event of every run that got past its inputs.
FinalEvent = DoneEvent | InterruptedEvent | FailedEvent

_decoder = msgspec.json.Decoder(Event)


def encode(event: Event) -> str:
    """One line of `--progress json`. ASCII only (`\\u` escapes), so no byte a model or
    a file put into a case id or message can act on the terminal that shows it."""
    return json.dumps(msgspec.to_builtins(event), ensure_ascii=True)


def decode(line: bytes | str) -> Event | None:
    """An event from one line of `--progress json`; None for anything that is not one
    (a stray print, a newer event kind), which a reader skips."""
    try:
        return _decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
