"""Reading and writing run files.

The reader streams a file once, keeps a small typed row per case plus the byte offset of
its line (so a case's bulky detail is decoded only when shown), and labels the file with
its shape, what pins it lacks and whether it is complete. It accepts two foreign shapes:
header-less case records and a single JSON report.

The writer appends one `os.write` per record to an `O_APPEND` descriptor, ASCII-escaped,
so a run killed at any moment leaves whole lines plus at most one torn last line, which
the reader reports and `--resume` trims.
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.records import (
    SCHEMA,
    CaseRecord,
    CaseRow,
    ForeignCaseRow,
    Report,
    RunHeader,
    Summary,
    row_from_foreign,
)

SHAPE_EVALPIN = "evalpin"
SHAPE_CASES = "case-records"
SHAPE_REPORT = "report"

_CHUNK = 1 << 22
_TAGGED = msgspec.json.Decoder(CaseRow | Summary | RunHeader)
_FOREIGN = msgspec.json.Decoder(ForeignCaseRow)
_FULL = msgspec.json.Decoder(CaseRecord)
_REPORT = msgspec.json.Decoder(Report)
_ANY = msgspec.json.Decoder()

TRIPLE = ("fixture_hash", "grader_version", "model_slot")


@dataclass
class RunFile:
    """A run file as read: its shape, header, one row per case line, and trailer."""

    path: str
    shape: str
    header: RunHeader | None
    rows: list[CaseRow]
    offsets: array = field(default_factory=lambda: array("q"))
    summary: Summary | None = None
    torn: bool = False
    report: Report | None = None

    @property
    def complete(self) -> bool | None:
        """True with a trailer, False without; None when the shape has no trailer."""
        if self.shape == SHAPE_EVALPIN:
            return self.summary is not None
        if self.shape == SHAPE_REPORT:
            return True
        return None

    @property
    def seeds(self) -> list[int]:
        if self.header is not None:
            return list(self.header.seeds)
        if self.report is not None and self.report.seeds:
            return list(self.report.seeds)
        return sorted({r.seed for r in self.rows if r.seed is not None})

    def missing_pins(self) -> list[str]:
        """Pins this file does not carry; missing pins are never filled with defaults."""
        missing: list[str] = []
        h = self.header
        if self.shape == SHAPE_REPORT:
            if not (self.report and self.report.dataset_hash):
                missing.append("dataset_hash")
        elif h is None or not h.fixtures.dataset_hash:
            missing.append("dataset_hash")
        for key in TRIPLE:
            if any(getattr(r, key) is None for r in self.rows) or not self.rows:
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
        if self.shape == SHAPE_EVALPIN:
            what = "evalpin run"
            state = "complete" if self.summary else "INCOMPLETE (no summary trailer)"
        elif self.shape == SHAPE_CASES:
            what, state = "case records without a run header", "completeness unknown"
        else:
            what, state = "single JSON report", "complete"
        if self.torn:
            state += "; torn last line dropped"
        text = f"{what}, {len(self.rows)} case records, {state}"
        missing = self.missing_pins()
        if missing:
            text += "; missing pins: " + ", ".join(missing)
        return text

    def record(self, index: int) -> CaseRecord:
        """Decode one case in full (tail, text, files) from its byte offset."""
        if self.report is not None:
            r = self.report.rows[index]
            return CaseRecord(r.id, r.passed, seed=r.seed, seconds=r.seconds, tail=r.tail)
        with open(self.path, "rb") as fh:
            fh.seek(self.offsets[index])
            line = fh.readline()
        try:
            return _FULL.decode(line) if self.shape == SHAPE_EVALPIN else _decode_foreign_full(line)
        except msgspec.MsgspecError as exc:
            raise InputError(self.path, f"case record changed on disk: {exc}") from exc


def _decode_foreign_full(line: bytes) -> CaseRecord:
    data = _ANY.decode(line)
    data["record"] = "case"
    return msgspec.convert(data, CaseRecord)


def _open(path: str | Path) -> BinaryIO:
    p = Path(path)
    if p.is_dir():
        raise InputError(path, "is a directory, not a file")
    try:
        return open(p, "rb")  # closed by the caller
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None


def _lines(fh: BinaryIO) -> Iterator[tuple[int, int, bytes, bool]]:
    """Yield (line number, byte offset, bytes, ended by newline) for each line."""
    lineno = 0
    offset = 0
    carry = b""
    while chunk := fh.read(_CHUNK):
        parts = (carry + chunk).split(b"\n")
        carry = parts.pop()
        for part in parts:
            lineno += 1
            yield lineno, offset, part, True
            offset += len(part) + 1
    if carry:
        yield lineno + 1, offset, carry, False


def _problem(exc: Exception, line: bytes) -> str:
    if isinstance(exc, msgspec.ValidationError):
        return f"record of the wrong shape: {exc}"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"not UTF-8: byte 0x{line[bad.start]:02x} at column {bad.start + 1}"
    return f"not JSON: {exc}"


def read_run(path: str | Path) -> RunFile:
    """Read a run file of any accepted shape, or raise InputError naming the line."""
    with _open(path) as fh:
        head = fh.read(_CHUNK)
        if not head.strip():
            raise InputError(path, "empty file" if not head else "file holds only whitespace")
        first_line = head.split(b"\n", 1)[0]
        try:
            first = _ANY.decode(first_line)
        except msgspec.DecodeError:
            first = None
        if first is None or (isinstance(first, dict) and "rows" in first):
            fh.seek(0)
            return _read_report(path, fh.read(), first_line_error=first is None)
        if not isinstance(first, dict):
            raise InputError(path, "not a run file: line is not a JSON object", 1)
        fh.seek(0)
        if first.get("record") == "run":
            return _read_native(path, fh)
        if "case_id" in first:
            return _read_foreign(path, fh)
        raise InputError(
            path,
            "not a run file: expected a run header, a case record or a report with rows",
            1,
        )


def _read_native(path: str | Path, fh: BinaryIO) -> RunFile:
    rows: list[CaseRow] = []
    offsets = array("q")
    header: RunHeader | None = None
    summary: Summary | None = None
    torn = False
    decode = _TAGGED.decode
    append_row, append_offset = rows.append, offsets.append
    for lineno, offset, line, ended in _lines(fh):
        if not line or line.isspace():
            continue
        try:
            rec = decode(line)
        except msgspec.MsgspecError as exc:
            if not ended and isinstance(exc, msgspec.DecodeError):
                torn = True
                break
            raise InputError(path, _problem(exc, line), lineno) from None
        if type(rec) is CaseRow:
            if summary is not None:
                raise InputError(path, "case record after the summary trailer", lineno)
            append_row(rec)
            append_offset(offset)
        elif type(rec) is RunHeader:
            if header is not None:
                raise InputError(path, "a second run header", lineno)
            if rec.schema != SCHEMA:
                raise InputError(path, f"unknown schema {rec.schema!r}, expected {SCHEMA}", lineno)
            header = rec
        else:
            if summary is not None:
                raise InputError(path, "a second summary trailer", lineno)
            summary = rec
    return RunFile(str(path), SHAPE_EVALPIN, header, rows, offsets, summary, torn)


def _read_foreign(path: str | Path, fh: BinaryIO) -> RunFile:
    rows: list[CaseRow] = []
    offsets = array("q")
    torn = False
    for lineno, offset, line, ended in _lines(fh):
        if not line or line.isspace():
            continue
        try:
            rec = _FOREIGN.decode(line)
        except msgspec.MsgspecError as exc:
            if not ended and isinstance(exc, msgspec.DecodeError):
                torn = True
                break
            raise InputError(path, _problem(exc, line), lineno) from None
        rows.append(row_from_foreign(rec))
        offsets.append(offset)
    return RunFile(str(path), SHAPE_CASES, None, rows, offsets, None, torn)


def _read_report(path: str | Path, data: bytes, *, first_line_error: bool) -> RunFile:
    try:
        report = _REPORT.decode(data)
    except msgspec.MsgspecError as exc:
        if first_line_error:
            # Neither a JSON line nor a JSON document: report where line 1 breaks.
            try:
                _ANY.decode(data.split(b"\n", 1)[0])
            except msgspec.DecodeError as line_exc:
                raise InputError(path, _problem(line_exc, data.split(b"\n", 1)[0]), 1) from None
        raise InputError(path, f"not a valid report: {exc}") from None
    rows = [CaseRow(r.id, r.passed, seed=r.seed, seconds=r.seconds) for r in report.rows]
    return RunFile(str(path), SHAPE_REPORT, None, rows, array("q"), None, False, report)


class RunWriter:
    """Appends records to a run file, one `os.write` each, flushed as they arrive."""

    def __init__(self, path: str | Path, *, new: bool) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | (os.O_EXCL if new else 0)
        self.path = str(path)
        self._fd = os.open(self.path, flags, 0o644)

    def write(self, record: msgspec.Struct | dict) -> None:
        obj = msgspec.to_builtins(record) if isinstance(record, msgspec.Struct) else record
        line = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        view = memoryview((line + "\n").encode("ascii"))
        while view:
            view = view[os.write(self._fd, view) :]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def trim_torn_tail(path: str | Path) -> int:
    """Cut a last line that has no newline (a write torn by a kill); return bytes cut."""
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        fh.seek(max(0, size - _CHUNK))
        tail = fh.read()
        if tail.endswith(b"\n"):
            return 0
        cut_at = size - len(tail) + tail.rfind(b"\n") + 1
        fh.truncate(cut_at)
        return size - cut_at
