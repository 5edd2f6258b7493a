"""Many nights of runs as series: a trend is a trend only while the instrument holds.

A *series* is the runs that share (dataset hash, grader version, model slot, reported
model), in start-time order. Runs of one fixture set (its `dataset_id`, else its path)
form a *track*; where one series of a track gives way to the next, the break is named:

- `backend delta`: the model slot or the provider-reported model changed;
- `rubric change`: the grader version changed;
- `dataset edit`: the dataset hash or the envelope hash changed (the envelope covers the
  files the cases read too: a test edited under an untouched YAML); the break names the
  files that moved and flags an edit under an unchanged `dataset_version`;
- `unpinned`: a side lacks the pin, so what changed cannot be said.

An **environment change** (env digest moved: Python, platform, evalpin, grading
packages, controls; or the slot's declared backend tier moved, e.g. `dedicated` to
`free`, named as `slot.tier`) does *not* start a series. The triple plus the reported model is
the instrument, and `evalpin diff` compares across environments; the change is marked
at the run where it happens, naming the components that moved, so a step in the line
right after it is read with that in mind. It is also named at a series break when it
coincides with one.

A run missing a triple pin (dataset hash, grader version or model slot) is a series of
its own, flagged unpinned: a missing pin is never equal to anything, as in `diff`.

**Repeat check.** A (case, seed) asked again under the same triple, the same controls
(temperature, max tokens, loops, network: everything but the seed list, since the seed
is part of the key) and the same slot configuration as recorded in the header (so two
replay files, told apart by their sha256, are two sources, not one; the declared tier
is not configuration: it says how far the backend is trusted, not which it is) must give the same
completion digest, within a run and across the runs of a series. Pairs that did not
mark the backend non-deterministic, or changed behind an unchanged slot. A record with
no digest (no completion) is not evidence either way.

The folder's `.jsonl` and `.json` files are read (hidden ones, such as temp files, are
not), oldest first by the start time peeked from each header line, so a repeat check's
reference is the earliest run. A run without a recorded start time is dated by its
file's modification time, and says so. Each file is read once (the lean rows), judged,
fed to the repeat check and dropped: memory holds one run's rows (two while the next is
read) plus, per repeat group, its first run's keys and digests packed into bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import compress, count, pairwise
from operator import attrgetter, ne
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.columns import Columns
from evalpin.core.discovery import started_at as parse_started_at
from evalpin.core.envelope import Edit, edit
from evalpin.core.errors import InputError
from evalpin.core.formats import ReadOptions, log_files
from evalpin.core.records import FixturesInfo
from evalpin.core.rundata import TRIPLE, RunFile
from evalpin.core.runfile import read_run
from evalpin.core.tiers import TIER_CHANGE, TIER_KEY, tier_of
from evalpin.core.verdict import DIGEST, REPEAT_KEY, Verdict, judge

BACKEND_DELTA = "backend delta"
RUBRIC_CHANGE = "rubric change"
DATASET_EDIT = "dataset edit"
ENV_CHANGE = "environment change"
UNPINNED = "unpinned"
BREAK_KINDS = (BACKEND_DELTA, RUBRIC_CHANGE, DATASET_EDIT, UNPINNED, ENV_CHANGE)

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
_KIND_OF = {
    "dataset_hash": DATASET_EDIT,
    "envelope_hash": DATASET_EDIT,
    "grader_version": RUBRIC_CHANGE,
    "model_slot": BACKEND_DELTA,
    "reported_model": BACKEND_DELTA,
    "slot_settings": BACKEND_DELTA,
}
# Pins whose absence makes a run incomparable (a backend may simply report no model).
_REQUIRED = ("dataset_hash", "grader_version", "model_slot")
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
    # Set when series are built: the env components that moved since the previous run.
    env_change: list[Change] | None = None

    @property
    def key(self) -> Key:
        return tuple(self.pins[k] for k in SERIES_KEYS)

    @property
    def missing(self) -> list[str]:
        return [k for k in _REQUIRED if not self.pins[k]]

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


# -- reading ------------------------------------------------------------------------


def run_files(folder: Path) -> list[Path]:
    """The folder's logs (`.jsonl`, `.json`, `.eval`), not hidden ones (temp files),
    each run once, sorted."""
    if not folder.is_dir():
        raise InputError(folder, "no such folder" if not folder.exists() else "not a folder")
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise InputError(folder, f"cannot list: {exc.strerror or exc}") from None
    return log_files(folder, entries)


class _Peek(msgspec.Struct):
    record: str | None = None
    started_at: str | None = None


_PEEK = msgspec.json.Decoder(_Peek)


def _dated(path: Path, started_at: str | None) -> tuple[datetime, str]:
    """When a run started, from its header; else the file's modification time."""
    when = parse_started_at(started_at)
    if when is not None:
        return when, DATED_BY_HEADER
    return datetime.fromtimestamp(os.stat(path).st_mtime, tz=UTC), DATED_BY_MTIME


