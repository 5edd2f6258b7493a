"""One case's scratch space (`Box`, made by `scratch`): a folder on the host where the
grader lays out what each sandbox starts with, and the private folders the sandboxes
write in, which never touch the host's disk.

Each folder a sandbox may write is, inside its namespaces, a size-capped tmpfs of its
own (`mounts.DISK_BYTES`) that the sandbox hands back to the grader as a descriptor before any
tested code runs: the grader fills it from the host folder and reads the report from it
(`Box.view`) through that descriptor, and when the box closes the kernel frees it,
whatever the tested code made there (folders thousands deep, modes 000, FIFOs, sockets).
Without namespaces the host folders themselves are written, and `remove_tree` removes
them without recursion and without following a link.

`scratch` names the folder `evalpin-PID-RANDOM` and holds a lock in it for its life, so
a later grader removes the scratch of one that was killed, never a live one's. When the
grader runs as root, the sandboxed processes run as a host uid of their own (`Box.uid`),
never as root.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from evalpin.core.instrument.graders.coding import FILE_SIZE_BYTES
from evalpin.run.sandbox.cgroup import Cgroup, alive

# The host uids a sandbox of a root grader runs as, one picked per case: a range no
# distribution or systemd hands out (0x70000000 and up, below 2^31), so the sandbox
# owns nothing on the host and shares no per-user limit with anyone.
SANDBOX_UIDS = range(0x7000_0000, 0x7000_0000 + (1 << 24))
NOBODY = 65534
_OWNER = ".owner"  # the lock a live grader holds in its scratch folder
_PREFIX = "evalpin-"


@dataclass(frozen=True)
class Box:
    """One case's scratch space: `root` holds every host folder a sandbox binds or
    starts from (the work folders, a control folder with a random name for the report)
    and the empty mount points of the private roots; `cgroup` caps the whole process
    tree; `uid` is the unprivileged host uid the sandboxes run as (None: the grader's
    own, when it is not root). `tmpfs` holds, per sandbox folder on a private tmpfs,
    the host folder it started from (None for /tmp and /dev/shm) and its descriptor."""

    root: Path
    cgroup: Cgroup | None
    uid: int | None = None
    tmpfs: list[tuple[Path | None, int]] = field(default_factory=list)
    # Its sandboxes have namespaces of their own, so what they are given read-only stays
    # so (evalpin's runtime folder is then shared between cases: `shared.py`).
    namespaces: bool = True

    def folder(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(exist_ok=True)
        return path

    def control(self) -> Path:
        """A folder whose name a sandbox that does not bind it cannot guess."""
        return self.folder("ctl-" + secrets.token_hex(8))

    def view(self, path: Path) -> Path:
        """Where the grader reads `path` (a file in a folder it gave a sandbox) after
        the run: in that sandbox's own tmpfs when it had one, else on the host."""
        for source, fd in self.tmpfs:
            if source is not None and path.is_relative_to(source):
                return Path(f"/proc/self/fd/{fd}", path.relative_to(source))
        return path

    def full(self) -> bool:
        """Whether a private folder (work folder, /tmp, /dev/shm) ran out of room or of
        files: the case reached its disk cap. Read once every process is gone, so
        "nearly" counts (less than a sixteenth left): the files pytest held open while
        the folder filled up are freed by then."""
        for _, fd in self.tmpfs:
            with contextlib.suppress(OSError):
                room = os.statvfs(f"/proc/self/fd/{fd}")
                if room.f_bavail * 16 < room.f_blocks or room.f_favail * 16 < room.f_files:
                    return True
        return False


def sandbox_uid() -> int | None:
    """The host uid a case's sandboxes run as: None when the grader is not root (its
    own uid, mapped to root inside a user namespace, holds no host privilege); else a
    fresh uid of `SANDBOX_UIDS` that has no account, or `nobody` where that range is not
    mapped (a root grader inside a container's user namespace)."""
    if os.geteuid() != 0:
        return None
    mapped = _mapped_uids()
    for _ in range(8):
        uid = SANDBOX_UIDS.start + secrets.randbelow(len(SANDBOX_UIDS))
        if any(uid in r for r in mapped) and not _has_account(uid):
            return uid
    return NOBODY


def _mapped_uids() -> list[range]:
    try:
        lines = Path("/proc/self/uid_map").read_text().splitlines()
    except OSError:
        return [range(0, 1 << 32)]
    ranges = []
    for line in lines:
        inside, _, count = (int(x) for x in line.split())
        ranges.append(range(inside, inside + count))
    return ranges


def _has_account(uid: int) -> bool:
    import pwd

    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


