"""A run as read, whatever its format (`RunFile`), and the JSONL scan evalpin's own
files and header-less case records share (`Scan`, with its sparse `LineIndex`).

The scan streams a file once, keeps a small typed row per case plus the byte offset of
its line (so a case's bulky detail is decoded only when shown), and labels the file with
its shape, what pins it lacks and whether it is complete. Every reader in
`core/read/formats/` fills the same `RunFile`; choosing one, `read_run`, and writing run
files live in `core/read/runfile.py`.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

import msgspec

from evalpin.core.bounded import MAX_LINE_BYTES, TOO_DEEP, json_too_deep, keys_once
from evalpin.core.columns import MIXED, lone
from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8
from evalpin.core.read.header_maps import header_map_problem
from evalpin.core.read.line_index import LineIndex
from evalpin.core.read.row_keys import first_wrong, line_problem
from evalpin.core.read.vouch import Hashing, Vouch, trailer_vouch
from evalpin.core.records import (
    SCHEMA,
    CaseRecord,
    CaseRow,
    Marks,
    RunHeader,
    Summary,
)
from evalpin.core.schema import struct_problem
from evalpin.core.shared_pins import PINS, PinSharing

SHAPE_EVALPIN = "evalpin"
SHAPE_CASES = "case-records"
SHAPE_REPORT = "report"

_CHUNK = 1 << 20
_OTHER = msgspec.json.Decoder(Summary | RunHeader)
_ANY = msgspec.json.Decoder()

TRIPLE = ("fixture_hash", "grader_version", "model_slot")
_FIXTURE_HASH = attrgetter("fixture_hash")
_PIN_GETTERS = [attrgetter(key) for key in PINS]


@dataclass(frozen=True)
class ToolScore:
    """Another tool's own figure for a run (inspect's reduced accuracy, promptfoo's
    counts), and why it differs from evalpin's pass rate where it may."""

    name: str
    value: float | None
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "why": self.why}


