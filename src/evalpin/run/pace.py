"""How many completion requests a slot may have in flight: finding the endpoint's pace.

Each request holds a permit while it is on the wire (not while it waits to retry). A
rate-limit signal (HTTP 429, or any answer carrying `Retry-After`) halves the limit
(multiplicative decrease). Only requests sent since the last decrease can decrease it
again, so one burst of 429s from requests that were already in the air counts as one
signal, not a collapse to 1 (TCP's once-per-round-trip rule).

`--concurrency N` fixes the ceiling and starts there; every success raises a lowered
limit by one (additive increase). Without it the limit is found (`adaptive`): it starts
at 1 and is judged a window of completions at a time (at least `WINDOW` and the limit
itself): while throughput rises by more than `GAIN`, or latency stays within `FLAT` times the
lowest seen (nothing queues), it doubles, then grows by one; when latency has grown past
`SLOWER` times the lowest seen without throughput rising, it falls back to the limit
that gave the best throughput. After a rate limit halved it, each success raises it by
one up to where it was. A server that serves one request
at a time stays near 1 (more only queue and add latency, up to its timeout); a parallel
one climbs to the ceiling in a few windows. Every `RETRY_WINDOWS` windows settled below
the ceiling, one step up is tried again (the endpoint may have grown).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from evalpin.run import events

DEFAULT_CONCURRENCY = 16
TICK_S = 0.5  # how often a run looks at its pace while waiting for cases
WINDOW = 2  # completions judged together, at the least
GAIN = 1.10  # throughput must rise by this much for more in flight to count
SLOWER = 1.3  # latency past this many times the lowest seen, with no gain: back off
FLAT = 1.2  # latency within this many times the lowest seen: nothing queues, grow
RETRY_WINDOWS = 16


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
        self._started = pace.clock()

    def succeeded(self) -> None:
        latency = self._pace.clock() - self._started
        self._pace._adjust(self._epoch, limited=False, latency=latency)

    def rate_limited(self) -> None:
        self._pace._adjust(self._epoch, limited=True)


class Pace:
    """AIMD limit on requests in flight, shared by every thread of one run."""

    def __init__(
        self,
        ceiling: int = DEFAULT_CONCURRENCY,
        *,
        adaptive: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock` times windows and latencies (a test's own clock judges a simulated
        endpoint exactly, whatever the machine's load)."""
        if ceiling < 1:
            raise ValueError("concurrency must be at least 1")
        self.ceiling = ceiling
        self.adaptive = adaptive
        self.clock = clock
        self._limit = float(ceiling)
        # Found: it starts at the ceiling and halves while throughput holds (a server
        # that serves one at a time loses nothing at half), then climbs as below.
        self._descending = adaptive
        self._window = _Window(None)  # opened by the first request: a run's set-up is no window
        self._best = (0.0, 1)  # (throughput, limit) of the best window
        self._fastest = math.inf  # the lowest mean latency of a window
        self._growing = True  # doubling until throughput stops rising
        self._settled = 0  # windows since the limit last moved
        self._queued_at = ceiling + 1  # the lowest limit seen to only queue requests
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
            if self._window.started is None:
                self._window.started = self.clock()
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

    def _adjust(self, epoch: int, *, limited: bool, latency: float = 0.0) -> None:
        with self._cond:
            if not limited:
                if self.adaptive and (self._descending or self._limit >= self._best[1]):
                    self._judge(latency)
                elif self._limit < (self._best[1] if self.adaptive else self.ceiling):
                    # Below what was found (a 429 halved it): back up by one a success.
                    self._limit = min(self.ceiling, self._limit + 1)
                    self._cond.notify_all()
                return
            self._rate_limited += 1
            if epoch == self._epoch:  # sent since the last decrease: a new signal
                self._limit = max(1.0, self._limit / 2)
                self._lowest = min(self._lowest, int(self._limit))
                self._epoch += 1
                if self.adaptive:  # climbed back a success at a time, then judged again
                    self._descending = False
                    self._best = (self._best[0], max(self._best[1], int(self._limit * 2)))
                    self._window = _Window(self.clock())

    def _judge(self, latency: float) -> None:
        """One more completion of the window; at its end, move the limit (see the module
        docstring). Called with the condition held."""
        w = self._window
        w.done += 1
        w.latency += latency
        limit = int(self._limit)
        if w.done < max(WINDOW, limit):
            return
        now = self.clock()
        started = now if w.started is None else w.started
        throughput = w.done / max(now - started, 1e-9)
        mean = w.latency / w.done
        self._fastest = min(self._fastest, mean)
        self._window = _Window(now)
        best, best_limit = self._best
        new = limit
        if self._descending:
            if throughput >= best / GAIN and limit > 1:
                self._best = (max(best, throughput), limit)  # as much, with fewer in flight
                new = limit // 2
            else:
                self._descending = False
                self._growing = False
                if throughput >= best / GAIN:  # down to 1 and nothing lost
                    self._best = (max(best, throughput), limit)
                    self._queued_at = 2  # more in flight gave nothing: not worth trying soon
                else:
                    new = best_limit  # halving lost throughput: back to the last that held
                    self._queued_at = min(self.ceiling + 1, best_limit * 2)
        elif limit < self._queued_at and (throughput > best * GAIN or mean <= self._fastest * FLAT):
            # More got through, or nothing queued (latency as low as ever): more in flight,
            # short of where requests were last seen to queue.
            self._best = (max(best, throughput), limit)
            grown = limit * 2 if self._growing else limit + 1
            new = min(self.ceiling, grown, self._queued_at)
        else:
            self._growing = False
            if mean > self._fastest * SLOWER and limit > best_limit:
                new = best_limit  # more in flight only queued: back to the best
                self._queued_at = limit
            else:
                self._best = (max(best, throughput), best_limit)
                self._settled += 1
                if self._settled >= RETRY_WINDOWS and limit < self.ceiling:
                    new = limit + 1  # try one more again: the endpoint may have grown
                    self._queued_at = self.ceiling + 1
                    self._best = (best / GAIN, best_limit)  # judged afresh
        if new != limit:
            self._settled = 0
            self._limit = float(new)
            self._lowest = min(self._lowest, new)
            self._cond.notify_all()


@dataclass
class _Window:
    started: float | None
    done: int = 0
    latency: float = 0.0


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