@contextlib.contextmanager
def scratch(
    parent: Path | None, cgroup: bool, memory_mb: int, *, namespaces: bool = True
) -> Iterator[Box]:
    """A case's scratch folder under `parent` (the system's temp folder by default),
    its cgroup, and its sandbox uid (only with `namespaces`: without them the tested
    code runs as the grader, as the interpreter's own files may be root's alone);
    everything is removed on exit, and first, once per process, the scratch that
    graders killed before they could clean up left there."""
    folder = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    _reap_dead_scratch(str(folder))
    root = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=folder))
    owner = os.open(root / _OWNER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    fcntl.flock(owner, fcntl.LOCK_EX)
    box = None
    try:
        group = Cgroup.create(memory_mb * 1024**2) if cgroup else None
        box = Box(root, group, sandbox_uid() if namespaces else None, namespaces=namespaces)
        yield box
    finally:
        if box is not None:
            for _, fd in box.tmpfs:  # the kernel frees each tmpfs with its last holder
                os.close(fd)
            box.tmpfs.clear()
            if box.cgroup is not None:
                box.cgroup.remove()
        remove_tree(root)
        os.close(owner)


@functools.cache
def _reap_dead_scratch(parent: str) -> None:
    """Remove the scratch folders of graders that are gone (SIGKILLed, or a machine
    that went down): named `evalpin-PID-...`, PID not running here, and their lock
    free. A live grader's folder is never touched, whoever runs it; folders of other
    shapes (older evalpin versions) are left alone."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        parts = entry.name.split("-")
        if len(parts) != 3 or parts[0] + "-" != _PREFIX or not parts[1].isdigit():
            continue
        if alive(int(parts[1])) or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            fd = os.open(
                os.path.join(entry.path, _OWNER), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
            )
        except OSError:
            continue  # no lock yet (being made) or not ours: leave it
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # held: its grader is alive (on this machine or another)
            remove_tree(Path(entry.path))
        finally:
            os.close(fd)


def remove_tree(root: Path) -> None:
    """Remove a folder and everything in it, whatever tested code made there: any depth
    (no recursion: one descriptor, going back up through the `..` of folders entered
    without following a link), any number of entries (each folder listed once), modes
    000 (restored as it goes), odd names, FIFOs, sockets, links (removed, never
    followed). Run once every process that could write there is dead. What cannot be
    removed is left; this never raises."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(root)  # a link or a file where the folder was
        return
    try:
        pending = [_clear(fd)]  # per level of the walk: its sub-folders still to remove
        while pending:
            if pending[-1]:
                try:
                    inner = os.open(
                        pending[-1][-1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd
                    )
                except OSError:
                    pending[-1].pop()
                    continue
                os.close(fd)
                fd = inner
                pending.append(_clear(fd))
                continue
            pending.pop()
            if not pending:
                break
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = parent
            with contextlib.suppress(OSError):
                os.rmdir(pending[-1].pop(), dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(root)


def _clear(fd: int) -> list[str]:
    """Unlink every entry of the folder open at `fd` that is not a folder, and return
    the names of its sub-folders, each made enterable."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, stat.S_IRWXU)  # tested code may have left it 000
    folders = []
    with contextlib.suppress(OSError), os.scandir(fd) as entries:
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir:
                with contextlib.suppress(OSError):
                    os.unlink(entry.name, dir_fd=fd)
                continue
            with contextlib.suppress(OSError):  # a folder, not a link: nothing to follow
                os.chmod(entry.name, stat.S_IRWXU, dir_fd=fd)
            folders.append(entry.name)
    return folders


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


def fill(source: Path, target: int, uid: int | None) -> None:
    """Copy the grader's host folder `source` (its own files: no link, no special file)
    into a sandbox's tmpfs open at `target`, every entry owned by `uid` when given."""
    os.chmod(f"/proc/self/fd/{target}", 0o700)
    if uid is not None:
        os.chown(f"/proc/self/fd/{target}", uid, uid)
    stack: list[tuple[Path, int]] = [(source, os.dup(target))]
    try:
        while stack:
            folder, fd = stack.pop()
            try:
                for entry in os.scandir(folder):
                    info = entry.stat(follow_symlinks=False)
                    mode = stat.S_IMODE(info.st_mode)
                    if stat.S_ISDIR(info.st_mode):
                        os.mkdir(entry.name, mode, dir_fd=fd)
                        inner = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                        stack.append((Path(entry.path), inner))
                    elif stat.S_ISREG(info.st_mode):
                        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                        out = os.open(entry.name, flags, mode, dir_fd=fd)
                        with open(entry.path, "rb") as src, os.fdopen(out, "wb") as dst:
                            while chunk := src.read(1 << 20):
                                dst.write(chunk)
                    else:
                        continue
                    if uid is not None:
                        os.chown(entry.name, uid, uid, dir_fd=fd, follow_symlinks=False)
            finally:
                os.close(fd)
    finally:
        for _, fd in stack:
            os.close(fd)


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