@dataclass
class RunFile:
    """A run as read, whatever its format: header (given or built from the log), one
    lean row per (case, repeat), and how to decode a case in full.

    Every format's reader fills the same fields, so the commands and the TUI never ask
    which format a file was: `what` and `repeat_label` say it for display.
    """

    path: str
    shape: str
    header: RunHeader | None
    rows: list[CaseRow]
    summary: Summary | None = None
    torn: bool = False
    index: LineIndex | None = field(default=None, repr=False)
    # Formats read whole keep each row's full record here instead of a line index.
    details: Sequence[CaseRecord] | None = field(default=None, repr=False)
    what: str = "evalpin run"
    complete: bool | None = None
    incomplete_why: str = "no summary trailer"
    repeat_label: str = "seed"
    # What a reader of another tool's log says beyond the pins (a model it does not
    # record, answers from a cache): `verdict` and `diff` show them.
    notes: list[str] = field(default_factory=list)
    # The tool's own figure for the chosen grade, shown beside evalpin's pass rate.
    tool_score: ToolScore | None = None
    # Results the tool answered from its cache (promptfoo's `cached: true`): not a
    # measurement of the run's backend, so the run is at most `internal`.
    cached: int = 0
    # Named parts of what the model is asked beside the dataset, as the log records them
    # (few-shot count, chat template, system instruction, solver chain); each is in the
    # fixture hash too. A refusal and a history break name the ones that moved, where
    # the pin alone would say only `fixture_hash`.
    prompt_parts: dict[str, Any] = field(default_factory=dict)
    # The tool's word that the run covers part of its dataset (`limit 3`), else None:
    # history calls the break to or from it a subset, not a dataset edit.
    subset: str | None = None

    @property
    def seeds(self) -> list[int]:
        if self.header is not None and self.header.seeds:
            return list(self.header.seeds)
        return sorted({r.seed for r in self.rows if r.seed is not None})

    @property
    def dataset_hash(self) -> str | None:
        return (self.header.fixtures.dataset_hash or None) if self.header else None

    @property
    def envelope_hash(self) -> str | None:
        """The hash over the fixture file and every file its cases read (None for runs
        made before envelopes, and for other tools' logs)."""
        return (self.header.fixtures.envelope_hash or None) if self.header else None

    @cached_property
    def pin_values(self) -> dict[str, frozenset[str | None]]:
        """The distinct values of each pin the rows repeat (`shared_pins.PINS`), None
        where a row lacks it: one C-level pass a pin (or gathered while reading, a block
        at a time: `Scan`)."""
        return {key: frozenset(map(attrgetter(key), self.rows)) for key in PINS}

    @cached_property
    def lacks_fixture_hash(self) -> bool:
        """Whether some row has no fixture hash."""
        return None in map(attrgetter("fixture_hash"), self.rows)

    @cached_property
    def missing_pins(self) -> list[str]:
        """Pins this file does not carry; missing pins are never filled with defaults."""
        missing: list[str] = []
        h = self.header
        if not self.dataset_hash:
            missing.append("dataset_hash")
        for key in TRIPLE:
            lacks = (
                self.lacks_fixture_hash if key == "fixture_hash" else None in self.pin_values[key]
            )
            if not self.rows or lacks:
                missing.append(key)
        if not self.seeds:
            missing.append("seeds")
        if h is None or not h.env_digest:
            missing.append("env_digest")
        if h is None or not h.scorer_commit:
            missing.append("scorer_commit")
        if h is None or not h.controls:
            missing.append("controls")
        return missing

    def label(self) -> str:
        """One line saying what this file is, for every reader to print."""
        if self.complete is None:
            state = "completeness unknown"
        else:
            state = "complete" if self.complete else f"INCOMPLETE ({self.incomplete_why})"
        if self.torn:
            state += "; torn last line dropped"
        text = f"{self.what}, {len(self.rows)} case records, {state}"
        missing = self.missing_pins
        if missing:
            text += "; missing pins: " + ", ".join(missing)
        return text

    def record(self, index: int) -> CaseRecord:
        """Decode one case in full (reasons, tail, text, files) from its byte offset."""
        return self.records([index])[index]

    def records(self, indices: Iterable[int]) -> dict[int, CaseRecord]:
        """Decode several cases in full, reading the file once in offset order."""
        wanted = sorted(set(indices))
        if self.details is not None:
            return {i: self.details[i] for i in wanted}
        if self.index is None:
            raise InputError(self.path, "no line index: file was not read by read_run")
        out = {}
        with open(self.path, "rb") as fh:
            for i in wanted:
                fh.seek(self.index.offset(i, fh))
                out[i] = _decode_full(self.path, fh.readline())
        return out

    def marks(self, indices: Iterable[int]) -> dict[int, Marks]:
        """Each case's reasons, tools and failing tests (`Marks`), in offset order: what
        the cause view needs of every moved case, far cheaper than `records`."""
        wanted = sorted(set(indices))
        if self.details is not None:
            d = self.details
            return {i: Marks(d[i].reasons, d[i].tool_names, d[i].failed_tests) for i in wanted}
        if self.index is None:
            raise InputError(self.path, "no line index: file was not read by read_run")
        with open(self.path, "rb") as fh:
            return {i: _decode_marks(self.path, line) for i, line in self.index.lines(wanted, fh)}


_MARKS = msgspec.json.Decoder(Marks)


def _decode_marks(path: str, line: bytes) -> Marks:
    try:
        return _MARKS.decode(line)
    except msgspec.MsgspecError as exc:
        raise InputError(path, f"case record changed on disk: {exc}") from None
    except RecursionError:
        raise InputError(path, f"case record {TOO_DEEP}") from None


