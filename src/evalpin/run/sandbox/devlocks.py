"""The device nodes every box has (`/dev/null`, `/dev/zero`...) are the host's own
inodes: a box of a grader that is not root cannot have its own (no `mknod` in a user
namespace), and every other file a box reads is an overlay or a copy of its own
(`launcher.private`). A lock lives on an inode, so two boxes alive at once could signal
each other by taking and dropping one on `/dev/null` (`flock`, a POSIX or an
open-file-description range lock), whoever runs them.

So the grader holds those locks itself, for its whole life: an exclusive `flock` and a
write lock over every byte (an open-file-description lock, which no other descriptor of
the grader's releases when it closes). Every lock a box tries on a device node is then
refused, always: there is nothing to take, nothing to see come and go. A lock another
process holds already (another grader on the same host) refuses them just as well, and
the grader tries again at the next box. Leases need the file's owner (root), and
watches (`inotify`, `fanotify`) are refused by the seccomp filter (`launcher.py`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import threading

from evalpin.run.sandbox.launcher import DEV_NODES

_LOCK = threading.Lock()
_HELD: dict[str, tuple[int, bool, bool]] = {}  # path: (descriptor, flock held, range held)


def hold() -> None:
    """Hold every lock on the device nodes a box is given, where not held yet."""
    with _LOCK:
        for name in DEV_NODES:
            path = "/dev/" + name
            fd, flocked, ranged = _HELD.get(path, (-1, False, False))
            if flocked and ranged:
                continue
            if fd < 0:
                try:
                    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
                except OSError:
                    continue  # /dev/tty without a terminal: no box can open it either
            if not flocked:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    flocked = True
            if not ranged:
                # struct flock: type, whence, start, length 0 (to the end and beyond), pid 0
                every_byte = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
                with contextlib.suppress(OSError):
                    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, every_byte)
                    ranged = True
            _HELD[path] = (fd, flocked, ranged)


def held() -> dict[str, tuple[bool, bool]]:
    """Which locks this grader holds, per device node (flock, every byte): for tests."""
    with _LOCK:
        return {path: (flocked, ranged) for path, (_, flocked, ranged) in _HELD.items()}
