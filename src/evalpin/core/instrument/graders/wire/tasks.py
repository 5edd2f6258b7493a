"""The candidate's awaitables, run as tasks in the worker's own event loop (one loop, in
a thread of its own, for the whole session). The test's loop polls them, so its own
timeouts, cancellations and other tasks hold while the candidate's code awaits."""

from __future__ import annotations

import itertools
import threading

from .protocol import ProtocolError

POLL_S = 0.002  # how long a poll waits for a task before the test's loop runs again


class Tasks:
    """The worker's tasks, by the id the judge polls or cancels them with."""

    def __init__(self) -> None:
        self._loop = None  # started with the first awaitable
        self._tasks: dict = {}
        self._ids = itertools.count(1)

    def start(self, awaitable) -> int:
        """Start awaiting `awaitable` in the worker's loop; the id of its task."""
        import asyncio

        async def drive():
            return await awaitable

        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            threading.Thread(
                target=self._loop.run_forever, name="evalpin-loop", daemon=True
            ).start()
        ident = next(self._ids)
        self._tasks[ident] = asyncio.run_coroutine_threadsafe(drive(), self._loop)
        return ident

    def poll(self, ident: int) -> list:
        """[done, result] of a task, after waiting for it a moment."""
        from concurrent.futures import CancelledError, wait

        future = self._tasks.get(ident)
        if future is None:
            raise ProtocolError("unknown task")
        wait([future], timeout=POLL_S)
        if not future.done():
            return [False, None]
        del self._tasks[ident]
        try:
            return [True, future.result()]
        except CancelledError:
            import asyncio

            raise asyncio.CancelledError() from None

    def cancel(self, ident: int) -> bool | None:
        """Cancel a task the test stopped awaiting (None: it had ended)."""
        future = self._tasks.pop(ident, None)
        return None if future is None else future.cancel()
