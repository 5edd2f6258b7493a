"""`diff` of two big runs on two cores: each process reads and joins one half of both.

Most of a big diff is decoding lines into lean rows, and that is object creation: rows
made in one process cannot be handed to another without being made again (measured on
2 x 1M records: shipping one run's rows to the parent cost it 0.83 s against 0.97 s for
reading the file itself). So the runs are cut, not the work. Both files are cut where
the same case starts; a forked helper reads, joins and tallies the second halves while
this process does the first, and only small results cross: the moves, each half's
per-seed counts, pins and line index.

The cut is exact or the halves are not used. It falls where a case starts in the left
file and the same (case, seed) starts a case in the right, so a case's rows never
straddle the halves, and whatever the halves cannot settle alone sends the caller back
to the one-process path, which gives the canonical answer: a bad line in either file
(its error and line number come from that path), runs that do not list the same keys in
the same order, a refusal, a summary before the cut, a case seen in both halves, runs
whose header lists no seeds, a trailer whose CRC the two halves' bytes do not make
(core/read/vouch.py: each half hashes its bytes, the CRCs are joined here; the one-process
path then checks every line). Headers that already refuse the pair skip the split: a
refusal lists every row.
"""

from __future__ import annotations

import os
import pickle
import signal
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from itertools import pairwise
from operator import attrgetter
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.files import open_input
from evalpin.core.judge.causes import Tally, causes_of, merged, tally_causes
from evalpin.core.judge.compare import Diff, Moved, Pair, compare
from evalpin.core.judge.paired import SharedTally, paired_from, tally_of
from evalpin.core.judge.report import DiffReport, build_from
from evalpin.core.read.discovery import header_mismatch
from evalpin.core.read.formats import sniff
from evalpin.core.read.line_index import LineIndex
from evalpin.core.read.rundata import SHAPE_EVALPIN, RunFile, Scan
from evalpin.core.read.vouch import Vouch, crc32_combine, trailer_vouch
from evalpin.core.records import CaseRow, RunHeader, Summary
from evalpin.core.shared_pins import PINS

# Below this size a file is read in one process: at 60 MB a file the split measured
# 0.437 s against 0.441 s (forking and shipping eat what the second core saves).
SPLIT_BYTES = 64 << 20
# The helper's share of each file: less than half, as its copy-on-write faults and the
# shipping of its results cost it ~0.3 s more than the same bytes cost this process.
HELPER_SHARE = 0.45
_WINDOW = 4 << 20  # bytes searched for the cut, in each file
_FIELDS = attrgetter(*CaseRow.__struct_fields__)


class _Key(msgspec.Struct):
    """The join key of a case line, all a cut needs to read."""

    case_id: str
    seed: int | None = None


_KEY = msgspec.json.Decoder(_Key)
_HEADER = msgspec.json.Decoder(RunHeader)


@dataclass
class _Side:
    """One run's half as the other process needs it: counts, pins, line index."""

    rows: int
    pin_values: dict[str, frozenset[str | None]]
    lacks_fixture_hash: bool
    first_rows: array
    starts: array
    summary: Summary | None
    torn: bool
    crc: int  # of the bytes this half read, up to the trailer (vouch.py)
    hashed: int  # how many


@dataclass
class _Half:
    """What one process learnt from its half of both runs (the small results only)."""

    left: _Side
    right: _Side
    moved: list[tuple[Any, int, int, str, CaseRow, CaseRow]]  # key, li, ri, kind, rows
    tally: tuple[dict, int, int, Counter, int, int]  # SharedTally's fields, settled
    case_hashes: array  # hash of each distinct case id, to find a case in both halves
    causes: Tally  # what its moves show, read by this half's process (core/judge/causes.py)


def diff_in_halves(left: Path, right: Path, detail: int | None) -> DiffReport | None:
    """`build_report(read_run(left), read_run(right), detail=detail)`, from two
    processes; None when the runs are small, not evalpin runs, or the halves cannot
    settle the comparison (the caller then reads them in one process)."""
    if not _worth_splitting(left, right):
        return None
    headers = (_header(left), _header(right))
    cuts = _cuts(left, right)
    if headers[0] is None or headers[1] is None or cuts is None:
        return None
    if not headers[0].seeds or not headers[1].seeds:
        return None
    if header_mismatch(*headers):  # a refusal: it lists every row, from one process
        return None
    vouches = (_vouch(left), _vouch(right))
    first = (left, right, (0, cuts[0]), (0, cuts[1]), (None, None), vouches)
    second = (left, right, (cuts[0], None), (cuts[1], None), headers, vouches)
    pid, pipe = _fork(lambda: _shipped(*second))
    try:
        mine = _half(*first)
        if mine is None:
            return None
        with os.fdopen(pipe, "rb") as fh:
            pipe = -1
            payload = fh.read()  # the helper closes its end before it exits
        if not payload:
            return None
        theirs: _Half = pickle.loads(payload)
        own, parts = mine
        if not set(theirs.case_hashes).isdisjoint(own.case_hashes):
            return None
        if not _vouched(vouches[0], own.left, theirs.left):
            return None
        if not _vouched(vouches[1], own.right, theirs.right):
            return None
        return _report(own, parts, theirs, headers, (left, right), detail)
    finally:
        # Reaped last: the helper's exit (unmapping its rows) need not be waited for
        # while the report is built. Killed first, in case this half failed early.
        if pipe >= 0:
            os.close(pipe)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _worth_splitting(left: Path, right: Path) -> bool:
    if not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2:
        return False
    try:
        if min(left.stat().st_size, right.stat().st_size) < SPLIT_BYTES:
            return False
        return all(sniff(p)[0].name == SHAPE_EVALPIN for p in (left, right))
    except (OSError, InputError):
        return False  # the one-process path says what is wrong


