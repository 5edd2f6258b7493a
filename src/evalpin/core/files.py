"""Small file helpers every reader and writer shares, so each rule is said once.

- `write_atomic`: write beside the destination, then rename over it; a crash or a full
  disk leaves the old file (or none), never half a file.
- `not_utf8`: the one wording of "these bytes are not UTF-8" that every reader reports
  (fixtures, run files, replay recordings, disclosure lists).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
