"""What history is made of: a run as history shows it (`HistoryRun`), the series of
runs measured with one instrument, the breaks between them and what each break is
called. `history.py` reads a folder into these; `repeats.py` checks repeats across a
series.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from evalpin.core.judge.envelope import Edit
from evalpin.core.judge.verdict import Verdict
from evalpin.core.records import FixturesInfo

BACKEND_DELTA = "backend delta"
RUBRIC_CHANGE = "rubric change"
DATASET_EDIT = "dataset edit"
ENV_CHANGE = "environment change"
UNPINNED = "unpinned"
# A dataset hash that moved because a named part of the prompt did (few-shot count, chat
# template, system instruction, solver chain), and one that moved because the tool ran a
# part of the dataset (`--limit`, `--samples`, a filter), as the tool records it.
PROMPT_CHANGE = "prompt change"
SUBSET = "subset"
BREAK_KINDS = (
    BACKEND_DELTA,
    RUBRIC_CHANGE,
    PROMPT_CHANGE,
    DATASET_EDIT,
    SUBSET,
    UNPINNED,
    ENV_CHANGE,
)

# `slot_settings`: the slot's settings digest (its model and sampling, or the code a
# command slot runs); a label whose digest moved was re-pointed, as `diff` refuses it.
SERIES_KEYS = (
    "dataset_hash",
    "envelope_hash",
    "grader_version",
    "model_slot",
    "reported_model",
    "slot_settings",
)
KIND_OF = {
    "dataset_hash": DATASET_EDIT,
    "envelope_hash": DATASET_EDIT,
    "grader_version": RUBRIC_CHANGE,
    "model_slot": BACKEND_DELTA,
    "reported_model": BACKEND_DELTA,
    "slot_settings": BACKEND_DELTA,
}
# Pins whose absence makes a run incomparable (a backend may simply report no model).
REQUIRED = ("dataset_hash", "grader_version", "model_slot")
DATED_BY_HEADER = "started_at"
DATED_BY_MTIME = "file mtime"

Key = tuple[str | None, ...]


@dataclass(frozen=True)
class Change:
    """One pin or environment component that moved."""

    key: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "before": self.before, "after": self.after}


def moved_parts(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """The named prompt parts (`RunFile.prompt_parts`) that moved between two runs that
    both record some; a run that records none (evalpin's own) says nothing either way."""
    if not before or not after:
        return []
    return [
        Change(k, before.get(k), after.get(k))
        for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k)
    ]


@dataclass
class HistoryRun:
    """One run file as history shows it: when, which instrument, how it scored."""

    path: str
    run_id: str | None
    shape: str
    complete: bool | None
    records: int
    started_at: str | None
    when: datetime
    dated_by: str
    fixtures: str | None
    pins: dict[str, str | None]
    env_digest: str | None
    env: dict[str, Any]
    controls: dict[str, Any]
    slot: dict[str, Any]
    verdict: Verdict
    envelope: FixturesInfo | None = None  # the header's fixtures: its files name an edit
    repeat_label: str = "seed"  # what the run's tool calls its repeat key
    # The tool's word that the run covers part of its dataset, and the named parts of
    # its prompt (`RunFile.subset`, `RunFile.prompt_parts`): what a break is called.
    subset: str | None = None
    prompt_parts: dict[str, Any] = field(default_factory=dict)
    # Set when series are built: the env components that moved since the previous run.
    env_change: list[Change] | None = None
    # Set when series are built: the earlier run of the series (its path) whose recorded
    # answers this run replayed again (the same replay file, by its sha256, under the same
    # controls). It measures nothing new: a reproduction, not a night.
    reproduces: str | None = None

    @property
    def key(self) -> Key:
        return tuple(self.pins[k] for k in SERIES_KEYS)

    @property
    def missing(self) -> list[str]:
        return [k for k in REQUIRED if not self.pins[k]]

    @property
    def mean_rate(self) -> float | None:
        """Mean of the per-seed pass rates (equal to the pooled rate when seeds are
        balanced; not when a run stopped part-way)."""
        rates = list(self.verdict.pass_rate_by_seed.values())
        return sum(rates) / len(rates) if rates else None

    def to_json(self) -> dict[str, Any]:
        v = self.verdict
        return {
            "path": self.path,
            "run_id": self.run_id,
            "shape": self.shape,
            "complete": self.complete,
            "records": self.records,
            "started_at": self.started_at,
            "dated_by": self.dated_by,
            "pass_rate": v.pass_rate,
            "judged": v.judged,
            "errors": v.errors,  # counted apart: the pass rate is over the judged cases
            "disputed": v.disputed,
            "interval": v.pooled_rate.to_json() if v.pooled_rate else None,
            "pass_rate_by_seed": {str(s): r for s, r in v.pass_rate_by_seed.items()},
            "mean": self.mean_rate,
            "spread": v.spread,
            "label": v.label,
            "env_digest": self.env_digest,
            "env_change": (
                None if self.env_change is None else [c.to_json() for c in self.env_change]
            ),
            "repeat_mismatches": [{"case_id": c, "seed": s} for c, s in v.repeat_mismatches],
            "reproduces": self.reproduces,
        }


