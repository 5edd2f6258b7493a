"""The review's progressive loader: read both runs a block at a time, index, join,
classify, find the causes and judge, posting each step as a message (`tui.messages`);
then follow a run that has no trailer yet as it is written (`Loader._follow`).

It runs in the review screen's thread worker and knows the screen only through what it
is handed: a `post` callable, the load's generation (messages of a replaced load are
dropped by the screen), the worker (cancelled when the pair is replaced) and the
`answered` event (set while the reviewer's last move is on screen: the loader yields
until then, so a key is answered before the next long step that holds the GIL).
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from evalpin.core.errors import InputError
from evalpin.core.judge.causes import Cause, find_causes
from evalpin.core.judge.compare import PIN_KEYS, Diff, pins_equal
from evalpin.core.judge.verdict import judge
from evalpin.core.read.formats import GONE, GREW, SAME, RunStream
from evalpin.core.read.runfile import RunFile, gc_paused
from evalpin.core.read.writer_mark import read_mark
from evalpin.core.records import CaseRow
from evalpin.core.review import judge_apart
from evalpin.core.review.case_index import CaseIndex
from evalpin.core.review.cases import CaseTable
from evalpin.core.review.judge_apart import JudgeApart
from evalpin.tui.messages import (
    CasesGrew,
    CasesReady,
    CausesReady,
    DiffReady,
    Followed,
    LoadFailed,
    LoadProgress,
    MismatchFound,
    RunReplaced,
    RunsRead,
    VerdictsReady,
)

if TYPE_CHECKING:
    from textual.worker import Worker

RunSource = str | Path | RunFile | RunStream
GROW_INTERVAL = 0.25  # seconds between updates of the partial list
# While the loader holds the GIL in Python loops, the UI thread waits up to the switch
# interval for it at every wake-up; a shorter one keeps keys prompt during indexing.
LOADING_SWITCH_INTERVAL = 0.001
# The loader waits between blocks while the reviewer's last move is not yet on screen
# (the list and the detail painted), at most this long a block: the reviewer comes first,
# and reading goes on even under a held-down key.
YIELD_AT_MOST = 0.25
FREEZE_FROM = 20_000
FOLLOW_EVERY = 0.5  # seconds between looks at a run still being written


def freeze_heap(records: int) -> None:
    """Move what loading built (rows, the case table) out of the cyclic GC's sight.

    Hundreds of thousands of long-lived objects make every full collection walk them all,
    which shows as a 100 ms stall on a key press now and then; `gc.freeze` spares them.
    Only for big runs: frozen objects are never collected, a cost small runs need not pay.
    """
    if records >= FREEZE_FROM:
        gc.freeze()


def source_path(source: RunSource) -> str:
    return source.path if isinstance(source, RunFile | RunStream) else str(source)


def as_stream(source: RunSource) -> RunStream:
    """A path is sniffed (InputError if it is no run); a run read whole is a finished
    stream; a stream the command line already started goes on where it stopped."""
    if isinstance(source, RunStream):
        return source
    if isinstance(source, RunFile):
        return RunStream.of(source)
    return RunStream(source)


def _writing(stream: RunStream) -> str | None:
    """`being written by pid N since T` while the writer its mark names is alive here."""
    writer = read_mark(stream.path)
    return writer.said() if writer is not None and writer.alive() else None


def differing_pins(lrow: CaseRow, rrow: CaseRow) -> list[tuple[str, str, str]]:
    """(key, left, right) for each pin that differs on one common (case, seed)."""
    return [
        (key, str(getattr(lrow, key)), str(getattr(rrow, key)))
        for key in PIN_KEYS
        if not pins_equal(key, getattr(lrow, key), getattr(rrow, key))
    ]


class Loader:
    """One load of a pair (or a single run); `run` is the whole of it."""

    def __init__(
        self,
        post: Callable[[Message], object],
        generation: int,
        worker: Worker[None],
        answered: threading.Event,
        on_apart: Callable[[JudgeApart | None], None],
    ) -> None:
        self.post, self.generation, self.worker = post, generation, worker
        self.answered = answered
        self.on_apart = on_apart  # told of the judging child (the screen stops it on exit)

    def give_way(self) -> None:
        """Wait while the reviewer's last move is not on screen yet, at most
        `YIELD_AT_MOST`: the long steps of loading hold the GIL the screen needs."""
        self.answered.wait(YIELD_AT_MOST)

    def run(self, left: RunSource, right: RunSource | None, refused: bool) -> None:
        """Read both runs a block at a time (the less-read side first, so the prefixes
        stay level), index as they grow, then join, classify and judge. `refused`: the
        headers already refuse the pair. Big runs are judged by a child process meanwhile
        (`core.judge_apart`)."""
        try:
            streams = [as_stream(left)] + ([as_stream(right)] if right is not None else [])
        except InputError as exc:
            self.post(LoadFailed(self.generation, str(exc)))
            return
        apart = JudgeApart.of(streams) if judge_apart.worth_it(streams) else None
        self.on_apart(apart)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, LOADING_SWITCH_INTERVAL))
        try:
            loaded = self._load(streams, refused, apart)
        finally:
            sys.setswitchinterval(interval)
            if apart is not None:
                apart.kill()  # done, or given up: nothing may outlive the load
        if loaded:
            self._follow(streams, refused)

    def _load(self, streams: list[RunStream], refused: bool, apart: JudgeApart | None) -> bool:
        """The body of `run`, with the streams opened and the child started: True when
        it got to the verdicts."""
        post, generation, worker = self.post, self.generation, self.worker
        try:
            with gc_paused():  # the cases it builds are long-lived: no GC passes over them
                read = self._read(streams, refused)
        except InputError as exc:
            post(LoadFailed(generation, str(exc)))
            return False
        if read is None or worker.is_cancelled:
            return False
        lrun, rrun, index = read
        runs = [lrun] + ([rrun] if rrun is not None else [])
        # Each step below is long C-level passes that hold the GIL: a key in progress is
        # answered first.
        for run in runs:
            self.give_way()
            # Gathered by the reader already for JSONL runs; counted here, not on the UI
            # thread, for a format read whole (the pins header shows the reported models).
            run.pin_values  # noqa: B018
        post(RunsRead(generation, lrun, rrun))
        diff = None
        if rrun is not None:
            post(LoadProgress(generation, "joining the runs…"))
            self.give_way()
            diff = index.join(lrun, rrun)
            self.give_way()
            post(DiffReady(generation, diff, diff.key_mismatches() if diff.refused else []))
        if worker.is_cancelled:
            return False
        post(LoadProgress(generation, "classifying cases…"))
        self.give_way()
        cases = index.finish(lrun, rrun, diff)
        self.give_way()
        cases.prepare()  # here, not on the UI thread
        freeze_heap(len(lrun.rows) + (len(rrun.rows) if rrun else 0))
        post(CasesReady(generation, cases))
        if diff is not None:
            post(CausesReady(generation, self._causes(diff)))
        verdicts = apart.verdicts(lambda: worker.is_cancelled) if apart is not None else None
        if worker.is_cancelled:
            return False
        if verdicts is None or len(verdicts) != len(runs):
            verdicts = [judge(run) for run in runs]
        post(VerdictsReady(generation, verdicts[0], verdicts[1] if rrun is not None else None))
        return True

    # -- following a run still being written -----------------------------------------

    def _follow(self, streams: list[RunStream], refused: bool) -> None:
        """Follow the runs that have no trailer yet, as `tail -f` does: every
        `FOLLOW_EVERY` seconds (longer when judging the grown runs took long), read the
        whole lines appended since (`RunStream.follow`: from the last byte read, never
        the file again), judge the runs as they now are and post it; say who writes them
        (the writer's mark, while that process lives). Stops once every trailer landed,
        when the pair is replaced (the worker cancelled) or a file was rewritten."""
        if not any(s.followable for s in streams):
            return
        post, generation = self.post, self.generation
        told: list[str | None] | None = None
        wait = FOLLOW_EVERY
        while True:
            following = any(s.followable for s in streams)
            writers = [_writing(s) if s.followable else None for s in streams]
            if writers != told or not following:
                post(Followed(generation, writers, following))
                told = writers
            if not following or self._sleep(wait):
                return
            try:
                found = [s.follow() if s.followable else SAME for s in streams]
            except InputError as exc:
                post(LoadFailed(generation, str(exc)))
                return
            if GONE in found:
                post(RunReplaced(generation))
                return
            if GREW in found:
                started = time.perf_counter()
                self._judge_again(streams, refused)
                wait = max(FOLLOW_EVERY, 4 * (time.perf_counter() - started))

    def _sleep(self, seconds: float) -> bool:
        """Wait, looking at the worker now and then: True when it was cancelled."""
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            if self.worker.is_cancelled:
                return True
            time.sleep(min(0.05, max(0.0, end - time.perf_counter())))
        return self.worker.is_cancelled

    def _judge_again(self, streams: list[RunStream], refused: bool) -> None:
        """The grown runs as a load ends: joined, classified and judged anew from the
        rows in memory (a new table: the one on screen is never changed under it)."""
        post, generation = self.post, self.generation
        lrun = streams[0].run
        rrun = streams[1].run if len(streams) > 1 else None
        assert lrun is not None
        index = CaseIndex(pair=rrun is not None)
        if refused:
            index.refuse()
        # Each step holds the GIL a while on a big pair: a key in progress is answered first.
        self.give_way()
        diff = index.join(lrun, rrun) if rrun is not None else None
        self.give_way()
        cases = index.finish(lrun, rrun, diff)
        cases.prepare()
        post(RunsRead(generation, lrun, rrun))
        if diff is not None:
            post(DiffReady(generation, diff, diff.key_mismatches() if diff.refused else []))
        post(CasesReady(generation, cases, followed=True))
        if diff is not None:
            self.give_way()
            post(CausesReady(generation, self._causes(diff)))
        self.give_way()
        left = judge(lrun)
        self.give_way()
        post(VerdictsReady(generation, left, judge(rrun) if rrun is not None else None))

    def _read(
        self, streams: list[RunStream], refused: bool
    ) -> tuple[RunFile, RunFile | None, CaseIndex] | None:
        """The reading loop: None when cancelled."""
        post, generation = self.post, self.generation
        lstream = streams[0]
        rstream = streams[1] if len(streams) > 1 else None
        index = CaseIndex(pair=rstream is not None)
        if refused:
            index.refuse()
        reading = list(streams)
        unread = list(reading)  # not yet stepped once: no first screen before each has
        table: CaseTable | None = None
        told = False
        posted = 0.0  # when CasesGrew was last posted
        while reading:
            stream = min(reading, key=lambda s: s.fraction)
            if not stream.step():
                reading.remove(stream)
            if stream in unread:
                unread.remove(stream)
            self.give_way()  # between the two halves of a block's work
            index.advance(lstream.rows, rstream.rows if rstream is not None else None)
            if index.mismatch is not None and not told:
                told = True
                row = index.mismatch[0]
                pins = differing_pins(*index.mismatch)
                post(MismatchFound(generation, pins, (row.case_id, row.seed)))
            if self.worker.is_cancelled:
                return None
            self.give_way()
            if unread:
                continue
            if table is None:
                table = index.table(
                    lstream.partial(), rstream.partial() if rstream is not None else None
                )
            table.mode = index.mode
            now = time.perf_counter()
            if now - posted >= GROW_INTERVAL / 2:  # each post wakes the UI thread: not per block
                posted = now
                fraction = sum(s.fraction for s in streams) / len(streams)
                post(CasesGrew(generation, table, fraction))  # the screen coalesces
        assert lstream.run is not None
        return lstream.run, rstream.run if rstream is not None else None, index

    def _causes(self, diff: Diff) -> list[Cause]:
        """What moved, by cause; none when a moved case's line cannot be read again (the
        file changed since: the detail says so for that case)."""
        try:
            return find_causes(diff, self.give_way)
        except (InputError, OSError):
            return []
