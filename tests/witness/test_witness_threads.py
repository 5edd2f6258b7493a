"""Threads call across the witness as they call in one process (issue 48,
docs/concepts/isolation.md's row of threads): every call a thread of the test's makes
into the candidate runs in one thread of the worker's for that thread's whole life, and
every callback a thread of the candidate's makes into the test in one thread of the
judge's, so each side's `threading.local` state made in one call is there at the next,
and the serving thread goes when the calling thread ends (`wire/channel.py`). Each case
passes plain `python -m pytest` in-process and must grade `pass`."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-test-threads-calls-share-its-thread-state",
        "sessions.py",
        """
        import itertools
        import threading

        _here = threading.local()
        _numbers = itertools.count(1)


        def session():
            # One session number per thread, made at its first call.
            if not hasattr(_here, "number"):
                _here.number = next(_numbers)
            return _here.number


        def tally():
            _here.calls = getattr(_here, "calls", 0) + 1
            return _here.calls


        def threads_alive():
            return threading.active_count()
        """,
        """
        import threading
        import time
        from concurrent.futures import ThreadPoolExecutor

        import sessions


        def test_each_thread_keeps_one_session_over_its_calls():
            seen = {}

            def client(name):
                seen[name] = [sessions.session() for _ in range(12)]

            threads = [threading.Thread(target=client, args=(n,)) for n in ("ann", "bo", "cy")]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert all(len(set(numbers)) == 1 for numbers in seen.values())
            firsts = {numbers[0] for numbers in seen.values()}
            assert len(firsts) == 3 and sessions.session() not in firsts


        def test_a_threads_tally_counts_its_own_calls():
            counts = []
            t = threading.Thread(target=lambda: counts.extend(sessions.tally() for _ in range(5)))
            t.start()
            t.join()
            assert counts == [1, 2, 3, 4, 5]


        def test_a_pools_workers_each_keep_their_session():
            def task(_):
                return threading.current_thread().name, sessions.session()

            with ThreadPoolExecutor(max_workers=2) as pool:
                pairs = list(pool.map(task, range(30)))
            by_name = {}
            for name, number in pairs:
                by_name.setdefault(name, set()).add(number)
            assert all(len(numbers) == 1 for numbers in by_name.values())
            assert len({min(n) for n in by_name.values()}) == len(by_name)


        def test_the_threads_serving_a_test_thread_end_with_it():
            before = sessions.threads_alive()
            threads = [threading.Thread(target=sessions.session) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            deadline = time.monotonic() + 10
            while sessions.threads_alive() > before and time.monotonic() < deadline:
                time.sleep(0.02)
            assert sessions.threads_alive() <= before
        """,
    ),
    _case(
        "a-candidate-threads-callbacks-share-the-tests-thread-state",
        "background.py",
        """
        import threading


        def repeat_in_thread(callback, times):
            # Calls callback(i) `times` times from one thread of its own.
            results = []
            runner = threading.Thread(target=lambda: results.extend(map(callback, range(times))))
            runner.start()
            runner.join()
            return results
        """,
        """
        import threading

        import background


        def test_one_candidate_thread_calls_back_from_one_thread():
            here = threading.local()

            def step(i):
                here.steps = getattr(here, "steps", 0) + 1
                return threading.get_ident(), here.steps

            got = background.repeat_in_thread(step, 8)
            assert [steps for _, steps in got] == list(range(1, 9))
            assert len({ident for ident, _ in got}) == 1
            assert got[0][0] != threading.get_ident()
        """,
    ),
    _case(
        "threads-take-turns-at-the-tests-generator",
        "turns.py",
        """
        import threading


        class Shared:
            # One iterator that several threads take from, an item at a time.
            def __init__(self, source):
                self._source = iter(source)
                self._lock = threading.Lock()

            def __iter__(self):
                return self

            def __next__(self):
                with self._lock:
                    return next(self._source)
        """,
        """
        import threading

        import turns


        def test_every_item_is_taken_once_and_every_thread_sees_the_end():
            def numbers():
                yield from range(400)

            shared = turns.Shared(numbers())
            totals, ended = [], []

            def take():
                totals.append(sum(shared))
                ended.append(next(shared, "end"))

            threads = [threading.Thread(target=take) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert sum(totals) == sum(range(400)) and ended == ["end"] * 8
        """,
    ),
)

test_the_corpus_passes_in_plain_pytest, test_a_carried_case_grades_pass, _ = corpus_tests(
    CARRIED, {}
)
