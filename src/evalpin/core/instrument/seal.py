"""The seal: a small lock file beside a fixture set, naming its envelope file by file.

`evalpin seal F` writes `F.lock`; `evalpin seal --check F` compares the set as it is now
with its lock. The lock is plain text a reviewer reads in a diff, one fact a line, sorted,
so two seals of the same set are the same bytes:

    # evalpin seal: the envelope of "coding.yaml"; re-seal after bumping dataset_version
    format: evalpin-lock/v1
    fixture: "coding.yaml"
    kind: "coding"
    dataset_id: "evalpin-demo-repairs"
    dataset_version: "2026.10.1"
    frozen_at: "2026-10-01T00:00:00Z"
    envelope_hash: <64 hex>
    file "prompts/chunked.md" <64 hex>
    ...
    case "chunked" <16 hex>
    ...
    end 17 files 8 cases

Every name (fixture, kind, id, version, frozen_at, file path, case id) is a JSON string
(or `null` where a set has none), so spaces, quotes and any Unicode survive; characters a
terminal or a diff would act on or hide (controls, bidi marks, line separators, unassigned
and format code points) are written as `\\uXXXX` escapes. Hashes are bare lowercase hex.
Reading is strict: the lines in this order, files and cases sorted and unique, the file
lines adding up to `envelope_hash`, and the closing `end` line with matching counts, so a
truncated or hand-mangled lock is refused (InputError: exit 3), never half-believed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalpin.core.bounded import MAX_FIXTURE_BYTES, NOT_TEXT, has_surrogates, read_bounded
from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8, write_atomic
from evalpin.core.instrument.fixtures import FixtureSet, envelope_hash
from evalpin.core.schema import unknown_key

LOCK_FORMAT = "evalpin-lock/v1"
LOCK_SUFFIX = ".lock"

MATCHED = "matched"  # the set is the envelope its lock names
EDITED = "edited"  # the envelope moved under the lock's dataset_version: an edit, no bump
BUMPED = "bumped"  # dataset_version moved since the lock: re-seal
UNSEALED = "unsealed"  # no lock beside the set
STATUSES = (MATCHED, EDITED, BUMPED, UNSEALED)

_HEX = {64: re.compile(r"[0-9a-f]{64}"), 16: re.compile(r"[0-9a-f]{16}")}
_END = re.compile(r"end (0|[1-9][0-9]*) files (0|[1-9][0-9]*) cases")
# The header, in order: key -> may it be null.
_HEADER = (
    ("fixture", False),
    ("kind", False),
    ("dataset_id", False),
    ("dataset_version", True),
    ("frozen_at", True),
)
# Every key a lock's lines start with, in order: a line with another is named.
LOCK_KEYS = (
    "format",
    *(key for key, _ in _HEADER),
    "envelope_hash",
    "file",
    "case",
    "end",
)
_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)(?::|\s|$)")
# Unicode categories written as escapes: controls, format (bidi, zero-width), line and
# paragraph separators, surrogates, private use, unassigned; and every space but U+0020.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"})


def lock_path(fixtures: Path) -> Path:
    """The lock beside the set: `<fixture file name>.lock`."""
    fixtures = Path(fixtures)
    return fixtures.with_name(fixtures.name + LOCK_SUFFIX)


@dataclass(frozen=True)
class Lock:
    """A lock as read: the envelope a set was sealed with."""

    path: Path
    fixture: str
    kind: str
    dataset_id: str
    dataset_version: str | None
    frozen_at: str | None
    envelope_hash: str
    files: dict[str, str]  # relative path -> sha256
    cases: dict[str, str]  # case id -> fixture hash


@dataclass(frozen=True)
class LockState:
    """A set compared with the lock beside it."""

    status: str
    fixtures: Path
    lock_path: Path
    dataset_id: str
    dataset_version: str | None
    envelope_hash: str
    files: int
    cases: int
    lock: Lock | None = None
    cases_changed: list[str] = field(default_factory=list)
    cases_added: list[str] = field(default_factory=list)
    cases_removed: list[str] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    files_added: list[str] = field(default_factory=list)
    files_removed: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """What `seal --check` passes: matched, or bumped (a note to re-seal)."""
        return self.status in (MATCHED, BUMPED)

    @property
    def moved(self) -> bool:
        return any(
            (
                self.cases_changed,
                self.cases_added,
                self.cases_removed,
                self.files_changed,
                self.files_added,
                self.files_removed,
            )
        )

    def to_json(self) -> dict[str, Any]:
        lock = self.lock
        return {
            "path": str(self.fixtures),
            "lock": str(self.lock_path),
            "status": self.status,
            "dataset_id": self.dataset_id,
            "dataset_version": self.dataset_version,
            "locked_version": lock.dataset_version if lock else None,
            "envelope_hash": self.envelope_hash,
            "locked_envelope_hash": lock.envelope_hash if lock else None,
            "files": self.files,
            "cases": self.cases,
            "cases_changed": self.cases_changed,
            "cases_added": self.cases_added,
            "cases_removed": self.cases_removed,
            "files_changed": self.files_changed,
            "files_added": self.files_added,
            "files_removed": self.files_removed,
        }


# -- writing ------------------------------------------------------------------------


def quote(text: str) -> str:
    """A JSON string literal, readable (Unicode kept) but with nothing a terminal or a
    diff would act on or hide: such characters become `\\uXXXX` (surrogate pairs above
    the BMP), which every JSON reader decodes back."""
    out = []
    for ch in json.dumps(text, ensure_ascii=False):
        if ch != " " and unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            cp = ord(ch)
            if cp > 0xFFFF:
                cp -= 0x10000
                out.append(f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}")
            else:
                out.append(f"\\u{cp:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _value(text: str | None) -> str:
    return "null" if text is None else quote(text)


def render_lock(fs: FixtureSet) -> str:
    """The lock's text for `fs`: deterministic, sorted, ending in a newline."""
    name = fs.path.name
    after = "bumping dataset_version" if fs.dataset_version is not None else "any edit"
    lines = [
        f"# evalpin seal: the envelope of {quote(name)}; re-seal after {after}",
        f"format: {LOCK_FORMAT}",
        f"fixture: {quote(name)}",
        f"kind: {quote(fs.kind)}",
        f"dataset_id: {quote(fs.dataset_id)}",
        f"dataset_version: {_value(fs.dataset_version)}",
        f"frozen_at: {_value(fs.frozen_at)}",
        f"envelope_hash: {fs.envelope_hash}",
    ]
    lines += [f"file {quote(rel)} {digest}" for rel, digest in sorted(fs.files.items())]
    cases = sorted((c.id, c.fixture_hash) for c in fs.cases)
    lines += [f"case {quote(case_id)} {digest}" for case_id, digest in cases]
    lines.append(f"end {len(fs.files)} files {len(cases)} cases")
    return "\n".join(lines) + "\n"