def _peek_start(path: Path) -> str | None:
    """The header's start time from the first line alone, to read runs oldest first
    (so the repeat check's reference is the earliest run); None when there is none."""
    try:
        with open(path, "rb") as fh:
            peek = _PEEK.decode(fh.readline())
    except (OSError, msgspec.MsgspecError):
        return None
    return peek.started_at if peek.record == "run" else None


def _only(values: frozenset[str | None]) -> str | None:
    """The one value every record carries, else None (missing or mixed)."""
    return next(iter(values)) if len(values) == 1 else None


def _pins(run: RunFile) -> dict[str, str | None]:
    h, values = run.header, run.pin_values
    models = sorted(values["reported_model"] - {None, ""})
    dataset = run.dataset_hash
    grader, slot = (h.grader_version, h.model_slot) if h is not None else (None, None)
    return {
        "dataset_hash": dataset or None,
        "envelope_hash": run.envelope_hash,
        "grader_version": grader or _only(values["grader_version"]),
        "model_slot": slot or _only(values["model_slot"]),
        "reported_model": ", ".join(models) or None,
        "slot_settings": (h.slot.get("settings_digest") if h is not None else None)
        or _only(values["slot_settings"]),
    }


def _fixtures_name(run: RunFile) -> str | None:
    if run.header is not None:
        return run.header.fixtures.dataset_id or run.header.fixtures.path
    return None


def read_history_run(path: Path, run: RunFile) -> HistoryRun:
    """Summarise one read run (the rows are not kept)."""
    h = run.header
    started = h.started_at if h else None
    when, dated_by = _dated(path, started)
    return HistoryRun(
        path=str(path),
        run_id=(h.run_id or None) if h else None,
        shape=run.shape,
        complete=run.complete,
        records=len(run.rows),
        started_at=started,
        when=when,
        dated_by=dated_by,
        fixtures=_fixtures_name(run),
        pins=_pins(run),
        env_digest=h.env_digest if h else None,
        env=dict(h.env) if h else {},
        controls=dict(h.controls) if h else {},
        slot=dict(h.slot) if h else {},
        verdict=judge(run),
        envelope=h.fixtures if h else None,
        repeat_label=run.repeat_label,
    )


_BLOCK = 16_384  # rows a packed block of the reference holds
_PACK = msgspec.msgpack.Encoder()
_UNPACK = msgspec.msgpack.Decoder()
_KEY_FIELDS = ("case_id", "seed", *TRIPLE)  # REPEAT_KEY's, as columns


def _packed(columns: list[list[Any]]) -> list[bytes]:
    """Columns packed a block of rows at a time (msgpack of each column's slice)."""
    rows = len(columns[0])
    return [_PACK.encode([c[i : i + _BLOCK] for c in columns]) for i in range(0, rows, _BLOCK)]


