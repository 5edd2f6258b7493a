"""The disclosure list (`verdict --disclosed FILE`) and the holdout cases it names: a
run whose holdout case id or prompt was disclosed is `contaminated`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalpin.core.bounded import MAX_FIXTURE_BYTES, read_bounded
from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8
from evalpin.core.instrument.fixtures import FIXTURE_KINDS, FixtureSet
from evalpin.core.read.rundata import RunFile

# holdout_policy values that declare a set public; any other value (or none) seals it.
PUBLIC_POLICIES = {"none", "public", "no-holdout"}


def fold(text: str) -> str:
    """Whitespace folded, so a prompt matches however it was wrapped."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Disclosure:
    """Case ids and prompts known to have been disclosed (e.g. published, trained on)."""

    path: str
    entries: frozenset[str]

    @classmethod
    def load(cls, path: str | Path) -> Disclosure:
        data = read_bounded(path, MAX_FIXTURE_BYTES, folder="is a directory, not a disclosure list")
        entries = set()
        for lineno, raw in enumerate(data.split(b"\n"), start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as bad:
                raise InputError(path, not_utf8(raw, bad), lineno) from None
            line = fold(line)
            if line and not line.startswith("#"):
                entries.add(line)
        return cls(str(path), frozenset(entries))


def locate_fixtures(run: RunFile) -> tuple[FixtureSet | None, str | None]:
    """Find the run's fixture file (as recorded, from the cwd or beside the run file)
    and use it only if its bytes still hash to the recorded dataset hash."""
    from evalpin.core.instrument.fixtures import load_fixtures  # only --disclosed needs the file
    from evalpin.core.instrument.pins import dataset_hash

    h = run.header
    if h is None:
        return None, "no run header: fixture file unknown"
    if h.fixtures.kind not in FIXTURE_KINDS:
        return None, f"{run.what}: its fixtures are not an evalpin fixture file"
    recorded = Path(h.fixtures.path)
    candidates = [recorded]
    if not recorded.is_absolute():
        candidates += [parent / recorded for parent in Path(run.path).resolve().parents]
    for candidate in candidates:
        if candidate.is_file():
            if dataset_hash(candidate.read_bytes()) != h.fixtures.dataset_hash:
                return None, f"fixture file {candidate} changed since the run (hash differs)"
            try:
                return load_fixtures(candidate), None
            except InputError as exc:
                return None, f"fixture file unreadable: {exc}"
    return None, f"fixture file {h.fixtures.path} not found"


def contamination(
    run: RunFile, fixtures: FixtureSet | None, disclosed: Disclosure
) -> tuple[list[str], list[str]]:
    """Holdout cases whose id or prompt is in the disclosure list; plus notes."""
    notes = []
    hits = []
    if fixtures is not None:
        policy = (fixtures.holdout_policy or "").strip().lower()
        if policy in PUBLIC_POLICIES:
            return [], [f"holdout_policy {policy!r}: no holdout cases to contaminate"]
        for case in fixtures.cases:
            if case.id in disclosed.entries or fold(case.prompt) in disclosed.entries:
                hits.append(case.id)
    else:
        notes.append("prompts not checked against the disclosure list; case ids only")
        hits = sorted({r.case_id for r in run.rows if r.case_id in disclosed.entries})
    return hits, notes