def write_lock(fs: FixtureSet) -> Path:
    """Write (or refresh) the lock beside `fs`, atomically; returns its path."""
    path = lock_path(fs.path)
    write_atomic(path, render_lock(fs), encoding="utf-8")
    return path


# -- reading ------------------------------------------------------------------------


def _string(path: Path, text: str, lineno: int, what: str, nullable: bool) -> tuple[Any, str]:
    """A JSON string (or null) at the start of `text`, and what follows it."""
    if nullable and (text == "null" or text.startswith("null ")):
        return None, text[4:]
    if not text.startswith('"'):
        raise InputError(path, f"{what} must be a JSON string", lineno)
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"{what} is not a valid JSON string: {exc.msg}", lineno) from None
    if not isinstance(value, str):  # pragma: no cover - a '"' always opens a string
        raise InputError(path, f"{what} must be a JSON string", lineno)
    if has_surrogates(value):
        raise InputError(path, f"{what}: {NOT_TEXT}", lineno)
    return value, text[end:]


def read_lock(path: Path, fs: FixtureSet | None = None) -> Lock:
    """Read a lock strictly; with `fs`, also refuse a lock written for another set."""
    path = Path(path)
    if path.is_symlink():
        raise InputError(path, "lock is a symlink; a lock is a plain file beside its set")
    data = read_bounded(
        path,
        MAX_FIXTURE_BYTES,
        folder="lock is a directory, not a file",
        missing="no such lock file",
        unreadable="cannot read lock",
    )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data[: bad.start].count(b"\n") + 1
        raise InputError(path, f"garbage lock: {not_utf8(data, bad)}", line) from None
    lock = _parse(path, text)
    if fs is not None:
        _same_set(lock, fs)
    return lock


