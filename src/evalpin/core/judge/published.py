"""The publish rule `hash published before the metric` (issue 51), and the header's
facts checked against the cases.

A score means something only when the envelope it was measured on was fixed before the
score was seen: otherwise expected output can be edited after a bad night. So a run
whose envelope hash was not published before it started is at most `internal`. It
holds when the run header records (`Seal`, written by `evalpin run` before the first
case) a commit of the fixtures' repository whose lock names the run's envelope hash and
whose time is before the run's start. Where the repository is at hand, the record is
checked against it: the commit must exist, name the hash and have the time recorded
(a header is a fact, not a claim); where it is not (a run file read alone), the record
is taken as written and a note says it was not checked here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evalpin.core.instrument.publication import (
    commit_time,
    first_commit,
    lock_names,
    repository,
)
from evalpin.core.read.discovery import started_at
from evalpin.core.read.rundata import RunFile
from evalpin.core.records import RunHeader, Seal

RULE = "hash published before the metric"
HOW = "seal the set (evalpin seal), commit and push the lock, then run; see docs: publishing a seal"


def publication_rule(run: RunFile, check: Callable[..., None], notes: list[str], label: str):
    """The rule, for an evalpin run on a sealed-envelope set (one that records an
    envelope hash); other logs have no envelope to publish and are not judged by it."""
    h = run.header
    if h is None or not h.fixtures.envelope_hash:
        return
    ok, why, shown, commit = _judge(run, h, notes)
    check(RULE, ok, commit if ok else None, f"{why}; {HOW}", label, shown=shown)


def _judge(run: RunFile, h: RunHeader, notes: list[str]) -> tuple[bool, str, str, str | None]:
    envelope = h.fixtures.envelope_hash or ""
    seal = h.seal
    if seal is None:  # a run made before runs recorded their seal: the repository decides
        return _looked_up(run, h, notes)
    if seal.envelope_hash is None and seal.commit is None:
        return False, _later(run, h, seal.why or "no lock"), "no published seal", None
    if seal.commit is None or seal.committed_at is None:
        why = seal.why or "no commit recorded"
        return False, _later(run, h, why), "not published when the run started", None
    start = started_at(h.started_at)
    committed = started_at(seal.committed_at)
    if start is None or committed is None:
        return False, "the run's start or the commit's time is not a time", "times unreadable", None
    if committed >= start:
        why = (
            f"the lock naming the hash was committed at {seal.committed_at} ({seal.commit[:12]}),"
            f" after the run started ({h.started_at})"
        )
        return False, why, f"committed after the run started ({seal.commit[:12]})", None
    problem = _verify(run, seal, envelope, notes)
    if problem:
        return False, problem, "record does not match the repository", None
    return True, "", f"{seal.commit[:12]} at {seal.committed_at} ({seal.lock})", seal.commit


def _fixture_file(run: RunFile, h: RunHeader) -> Path | None:
    """The run's fixture file as recorded: beside the run file (its own project, and
    repository, first), else from the cwd."""
    recorded = Path(h.fixtures.path)
    candidates = [recorded]
    if not recorded.is_absolute():
        candidates[:0] = [parent / recorded for parent in Path(run.path).resolve().parents]
    return next((c for c in candidates if c.is_file()), None)


def _lock_in_repository(run: RunFile, h: RunHeader) -> tuple[str, str] | None:
    """(repository top, the lock's path in it) for the run's fixture file, or None."""
    fixtures = _fixture_file(run, h)
    top = repository(fixtures) if fixtures is not None else None
    if top is None or fixtures is None:
        return None
    lock = fixtures.resolve().parent / (fixtures.name + ".lock")
    try:
        return top, lock.relative_to(Path(top).resolve()).as_posix()
    except ValueError:  # pragma: no cover - git names the folder's own repository
        return None


def _looked_up(run: RunFile, h: RunHeader, notes: list[str]) -> tuple[bool, str, str, str | None]:
    """A run that records no seal (made before evalpin recorded one): the rule holds when
    the repository at hand shows the hash published before the run started."""
    why = "the run records no published seal (made before evalpin recorded one)"
    found = _lock_in_repository(run, h)
    commit = first_commit(*found, h.fixtures.envelope_hash or "") if found else None
    if found is None or commit is None:
        return False, why + ", and no repository here shows one", "not recorded", None
    start, committed = started_at(h.started_at), started_at(commit[1])
    if start is None or committed is None or committed >= start:
        return False, _later(run, h, why), "not recorded", None
    notes.append(
        f"{RULE}: the run records no seal; the repository here shows its hash published in "
        f"{commit[0][:12]} at {commit[1]}, before the run started"
    )
    shown = f"{commit[0][:12]} at {commit[1]} ({found[1]}; looked up, not recorded)"
    return True, "", shown, commit[0]


def _later(run: RunFile, h: RunHeader, why: str) -> str:
    """`why`, and where the repository at hand shows the hash published after the run
    started: the commit and its time."""
    at = _lock_in_repository(run, h)
    found = first_commit(*at, h.fixtures.envelope_hash or "") if at else None
    if found is None:
        return why
    commit, when = found
    start, committed = started_at(h.started_at), started_at(when)
    if start is None or committed is None or committed < start:
        return why  # published in time, but the run does not say so: its record decides
    return f"{why}: its lock was committed at {when} ({commit[:12]}), after the run started"


def _verify(run: RunFile, seal: Seal, envelope: str, notes: list[str]) -> str | None:
    """Why the recorded commit does not hold in the repository at hand, or None (the
    record holds, or there is no repository to check it against: then a note)."""
    h = run.header
    assert h is not None and seal.commit is not None and seal.lock is not None
    fixtures = _fixture_file(run, h)
    top = repository(fixtures) if fixtures is not None else None
    if top is None:
        notes.append(f"{RULE}: the commit {seal.commit[:12]} was not checked (no repository here)")
        return None
    when = commit_time(top, seal.commit)
    if when is None:
        notes.append(f"{RULE}: the commit {seal.commit[:12]} is not in this clone; not checked")
        return None
    if not lock_names(top, seal.commit, seal.lock, envelope):
        return f"the lock in the recorded commit {seal.commit[:12]} names another envelope hash"
    if when != seal.committed_at:
        return f"the recorded commit time {seal.committed_at} is not the commit's ({when})"
    return None


def case_seeds(run: RunFile) -> list[int]:
    """The seeds the run's cases name (each case line names its own): the seed list."""
    return sorted({r.seed for r in run.rows if r.seed is not None})


def seeds_rule(run: RunFile, check: Callable[..., None], label: str) -> None:
    """A header whose seed list is not its cases' is refused: it is not a fact of this
    run (a finished run's cases name exactly the header's seeds; an unfinished one's,
    some of them). The header's `controls.seeds` too. Shown only when it fails."""
    h = run.header
    if h is None or not run.rows:
        return
    seeds = case_seeds(run)
    lists = {"seeds": h.seeds, "controls.seeds": h.controls.get("seeds", h.seeds)}
    for key, claimed in lists.items():
        named = sorted(set(claimed)) if isinstance(claimed, list) else claimed
        fits = named == seeds if run.complete else set(seeds) <= set(named or ())
        if isinstance(named, list) and fits:
            continue
        why = (
            f"the header's {key} {named} is not its cases' seeds {seeds}: the header is "
            "not a fact of this run"
        )
        check("header agrees with its cases", False, named, why, label, shown=f"{key} {named}")
        return
