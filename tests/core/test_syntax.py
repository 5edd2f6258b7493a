"""Parsing from several threads at once: CPython 3.11 shares the AST constructor's
recursion depth across threads, so the grader's two side-by-side runs once failed a
valid test file with a SystemError."""

from __future__ import annotations

import gc
import threading
import time

from evalpin.core.instrument.graders.junit import expected_tests

# Many nested nodes, so a parse spans several garbage collections.
SOURCE = "\n".join(
    f"def test_{i}(a=1):\n    assert [x + {i} for x in (a, -a) if x] or {{'k': (a,)}}\n"
    for i in range(300)
)


def _switch_on_collection(phase: str, info: dict) -> None:
    """A collection hands the interpreter to another thread mid-parse, as a finaliser
    written in Python can."""
    if phase == "start":
        time.sleep(0)


def test_threads_reading_test_files_at_once_each_get_every_test() -> None:
    results: list[int] = []
    errors: list[BaseException] = []

    def read() -> None:
        for _ in range(10):
            try:
                results.append(len(expected_tests(SOURCE)))
            except BaseException as exc:
                errors.append(exc)

    gc.callbacks.append(_switch_on_collection)
    try:
        threads = [threading.Thread(target=read) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        gc.callbacks.remove(_switch_on_collection)
    assert errors == []
    assert results == [300] * 40
