"""The writable surface of a coding item: which files a completion may write.

Only an item's `expected_files` are writable, under their canonical names, and never a
reserved name (config, import hooks, the test itself), even when an item lists it. The
fixture loader refuses an item that expects a reserved name (`reserved_name`); the
grader keeps the rest out (`approved_files`) and names them (`surface_reasons`).

Reason codes decided here: `outside_surface:PATH`, `missing_file:NAME`. Part of the
grader version, like every module under graders/.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from evalpin.core.reasons import MISSING_FILE, OUTSIDE_SURFACE

if TYPE_CHECKING:
    from evalpin.core.instrument.fixtures import CodingItem

# Never writable, even when an item lists them: each is read by Python or pytest on its
# own initiative (config, plugins, startup hooks). Compared case-insensitively, since on
# a case-insensitive file system `Conftest.py` is `conftest.py`.
# The modules evalpin's runtime folder gives its sandboxed processes (`coding.py`'s boot
# code imports them): a candidate or test file of one of these names would be shadowed by
# evalpin's own, or shadow it.
RUNTIME_MODULES = frozenset({"evalpin_wire", "evalpin_capture", "evalpin_guard"})
RESERVED_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.py",
        "sitecustomize.py",
        "usercustomize.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "setup.cfg",
        "tox.ini",
        "pyproject.toml",
    }
)
RESERVED_DIRS = frozenset({"pytest", "_pytest", "__pycache__"}) | RUNTIME_MODULES


def surface_path(name: str) -> str | None:
    """`name` as a canonical relative POSIX path, or None when it cannot be one.

    Backslashes count as separators (a Windows-style `..\\conftest.py` is still an
    escape), `.` and empty parts drop out and `..` is resolved lexically; an absolute
    path, a drive letter, a leading `~`, a NUL or a `..` above the top are refused.
    Lexical resolution is enough because the work directory is fresh: no symlinks exist.
    """
    if not name or "\0" in name or name.startswith("~"):
        return None
    path = name.replace("\\", "/")
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        return None
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or None


def reserved_name(name: str, test_name: str) -> bool:
    """Whether a model may never write `name` (config, import hooks, the test itself)."""
    path = surface_path(name)
    return path is None or _reserved(path, test_name)


def _reserved(path: str, test_name: str) -> bool:
    parts = path.casefold().split("/")
    return (
        path.casefold() == test_name.casefold()
        or parts[-1] in RESERVED_NAMES
        or parts[-1].split(".")[0] in RUNTIME_MODULES  # evalpin_wire.py, evalpin_guard.so
        or parts[-1].endswith(".pth")
        or any(p in RESERVED_DIRS for p in parts[:-1])
    )


def approved_files(files: dict[str, str], item: CodingItem) -> dict[str, str]:
    """The files the sandbox may write, under their canonical names.

    Only `item.expected_files` are writable, never a reserved name or the test file's
    own name; when two names land on the same file, the first one given wins.
    """
    expected = {surface_path(e) for e in item.expected_files}
    approved: dict[str, str] = {}
    for name, content in files.items():
        path = surface_path(name)
        if path in expected and path not in approved and not _reserved(path, _test_name(item)):
            approved[path] = content
    return approved


def surface_reasons(files: dict[str, str], item: CodingItem) -> list[str]:
    """`outside_surface:PATH` for every file that may not be written (in the order
    given), then `missing_file:NAME` for every expected file not provided."""
    approved = approved_files(files, item)
    kept = list(approved)
    reasons = []
    for name in files:
        path = surface_path(name)
        if path in kept:
            kept.remove(path)
        else:
            reasons.append(OUTSIDE_SURFACE(_printable(name)))
    for name in item.expected_files:
        if surface_path(name) not in approved:
            reasons.append(MISSING_FILE(name))
    return reasons


def _test_name(item: CodingItem) -> str:
    return item.test_file.name


def _printable(name: str, limit: int = 120) -> str:
    """A hostile name made safe for a reason string: control characters escaped, long
    names cut, so a reason stays one short line."""
    shown = re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m[0]):02x}", name)
    return shown if len(shown) <= limit else shown[:limit] + "…"
