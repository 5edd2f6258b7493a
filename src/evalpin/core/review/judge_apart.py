"""Verdicts of big runs, judged in a child process while the review lists their cases.

The publish rule over a million rows is a few seconds of C-level passes (columns,
counters, sets), each holding the GIL for up to a tenth of a second. Run in the review's
own process after the list is complete, they held back its paints (at 2 x 1M records the
complete list reached the screen 1.3 s later) and every key press until they were done.
In a child process they use the machine's other core instead: the child reads the same
bytes of each file (`RunStream.stop`, the size the review reads, so a run still being
written is judged as it is shown) and sends back the verdicts.

Below `APART_BYTES` a file is judged in the review's process: starting a Python process
costs more than it saves. Whatever goes wrong in the child (a file that changed, a crash,
a kill) is never an answer: the caller judges in its own process, which reports any error
where it would have anyway.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass

from evalpin.core.judge.verdict import Verdict, judge
from evalpin.core.read.formats import ReadOptions, RunStream

APART_BYTES = 64 << 20  # the files of a review, together
_POLL = 0.05  # seconds between looks at whether the caller gave up
CHILD = [sys.executable, "-m", "evalpin.core.review.judge_apart"]  # the request is its argument
NICENESS = 10  # the child's: on two cores, the reviewer's keys must not wait on it


@dataclass(frozen=True)
class Request:
    """Which bytes of which files the child judges, with the review's read options."""

    runs: tuple[tuple[str, int | None], ...]  # (path, bytes to read: None for all)
    options: ReadOptions

    def to_json(self) -> str:
        return json.dumps({"runs": [list(run) for run in self.runs], **self.options.to_json()})

    @classmethod
    def from_json(cls, text: str) -> Request:
        data = json.loads(text)
        runs = tuple((str(path), stop) for path, stop in data["runs"])
        return cls(runs, ReadOptions.from_json(data))


def worth_it(streams: Sequence[RunStream]) -> bool:
    """Whether these streams, none read yet, are big enough to be judged apart on a
    machine with a second core."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if (cores or 1) < 2 or any(s.run is not None for s in streams):
        return False
    try:
        return sum(os.stat(s.path).st_size for s in streams) >= APART_BYTES
    except OSError:
        return False


class JudgeApart:
    """A child process judging the request's files; `verdicts()` waits for its answer."""

    def __init__(self, request: Request) -> None:
        self._proc = subprocess.Popen(
            [*CHILD, request.to_json()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    @classmethod
    def of(cls, streams: Sequence[RunStream]) -> JudgeApart:
        """Judge these streams' files, each up to the bytes its stream reads."""
        return cls(Request(tuple((s.path, s.stop) for s in streams), streams[0].options))

    def verdicts(self, cancelled: Callable[[], bool]) -> list[Verdict] | None:
        """The child's verdicts, in the order of the streams; None when it failed or
        `cancelled()` turned true while waiting (the child is then killed)."""
        while True:
            try:
                out, _ = self._proc.communicate(timeout=_POLL)
                break
            except subprocess.TimeoutExpired:
                if cancelled():
                    self.kill()
                    return None
        if self._proc.returncode != 0 or not out:
            return None
        try:
            verdicts = pickle.loads(out)  # from our own child, never from a file
        except (pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            return None
        return verdicts if isinstance(verdicts, list) else None

    def stop(self) -> None:
        """Kill the child if it is still at work (from any thread: the review closing)."""
        if self._proc.poll() is None:
            self._proc.kill()

    def kill(self) -> None:
        """Kill the child if it is still at work, and reap it (from the thread that
        waits on `verdicts`)."""
        self.stop()
        with suppress(subprocess.TimeoutExpired, ValueError):
            self._proc.communicate(timeout=5)


def judge_request(request: Request) -> list[Verdict]:
    """What the child does: each file read as the review reads it, then judged; one run
    in memory at a time."""
    verdicts = []
    for path, stop in request.runs:
        stream = RunStream(path, request.options, stop=stop)
        while stream.step():
            pass
        assert stream.run is not None
        verdicts.append(judge(stream.run))
        del stream
    return verdicts


def main(argv: Sequence[str]) -> int:
    gc.disable()  # a short-lived process of long-lived rows: no cyclic collection needed
    with suppress(OSError):  # the review's own threads come first for a core
        os.nice(NICENESS)
    verdicts = judge_request(Request.from_json(argv[1]))
    sys.stdout.buffer.write(pickle.dumps(verdicts, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