def _vouch(path: Path) -> Vouch | None:
    with open_input(path) as fh:
        return trailer_vouch(fh)


def _vouched(vouch: Vouch | None, first: _Side, second: _Side) -> bool:
    """Whether the trailer's CRC holds for the two halves' bytes (each half skipped its
    per-line check on its word); True without one (each half checked every line)."""
    if vouch is None:
        return True
    crc = crc32_combine(first.crc, second.crc, second.hashed)
    return first.hashed + second.hashed == vouch.at and crc == vouch.crc


def _header(path: Path) -> RunHeader | None:
    with open_input(path) as fh:
        line = fh.readline()
    try:
        return _HEADER.decode(line)
    except (msgspec.MsgspecError, RecursionError):
        return None


def _cuts(left: Path, right: Path) -> tuple[int, int] | None:
    """Byte offsets where the same (case, seed) starts a case in both files, near the
    middle of the left; None when none is found near the right's matching point."""
    lsize, rsize = left.stat().st_size, right.stat().st_size
    lines = _keys_at(left, int(lsize * (1 - HELPER_SHARE)))
    start = next((b for a, b in pairwise(lines) if a[1].case_id != b[1].case_id), None)
    if start is None:
        return None
    lcut, key = start
    centre = rsize * lcut // lsize
    for (_, before), (rcut, here) in pairwise(_keys_at(right, max(1, centre - _WINDOW // 2))):
        if here == key and before.case_id != key.case_id:
            return lcut, rcut
    return None


def _keys_at(path: Path, offset: int) -> list[tuple[int, _Key]]:
    """(offset, key) of each whole case line in the window from `offset` on (the line
    `offset` falls inside is skipped: only its end is there)."""
    with open_input(path) as fh:
        fh.seek(offset)
        data = fh.read(_WINDOW)
    pos = data.find(b"\n") + 1
    out = []
    for line in data[pos:].split(b"\n")[:-1]:
        with suppress(msgspec.MsgspecError, RecursionError):  # odd lines: the scans judge them
            out.append((offset + pos, _KEY.decode(line)))
        pos += len(line) + 1
    return out


def _fork(work: Callable[[], bytes]) -> tuple[int, int]:
    """Run `work` in a forked child; its bytes arrive on the returned pipe (nothing
    when it failed). The child never returns into the caller's code."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 1
        try:
            os.close(read)
            payload = work()
            with os.fdopen(write, "wb") as out:
                out.write(payload)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _shipped(*args: Any) -> bytes:
    """The second half, as the parent receives it (empty: it cannot be settled)."""
    settled = _half(*args)
    if settled is None:
        return b""
    return pickle.dumps(settled[0], protocol=pickle.HIGHEST_PROTOCOL)


def _half(
    left: Path,
    right: Path,
    lrange: tuple[int, int | None],
    rrange: tuple[int, int | None],
    headers: tuple[RunHeader | None, RunHeader | None],
    vouches: tuple[Vouch | None, Vouch | None],
) -> tuple[_Half, tuple[Diff, RunFile, RunFile]] | None:
    """Read and join one half of both runs; None when this half cannot be settled
    alone (see the module docstring)."""
    try:
        lrun, lscan = _scan(left, lrange, headers[0], vouches[0])
        rrun, rscan = _scan(right, rrange, headers[1], vouches[1])
    except InputError:  # the one-process path names the file and line
        return None
    first = lrange[0] == 0
    if first and (lrun.summary is not None or rrun.summary is not None):
        return None
    diff = compare(lrun, rrun)
    if diff.refused or diff.left_columns is None:  # refused, or not aligned
        return None
    tally = tally_of(diff)
    columns = diff.left_columns
    settled = _Half(
        left=_side(lrun, lscan),
        right=_side(rrun, rscan),
        moved=[] if first else [_plain(m) for m in diff.moved],
        tally=(
            tally.counts,
            tally.rows,
            tally.cases,
            tally.flipped_rows,
            tally.passing_cases(),
            tally.failing_cases(),
        ),
        case_hashes=array("q", set(map(hash, columns.case_ids))),
        causes=tally_causes(diff),
    )
    return settled, (diff, lrun, rrun)


def _scan(
    path: Path, span: tuple[int, int | None], header: RunHeader | None, vouch: Vouch | None
) -> tuple[RunFile, Scan]:
    # Each process holds a half, so the pass that shares equal digest strings to save
    # memory (~0.1 s a half) is not worth its time here.
    scan = Scan(path, SHAPE_EVALPIN, header, share_digests=False, vouch=vouch)
    with open_input(path) as fh:
        for _ in scan.blocks(fh, *span):
            pass
    return scan.result(), scan


def _side(run: RunFile, scan: Scan) -> _Side:
    assert run.index is not None
    return _Side(
        rows=len(run.rows),
        pin_values=run.pin_values,
        lacks_fixture_hash=run.lacks_fixture_hash,
        first_rows=run.index.first_rows,
        starts=run.index.starts,
        summary=run.summary,
        torn=run.torn,
        crc=scan.hashing.crc,
        hashed=scan.hashing.length,
    )


def _plain(m: Moved) -> tuple[Any, int, int, str, CaseRow, CaseRow]:
    """A move whose rows can be pickled (shared-pin rows are of a class made at run
    time, unknown to the receiving side's unpickler)."""
    return (m.pair.key, m.pair.left, m.pair.right, m.kind, _row(m.left), _row(m.right))


def _row(row: CaseRow) -> CaseRow:
    return CaseRow(*_FIELDS(row))


def _tally(numbers: tuple[dict, int, int, Counter, int, int]) -> SharedTally:
    counts, rows, cases, flipped, passing, failing = numbers
    return SharedTally(counts, rows, cases, flipped, lambda: passing, lambda: failing)


def _report(
    own: _Half,
    parts: tuple[Diff, RunFile, RunFile],
    half: _Half,
    headers: tuple[RunHeader, RunHeader],
    paths: tuple[Path, Path],
    detail: int | None,
) -> DiffReport:
    """The whole comparison from the two halves' results (`parts`: this process's half
    of the join and of each run)."""
    diff, lfirst, rfirst = parts
    lrun = _joined(paths[0], headers[0], lfirst, half.left)
    rrun = _joined(paths[1], headers[1], rfirst, half.right)
    moved = list(diff.moved)
    for key, li, ri, kind, lrow, rrow in half.moved:
        pair = Pair(key, li + own.left.rows, ri + own.right.rows)
        moved.append(Moved(pair, kind, lrow, rrow))
    whole = Diff(lrun, rrun, range(len(lrun.rows)), range(len(rrun.rows)), moved=moved)
    tally = SharedTally.summed([_tally(own.tally), _tally(half.tally)])
    causes = causes_of(merged(own.causes, half.causes))
    return build_from(whole, paired_from(moved, tally), detail, causes)


def _joined(path: Path, header: RunHeader, first: RunFile, second: _Side) -> RunFile:
    """A whole run from its first half (read here) and its second (read by the helper):
    counts, pins and line index whole; rows only the first half's (`FirstHalfRows`)."""
    index = LineIndex(str(path))
    assert first.index is not None
    shift = len(first.rows)
    index.first_rows = first.index.first_rows + array("q", (r + shift for r in second.first_rows))
    index.starts = first.index.starts + second.starts
    run = RunFile(
        str(path),
        SHAPE_EVALPIN,
        header,
        FirstHalfRows(first.rows, len(first.rows) + second.rows),  # type: ignore[arg-type]
        second.summary,
        second.torn,
        index=index,
        complete=second.summary is not None,
    )
    run.__dict__["pin_values"] = {
        key: first.pin_values[key] | second.pin_values[key] for key in PINS
    }
    run.__dict__["lacks_fixture_hash"] = first.lacks_fixture_hash or second.lacks_fixture_hash
    return run


class FirstHalfRows(Sequence[CaseRow]):
    """A run's rows when its second half stayed in the helper process: the whole
    length, and the first half's rows. Everything `diff` reports needs only the length
    and the moved rows it was sent; asking for a row that stayed behind is a bug, and
    raises rather than answering wrongly (`diff --junit`, which lists every row, reads
    in one process)."""

    def __init__(self, rows: list[CaseRow], total: int) -> None:
        self._rows = rows
        self._total = total

    def __len__(self) -> int:
        return self._total

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int) and 0 <= index < len(self._rows):
            return self._rows[index]
        raise LookupError("this row was read by the helper process and stayed there")

    def __iter__(self) -> Iterator[CaseRow]:
        raise LookupError("the second half of these rows was read by the helper process")
