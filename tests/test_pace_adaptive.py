"""The default concurrency finds the endpoint's pace (issue 31): against a server that
serves one request at a time it stays low; against a parallel one it climbs to the
ceiling; a 429 still halves it; `--concurrency N` fixes it."""

from __future__ import annotations

import threading
import time

from evalpin.run.pace import Pace

SERVICE_S = 0.015


def drive(pace: Pace, serve, requests: int, threads: int = 16) -> list[int]:
    """`threads` workers sending `requests` in all through the pace; the limits seen."""
    left = [requests]
    lock = threading.Lock()
    limits: list[int] = []

    def worker() -> None:
        while True:
            with lock:
                if left[0] <= 0:
                    return
                left[0] -= 1
            with pace.request() as permit:
                serve()
                permit.succeeded()
            with lock:
                limits.append(pace.state().limit)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return limits


def test_a_one_at_a_time_server_keeps_the_limit_low() -> None:
    one = threading.Lock()

    def serial() -> None:
        with one:
            time.sleep(SERVICE_S)

    pace = Pace(16, adaptive=True)
    limits = drive(pace, serial, 200)
    # Settled far below the ceiling (near 1, a step up tried now and then); the bound
    # leaves room for a loaded machine's noise in the latencies it judges by.
    late = limits[len(limits) // 2 :]
    assert sum(late) / len(late) <= 4 and pace.state().lowest <= 2


def test_a_parallel_server_takes_the_limit_to_the_ceiling() -> None:
    pace = Pace(16, adaptive=True)
    limits = drive(pace, lambda: time.sleep(SERVICE_S * 5), 400)
    assert max(limits) == 16 and pace.state().limit >= 8


def test_a_fixed_concurrency_starts_at_its_value_and_a_429_halves_either() -> None:
    fixed = Pace(6)
    assert fixed.state().limit == 6
    found = Pace(16, adaptive=True)
    assert found.state().limit == 16  # found from the top down
    drive(found, lambda: time.sleep(SERVICE_S * 5), 200)
    before = found.state().limit
    with found.request() as permit:
        permit.rate_limited()
    assert found.state().limit == max(1, before // 2)
    assert found.state().rate_limited == 1
