"""Choosing the left side of a nightly diff: the newest earlier run on the same instrument.

"Same instrument" is `history`'s series: the same dataset hash, grader version, model
slot and reported model. Runs of the same fixtures (the same track) on another
instrument are never a baseline; when the newest earlier run on these fixtures is one,
the choice names what changed (backend delta, rubric change, dataset edit, unpinned), so
the refusal says why instead of comparing across the break.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalpin.core.errors import InputError
from evalpin.core.judge.history import read_history_run, run_break, run_files
from evalpin.core.judge.report import BaselineChoice, InstrumentChange
from evalpin.core.judge.series import HistoryRun
from evalpin.core.read.formats import ReadOptions
from evalpin.core.read.rundata import RunFile
from evalpin.core.read.runfile import read_run


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def choose_baseline(
    folder: Path, path: Path, run: RunFile, options: ReadOptions | None = None
) -> tuple[BaselineChoice, RunFile | None]:
    """The newest run in `folder` that started before `run` on the same instrument,
    read; else None with the newest earlier run on these fixtures (its changes named).
    Unreadable files are passed over and listed; `run` itself is never its own baseline.
    """
    point = read_history_run(path, run)
    earlier: list[HistoryRun] = []
    skipped: list[str] = []
    for candidate in run_files(folder):
        if _same_file(candidate, path):
            continue
        try:
            other = read_run(candidate, options)
        except InputError as exc:
            skipped.append(str(exc))
            continue
        except OSError as exc:
            skipped.append(f"{candidate}: cannot read: {exc.strerror or exc}")
            continue
        seen = read_history_run(candidate, other)
        if seen.fixtures == point.fixtures and seen.when < point.when:
            earlier.append(seen)  # the summary only: one run's rows in memory at a time
    earlier.sort(key=lambda seen: (seen.when, seen.path), reverse=True)
    if not point.missing:
        for seen in earlier:
            if not seen.missing and seen.key == point.key:
                choice = BaselineChoice(str(folder), seen.path, None, [], [], skipped)
                return choice, read_run(seen.path, options)
    if not earlier:
        return BaselineChoice(str(folder), None, None, [], [], skipped), None
    last = earlier[0]
    brk = run_break(last, point)
    changes = [InstrumentChange(c.key, c.before, c.after) for c in brk.changes]
    choice = BaselineChoice(str(folder), None, last.path, brk.kinds, changes, skipped)
    return choice, read_run(last.path, options)
