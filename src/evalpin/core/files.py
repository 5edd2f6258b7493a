"""Small file helpers every reader and writer shares, so each rule is said once.

- `write_atomic`: write beside the destination, then rename over it; a crash or a full
  disk leaves the old file (or none), never half a file.
- `not_utf8`: the one wording of "these bytes are not UTF-8" that every reader reports
  (fixtures, run files, replay recordings, disclosure lists).
- `read_input` / `open_input`: an input file's bytes (or an open binary handle), or the
  one-line `InputError` (exit 3) that says why not: a folder, no such file, unreadable.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

from evalpin.core.errors import InputError

_T = TypeVar("_T")


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


def read_input(
    path: str | Path,
    *,
    folder: str | None = FOLDER,
    missing: str = MISSING,
    unreadable: str = UNREADABLE,
) -> bytes:
    """The bytes of an input file, or InputError naming it: `folder` when it is a
    directory (None: no such check), `missing` when it does not exist, `unreadable: WHY`
    for any other OS error."""
    return _input(path, Path.read_bytes, folder, missing, unreadable)


def open_input(path: str | Path) -> BinaryIO:
    """An input file opened for binary reading (closed by the caller), or InputError
    naming it in `read_input`'s default words."""
    return _input(path, _open_binary, FOLDER, MISSING, UNREADABLE)


def _open_binary(path: Path) -> BinaryIO:
    return open(path, "rb")


def _input(
    path: str | Path,
    how: Callable[[Path], _T],
    folder: str | None,
    missing: str,
    unreadable: str,
) -> _T:
    p = Path(path)
    if folder is not None and p.is_dir():
        raise InputError(path, folder)
    try:
        return how(p)
    except FileNotFoundError:
        raise InputError(path, missing) from None
    except OSError as exc:
        raise InputError(path, f"{unreadable}: {exc.strerror or exc}") from None