def _parse(path: Path, text: str) -> Lock:
    if not text.strip():
        raise InputError(path, "empty lock file")
    if not text.endswith("\n"):
        raise InputError(path, "truncated lock: it does not end with a newline")
    if "\r" in text:
        line = text[: text.index("\r")].count("\n") + 1
        msg = "carriage return in the lock (CRLF line endings?): a lock's lines end in \\n only"
        raise InputError(path, msg, line)
    lines = text[:-1].split("\n")
    n = 0
    while n < len(lines) and lines[n].startswith("#"):
        n += 1
    if n == len(lines):
        raise InputError(path, "not an evalpin lock: no format line", n)
    first = lines[n]
    if first != f"format: {LOCK_FORMAT}":
        if first.startswith("format:"):
            found = first[len("format:") :].strip()
            msg = f"unknown lock format {found[:40]!r} (this evalpin reads {LOCK_FORMAT})"
            raise InputError(path, msg, n + 1)
        raise InputError(path, f"not an evalpin lock: expected 'format: {LOCK_FORMAT}'", n + 1)
    n += 1
    header: dict[str, Any] = {}
    for key, nullable in _HEADER:
        if n >= len(lines):
            raise InputError(path, f"truncated lock: no '{key}:' line", n + 1)
        line, prefix = lines[n], f"{key}: "
        if not line.startswith(prefix):
            raise _not_here(path, line, n + 1, f"'{key}:'")
        value, rest = _string(path, line[len(prefix) :], n + 1, key, nullable)
        if rest:
            raise InputError(path, f"unexpected text after {key}", n + 1)
        if value == "" and not nullable:
            raise InputError(path, f"{key} is empty", n + 1)
        header[key] = value
        n += 1
    if n >= len(lines):
        raise InputError(path, "truncated lock: no 'envelope_hash:' line", n + 1)
    if not lines[n].startswith("envelope_hash: "):
        raise _not_here(path, lines[n], n + 1, "'envelope_hash:'")
    locked_envelope = lines[n][len("envelope_hash: ") :]
    if not _HEX[64].fullmatch(locked_envelope):
        raise InputError(path, "envelope_hash must be 64 lowercase hex digits", n + 1)
    n += 1
    files = _entries(path, lines, n, "file", 64)
    n += len(files)
    cases = _entries(path, lines, n, "case", 16)
    n += len(cases)
    if n >= len(lines):
        raise InputError(path, "truncated lock: no closing 'end' line", n + 1)
    end = _END.fullmatch(lines[n])
    if not end:
        raise _not_here(path, lines[n], n + 1, "a file, case or closing 'end N files M cases' line")
    if (int(end[1]), int(end[2])) != (len(files), len(cases)):
        msg = (
            f"truncated lock: its end line counts {end[1]} files {end[2]} cases, "
            f"the lock holds {len(files)} and {len(cases)}"
        )
        raise InputError(path, msg, n + 1)
    if n + 1 != len(lines):
        raise InputError(path, "unexpected text after the closing 'end' line", n + 2)
    if not files:
        raise InputError(path, "lock names no files", n + 1)
    if envelope_hash(files) != locked_envelope:
        msg = "its file lines do not add up to its envelope_hash (hand-edited or damaged)"
        raise InputError(path, msg)
    return Lock(
        path=path,
        envelope_hash=locked_envelope,
        files=files,
        cases=cases,
        **header,
    )


