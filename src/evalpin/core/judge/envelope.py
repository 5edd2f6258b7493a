"""The envelope across runs: which of a fixture set's files moved between two runs, and
whether the set was edited under an unchanged `dataset_version` (the edit that must not
hide: yesterday's failure becomes today's quiet success with the same version string).

A run header records the envelope (`fixtures.envelope_hash` and `fixtures.files`, each
file's sha256 prefix); runs made before envelopes, and other tools' logs, carry none, and
nothing is said of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalpin.core.records import FixturesInfo, RunHeader


@dataclass(frozen=True)
class Edit:
    """How the envelope moved from one run to a later one."""

    files: list[str]  # changed, added or removed, relative to the set's folder
    no_bump: bool  # same dataset_id and dataset_version on both sides
    version: str | None

    def describe(self, limit: int = 3) -> str:
        shown = ", ".join(self.files[:limit]) or "the fixture set"
        more = f" and {len(self.files) - limit} more" if len(self.files) > limit else ""
        return f"fixtures edited: {len(self.files)} file(s), {shown}{more}"

    def flag(self) -> str | None:
        """The loud line for an edit under an unchanged version, else None."""
        if not self.no_bump:
            return None
        return (
            f"edited without a version bump: dataset_version {self.version} on both sides, "
            "so the later run's version names a set it does not hold"
        )

    def to_json(self) -> dict:
        return {"files": self.files, "no_bump": self.no_bump, "dataset_version": self.version}


def edit(before: FixturesInfo | None, after: FixturesInfo | None) -> Edit | None:
    """The envelope's move from `before` to `after`; None when both envelopes match or
    either side did not record one."""
    if before is None or after is None:
        return None
    if not before.envelope_hash or not after.envelope_hash:
        return None
    if before.envelope_hash == after.envelope_hash:
        return None
    names = before.files.keys() | after.files.keys()
    moved = sorted(n for n in names if before.files.get(n) != after.files.get(n))
    same = bool(before.dataset_id) and before.dataset_id == after.dataset_id
    versioned = before.dataset_version is not None
    no_bump = same and versioned and before.dataset_version == after.dataset_version
    return Edit(moved, no_bump, after.dataset_version)


def notes(before: RunHeader | None, after: RunHeader | None) -> list[str]:
    """What `diff` and the review's banner say of the envelope between two runs: the
    files that moved, then the loud line for an edit under an unchanged version."""
    if before is None or after is None:
        return []
    moved = edit(before.fixtures, after.fixtures)
    if moved is None:
        return []
    return [moved.describe(limit=5), *filter(None, [moved.flag()])]


def earlier_no_bump(path: str | Path, header: RunHeader | None) -> list[tuple[str, Edit]]:
    """The runs beside `path` (its folder) that started earlier on the same set and
    version but a different envelope: each is proof that the set this run used was
    edited without a version bump. Only headers are read."""
    from evalpin.core.read.discovery import peek_header, started_at

    if (
        header is None
        or not header.fixtures.envelope_hash
        or header.fixtures.dataset_version is None
    ):
        return []
    here = Path(path)
    mine = started_at(header.started_at)
    found = []
    try:
        siblings = sorted(p for p in here.parent.glob("*.jsonl") if p != here)
    except OSError:
        return []
    for other in siblings:
        if other.name.startswith("."):
            continue
        theirs = peek_header(other)
        if theirs is None or theirs.fixtures.dataset_id != header.fixtures.dataset_id:
            continue
        when = started_at(theirs.started_at)
        if mine is not None and (when is None or when >= mine):
            continue
        moved = edit(theirs.fixtures, header.fixtures)
        if moved is not None and moved.no_bump:
            found.append((str(other), moved))
    return found
