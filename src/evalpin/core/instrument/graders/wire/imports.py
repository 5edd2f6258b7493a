"""What the pytest process may load from the folders the worker writes too.

The witness's two processes share one filesystem (the work folder, /tmp, /dev/shm: what
one writes, the other reads). pytest loads code from there only where the grader put
it: the test copy and the stand-ins, bound read-only from a folder only pytest's sandbox
has, so on a device of their own. Any other module, package, compiled file, library or
zip there may be the candidate's (or the test's, written where both write: nobody can
tell), and is refused, whoever put its folder on `sys.path` and however it is loaded
(`import`, pytest's assertion rewriting, `spec_from_file_location`, `pkgutil`); the
refusal is an operation the witness cannot carry (the case is disputed, never a fail).
Bytecode is never read from there: placed files are compiled from their source.

Without namespaces (no mounts, no devices of their own) the same rules hold by path,
with no guarantee: the worker can write anything the grader can.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import zipimport
from importlib import _bootstrap_external  # type: ignore[attr-defined]

_CODE = (
    *importlib.machinery.SOURCE_SUFFIXES,
    *importlib.machinery.EXTENSION_SUFFIXES,
    ".so",
    ".pyd",
    ".pth",
    ".zip",
    ".egg",
)
_BYTECODE = tuple(importlib.machinery.BYTECODE_SUFFIXES)


def within(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


class SharedFolders:
    """The folders both processes write (`roots`), by device where each is a tmpfs of
    its own (`devices`), else by path with the grader's files in them (`placed`)."""

    def __init__(self, roots: list[str], placed: list[str], devices: bool, refuse) -> None:
        self.roots = [os.path.realpath(r) for r in roots]
        self.placed = frozenset(os.path.realpath(p) for p in placed)
        self.devices = None
        if devices:
            self.devices = frozenset(os.stat(r).st_dev for r in self.roots if os.path.isdir(r))
        self.refuse = refuse  # records what the witness could not carry

    def written(self, path: str, st: os.stat_result | None = None) -> bool:
        """Whether the file at `path` (opened: `st`) may be the worker's."""
        if self.devices is not None:
            try:
                st = st or os.stat(path)
            except OSError:
                return False
            return st.st_dev in self.devices
        real = os.path.realpath(path)
        return within(real, self.roots) and real not in self.placed

    def refused(self, path: str) -> ImportError:
        self.refuse(f"loading code from a file the worker could have written ({path})")
        return ImportError(f"{path}: in a folder the candidate writes; never loaded here")

    # -- the hooks ------------------------------------------------------------------

    def path_hook(self, entry: str):
        """sys.path_hooks[0]: a folder (or zip) both write gets a finder that finds only
        what the grader placed; any other entry is left to the usual hooks."""
        if not isinstance(entry, str) or not self.written(entry or "."):
            raise ImportError("not a shared folder")
        if os.path.isdir(entry or "."):
            return _Finder(self, entry)
        return _Refusing(self, entry)

    def install(self) -> None:
        """From now on, in this process (pytest's, before it imports the test)."""
        sys.path_hooks.insert(0, self.path_hook)
        for entry in list(sys.path_importer_cache):
            if isinstance(entry, str) and self.written(entry or "."):
                del sys.path_importer_cache[entry]
        get_data = _bootstrap_external.FileLoader.get_data
        create_module = importlib.machinery.ExtensionFileLoader.create_module
        folders = self

        def guarded_get_data(loader, path):
            if isinstance(path, str) and path.endswith(_CODE + _BYTECODE):
                with open(path, "rb") as opened:
                    if folders.written(path, os.fstat(opened.fileno())):
                        if path.endswith(_BYTECODE):  # compiled from the source instead
                            raise OSError(f"{path}: no bytecode from a shared folder")
                        raise folders.refused(path)
                    return opened.read()
            return get_data(loader, path)

        def guarded_create_module(loader, spec):
            if folders.written(loader.path):
                raise folders.refused(loader.path)
            return create_module(loader, spec)

        _bootstrap_external.FileLoader.get_data = guarded_get_data
        importlib.machinery.ExtensionFileLoader.create_module = guarded_create_module


class _Finder(importlib.machinery.FileFinder):
    """A folder both processes write: what the usual finder finds there, when the grader
    placed it; anything else it finds is refused. (A FileFinder, so that `pkgutil`
    lists the folder's modules as it would.)"""

    def __init__(self, folders: SharedFolders, entry: str) -> None:
        super().__init__(
            entry,
            (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
            (importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES),
            (importlib.machinery.SourcelessFileLoader, importlib.machinery.BYTECODE_SUFFIXES),
        )
        self.folders = folders

    def find_spec(self, fullname, target=None):
        spec = super().find_spec(fullname, target)
        origin = getattr(spec, "origin", None)
        located = spec is not None and spec.has_location and isinstance(origin, str)
        if located and self.folders.written(origin):
            raise self.folders.refused(origin)
        return spec


class _Refusing:
    """A zip (or other file) on sys.path in a shared folder: nothing is loaded from it."""

    def __init__(self, folders: SharedFolders, entry: str) -> None:
        self.folders = folders
        self.entry = entry

    def find_spec(self, name, target=None):
        try:
            found = zipimport.zipimporter(self.entry).find_spec(name, target)
        except (zipimport.ZipImportError, OSError):
            return None
        if found is not None:
            raise self.folders.refused(self.entry)
        return None

    def invalidate_caches(self) -> None:
        pass
