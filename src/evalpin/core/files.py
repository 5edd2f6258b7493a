"""Small file helpers every reader and writer shares, so each rule is said once.

- `write_atomic`: write beside the destination, then rename over it; a crash or a full
  disk leaves the old file (or none), never half a file.
- `not_utf8`: the one wording of "these bytes are not UTF-8" that every reader reports
  (fixtures, run files, replay recordings, disclosure lists).
- `open_input`: an input file opened for reading, or the one-line `InputError` (exit 3)
  that says why not: a folder, no such file, unreadable, not a regular file (a FIFO, a
  device: never waited on, never read without end).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from evalpin.core.errors import InputError


def write_atomic(path: Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write `text` to `path` all at once (a temporary file in the same folder, renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding=encoding) as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def not_utf8(data: bytes, bad: UnicodeDecodeError) -> str:
    """`not UTF-8: byte 0xe9 at column 34`; the column counts from the start of the line
    the bad byte is on (`data` may be one line or a whole file)."""
    line_start = data.rfind(b"\n", 0, bad.start) + 1
    return f"not UTF-8: byte 0x{data[bad.start]:02x} at column {bad.start - line_start + 1}"


# What an input file that cannot be read is called, unless its reader says better.
FOLDER, MISSING, UNREADABLE = "is a directory, not a file", "no such file", "cannot read"
_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def open_input(
    path: str | Path,
    *,
    folder: str | None = FOLDER,
    missing: str = MISSING,
    unreadable: str = UNREADABLE,
) -> BinaryIO:
    """An input file opened for binary reading (closed by the caller), or InputError
    naming it: `folder` when it is a directory (None: said as any other kind),
    `missing` when it does not exist, `unreadable: WHY` for any other OS error and for
    anything but a regular file. It is opened without blocking and judged by what was
    opened, so a FIFO is refused at once instead of waited on, and a link to a device
    (`/dev/zero`) is the device, refused before a byte is read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(path, missing) from None
    except OSError as exc:
        raise InputError(path, f"{unreadable}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if folder is not None and stat.S_ISDIR(mode):
            raise InputError(path, folder)
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        raise InputError(path, f"{unreadable}: not a regular file ({kind})")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")