@dataclass
class RepeatConflict:
    """A (case, seed) whose completion digest differed between runs of one series."""

    case_id: str
    seed: int | None
    first_run: str
    first_digest: str
    run: str
    digest: str
    runs_differing: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "seed": self.seed,
            "first": {"run": self.first_run, "digest": self.first_digest},
            "differing": {"run": self.run, "digest": self.digest},
            "runs_differing": self.runs_differing,
        }


@dataclass
class Series:
    """Runs measured with one instrument, oldest first."""

    index: int
    fixtures: str | None
    pins: dict[str, str | None]
    runs: list[HistoryRun]
    repeat_conflicts: list[RepeatConflict] = field(default_factory=list)

    @property
    def unpinned(self) -> list[str]:
        return self.runs[0].missing

    @property
    def non_deterministic(self) -> bool:
        """Some (case, seed) did not reproduce its digest, within a run or across runs."""
        return bool(self.repeat_conflicts) or any(r.verdict.non_deterministic for r in self.runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "fixtures": self.fixtures,
            "pins": self.pins,
            "unpinned": self.unpinned,
            "non_deterministic": self.non_deterministic,
            "runs": [r.to_json() for r in self.runs],
            "repeat_conflicts": [c.to_json() for c in self.repeat_conflicts],
        }


@dataclass(frozen=True)
class Break:
    """Where one series of a track gives way to the next, and why it is not a trend."""

    fixtures: str | None
    before: int
    after: int
    kinds: list[str]
    changes: list[Change]
    overlap: bool  # the two series ran over the same period: parallel instruments
    edit: Edit | None = None  # the envelope's files that moved, and a missing version bump

    def to_json(self) -> dict[str, Any]:
        return {
            "fixtures": self.fixtures,
            "before": self.before,
            "after": self.after,
            "kinds": self.kinds,
            "changes": [c.to_json() for c in self.changes],
            "overlap": self.overlap,
            "edit": self.edit.to_json() if self.edit is not None else None,
        }


@dataclass(frozen=True)
class Unreadable:
    path: str
    error: str


@dataclass
class History:
    """Every run file of a folder, as series and the breaks between them."""

    folder: str
    series: list[Series]
    breaks: list[Break]
    unreadable: list[Unreadable]

    @property
    def runs(self) -> int:
        return sum(len(s.runs) for s in self.series)

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "runs": self.runs,
            "series": [s.to_json() for s in self.series],
            "breaks": [b.to_json() for b in self.breaks],
            "unreadable": [{"path": u.path, "error": u.error} for u in self.unreadable],
        }
