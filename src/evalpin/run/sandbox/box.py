"""One run's scratch space on the host (`Box`, made by `scratch`), and writing and
reading files in it without following a link tested code may have put there."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from evalpin.core.instrument.graders.coding import FILE_SIZE_BYTES
from evalpin.run.sandbox.cgroup import Cgroup


@dataclass(frozen=True)
class Box:
    """One run's scratch space on the host: `root` holds every folder a sandbox binds
    (the work folders, a control folder with a random name for the report) and the
    empty mount points of the private roots; `cgroup` caps the whole process tree."""

    root: Path
    cgroup: Cgroup | None

    def folder(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(exist_ok=True)
        return path

    def control(self) -> Path:
        """A folder whose name a sandbox that does not bind it cannot guess."""
        return self.folder("ctl-" + secrets.token_hex(8))


@contextlib.contextmanager
def scratch(parent: Path | None, cgroup: bool, memory_mb: int) -> Iterator[Box]:
    root = Path(tempfile.mkdtemp(prefix="evalpin-", dir=parent))
    group = None
    try:
        group = Cgroup.create(memory_mb * 1024**2) if cgroup else None
        yield Box(root, group)
    finally:
        if group is not None:
            group.remove()
        shutil.rmtree(root, onerror=_chmod_and_retry)


def _chmod_and_retry(func, path, _exc_info) -> None:
    """Tested code may leave read-only folders behind; make them removable and retry."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        func(path)


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    """Write `files` (canonical relative paths) under `root` without following any link:
    every folder is opened with O_NOFOLLOW relative to its parent, every file is created
    with O_EXCL."""
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for rel, data in files.items():
            *folders, leaf = rel.split("/")
            fd = os.dup(top)
            try:
                for folder in folders:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(folder, 0o755, dir_fd=fd)
                    inner = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    os.close(fd)
                    fd = inner
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                with os.fdopen(os.open(leaf, flags, 0o644, dir_fd=fd), "wb") as out:
                    out.write(data)
            finally:
                os.close(fd)
    finally:
        os.close(top)


def read_regular(path: Path, limit: int = FILE_SIZE_BYTES) -> bytes | None:
    """A file's bytes, or None; never follows a link or blocks on a FIFO that tested
    code may have put in its place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as report:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return report.read(limit)