@dataclass
class _Reference:
    """The first run of a repeat group, packed a block of rows at a time: its key
    columns and its digests as msgpack bytes, ~70 bytes a row where key tuples and
    their strings held ~400, so a reference never outweighs a run's rows.

    `first`: the digest first seen per key where the reference has none; every key's,
    once a run came in another order (or the reference repeats a key) and the
    reference had to be unpacked into it.
    """

    path: str
    keys: list[bytes]
    digests: list[bytes]
    unique: bool
    first: dict[tuple[Any, ...], tuple[str, str]] = field(default_factory=dict)
    unpacked: bool = False

    def unpack(self) -> None:
        """Every key's first digest into `first`, in row order (the first repeat wins)."""
        if self.unpacked:
            return
        for packed_keys, packed_digests in zip(self.keys, self.digests, strict=True):
            keys = zip(*_UNPACK.decode(packed_keys), strict=True)
            for key, digest in zip(keys, _UNPACK.decode(packed_digests)[0], strict=True):
                if digest is not None:
                    self.first.setdefault(key, (digest, self.path))
        self.unpacked = True


class _RepeatCheck:
    """Across runs of one series under the same controls and slot configuration: the
    digest first seen per repeat key, and the keys whose later digests differ.

    Nightly runs list the same keys in the same order, so a run is compared with the
    group's first run block by block: equal packed bytes skip a block, and only the rows
    whose digests differ are looked at in Python. A run in another order falls back to
    a dict of every key.
    """

    def __init__(self) -> None:
        self._refs: dict[tuple[Key, str], _Reference] = {}
        self.conflicts: dict[Key, dict[tuple[Any, ...], RepeatConflict]] = {}

    def add(self, point: HistoryRun, run: RunFile) -> None:
        controls = {k: v for k, v in point.controls.items() if k != "seeds"}
        slot = {k: v for k, v in point.slot.items() if k != TIER_KEY}
        request = json.dumps([controls, slot], sort_keys=True, default=str)
        path, rows = point.path, run.rows
        keys = _packed([list(map(attrgetter(k), rows)) for k in _KEY_FIELDS])
        digests = list(map(DIGEST, rows))
        packed = _packed([digests])
        found = self.conflicts.setdefault(point.key, {})
        ref = self._refs.get(group := (point.key, request))
        if ref is None:
            unique = Columns(rows).unique_keys
            self._refs[group] = ref = _Reference(path, keys, packed, unique)
            if not unique:
                ref.unpack()  # its own repeats decide which digest came first
            return  # a run's repeats of its own keys are the verdict's to flag
        if ref.unique and keys == ref.keys:
            for b, (mine, theirs) in enumerate(zip(packed, ref.digests, strict=True)):
                if mine == theirs:
                    continue
                start = b * _BLOCK
                before = _UNPACK.decode(theirs)[0]
                for j in compress(count(), map(ne, digests[start : start + _BLOCK], before)):
                    i = start + j
                    self._check(found, ref, REPEAT_KEY(rows[i]), digests[i], path, before[j])
            return
        ref.unpack()
        for key, digest in zip(map(REPEAT_KEY, rows), digests, strict=True):
            self._check(found, ref, key, digest, path, None)

    @staticmethod
    def _check(
        found: dict[tuple[Any, ...], RepeatConflict],
        ref: _Reference,
        key: tuple[Any, ...],
        digest: str | None,
        path: str,
        before: str | None,
    ) -> None:
        """One row against the digest first seen for its key (`before`: the
        reference's, at the same place in a run of the same order)."""
        if digest is None:
            return  # no completion: no evidence either way
        seen = (
            (before, ref.path) if before is not None else ref.first.setdefault(key, (digest, path))
        )
        if seen[0] == digest or seen[1] == path:
            return  # reproduced, or a repeat within this run (the verdict's to flag)
        if key in found:
            found[key].runs_differing += 1
        else:
            found[key] = RepeatConflict(key[0], key[1], seen[1], seen[0], path, digest)