def _decode_full(path: str, line: bytes) -> CaseRecord:
    """A case line in full: its values (tool arguments, files) are kept and shown, so
    their depth is checked first."""
    if json_too_deep(line):
        raise InputError(path, f"case record {TOO_DEEP}")
    try:
        data = _ANY.decode(line)
        data["record"] = "case"  # header-less lines from other tools carry no tag
        record = msgspec.convert(data, CaseRecord)
    except (msgspec.MsgspecError, TypeError) as exc:
        said = struct_problem(str(exc), CaseRecord)
        raise InputError(path, f"case record changed on disk: {said}") from None
    keys_once(line, path)
    return record


@contextmanager
def gc_paused() -> Iterator[None]:
    """Rows are untracked structs; pausing the cyclic GC saves its needless passes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def problem(exc: Exception, line: bytes, shape: Any = CaseRow) -> str:
    if isinstance(exc, msgspec.ValidationError):
        return f"record of the wrong shape: {struct_problem(str(exc), shape)}"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        return not_utf8(line, bad)
    return f"not JSON: {exc}"


class Scan:
    """One streaming pass over a JSONL run file.

    The whole lines inside each chunk are decoded by one `decode_lines` call through a
    memoryview (the fast path, no copy); the line that straddles two chunks, and any
    chunk holding more than case lines (the header, the trailer, an error), go line by
    line (the slow path). Line numbers are counted only when an error names one.

    Every key of every case line is read once (issue 51): a line read alone is checked
    exactly; a block is checked exactly unless the trailer's CRC vouches for the file
    (core/read/vouch.py), and then the CRC is checked once the file is read.
    """

    def __init__(
        self,
        path: str | Path,
        shape: str,
        header: RunHeader | None = None,
        *,
        share_digests: bool = True,
        vouch: Vouch | None = None,
    ) -> None:
        self.path = path
        self.shape = shape
        self.header: RunHeader | None = None
        self.summary: Summary | None = None
        self.torn = False
        self.rows: list[CaseRow] = []
        self.index = LineIndex(str(path))
        self._pins = PinSharing(share_digests=share_digests)
        self.done = 0  # bytes read so far, of `total`
        self.total = 0
        # Where the whole lines read end (a file offset): a reader following a file still
        # being written reads on from here (a torn last line is read again once whole).
        self.end = 0
        self.finished = False  # `blocks` ran to the end
        # The run's pin values and whether a row lacks its fixture hash, gathered a block
        # at a time (see RunFile.pin_values): no pass over every row once it is read.
        self._values: dict[str, set[str | None]] = {key: set() for key in PINS}
        self._lacks_fixture = False
        # The trailer's CRC, when it vouches for the lines (core/read/vouch.py): found
        # when the file is read from its start, or given for a part of it (halves.py).
        self.hashing = Hashing(vouch)
        if header is not None:  # a scan of a later part of the file (core/review/halves.py)
            self.header = header
            self._pins.learn_header(header)

    def read(self, fh: BinaryIO) -> RunFile:
        """The whole file at once."""
        for _ in self.blocks(fh):
            pass
        return self.result()

    def blocks(self, fh: BinaryIO, start: int = 0, stop: int | None = None) -> Iterator[int]:
        """Read chunk by chunk, yielding the number of rows known after each chunk, so
        a caller (the review's progressive loader) can use the prefix read so far.
        InputError is raised where the problem is met, as `read` raises it.
        `start`, `stop`: the byte range to read, each at a line start (default: all)."""
        self.total = (os.fstat(fh.fileno()).st_size if stop is None else stop) - start
        # The unfinished line's pieces, joined once it ends: a line longer than a chunk
        # (a torn 100 MB record) is read in linear time, not by re-copying it per chunk.
        # Past the line cap its bytes are only counted: a whole line that long is refused,
        # a fragment that long at the end is a torn write.
        carry: list[bytes] = []
        carried = 0
        oversized = False
        pos = start  # file offset of the first byte of `carry`
        self.end = start
        if start == 0 and self.shape == SHAPE_EVALPIN and self.hashing.vouch is None:
            self.hashing = Hashing(trailer_vouch(fh, stop))
        fh.seek(start)
        while chunk := fh.read(_CHUNK if stop is None else min(_CHUNK, stop - pos - carried)):
            self.hashing.add(chunk, pos + carried)
            self.done = pos - start + carried + len(chunk)
            first = chunk.find(b"\n")
            if first < 0:
                if carried + len(chunk) > MAX_LINE_BYTES:
                    oversized, carry = True, []
                else:
                    carry.append(chunk)
                carried += len(chunk)
                continue
            if oversized or carried + first > MAX_LINE_BYTES:
                self._fail(f"line longer than {MAX_LINE_BYTES:,} bytes", pos)
            with gc_paused():  # per chunk: never left paused while the caller runs
                self._line(b"".join([*carry, chunk[:first]]), pos, ended=True)
                begin = pos + carried + first + 1
                last = chunk.rfind(b"\n")
                if last > first:
                    self._block(memoryview(chunk)[first + 1 : last + 1], begin)
            pos += carried + last + 1
            carry = [chunk[last + 1 :]]
            carried = len(carry[0])
            yield len(self.rows)
        self.end = pos
        if oversized:
            self.torn = True  # a fragment over the line cap: never a whole record
        elif carried:
            torn = self.torn
            self.torn = False
            self._line(b"".join(carry), pos, ended=False)
            if not self.torn:
                self.end = pos + carried  # a whole record, its newline still to come
            self.torn = self.torn or torn
        if self.shape == SHAPE_EVALPIN and self.header is None:
            raise InputError(self.path, "no run header", 1)
        vouch = self.hashing.vouch
        if vouch and start == 0 and (stop is None or stop > vouch.at) and not self.hashing.holds():
            self._recheck(fh)  # changed since written: every line checked after all
        self.done = self.total
        self.finished = True
        yield len(self.rows)

    def result(self) -> RunFile:
        """The run as read (call after `blocks` is exhausted; before that, the prefix
        read so far, whose pin values are counted when asked)."""
        own = self.shape == SHAPE_EVALPIN
        run = RunFile(
            str(self.path),
            self.shape,
            self.header,
            self.rows,
            self.summary,
            self.torn,
            index=self.index,
            what="evalpin run" if own else "case records without a run header",
            complete=(self.summary is not None) if own else None,
        )
        if self.finished:
            run.__dict__["pin_values"] = {k: frozenset(v) for k, v in self._values.items()}
            run.__dict__["lacks_fixture_hash"] = self._lacks_fixture
        return run

    def _count(self, rows: list[CaseRow]) -> None:
        """Gather the pin values of rows just read (C-level passes over a block). A pin
        usually holds one value over a whole block, which `lone` sees faster than a set
        takes every row's."""
        for get, values in zip(_PIN_GETTERS, self._values.values(), strict=True):
            column = list(map(get, rows))
            one = lone(column)
            if one is MIXED:
                values.update(column)
            else:
                values.add(one)
        if not self._lacks_fixture:
            self._lacks_fixture = None in map(_FIXTURE_HASH, rows)

    def _block(self, block: memoryview, start: int) -> None:
        if self.summary is None and (self.header is not None or self.shape == SHAPE_CASES):
            if self._fast(block, start):
                return
            # The usual reason is the trailer on the block's last line: peel it off.
            last = bytes(block[:-1]).rfind(b"\n") + 1
            if last and self._fast(block[:last], start):
                self._line(bytes(block[last:-1]), start + last, ended=True)
                return
        offset = start
        for line in bytes(block).split(b"\n")[:-1]:
            self._line(line, offset, ended=True)
            offset += len(line) + 1

    def _fast(self, block: memoryview, start: int) -> bool:
        """Decode a block of case lines in one call; False when it holds anything else."""
        try:
            decoded = self._pins.decode(block)
        except (msgspec.MsgspecError, RecursionError):  # the line by line path names it
            return False
        if self.hashing.vouch is None:  # no trailer vouches for them: each line checked
            wrong = first_wrong(bytes(block))
            if wrong is not None:  # a key written twice: the last would be read, silently
                self._fail(wrong[1], start + wrong[0])
        self.index.add(len(self.rows), start)
        self.rows.extend(decoded)
        self._count(decoded)
        return True

    def _line(self, line: bytes, offset: int, *, ended: bool) -> None:
        try:
            row = self._pins.decode_line(line)
        except msgspec.MsgspecError as exc:
            self._other(line, offset, exc, ended=ended)
            return
        except RecursionError:
            self._fail(TOO_DEEP, offset)
        if self.summary is not None:
            self._fail("case record after the summary trailer", offset)
        if self.shape == SHAPE_EVALPIN and self.header is None:
            self._fail("a case record before the run header", offset)
        if (said := line_problem(line)) is not None:  # a line read alone: checked exactly
            self._fail(said, offset)
        self.index.add(len(self.rows), offset)
        self.rows.append(row)
        self._count([row])

    def _recheck(self, fh: BinaryIO) -> None:
        """Every line read checked exactly, a block at a time: the trailer's CRC did not
        hold. The first that writes a key twice, or holds a number past a limit, is
        refused; lines changed in any other way read as they are."""
        offset = 0
        fh.seek(0)
        while offset < self.end and (data := fh.read(min(_CHUNK, self.end - offset))):
            whole = data.rfind(b"\n") + 1
            if whole:
                fh.seek(offset + whole)
                data = data[:whole]
            else:  # a line longer than a chunk (within the line cap: the scan read it)
                data += fh.readline()
            with gc_paused():  # the lines decoded whole are dropped at once
                wrong = first_wrong(data)
            if wrong is not None:
                self._fail(wrong[1], offset + wrong[0])
            offset += len(data)

    def _fail(self, message: str, offset: int) -> NoReturn:
        with open(self.path, "rb") as fh:
            lineno = fh.read(offset).count(b"\n") + 1
        raise InputError(self.path, message, lineno)

    def _other(self, line: bytes, offset: int, exc: Exception, *, ended: bool) -> None:
        if not line or line.isspace():
            return
        if not ended and isinstance(exc, msgspec.DecodeError):
            self.torn = True  # a write cut short by a kill: report it, keep the rest
            return
        if json_too_deep(line):  # a header keeps its values (slot, controls, env)
            self._fail(TOO_DEEP, offset)
        try:
            rec = _OTHER.decode(line)
        except msgspec.MsgspecError as other:
            # Name the problem of the record kind the line claims to be.
            claimed = _claimed_kind(line) in ("run", "summary")
            shape = RunHeader | Summary if claimed else CaseRow
            self._fail(problem(other if claimed else exc, line, shape), offset)
        try:  # a header is a fact: a key written twice (the last one wins) is refused
            keys_once(line, self.path)
        except InputError as twice:
            self._fail(twice.message, offset)
        if isinstance(rec, RunHeader):
            if self.shape != SHAPE_EVALPIN or self.header is not None or self.rows:
                self._fail("a run header where a case record was expected", offset)
            if rec.schema != SCHEMA:
                self._fail(f"unknown schema {rec.schema!r}, expected {SCHEMA}", offset)
            if said := header_map_problem(rec.slot, rec.controls, rec.env):
                self._fail(said, offset)
            self.header = rec
            self._pins.learn_header(rec)
        else:
            if self.shape != SHAPE_EVALPIN or self.summary is not None:
                self._fail("an unexpected summary trailer", offset)
            self.summary = rec


def _claimed_kind(line: bytes) -> object:
    try:
        data = _ANY.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    return data.get("record") if isinstance(data, dict) else None
