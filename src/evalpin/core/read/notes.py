"""Review notes: what a reviewer said about a case, kept in one plain JSONL file.

A reviewer marks a case (`m` in the review, or a script): acknowledged, known flaky, a
ticket, a free-text line. The notes of a runs folder live in one file beside the runs,
`notes.jsonl` by default (the folder of the right-hand run, or of the only one; another
path with `--notes PATH` or `$EVALPIN_NOTES`), meant to be reviewed in git like code.

Format (`evalpin.note/1`): one JSON object a line, ASCII-escaped, append-only:

    {"record": "note", "case_id": "status-late-apology", "fixture_hash": "c9b3c0a96c2eb8f9",
     "kind": "ticket", "text": "accepted: new tone, see ticket 1432", "author": "ana",
     "written_at": "2026-12-03T09:14:02Z"}

(on one line in the file). `kind` is one of `KINDS`: `acknowledged`, `flaky` (known
flaky), `ticket` (`text` holds the ticket id or line), `text` (a free-text line) and
`cleared` (the case's note withdrawn). `text` is optional for the first two.

- Keyed by (case id, fixture hash): a note follows its case to later nights on the same
  instrument and drops off when the case changes (its fixture hash differs). A case with
  no fixture hash (some other tools' logs) is keyed by its id and a null hash.
- The latest line for a key wins (file order, not `written_at`: clocks differ); clearing
  is an appended line too. Nothing ever rewrites the file.
- Writers: one note is one line, written with one `os.write` on an `O_APPEND` descriptor
  under an exclusive `flock`, so two reviewers, the TUI and a script lose no note. A
  file whose last line was cut short gets a newline first: a note never merges into it.
  A symlink or a non-regular file at the path is refused (a file from git must not make
  us append to a file elsewhere).
- Readers keep every good line, skip the rest and say which (line number and why), and
  never write. Nothing here decides a grade, a count, a label or an exit code. A line
  with a key a note does not have (`core/schema.py`: named with the nearest; `x-` keys
  of one's own are kept out of the way), nested too deeply, or a file over the size
  limit (`core/bounded.py`) is skipped and named like any other bad line.
- The text is untrusted (typed by people, but the file comes from git): every renderer
  shows it inert, as it shows case ids.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from evalpin.core.bounded import MAX_FIXTURE_BYTES, TOO_DEEP, json_too_deep, keys_once, too_big
from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8
from evalpin.core.schema import unknown_key, unknown_keys

SCHEMA = "evalpin.note/1"
NOTES_NAME = "notes.jsonl"
NOTES_ENV = "EVALPIN_NOTES"

ACKNOWLEDGED = "acknowledged"
FLAKY = "flaky"
TICKET = "ticket"
TEXT = "text"
CLEARED = "cleared"
# Every kind, in the order they are offered, and how each reads before its text.
KIND_LABELS = {
    ACKNOWLEDGED: "acknowledged",
    FLAKY: "known flaky",
    TICKET: "ticket",
    TEXT: "note",
    CLEARED: "cleared",
}
KINDS = tuple(KIND_LABELS)
NEEDS_TEXT = frozenset({TICKET, TEXT})
MAX_TEXT = 500  # characters of a note's text; longer is cut when written
MAX_AUTHOR = 64
MARK = "✎"  # how a noted case is marked in lists


class Note(msgspec.Struct, frozen=True, tag="note", tag_field="record", kw_only=True):
    """One line of the notes file."""

    case_id: str
    fixture_hash: str | None
    kind: str
    text: str = ""
    author: str = ""
    written_at: str = ""

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.case_id, self.fixture_hash)

    def summary(self) -> str:
        """`ticket: accepted: new tone, see ticket 1432`: the kind and its text, one line,
        NOT made inert (each renderer escapes it for its target)."""
        label = KIND_LABELS.get(self.kind, self.kind)
        text = " ".join(self.text.split())
        if self.kind == TEXT:
            return text or label
        return f"{label}: {text}" if text else label

    def byline(self) -> str:
        """`ana, 2026-12-03`: who and when (the date alone), or empty."""
        return ", ".join(p for p in (self.author, self.written_at[:10]) if p)

    def to_json(self) -> dict[str, str | None]:
        return {
            "record": "note",
            "case_id": self.case_id,
            "fixture_hash": self.fixture_hash,
            "kind": self.kind,
            "text": self.text,
            "author": self.author,
            "written_at": self.written_at,
        }


@dataclass(frozen=True)
class Skipped:
    """A line of the notes file that is no note, and why."""

    line: int  # 1-based
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


_DECODE = msgspec.json.Decoder(Note)
_ANY = msgspec.json.Decoder()
_KEYS = msgspec.json.Decoder(dict[str, msgspec.Raw])
# Every key a note line may hold (beside `x-` keys of one's own).
NOTE_KEYS = frozenset({"record", *Note.__struct_fields__})


@dataclass
class NoteBook:
    """A notes file as read: every good line, the lines skipped, the live note per key."""

    path: Path | None = None
    notes: list[Note] = field(default_factory=list)  # every good line, in file order
    skipped: list[Skipped] = field(default_factory=list)
    missing: bool = True  # no file there (not an error: no notes yet)
    error: str | None = None  # the file could not be read at all
    latest: dict[tuple[str, str | None], Note] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.latest:
            for note in self.notes:
                self._apply(note)

    def _apply(self, note: Note) -> None:
        if note.kind == CLEARED:
            self.latest.pop(note.key, None)
        else:
            self.latest[note.key] = note

    def add(self, note: Note) -> None:
        """A note just appended (by this process): counted as if read."""
        self.notes.append(note)
        self._apply(note)
        self.missing = False

    def get(self, case_id: str, fixture_hash: str | None) -> Note | None:
        """The live note of a case as it is now (its fixture hash), or None."""
        return self.latest.get((case_id, fixture_hash))

    @property
    def case_ids(self) -> frozenset[str]:
        """Every case id with a live note (on any fixture hash)."""
        return frozenset(case_id for case_id, _ in self.latest)

    def for_rows(self, *sides: Iterable[object]) -> dict[str, Note]:
        """The live note of each case among `sides` (rows with `case_id` and
        `fixture_hash`, e.g. `RunFile.rows`), by case id. A case's first row decides its
        fixture hash, and the first side that has the case decides (pass the newer run
        first). One set lookup per row; nothing at all when there are no notes."""
        wanted = self.case_ids
        if not wanted:
            return {}
        out: dict[str, Note] = {}
        seen: set[str] = set()
        for rows in sides:
            for row in rows:
                case_id = row.case_id  # type: ignore[attr-defined]
                if case_id in wanted and case_id not in seen:
                    seen.add(case_id)
                    note = self.latest.get((case_id, row.fixture_hash))  # type: ignore[attr-defined]
                    if note is not None:
                        out[case_id] = note
        return out

    def skipped_text(self, most: int = 5) -> str | None:
        """`notes.jsonl: skipped 2 lines (line 3: not JSON; line 9: ...)`, or None."""
        if self.error is not None:
            return f"{self.path or 'notes'}: {self.error}"
        if not self.skipped:
            return None
        n = len(self.skipped)
        shown = "; ".join(str(s) for s in self.skipped[:most])
        more = f"; and {n - most} more" if n > most else ""
        return (
            f"{self.path or 'notes'}: skipped {n} line{'s' if n != 1 else ''} that are no note "
            f"({shown}{more}); the file is left as it is"
        )


def notes_path(run: str | Path | None, override: str | Path | None = None) -> Path | None:
    """Where the notes of `run` are: `override` (`--notes`), else `$EVALPIN_NOTES`, else
    `notes.jsonl` in the run's folder (None when there is no run path)."""
    chosen = override or os.environ.get(NOTES_ENV) or None
    if chosen:
        return Path(chosen)
    if run is None:
        return None
    return Path(run).parent / NOTES_NAME


