"""Files under the paths a test hands over, mirrored between the pytest process and the
worker: regular files (content, mode, modification time), folders (empty ones too) and
symbolic links that stay inside the tree, never followed, nothing above the granted
paths. The judge's side never takes anything it could import or execute (`Intake`)."""

from __future__ import annotations

import base64
import os
import stat

from .protocol import MAX_SYNC_BYTES, ProtocolError, Unsupported, string

# A file the pytest process would import, load or run if it stood on its path.
IMPORTABLE = (
    ".py",
    ".pyw",
    ".pyc",
    ".pyo",
    ".so",
    ".pyd",
    ".dll",
    ".dylib",
    ".pth",
    ".zip",
    ".egg",
)


class Mirror:
    """The files under the paths the judge granted, as this process last wrote or saw
    them: what changed since is what goes back."""

    def __init__(self) -> None:
        self.roots: list[str] = []
        self.seen: dict[str, tuple] = {}
        self.announced: list[str] = []  # paths the candidate made and handed back

    def announce(self, path: str) -> None:
        """A path of this side's scratch folder that crosses as a value (`mkdtemp()`
        returned): mirrored to the other side from now on, when it exists here."""
        path = os.path.normpath(path)
        if not os.path.isabs(path) or within(path, self.roots) or not os.path.lexists(path):
            return
        self.roots.append(path)
        self.announced.append(path)

    def apply(self, data) -> None:
        if type(data) is not dict:
            raise ProtocolError("malformed file sync")
        for root in data.get("roots") or []:
            if type(root) is str and os.path.isabs(root) and root not in self.roots:
                self.roots.append(root)
                kinds = data.get("folders") if type(data.get("folders")) is dict else {}
                folder = root if kinds.get(root) else os.path.dirname(root)
                os.makedirs(folder, exist_ok=True)
        write_tree(data, self.roots, self.seen)

    def changes(self) -> dict | None:
        found = scan(self.roots, self.seen) if self.roots else None
        if self.announced:
            found = found or {}
            found["roots"], self.announced = self.announced, []
        return found


def within(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def scan(roots: list[str], seen: dict[str, tuple]) -> dict | None:
    """What under `roots` differs from `seen` (made or changed, then removed); `seen`
    is updated. None when nothing changed."""
    now: dict[str, tuple] = {}
    files, dirs, links = [], [], []
    total = 0
    for root in roots:
        for path, st in _walk(root):
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                stamp: tuple = ("l", os.readlink(path))
                if seen.get(path) != stamp:
                    links.append([path, stamp[1]])
            elif stat.S_ISDIR(st.st_mode):
                stamp = ("d", mode)
                if seen.get(path) != stamp and path not in roots:
                    dirs.append([path, mode])
            else:
                stamp = ("f", st.st_mtime_ns, st.st_size, mode)
                if seen.get(path) != stamp:
                    total += st.st_size
                    if total > MAX_SYNC_BYTES:
                        raise Unsupported(f"more than {MAX_SYNC_BYTES} bytes of files to mirror")
                    with open(path, "rb") as f:
                        content = base64.b64encode(f.read()).decode("ascii")
                    files.append([path, content, mode, st.st_mtime_ns])
            now[path] = stamp
    gone = [p for p in seen if p not in now and within(p, roots)]
    seen.clear()
    seen.update(now)
    if not (files or dirs or links or gone):
        return None
    return {"files": files, "dirs": dirs, "links": links, "gone": gone}


def _walk(root: str):
    try:
        st = os.lstat(root)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
            yield root, st
        return
    yield root, st
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode):
                yield path, st
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(folder, x))]


class Intake:
    """What the judge takes from the worker's side of the mirror: never a file it could
    import (a module, a compiled module, a `.pth`, a library) on a folder it imports
    from, never an executable bit, never a link leading out of the mirrored tree. What
    it leaves out is an operation the wire cannot carry (`refuse`); what it writes is
    remembered, so that nothing of it is ever imported (`tainted`)."""

    def __init__(self, refuse, import_path) -> None:
        self.refuse = refuse  # called with what was left out; records it
        self.import_path = import_path  # the folders the judge imports from, now
        self.tainted: set[str] = set()

    def file(self, path: str, mode: int) -> int | None:
        """The mode to write `path` with, or None to leave it out."""
        parts = path.split("/")
        importable = path.endswith(IMPORTABLE) or "__pycache__" in parts
        if importable and within(os.path.dirname(path), self.import_path()):
            self.refuse(f"a file the candidate wrote where the tests import from ({path})")
            return None
        if mode & 0o111:
            self.refuse(f"an executable file the candidate wrote ({path}): never run here")
        self.tainted.add(path)
        return mode & 0o666

    def link(self, path: str, target: str, roots: list[str]) -> bool:
        resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
        if not within(resolved, roots):
            self.refuse(f"a link the candidate made that leads out of the tree ({path})")
            return False
        self.tainted.add(path)
        return True


