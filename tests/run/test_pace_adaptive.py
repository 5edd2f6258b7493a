"""The default concurrency finds the endpoint's pace (issue 31): against a server that
serves one request at a time it stays low; against a parallel one it climbs to the
ceiling; a 429 still halves it; `--concurrency N` fixes it.

The endpoints are simulated on the pace's own clock (`Pace(clock=...)`): each request
ends when the simulated server says, so the latencies the pace judges are exact and a
loaded machine changes nothing. `test_live.py` drives the pace against real servers.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

from evalpin.run.pace import Pace

SERVICE_S = 0.015


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def simulate(
    ceiling: int, service: Callable[[float], float], requests: int, workers: int = 16
) -> tuple[Pace, list[int]]:
    """`workers` clients sending `requests` in all through an adaptive pace; `service`
    says when a request sent at a time is answered. The limit after each answer."""
    clock = Clock()
    pace = Pace(ceiling, adaptive=True, clock=clock)
    in_air: list[tuple[float, int, object, object]] = []
    order = itertools.count()
    sent, limits = 0, []
    while sent < requests or in_air:
        while sent < requests and len(in_air) < workers:
            state = pace.state()
            if state.in_flight >= state.limit:
                break
            held = pace.request()
            permit = held.__enter__()  # free: it never waits here
            heapq.heappush(in_air, (service(clock.now), next(order), held, permit))
            sent += 1
        clock.now, _, held, permit = heapq.heappop(in_air)
        permit.succeeded()
        held.__exit__(None, None, None)
        limits.append(pace.state().limit)
    return pace, limits


def one_at_a_time(service_s: float) -> Callable[[float], float]:
    """A server with one worker: requests queue behind each other."""
    free = [0.0]

    def answer(sent: float) -> float:
        free[0] = max(free[0], sent) + service_s
        return free[0]

    return answer


def test_a_one_at_a_time_server_keeps_the_limit_low() -> None:
    pace, limits = simulate(16, one_at_a_time(SERVICE_S), 400)
    # Settled at 1, a step up tried now and then (every RETRY_WINDOWS windows).
    late = limits[len(limits) // 2 :]
    assert pace.state().lowest == 1
    assert max(late) <= 2 and sum(late) / len(late) < 1.5, late


def test_a_parallel_server_takes_the_limit_to_the_ceiling() -> None:
    pace, limits = simulate(16, lambda sent: sent + SERVICE_S * 5, 400)
    assert limits[-1] == 16 and pace.state().limit == 16
    assert min(limits[len(limits) // 2 :]) == 16  # and stays there


def test_a_server_with_four_workers_is_found_at_four() -> None:
    """Past four in flight requests only queue: the pace settles just above four (a
    latency within FLAT of the lowest reads as nothing queued), far below the ceiling."""
    workers = [0.0] * 4

    def answer(sent: float) -> float:
        first = min(range(4), key=workers.__getitem__)
        workers[first] = max(workers[first], sent) + SERVICE_S
        return workers[first]

    _, limits = simulate(16, answer, 600)
    late = limits[len(limits) // 2 :]
    assert min(late) >= 4 and max(late) <= 6, late


def test_a_fixed_concurrency_starts_at_its_value_and_a_429_halves_either() -> None:
    fixed = Pace(6)
    assert fixed.state().limit == 6
    found, _ = simulate(16, lambda sent: sent + SERVICE_S * 5, 200)
    before = found.state().limit
    assert before == 16  # found from the top down
    with found.request() as permit:
        permit.rate_limited()
    assert found.state().limit == before // 2
    assert found.state().rate_limited == 1


def test_an_endpoint_that_grows_is_followed_up_to_the_ceiling() -> None:
    """One worker for the first 300 requests, then as many as come: the pace, settled
    low, tries a step up now and then, finds more gets through, and doubles its way up."""
    serial = one_at_a_time(SERVICE_S)
    count = itertools.count()

    def answer(sent: float) -> float:
        return serial(sent) if next(count) < 300 else sent + SERVICE_S

    _, limits = simulate(16, answer, 1200)
    assert max(limits[250:300]) <= 2
    assert limits[-1] == 16, limits[300::40]
