"""How many completion requests a slot may have in flight, adapting to rate limits.

`--concurrency N` is the ceiling. Each request holds a permit while it is on the wire
(not while it waits to retry). A rate-limit signal (HTTP 429, or any answer carrying
`Retry-After`) halves the limit (multiplicative decrease); every success raises it by one
(additive increase), never above the ceiling. Only requests sent since the last decrease
can decrease it again, so one burst of 429s from requests that were already in the air
counts as one signal, not a collapse to 1 (TCP's once-per-round-trip rule).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from evalpin.run import events

DEFAULT_CONCURRENCY = 16
TICK_S = 0.5  # how often a run looks at its pace while waiting for cases


@dataclass(frozen=True)
class PaceState:
    """A snapshot for progress displays."""

    in_flight: int
    limit: int
    rate_limited: int  # rate-limit answers received so far
    waited_s: float  # request-seconds spent waiting out rate limits (summed over requests)
    lowest: int  # the lowest the limit fell to


class Permit:
    """One request on the wire; tells the pace how it ended."""

    def __init__(self, pace: Pace, epoch: int) -> None:
        self._pace, self._epoch = pace, epoch

    def succeeded(self) -> None:
        self._pace._adjust(self._epoch, limited=False)

    def rate_limited(self) -> None:
        self._pace._adjust(self._epoch, limited=True)


class Pace:
    """AIMD limit on requests in flight, shared by every thread of one run."""

    def __init__(self, ceiling: int = DEFAULT_CONCURRENCY) -> None:
        if ceiling < 1:
            raise ValueError("concurrency must be at least 1")
        self.ceiling = ceiling
        self._limit = float(ceiling)
        self._in_flight = 0
        self._epoch = 0
        self._rate_limited = 0
        self._waited = 0.0
        self._lowest = ceiling
        self._cond = threading.Condition()

    @contextmanager
    def request(self) -> Iterator[Permit]:
        """Wait for a free permit, hold it for one request."""
        with self._cond:
            while self._in_flight >= int(self._limit):
                self._cond.wait()
            self._in_flight += 1
            permit = Permit(self, self._epoch)
        try:
            yield permit
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify()

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        """Sit out a rate limit (counted as waiting); True when `stop` ended it early."""
        started = time.monotonic()
        stopped = stop.wait(seconds)
        with self._cond:
            self._waited += time.monotonic() - started
        return stopped

    def state(self) -> PaceState:
        with self._cond:
            return PaceState(
                self._in_flight,
                int(self._limit),
                self._rate_limited,
                round(self._waited, 3),
                self._lowest,
            )

    def _adjust(self, epoch: int, *, limited: bool) -> None:
        with self._cond:
            if not limited:
                if self._limit < self.ceiling:
                    self._limit = min(self.ceiling, self._limit + 1)
                    self._cond.notify_all()
                return
            self._rate_limited += 1
            if epoch == self._epoch:  # sent since the last decrease: a new signal
                self._limit = max(1.0, self._limit / 2)
                self._lowest = min(self._lowest, int(self._limit))
                self._epoch += 1


class PaceTicker:
    """Sends a `pace` event when the requests in flight or the waits changed, at most
    every half second, so a display moves while plan order holds records back."""

    def __init__(self, pace: Pace, emit: Callable[[events.Event], None]) -> None:
        self.pace, self.emit = pace, emit
        self.last: PaceState | None = None
        self.at = 0.0

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.at < TICK_S:
            return
        state = self.pace.state()
        if state != self.last:
            self.last, self.at = state, now
            self.emit(
                events.PaceEvent(
                    in_flight=state.in_flight,
                    limit=state.limit,
                    rate_limited=state.rate_limited,
                    waited=state.waited_s,
                )
            )
