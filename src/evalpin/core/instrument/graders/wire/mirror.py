"""Files under the paths a test hands over, mirrored between the pytest process and the
worker: regular files only, never through a link, nothing above the granted paths."""

from __future__ import annotations

import base64
import os

from .values import MAX_SYNC_BYTES, ProtocolError, Unsupported, _s


class _Mirror:
    """The files under the paths the judge granted, as this process last wrote or saw
    them: what changed since is what goes back. Regular files and folders only."""

    def __init__(self) -> None:
        self.roots: list[str] = []
        self.seen: dict[str, tuple[int, int]] = {}

    def apply(self, data) -> None:
        if type(data) is not dict:
            raise ProtocolError("malformed file sync")
        for root in data.get("roots") or []:
            if type(root) is str and os.path.isabs(root) and root not in self.roots:
                self.roots.append(root)
                os.makedirs(
                    root if data.get("dirs", {}).get(root) else os.path.dirname(root), exist_ok=True
                )
        _write_files(data, self.roots, self.seen)

    def changes(self) -> dict | None:
        return _scan(self.roots, self.seen) if self.roots else None


def _within(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _scan(roots: list[str], seen: dict[str, tuple[int, int]]) -> dict | None:
    """Files under `roots` that differ from `seen` (added or changed, then removed);
    `seen` is updated. None when nothing changed."""
    now: dict[str, tuple[int, int]] = {}
    changed: list = []
    total = 0
    for root in roots:
        for path, st in _walk(root):
            stamp = (st.st_mtime_ns, st.st_size)
            now[path] = stamp
            if seen.get(path) != stamp:
                total += st.st_size
                if total > MAX_SYNC_BYTES:
                    raise Unsupported(f"more than {MAX_SYNC_BYTES} bytes of files to mirror")
                with open(path, "rb") as f:
                    changed.append([path, base64.b64encode(f.read()).decode("ascii")])
    gone = [p for p in seen if p not in now and _within(p, roots)]
    seen.clear()
    seen.update(now)
    if not changed and not gone:
        return None
    return {"files": changed, "gone": gone}


def _walk(root: str):
    try:
        st = os.lstat(root)
    except OSError:
        return
    import stat

    if stat.S_ISREG(st.st_mode):
        yield root, st
        return
    if not stat.S_ISDIR(st.st_mode):
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(folder, x))]
        for name in files:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield path, st


def _write_files(data: dict, roots: list[str], seen: dict[str, tuple[int, int]]) -> None:
    """Write the other side's changes under `roots` only: regular files, no symlink
    followed, no `..`; remove the files it removed."""
    files, gone = data.get("files") or [], data.get("gone") or []
    if type(files) is not list or type(gone) is not list:
        raise ProtocolError("malformed file sync")
    for entry in files:
        if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not str:
            raise ProtocolError("malformed file entry")
        path = _safe_path(entry[0], roots)
        content = base64.b64decode(_s(entry[1]).encode("ascii"), validate=True)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.realpath(os.path.dirname(path)) != os.path.dirname(path):
            raise PermissionError(f"{path}: a folder on its way is a link")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        st = os.lstat(path)
        seen[path] = (st.st_mtime_ns, st.st_size)
    for path in gone:
        path = _safe_path(_s(path), roots)
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)
        seen.pop(path, None)


def _safe_path(path: str, roots: list[str]) -> str:
    if not os.path.isabs(path) or os.path.normpath(path) != path or not _within(path, roots):
        raise PermissionError(f"{path!r} is not under a path the tests handed over")
    return path
