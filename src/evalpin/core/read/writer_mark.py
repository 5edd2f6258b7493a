"""Who is writing a run file, as the writer's mark beside it says (`.NAME.writer`, see
`runfile.RunWriter`): the review says "being written by pid N since T" while that
process is alive on this machine.

The mark is read without blocking and without following a link, and only when it is a
regular file (a FIFO or a device put in its place must never hang the reader), at most
4 KiB of it; anything else, or a mark that is no JSON object with a pid, is no mark.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

MARK_AT_MOST = 4096


@dataclass(frozen=True)
class Writer:
    """The process the mark names, and since when it writes."""

    pid: int
    host: str
    since: str

    def alive(self) -> bool:
        """Whether that process is alive here (a mark of another machine, or left by a
        killed writer, says nothing about now)."""
        if self.host != socket.gethostname() or self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # alive, someone else's
        except OSError:
            return False
        return True

    def said(self) -> str:
        return f"being written by pid {self.pid} since {self.since}"


def mark_path(run: str | Path) -> Path:
    """Where a run file's writer mark is (the name `RunWriter` gives it)."""
    path = Path(run)
    return path.with_name(f".{path.name}.writer")


def read_mark(run: str | Path) -> Writer | None:
    """The writer a run file's mark names, or None (no mark, or not one to trust)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(mark_path(run), flags)
    except OSError:  # none, a link, or not ours to read
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MARK_AT_MOST)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        info = json.loads(data)
        pid = info["pid"]
        if not isinstance(pid, int) or isinstance(pid, bool):
            return None
        return Writer(pid, str(info.get("host", ""))[:64], str(info.get("since", ""))[:40])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