def _not_here(path: Path, line: str, lineno: int, expected: str) -> InputError:
    """A line that is not the one expected: named as an unknown key (with the nearest
    of the lock's keys) when it starts with a word that is none of them."""
    word = _WORD.match(line)
    if word and word[1] not in LOCK_KEYS:
        return InputError(
            path,
            f"{unknown_key(word[1], LOCK_KEYS, extensions=False)}; expected {expected} here",
            lineno,
        )
    return InputError(path, f"expected {expected} here", lineno)


def _entries(path: Path, lines: list[str], n: int, word: str, size: int) -> dict:
    """The run of `word "name" <hex>` lines from line index `n`, sorted and unique."""
    found: dict[str, str] = {}
    last: str | None = None
    prefix = f"{word} "
    while n < len(lines) and lines[n].startswith(prefix):
        lineno = n + 1
        name, rest = _string(path, lines[n][len(prefix) :], lineno, f"{word} name", False)
        if not rest.startswith(" ") or not _HEX[size].fullmatch(rest[1:]):
            raise InputError(path, f"{word} line needs a name and {size} lowercase hex", lineno)
        if name == "":
            raise InputError(path, f"{word} name is empty", lineno)
        if last is not None and name <= last:
            what = "duplicate" if name == last else "out of order"
            raise InputError(path, f"{word} {quote(name)} is {what} (a lock is sorted)", lineno)
        found[name] = rest[1:]
        last = name
        n += 1
    return found


def _same_set(lock: Lock, fs: FixtureSet) -> None:
    """Refuse a lock that was written for another set (copied or renamed beside it)."""
    again = "delete it to seal this set afresh"
    if lock.fixture != fs.path.name:
        msg = f"lock is for fixture file {quote(lock.fixture)}, not {quote(fs.path.name)}"
        raise InputError(lock.path, f"{msg}: another set's lock ({again})")
    if lock.kind != fs.kind:
        msg = f"lock is for a {quote(lock.kind)} set, not {quote(fs.kind)}"
        raise InputError(lock.path, f"{msg}: another set's lock ({again})")
    if lock.dataset_id != fs.dataset_id:
        msg = f"lock is for dataset_id {quote(lock.dataset_id)}, not {quote(fs.dataset_id)}"
        raise InputError(lock.path, f"{msg}: another set's lock ({again})")


# -- comparing ----------------------------------------------------------------------


def _moved(now: dict[str, str], then: dict[str, str]) -> tuple[list, list, list]:
    changed = sorted(k for k in now.keys() & then.keys() if now[k] != then[k])
    return changed, sorted(now.keys() - then.keys()), sorted(then.keys() - now.keys())


def compare(fs: FixtureSet, lock: Lock | None) -> LockState:
    """The set as it is now against its lock (None: unsealed)."""
    base = {
        "fixtures": fs.path,
        "lock_path": lock.path if lock else lock_path(fs.path),
        "dataset_id": fs.dataset_id,
        "dataset_version": fs.dataset_version,
        "envelope_hash": fs.envelope_hash,
        "files": len(fs.files),
        "cases": len(fs.cases),
    }
    if lock is None:
        return LockState(status=UNSEALED, **base)
    cases_now = {c.id: c.fixture_hash for c in fs.cases}
    c_changed, c_added, c_removed = _moved(cases_now, lock.cases)
    f_changed, f_added, f_removed = _moved(fs.files, lock.files)
    moved = bool(c_changed or c_added or c_removed or f_changed or f_added or f_removed)
    if fs.dataset_version != lock.dataset_version:
        status = BUMPED
    elif moved or fs.envelope_hash != lock.envelope_hash:
        status = EDITED
    else:
        status = MATCHED
    return LockState(
        status=status,
        lock=lock,
        cases_changed=c_changed,
        cases_added=c_added,
        cases_removed=c_removed,
        files_changed=f_changed,
        files_added=f_added,
        files_removed=f_removed,
        **base,
    )


def lock_state(fs: FixtureSet) -> LockState:
    """The set against the lock beside it, if there is one (a garbage lock, or another
    set's: InputError)."""
    path = lock_path(fs.path)
    if not path.exists() and not path.is_symlink():
        return compare(fs, None)
    return compare(fs, read_lock(path, fs))