def _reason(exc: Exception, raw: bytes, cut: bool) -> str:
    if isinstance(exc, msgspec.DecodeError) and not isinstance(exc, msgspec.ValidationError):
        return "cut short (the last line has no end)" if cut else "not JSON"
    try:
        obj = _ANY.decode(raw)
    except msgspec.DecodeError:
        return "not JSON"
    if not isinstance(obj, dict):
        return "not a note: not a JSON object"
    record = obj.get("record")
    if record != "note":
        return f"not a note: record is {json.dumps(record, ensure_ascii=True)[:40]}"
    return f"not a note: {str(exc)[:120]}"


def parse(data: bytes, path: Path | None = None) -> NoteBook:
    """The notes in `data` (a whole file's bytes): good lines kept, others skipped."""
    book = NoteBook(path=path, missing=False)
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        cut = number == len(lines)  # after the last newline: a line with no end
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            book.skipped.append(Skipped(number, not_utf8(raw, bad)))
            continue
        if json_too_deep(raw):
            book.skipped.append(Skipped(number, TOO_DEEP))
            continue
        try:
            note = _DECODE.decode(raw)
        except msgspec.DecodeError as exc:
            book.skipped.append(Skipped(number, _reason(exc, raw, cut)))
            continue
        except RecursionError:  # pragma: no cover - refused above
            book.skipped.append(Skipped(number, TOO_DEEP))
            continue
        problem = _invalid(note) or _unknown(raw)
        if problem is not None:
            book.skipped.append(Skipped(number, problem))
            continue
        book.notes.append(note)
        book._apply(note)
    return book


