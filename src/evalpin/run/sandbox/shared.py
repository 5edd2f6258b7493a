"""What every case's sandboxes read and none may write, written once per grading
process instead of once per case: evalpin's own modules for the sandboxed side (the
wire with its compiled files, the capture bound, the guard), about fifty files that
each case's scratch held a copy of (on a disk file system, making and removing them was
a fifth of the grader's own time per case).

The folder is a scratch folder of its own (`box.scratch`: named for this process, locked
while it lives, so a later grader removes it if this one is killed) in the system's
temp folder. A sandbox sees it only bound read-only, so no case can change what the
next one reads; a grade without namespaces (where nothing is read-only to the tested
code) keeps its own copy in its box. It is removed when the last run or check using the
fork servers ends (`zygote.release`), or at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import threading
from pathlib import Path

from evalpin.run.sandbox.box import scratch, write_tree

_LOCK = threading.Lock()
_HELD: contextlib.ExitStack | None = None
_ROOT: Path | None = None


def folder(files: dict[str, bytes]) -> Path:
    """A read-only folder (for the sandboxes) holding exactly `files`, written on first
    use and shared by every later caller asking for the same files."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    with _LOCK:
        target = _root() / f"runtime-{digest.hexdigest()[:24]}"
        if not target.is_dir():
            staging = _root() / f"staging-{os.urandom(8).hex()}"
            staging.mkdir()
            write_tree(staging, files)
            staging.rename(target)
        return target


def close() -> None:
    """Remove the shared folder now (it is made again on next use)."""
    global _HELD, _ROOT
    with _LOCK:
        if _HELD is not None:
            _HELD.close()
        _HELD = _ROOT = None


def _root() -> Path:
    global _HELD, _ROOT
    if _ROOT is None:
        stack = contextlib.ExitStack()
        box = stack.enter_context(scratch(None, cgroup=False, memory_mb=0, namespaces=False))
        _HELD, _ROOT = stack, box.root
    return _ROOT


atexit.register(close)