def _flatten(env: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in env.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = value
    return out


def env_changes(before: HistoryRun, after: HistoryRun) -> list[Change] | None:
    """The env components that moved between two runs, and the slot's backend tier when
    it moved (a run without one reads `unknown`); None when the digest and the tier held
    (or neither run recorded a digest). An empty list: the digest moved, components
    unrecorded."""
    old_tier, new_tier = tier_of(before.slot), tier_of(after.slot)
    tier = [Change(TIER_CHANGE, old_tier, new_tier)] if old_tier != new_tier else []
    if before.env_digest == after.env_digest:
        return tier or None
    old, new = _flatten(before.env), _flatten(after.env)
    return tier + [
        Change(k, old.get(k), new.get(k))
        for k in sorted(old.keys() | new.keys())
        if old.get(k) != new.get(k)
    ]


def _break(before: Series, after: Series) -> Break:
    changes = [
        Change(k, before.pins[k], after.pins[k])
        for k in SERIES_KEYS
        if before.pins[k] != after.pins[k]
    ]
    kinds = {
        UNPINNED if c.key in _REQUIRED and None in (c.before, c.after) else _KIND_OF[c.key]
        for c in changes
    }
    if before.unpinned or after.unpinned:
        kinds.add(UNPINNED)
    last, first = before.runs[-1], after.runs[0]
    env = env_changes(last, first)
    if env is not None:
        kinds.add(ENV_CHANGE)
        changes += [Change(f"env.{c.key}", c.before, c.after) for c in env]
    return Break(
        fixtures=after.fixtures,
        before=before.index,
        after=after.index,
        kinds=[k for k in BREAK_KINDS if k in kinds],
        changes=changes,
        overlap=last.when > first.when,
        edit=edit(last.envelope, first.envelope),
    )


def _read_all(
    folder: Path, check: _RepeatCheck, options: ReadOptions
) -> Iterator[HistoryRun | Unreadable]:
    files = run_files(folder)
    dated = {}
    for path in files:
        try:
            dated[path] = _dated(path, _peek_start(path))[0]
        except OSError:
            dated[path] = datetime.max.replace(tzinfo=UTC)  # vanished: its read will say so
    for path in sorted(files, key=lambda p: (dated[p], p)):
        try:
            run = read_run(path, options)
        except InputError as exc:
            yield Unreadable(str(path), str(exc))
            continue
        except OSError as exc:
            yield Unreadable(str(path), f"cannot read: {exc.strerror or exc}")
            continue
        point = read_history_run(path, run)
        if not point.missing:
            check.add(point, run)
        del run  # before the next file is read: at most one run's rows at a time
        yield point


def load_history(folder: str | Path, options: ReadOptions | None = None) -> History:
    """Read every run file in `folder` into series and breaks; a file that cannot be
    read is listed with its error and never stops the rest."""
    folder = Path(folder)
    check = _RepeatCheck()
    runs: list[HistoryRun] = []
    unreadable: list[Unreadable] = []
    for item in _read_all(folder, check, options or ReadOptions()):
        (unreadable if isinstance(item, Unreadable) else runs).append(item)
    runs.sort(key=lambda r: (r.when, r.path))

    grouped: dict[Key | str, list[HistoryRun]] = {}
    for run in runs:
        # An unpinned run equals nothing, not even another unpinned run: its own series.
        grouped.setdefault(run.path if run.missing else run.key, []).append(run)
    tracks: dict[str | None, list[list[HistoryRun]]] = {}
    for members in grouped.values():  # insertion order: by each series' first run
        tracks.setdefault(members[0].fixtures, []).append(members)

    series: list[Series] = []
    breaks: list[Break] = []
    for track, members_list in tracks.items():
        previous: Series | None = None
        for members in members_list:
            for before, after in pairwise(members):
                after.env_change = env_changes(before, after)
            first = members[0]
            s = Series(len(series) + 1, track, dict(first.pins), members)
            if not first.missing:
                conflicts = check.conflicts.get(first.key, {})
                s.repeat_conflicts = sorted(
                    conflicts.values(), key=lambda c: (c.case_id, c.seed is not None, c.seed or 0)
                )
            series.append(s)
            if previous is not None:
                breaks.append(_break(previous, s))
            previous = s
    return History(str(folder), series, breaks, unreadable)


def run_break(before: HistoryRun, after: HistoryRun) -> Break:
    """The break between two single runs of one track (what `diff --baseline` names
    when the newest earlier run on these fixtures is another instrument)."""
    return _break(
        Series(0, before.fixtures, dict(before.pins), [before]),
        Series(0, after.fixtures, dict(after.pins), [after]),
    )