def write_tree(data: dict, roots: list[str], seen: dict[str, tuple], intake=None) -> None:
    """Write the other side's changes under `roots` only: folders, regular files and
    links, no link followed, no `..`; remove what it removed."""
    files = data.get("files") or []
    dirs, links, gone = data.get("dirs") or [], data.get("links") or [], data.get("gone") or []
    if not all(type(x) is list for x in (files, dirs, links, gone)):
        raise ProtocolError("malformed file sync")
    for path in sorted((_path(p, roots) for p in gone), key=len, reverse=True):
        _remove(path)
        seen.pop(path, None)
    for entry in sorted(dirs, key=lambda e: len(e[0]) if type(e) is list and e else 0):
        if type(entry) is not list or len(entry) != 2 or type(entry[1]) is not int:
            raise ProtocolError("malformed folder entry")
        path = _path(entry[0], roots)
        _check_parent(path)
        if not os.path.isdir(path) or os.path.islink(path):
            _remove(path)
            os.mkdir(path, 0o700)
        os.chmod(path, (entry[1] & 0o777) | 0o700, follow_symlinks=False)
        seen[path] = ("d", stat.S_IMODE(os.lstat(path).st_mode))
    for entry in files:
        if type(entry) is not list or len(entry) != 4 or type(entry[2]) is not int:
            raise ProtocolError("malformed file entry")
        path = _path(entry[0], roots)
        mode = entry[2] if intake is None else intake.file(path, entry[2])
        if mode is None:
            continue
        content = base64.b64decode(string(entry[1]).encode("ascii"), validate=True)
        _make_parents(path, roots, seen)
        _check_parent(path)
        if os.path.islink(path) or os.path.isdir(path):
            _remove(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(content)
        os.chmod(path, mode & 0o777)
        if type(entry[3]) is int:
            os.utime(path, ns=(entry[3], entry[3]), follow_symlinks=False)
        st = os.lstat(path)
        seen[path] = ("f", st.st_mtime_ns, st.st_size, stat.S_IMODE(st.st_mode))
    for entry in links:
        if type(entry) is not list or len(entry) != 2:
            raise ProtocolError("malformed link entry")
        path, target = _path(entry[0], roots), string(entry[1])
        if intake is not None and not intake.link(path, target, roots):
            continue
        _make_parents(path, roots, seen)
        _check_parent(path)
        _remove(path)
        os.symlink(target, path)
        seen[path] = ("l", target)


def _make_parents(path: str, roots: list[str], seen: dict[str, tuple]) -> None:
    """Make the folders on the way to `path`, as seen (they came with it)."""
    folder = os.path.dirname(path)
    missing = []
    while not os.path.isdir(folder) and within(folder, roots):
        missing.append(folder)
        folder = os.path.dirname(folder)
    for folder in reversed(missing):
        os.mkdir(folder, 0o755)
        seen[folder] = ("d", stat.S_IMODE(os.lstat(folder).st_mode))
    os.makedirs(os.path.dirname(path), exist_ok=True)


def _remove(path: str) -> None:
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def _check_parent(path: str) -> None:
    if os.path.realpath(os.path.dirname(path)) != os.path.dirname(path):
        raise PermissionError(f"{path}: a folder on its way is a link")


def _path(path, roots: list[str]) -> str:
    path = string(path)
    if not os.path.isabs(path) or os.path.normpath(path) != path or not within(path, roots):
        raise PermissionError(f"{path!r} is not under a path the tests handed over")
    return path


class ImportGuard:
    """A meta path finder in the pytest process: a module found in a file the mirror
    wrote (or with a compiled form it wrote) is never imported, wherever the tests put
    it on sys.path."""

    def __init__(self, intake: Intake) -> None:
        self.intake = intake

    def find_spec(self, name, path=None, target=None):
        tainted = self.intake.tainted
        if not tainted:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None:
            return None
        for place in (spec.origin, getattr(spec, "cached", None)):
            if type(place) is str and any(place == t or place.startswith(t + "/") for t in tainted):
                self.intake.refuse(f"importing {name!r}, which the candidate wrote")
                raise ImportError(f"{name!r} was written by the candidate: never imported here")
        return None
