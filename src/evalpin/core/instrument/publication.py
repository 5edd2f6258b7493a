"""Where a seal was published: the commit of the fixtures' git repository whose lock first
names an envelope hash, with its time.

The fixture contract says a human can edit expected output after a bad night, "so the
hash must be published before the metric". evalpin's default publication is git: a team
seals its set (`evalpin seal`), commits the lock and pushes it; the commit that first
put `envelope_hash: <hash>` into the lock is where and when that hash was published.
`evalpin run` records it in the run header before the first case (`Seal`), and the
verdict's rule `hash published before the metric` checks it (core/judge/published.py).

Commit times are the committer's clock, as git records them; an auditor checks them
against the pushed repository (the remote's own log of when the commit arrived).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from evalpin.core.errors import InputError
from evalpin.core.instrument.pins import git
from evalpin.core.instrument.seal import lock_path, read_lock
from evalpin.core.records import Seal

BY_GIT = "git"
NO_LOCK = "no lock beside the set when the run started (evalpin seal writes one)"
NOT_IN_GIT = "the set is not in a git repository: its lock was published nowhere evalpin can see"
NOT_COMMITTED = "the lock was not committed when the run started"
OTHER_HASH = "no commit's lock names this envelope hash (re-sealed and not committed)"
EDITED = "the lock names another envelope hash: the set was edited since it was sealed"


def utc(stamp: str) -> str:
    """A git `%cI` time (with its offset) as UTC, the way run headers write times."""
    when = dt.datetime.fromisoformat(stamp.strip()).astimezone(dt.UTC)
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")


def published(fixtures: Path, envelope_hash: str | None = None) -> Seal:
    """The seal beside `fixtures` and where it was published: the first commit (in the
    history of HEAD) whose lock names `envelope_hash` (default: the lock's own). A lock
    that cannot be read is recorded without its hash, with why."""
    lock_file = lock_path(fixtures)
    if not lock_file.is_file():
        return Seal(why=NO_LOCK)
    try:
        sealed = read_lock(lock_file).envelope_hash
    except InputError as exc:
        return Seal(why=f"the lock cannot be read: {exc.message}")
    wanted = envelope_hash or sealed
    top = git(lock_file.parent, "rev-parse", "--show-toplevel")
    if top is None:
        return Seal(envelope_hash=sealed, lock=lock_file.name, why=NOT_IN_GIT)
    rel = lock_file.resolve().relative_to(Path(top.strip()).resolve()).as_posix()
    base = Seal(envelope_hash=sealed, lock=rel, by=BY_GIT)
    found = first_commit(top.strip(), rel, wanted)
    if found is not None:
        commit, when = found
        return Seal(**_fields(base), commit=commit, committed_at=when)
    tracked = git(Path(top.strip()), "ls-files", "--", rel)
    why = OTHER_HASH if tracked and tracked.strip() else NOT_COMMITTED
    if sealed != wanted:
        why = EDITED
    return Seal(**_fields(base), why=why)


def _fields(seal: Seal) -> dict[str, str | None]:
    return {"envelope_hash": seal.envelope_hash, "lock": seal.lock, "by": seal.by}


_FOUND: dict[tuple[str, str, str], tuple[str, str]] = {}


def first_commit(top: str, rel: str, envelope_hash: str) -> tuple[str, str] | None:
    """(commit, UTC time) of the first commit in HEAD's history whose lock at `rel`
    names `envelope_hash`: git's pickaxe finds the commits that changed how often the
    line occurs, and each, oldest first, is read back to be sure. A commit found is
    kept (history only grows); "none yet" is asked again."""
    key = (top, rel, envelope_hash)
    if key in _FOUND:
        return _FOUND[key]
    line = f"envelope_hash: {envelope_hash}"
    out = git(Path(top), "log", "--reverse", "--format=%H %cI", "-S", line, "--", rel)
    for entry in (out or "").splitlines():
        commit, _, when = entry.partition(" ")
        if lock_names(top, commit, rel, envelope_hash):
            _FOUND[key] = commit, utc(when)
            return _FOUND[key]
    return None


def lock_names(top: str, commit: str, rel: str, envelope_hash: str) -> bool:
    """Whether the lock at `rel` in `commit` names `envelope_hash` on its hash line."""
    text = git(Path(top), "show", f"{commit}:{rel}")
    return text is not None and f"\nenvelope_hash: {envelope_hash}\n" in text


def commit_time(top: str, commit: str) -> str | None:
    """A commit's UTC time, None when the repository does not hold it (a shallow clone,
    or a commit that never existed)."""
    out = git(Path(top), "show", "-s", "--format=%cI", f"{commit}^{{commit}}", "--")
    return utc(out) if out and out.strip() else None


def repository(fixtures: Path) -> str | None:
    """The top folder of the git repository holding `fixtures`, None outside git."""
    top = git(fixtures.parent, "rev-parse", "--show-toplevel")
    return top.strip() if top else None