def _unknown(raw: bytes) -> str | None:
    """The first key of a note line that a note does not have, named (a typo such as
    `txt` must not pass as a note without its text)."""
    for key in unknown_keys(_KEYS.decode(raw), NOTE_KEYS):
        return unknown_key(key, NOTE_KEYS)
    try:  # a key written twice: JSON keeps the last, silently
        keys_once(raw, "")
    except InputError as exc:
        return exc.message
    return None


def _invalid(note: Note) -> str | None:
    if note.kind not in KINDS:
        return f"unknown kind {json.dumps(note.kind, ensure_ascii=True)[:40]}"
    if not note.case_id:
        return "empty case_id"
    return None


def read_notes(path: str | Path | None) -> NoteBook:
    """Read a notes file; never raises, never writes. No file: an empty book
    (`missing`). A file that cannot be read: an empty book with `error` set."""
    if path is None:
        return NoteBook()
    path = Path(path)
    try:
        data = _read_regular(path, MAX_FIXTURE_BYTES)
        if data is None:
            size = path.stat().st_size
            return NoteBook(path=path, missing=False, error=too_big(size, MAX_FIXTURE_BYTES))
    except FileNotFoundError:
        return NoteBook(path=path)
    except OSError as exc:
        return NoteBook(path=path, missing=False, error=f"cannot read: {exc.strerror or exc}")
    return parse(data, path)


def _read_regular(path: Path, cap: int) -> bytes | None:
    """The bytes of a regular file, opened without blocking: a FIFO put where the notes
    should be (anyone who can write the runs folder can) would hang the review. None when
    it is over `cap` bytes (told from its size, before reading)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return None if info.st_size > cap else fh.read()


def default_author() -> str:
    """Who is writing: `$USER` (or `$LOGNAME`, `$USERNAME`), else empty. Nothing else
    from the environment, never a secret."""
    for name in ("USER", "LOGNAME", "USERNAME"):
        value = os.environ.get(name, "").strip()
        if value:
            return _one_line(value)[:MAX_AUTHOR]
    return ""


def _one_line(text: str) -> str:
    return " ".join(text.split())


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_note(
    case_id: str,
    fixture_hash: str | None,
    kind: str,
    text: str = "",
    *,
    author: str | None = None,
    written_at: str | None = None,
) -> Note:
    """A new note, validated: a known kind, a text where the kind needs one; the text
    folded to one line and cut to `MAX_TEXT` characters. ValueError otherwise."""
    if kind not in KINDS:
        raise ValueError(f"unknown note kind {kind!r}: one of {', '.join(KINDS)}")
    if not case_id:
        raise ValueError("a note needs a case id")
    text = _one_line(text)[:MAX_TEXT]
    if kind in NEEDS_TEXT and not text:
        raise ValueError(f"a {kind} note needs a text")
    return Note(
        case_id=case_id,
        fixture_hash=fixture_hash,
        kind=kind,
        text=text,
        author=default_author() if author is None else _one_line(author)[:MAX_AUTHOR],
        written_at=now_text() if written_at is None else written_at,
    )


def encode(note: Note) -> bytes:
    """One note as its line: ASCII-escaped JSON (no raw control or bidi character
    reaches the file or a `git diff` of it) and a newline."""
    line = json.dumps(note.to_json(), ensure_ascii=True, allow_nan=False, separators=(", ", ": "))
    return (line + "\n").encode("ascii")


def append_note(path: str | Path, note: Note) -> None:
    """Append one note to the file at `path` (made if absent, its folder too).

    Under an exclusive `flock` for the whole step: look at the last byte (a line cut
    short gets a newline first, so the note starts a line of its own), then one
    `os.write` of the whole line on the `O_APPEND` descriptor (the rest written at once
    should the disk take less). OSError when the path is a symlink or not a regular file,
    or cannot be written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = encode(note)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(
                errno.ELOOP, "is a symlink: notes are not written through one", str(path)
            ) from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data
            view = memoryview(data)
            view = view[os.write(fd, view) :]
            while view:  # a short write (a full disk): finish the line while locked
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def notes_json(notes: dict[str, Note]) -> dict[str, dict[str, str | None]]:
    """The notes of a report for `--json` (`review_notes`), by case id."""
    return {case_id: notes[case_id].to_json() for case_id in sorted(notes)}


def sorted_notes(notes: dict[str, Note]) -> Sequence[tuple[str, Note]]:
    """A report's notes in case-id order, for renderers."""
    return [(case_id, notes[case_id]) for case_id in sorted(notes)]
