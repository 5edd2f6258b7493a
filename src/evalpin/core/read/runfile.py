"""Reading and writing run files.

`read_run` reads a run of any accepted format: the formats, and how one is chosen, live
in `core/read/formats/`; what every reader gives (`RunFile`) and the JSONL scan evalpin's own
files and header-less case records share live in `core/read/rundata.py`.

The writer appends one `os.write` per record to an `O_APPEND` descriptor, ASCII-escaped,
so a run killed at any moment leaves whole lines plus at most one torn last line, which
the reader reports and `--resume` trims. It keeps the CRC-32 of the bytes it writes, and
the summary trailer records it (core/read/vouch.py).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from evalpin.core.bounded import MAX_LINE_BYTES
from evalpin.core.files import write_atomic

# What the TUI and the Python API import from here; their home is `core/read/rundata.py`.
from evalpin.core.read.rundata import RunFile, gc_paused
from evalpin.core.read.vouch import crc32_file
from evalpin.core.records import Summary

if TYPE_CHECKING:
    from evalpin.core.read.formats import ReadOptions

__all__ = [
    "RecordTooLarge",
    "RunBusy",
    "RunFile",
    "RunWriter",
    "gc_paused",
    "read_run",
    "trim_torn_tail",
]

_CHUNK = 1 << 20  # how much `trim_torn_tail` reads at a time, walking back from the end


def read_run(path: str | Path, options: ReadOptions | None = None) -> RunFile:
    """Read a run of any accepted format (chosen by sniffing), or raise InputError
    naming the file and line."""
    from evalpin.core.read.formats import read_log

    return read_log(path, options)


class RunBusy(OSError):
    """Another process is writing this run file (it holds the file's lock)."""


class RecordTooLarge(ValueError):
    """A record whose line would pass `MAX_LINE_BYTES`: never written, since every reader
    would then refuse the whole file. `size` is the line's length in bytes."""

    def __init__(self, size: int) -> None:
        super().__init__(f"a record of {size:,} bytes, over the {MAX_LINE_BYTES:,}-byte line limit")
        self.size = size


class RunWriter:
    """Appends records to a run file, one `os.write` each, flushed as they arrive.

    One writer per file: the writer holds an exclusive kernel lock (`flock`) on the file
    for its whole life, so a second `run` (or `--resume`) on it is refused at once, and a
    lock left by a killed process is gone with it. Who holds it (pid, host, since) is kept
    beside the file in a hidden `.NAME.writer`, for the refusal to name; readers never
    take the lock."""

    def __init__(self, path: str | Path, *, new: bool) -> None:
        # Never blocking (a FIFO put where the file should be would hang the open), never
        # through a link (one put there would have another file appended to, or trimmed).
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW
        flags |= os.O_EXCL if new else 0
        self.path = str(path)
        while True:
            try:
                self._fd = os.open(self.path, flags, 0o644)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                why = "is a symlink: a run file is not written through one"
                raise OSError(errno.ELOOP, why, self.path) from None
            if not stat.S_ISREG(os.fstat(self._fd).st_mode):
                os.close(self._fd)
                self._fd = -1
                raise OSError(errno.EINVAL, "not a regular file", self.path)
            os.set_blocking(self._fd, True)
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(self._fd)
                self._fd = -1
                raise RunBusy(
                    errno.EBUSY, f"being written by {_holder(self.path)}", self.path
                ) from None
            if new or _same_file(self._fd, self.path):
                break
            os.close(self._fd)  # the file was replaced (`rewrite`) while we waited: again
        # The CRC-32 of every byte in the file, while the writer can vouch for them all:
        # an empty file's are its own; a file it continues, once `adopt` says they were read.
        self._crc: int | None = 0 if os.fstat(self._fd).st_size == 0 else None
        self._mark = _holder_path(self.path)
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": _now()}
        with contextlib.suppress(OSError):
            write_atomic(Path(self._mark), json.dumps(holder))

    @classmethod
    def claim(cls, path: Path) -> RunWriter:
        """A new file at `path`, or at `STEM-2`, `STEM-3`... when another run took it
        first: concurrent runs that picked the same default name never collide."""
        stem, n = path.stem, 2
        while True:
            try:
                return cls(path, new=True)
            except FileExistsError:
                path = path.with_name(f"{stem}-{n}{path.suffix}")
                n += 1

    def adopt(self) -> None:
        """Vouch for the bytes already in the file (a resumed run's): call once they were
        read exactly, as a file without a trailer is read (`read_run`)."""
        fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            held, read = os.fstat(self._fd), os.fstat(fd)
            if (held.st_dev, held.st_ino) != (read.st_dev, read.st_ino):
                raise OSError(errno.EINVAL, "replaced while being written", self.path)
            self._crc = crc32_file(fd)
        finally:
            os.close(fd)

    def rewrite(self, data: bytes) -> None:
        """Replace the file's bytes with `data`, crash-safe and without letting go of
        the lock: written to a locked temporary beside it, synced, renamed over it. A
        kill leaves the old file or the new one, never a mix."""
        head, name = os.path.split(self.path)
        tmp = os.path.join(head, f".{name}.rewrite")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # left by a killed rewrite: the file itself is whole
        fd = os.open(tmp, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            os.replace(tmp, self.path)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        os.close(self._fd)
        self._fd = fd
        self._crc = None  # bytes read back, not written here: `adopt` once they are read

    def write(self, record: msgspec.Struct | dict) -> None:
        """Append one record as one line; `RecordTooLarge` (nothing written) for a line
        the reader would refuse. A summary is given the CRC of the bytes before it."""
        if isinstance(record, Summary) and self._crc is not None:
            record = msgspec.structs.replace(record, crc32=self._crc)
        obj = msgspec.to_builtins(record) if isinstance(record, msgspec.Struct) else record
        line = json.dumps(obj, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        if len(line) >= MAX_LINE_BYTES:  # ASCII: one byte a character, newline included
            raise RecordTooLarge(len(line) + 1)
        data = (line + "\n").encode("ascii")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        if self._crc is not None:
            self._crc = zlib.crc32(data, self._crc)

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(self._mark)
            os.close(self._fd)  # releases the lock
            self._fd = -1

    def __enter__(self) -> RunWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _same_file(fd: int, path: str) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _holder_path(path: str) -> str:
    head, name = os.path.split(path)
    return os.path.join(head, f".{name}.writer")


def _holder(path: str) -> str:
    """Who holds a run file's lock, as its `.writer` mark says (best effort). The mark
    is opened without blocking and without following a link, and read only when it is
    a regular file: anyone who can write the folder can plant a FIFO or a link there."""
    try:
        fd = os.open(_holder_path(path), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return "another process"
            info = json.loads(fh.read(4096))
        return f"pid {int(info['pid'])} on {str(info['host'])[:64]} since {str(info['since'])[:40]}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="seconds")


def trim_torn_tail(path: str | Path) -> int:
    """Cut a last line that has no newline (a write torn by a kill); return bytes cut.

    The last whole line may be any distance back (a torn record can be a completion of
    hundreds of megabytes): the file is read backwards a chunk at a time until a newline
    is found, in constant memory. With no newline at all, nothing in the file is whole
    and it is cut to empty."""
    fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb+") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        size = fh.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - _CHUNK)
            fh.seek(start)
            chunk = fh.read(end - start)
            newline = chunk.rfind(b"\n")
            if newline >= 0:
                cut_at = start + newline + 1
                break
            end = start
        else:
            cut_at = 0
        if cut_at < size:
            fh.truncate(cut_at)
        return size - cut_at
