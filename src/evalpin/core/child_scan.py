"""A JSONL run decoded in a child process, so two runs are read on two cores.

msgspec holds the GIL while it decodes, so threads cannot read two files at once. Here
a child process (`python -m evalpin.core.child_scan PATH SHAPE`) runs the same `Scan`
over the file and ships each chunk's lean rows back through a pipe as compact JSON
lines (a third of the bytes of the file's own lines: no tails, reasons or text), which
the parent decodes with the same shared-pin row types as an in-process read, so rows of
both runs still compare as equal structs. The parent's work per row is that re-decode,
about half of reading the file itself; the child does the rest at the same time.

`ChildRunStream` is a `RunStream` (same `rows`, `header`, `fraction`, `blocks()`, `run`)
whose blocks arrive from the child; an error in the file is raised as the same
InputError (file and line) an in-process read raises. `read_pair` reads two runs, the
right one in a child when it is big enough for the child to pay for its start-up.

Frames on the child's stdout (a temporary file the parent follows): one kind byte, an
8-byte length, the payload.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from array import array
from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path

import msgspec

from evalpin.core.columns import Columns
from evalpin.core.errors import InputError
from evalpin.core.formats import ReadOptions, RunStream, read_log
from evalpin.core.records import CaseRow, RunHeader, Summary
from evalpin.core.runfile import RunFile, Scan, open_file
from evalpin.core.shared_pins import PINS, PinSharing

# Below this size a file is read in-process: the child's start-up (~0.1 s) would cost
# more than it saves.
CHILD_MIN_BYTES = 96 << 20

_WAIT = 0.002  # seconds between looks at the child's file when it has nothing new
_FRAME = struct.Struct("<cQ")
_PROGRESS = struct.Struct("<QQ")  # bytes done, bytes total, before a block's lines
HEADER, BLOCK, END, ERROR = b"H", b"B", b"E", b"X"
_FIXTURE = attrgetter("fixture_hash")
_CASE = attrgetter("case_id")
_SEED = attrgetter("seed")


class _End(msgspec.Struct):
    summary: Summary | None
    torn: bool
    first_rows: list[int]
    starts: list[int]
    # Counted by the child on its own core, so the parent need not (RunFile's).
    pin_values: dict[str, list[str | None]]
    lacks_fixture_hash: bool
    unique_keys: bool


class _Error(msgspec.Struct):
    message: str
    line: int | None


class ChildRunStream(RunStream):
    """A RunStream whose JSONL decoding runs in a child process (formats read whole,
    such as inspect logs, are read in-process as RunStream reads them)."""

    def blocks(self) -> Iterator[int]:
        scan = self._scan
        if scan is None:
            yield from super().blocks()
            return
        pins = PinSharing()
        with tempfile.TemporaryFile(prefix="evalpin-rows-") as channel:
            proc = subprocess.Popen(
                [sys.executable, "-m", __name__, self.path, scan.shape],
                stdin=subprocess.DEVNULL,
                stdout=channel,
                stderr=subprocess.PIPE,
            )
            try:
                yield from self._frames(_Tail(channel.fileno(), proc), scan, pins)
            finally:
                proc.kill()
                proc.wait()
                if proc.stderr is not None:
                    proc.stderr.close()

    def _frames(self, tail: _Tail, scan: Scan, pins: PinSharing) -> Iterator[int]:
        while frame := tail.read(_FRAME.size):
            kind, size = _FRAME.unpack(frame)
            payload = tail.read(size)
            if kind == BLOCK:
                scan.done, scan.total = _PROGRESS.unpack_from(payload)
                lines = memoryview(payload)[_PROGRESS.size :]
                if lines:
                    scan.rows.extend(pins.decode(lines))
                yield len(scan.rows)
            elif kind == HEADER:
                scan.header = msgspec.json.decode(payload, type=RunHeader)
                pins.learn_header(scan.header)
            elif kind == ERROR:
                error = msgspec.json.decode(payload, type=_Error)
                raise InputError(self.path, error.message, error.line)
            else:
                end = msgspec.json.decode(payload, type=_End)
                scan.summary, scan.torn = end.summary, end.torn
                scan.index.first_rows = array("q", end.first_rows)
                scan.index.starts = array("q", end.starts)
                scan.done = scan.total
                self.run = run = scan.result()
                run.pin_values = {k: frozenset(v) for k, v in end.pin_values.items()}
                run.lacks_fixture_hash = end.lacks_fixture_hash
                run.known_unique_keys = end.unique_keys
                yield len(scan.rows)
                return
        stderr = tail.proc.stderr.read() if tail.proc.stderr is not None else b""
        detail = stderr.decode(errors="replace").strip().splitlines() or ["no output"]
        raise InputError(self.path, f"reader process failed: {detail[-1]}")


class _Tail:
    """Reads the child's frames from a temporary file as it writes them. A file, not a
    pipe: the child never waits for this process, which may be busy reading the other
    run and hold the GIL for a long decode."""

    def __init__(self, fd: int, proc: subprocess.Popen[bytes]) -> None:
        self.fd = fd
        self.proc = proc
        self.pos = 0

    def read(self, size: int) -> bytes:
        """`size` bytes (fewer only when the child exited before writing them)."""
        whole = os.pread(self.fd, size, self.pos)
        if len(whole) == size:  # the usual case: the child is ahead
            self.pos += size
            return whole
        data = bytearray(whole)
        while len(data) < size:
            chunk = os.pread(self.fd, size - len(data), self.pos + len(data))
            if chunk:
                data += chunk
            elif self.proc.poll() is not None:  # exited: one last look, then what there is
                chunk = os.pread(self.fd, size - len(data), self.pos + len(data))
                if not chunk:
                    break
                data += chunk
            else:
                time.sleep(_WAIT)
        self.pos += len(data)
        return bytes(data)


def read_pair(
    left: str | Path, right: str | Path, options: ReadOptions | None = None
) -> tuple[RunFile, RunFile]:
    """Read two runs, the right one in a child process while this one reads the left
    (when the right is a big JSONL run). Errors are raised left first, as reading one
    after the other raises them."""
    if not _worth_a_child(right):
        return read_log(left, options), read_log(right, options)
    stream = ChildRunStream(right, options)
    failed: list[BaseException] = []

    def drain() -> None:
        try:
            for _ in stream.blocks():
                pass
        except BaseException as exc:  # handed to the main thread
            failed.append(exc)

    worker = threading.Thread(target=drain, name="evalpin-right-run", daemon=True)
    worker.start()
    try:
        lrun = read_log(left, options)
    finally:
        worker.join()
    if failed:
        raise failed[0]
    assert stream.run is not None
    return lrun, stream.run


def _worth_a_child(path: str | Path) -> bool:
    try:
        return os.stat(path).st_size >= CHILD_MIN_BYTES
    except OSError:
        return False  # the in-process read names the problem


class _Sent:
    """The child's stand-in for `Scan.rows`: rows are shipped as they come, only their
    count is kept (the line index numbers rows by it)."""

    def __init__(self) -> None:
        self.count = 0
        self.pending: list[CaseRow] = []

    def append(self, row: CaseRow) -> None:
        self.pending.append(row)

    def extend(self, rows: list[CaseRow]) -> None:
        self.pending.extend(rows)

    def __len__(self) -> int:
        return self.count + len(self.pending)

    def take(self) -> list[CaseRow]:
        rows, self.pending = self.pending, []
        self.count += len(rows)
        return rows


def _child(path: str, shape: str) -> None:
    """The child's side: scan the file, write frames to stdout."""
    out = sys.stdout.buffer
    encoder = msgspec.json.Encoder()

    def send(kind: bytes, payload: bytes) -> None:
        out.write(_FRAME.pack(kind, len(payload)))
        out.write(payload)
        out.flush()

    scan = Scan(path, shape)
    sent = scan.rows = _Sent()  # type: ignore[assignment]
    header_sent = False
    values: dict[str, set[str | None]] = {key: set() for key in PINS}
    keys = Columns.of_keys([], [])  # to tell whether a (case, seed) repeats
    lacks_fixture_hash = False
    try:
        with open_file(path) as fh:
            for _ in scan.blocks(fh):
                if not header_sent and scan.header is not None:
                    send(HEADER, encoder.encode(scan.header))
                    header_sent = True
                rows = sent.take()
                progress = _PROGRESS.pack(scan.done, scan.total)
                send(BLOCK, progress + encoder.encode_lines(rows))
                for key, seen in values.items():
                    seen.update(map(attrgetter(key), rows))
                keys.case_ids.extend(map(_CASE, rows))
                keys.seeds.extend(map(_SEED, rows))
                lacks_fixture_hash = lacks_fixture_hash or None in map(_FIXTURE, rows)
    except InputError as exc:
        send(ERROR, encoder.encode(_Error(exc.message, exc.line)))
        return
    index = scan.index
    pins = {key: list(seen) for key, seen in values.items()}
    end = _End(
        scan.summary,
        scan.torn,
        list(index.first_rows),
        list(index.starts),
        pins,
        lacks_fixture_hash,
        keys.unique_keys,
    )
    send(END, encoder.encode(end))


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
