"""pytest's output capture, bounded: `install()` (called as `evalpin_capture.install()`
in the sandboxed pytest process, before pytest runs) makes every file pytest captures a
stream into keep at most `CAPTURE_BYTES`; what is written past that is dropped, and a
line where the cut is says so.

Why: a test (or, in-process, the candidate) that prints more than the sandbox lets one
file grow would make pytest's own capture fail, a fail plain pytest would not give. Cut,
the output is only shorter; the test's outcome is its own. The bound holds for what is
written through Python (`print`, `sys.stdout`); bytes written straight to a descriptor
(`os.write(1, ...)`, a child process) land in the same file unbounded, up to the
sandbox's own caps (see docs/concepts/isolation.md).
"""

from __future__ import annotations

import io
import os
import tempfile

import _pytest.capture

CAPTURE_BYTES = 16 * 1024**2
NOTE = b"\n[evalpin] output past 16 MiB cut here\n"


class BoundedFile(io.FileIO):
    """A temporary file that keeps its first `CAPTURE_BYTES` (the note included)."""

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        room = CAPTURE_BYTES - len(NOTE) - self.tell()
        if len(view) <= room:
            return super().write(view)
        if room >= 0:  # the first write past the bound: what fits, then the note
            rest = view[:room]
            while rest:
                rest = rest[super().write(rest) :]
            super().write(NOTE)
        return len(view)


def bounded_temporary_file(*args, **kwargs) -> BoundedFile:
    """`tempfile.TemporaryFile(buffering=0)`, bounded (pytest asks for no other kind)."""
    with tempfile.TemporaryFile(buffering=0) as raw:
        fd = os.dup(raw.fileno())
    return BoundedFile(fd, "r+")


def install() -> None:
    """Bound pytest's capture files from now on (a pytest without the hook is left as
    it is: its capture is then only the sandbox's to bound)."""
    if hasattr(_pytest.capture, "TemporaryFile"):
        _pytest.capture.TemporaryFile = bounded_temporary_file
