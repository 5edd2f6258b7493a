"""Many nights of runs as series: a trend is a trend only while the instrument holds.

A *series* is the runs that share (dataset hash, grader version, model slot, reported
model), in start-time order. Runs of one fixture set (its `dataset_id`, else its path)
form a *track*; where one series of a track gives way to the next, the break is named:

- `backend delta`: the model slot or the provider-reported model changed;
- `rubric change`: the grader version changed;
- `dataset edit`: the dataset hash or the envelope hash changed (the envelope covers the
  files the cases read too: a test edited under an untouched YAML); the break names the
  files that moved and flags an edit under an unchanged `dataset_version`;
- `prompt change`: the dataset hash moved with a named part of the prompt that another
  tool's log records (few-shot count, chat template, system instruction, inspect's
  solver chain), named in the break;
- `subset`: the dataset hash moved where the tool says one side ran part of the dataset
  (lm-eval's and inspect's `--limit`, lm-eval's `--samples`, inspect's `--sample-id`,
  promptfoo's filters): not an edit, and the sides are not one trend either;
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
no digest (no completion) is not evidence either way (`repeats.py`).

The folder's `.jsonl` and `.json` files are read (hidden ones, such as temp files, are
not), oldest first by the start time peeked from each header line, so a repeat check's
reference is the earliest run. A run without a recorded start time is dated by its
file's modification time, and says so. Each file is read once (the lean rows), judged,
fed to the repeat check and dropped: memory holds one run's rows (two while the next is
read) plus, per repeat group, its first run's keys and digests packed into bytes.

Series, runs and breaks, and the names of the breaks, are in `series.py`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.judge.envelope import edit
from evalpin.core.judge.repeats import RepeatCheck
from evalpin.core.judge.series import (
    BREAK_KINDS,
    DATASET_EDIT,
    DATED_BY_HEADER,
    DATED_BY_MTIME,
    ENV_CHANGE,
    KIND_OF,
    PROMPT_CHANGE,
    REQUIRED,
    SERIES_KEYS,
    SUBSET,
    UNPINNED,
    Break,
    Change,
    History,
    HistoryRun,
    Key,
    Series,
    Unreadable,
    moved_parts,
)
from evalpin.core.judge.verdict import judge
from evalpin.core.read.discovery import PEEK_LIMIT
from evalpin.core.read.discovery import started_at as parse_started_at
from evalpin.core.read.formats import ReadOptions, SeveralRuns, log_files
from evalpin.core.read.rundata import RunFile
from evalpin.core.read.runfile import read_run
from evalpin.core.recordings import recording_digest
from evalpin.core.tiers import TIER_CHANGE, tier_of

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
            peek = _PEEK.decode(fh.readline(PEEK_LIMIT))
    except (OSError, msgspec.MsgspecError, RecursionError):
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
        subset=run.subset,
        prompt_parts=dict(run.prompt_parts),
    )


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
        UNPINNED if c.key in REQUIRED and None in (c.before, c.after) else KIND_OF[c.key]
        for c in changes
    }
    if before.unpinned or after.unpinned:
        kinds.add(UNPINNED)
    last, first = before.runs[-1], after.runs[0]
    _name_dataset_move(last, first, kinds, changes)
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


def _name_dataset_move(
    last: HistoryRun, first: HistoryRun, kinds: set[str], changes: list[Change]
) -> None:
    """A dataset hash that moved with a named prompt part is a prompt change; one that
    moved where the tool says a side ran part of the dataset (and no part moved) is a
    subset: neither is called a dataset edit. The envelope (evalpin's own sets) is not
    explained this way."""
    if DATASET_EDIT not in kinds or any(c.key == "envelope_hash" for c in changes):
        return
    parts = moved_parts(last.prompt_parts, first.prompt_parts)
    if parts:
        kinds.discard(DATASET_EDIT)
        kinds.add(PROMPT_CHANGE)
        changes.extend(parts)
    elif last.subset or first.subset:
        kinds.discard(DATASET_EDIT)
        kinds.add(SUBSET)
        changes.append(Change("subset", last.subset or "whole", first.subset or "whole"))


def _read_all(
    folder: Path, check: RepeatCheck, options: ReadOptions
) -> Iterator[HistoryRun | Unreadable]:
    files = run_files(folder)
    dated = {}
    for path in files:
        try:
            dated[path] = _dated(path, _peek_start(path))[0]
        except OSError:
            dated[path] = datetime.max.replace(tzinfo=UTC)  # vanished: its read will say so
    for path in sorted(files, key=lambda p: (dated[p], p)):
        choices: list[ReadOptions | None] = [options]
        while choices:
            chosen = choices.pop(0)
            try:
                run = read_run(path, chosen)
            except SeveralRuns as several:  # a promptfoo file's (prompt, provider) runs
                choices.extend(several.choices)
                continue
            except InputError as exc:
                yield Unreadable(str(path), str(exc))
                continue
            except OSError as exc:
                yield Unreadable(str(path), f"cannot read: {exc.strerror or exc}")
                continue
            point = read_history_run(path, run)
            if chosen is not options and chosen is not None:
                point.path = f"{path} [{_chosen(chosen)}]"
            if not point.missing:
                check.add(point, run)
            del run  # before the next file is read: at most one run's rows at a time
            yield point


def _chosen(options: ReadOptions) -> str:
    """How a run of a file of several is named: the options that read it."""
    return " ".join(
        f"--{name} {value}"
        for name, value in (("prompt", options.prompt), ("provider", options.provider))
        if value is not None
    )


def load_history(folder: str | Path, options: ReadOptions | None = None) -> History:
    """Read every run file in `folder` into series and breaks; a file that cannot be
    read is listed with its error and never stops the rest."""
    folder = Path(folder)
    check = RepeatCheck()
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
            _mark_reproductions(members)
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


def recording(run: HistoryRun) -> str | None:
    """What a replay run replayed, under which controls (the recording's sha256 and the
    controls, as JSON), else None: two runs with the same are one measurement twice."""
    digest = recording_digest(run.slot)
    if digest is None:
        return None
    return msgspec.json.encode([digest, run.controls]).decode()


def _mark_reproductions(members: list[HistoryRun]) -> None:
    """Mark each run of a series that replayed what an earlier one did, as it did."""
    first: dict[str, str] = {}
    for run in members:
        replayed = recording(run)
        if replayed in first:
            run.reproduces = first[replayed]
        elif replayed is not None:
            first[replayed] = run.path


def run_break(before: HistoryRun, after: HistoryRun) -> Break:
    """The break between two single runs of one track (what `diff --baseline` names
    when the newest earlier run on these fixtures is another instrument)."""
    return _break(
        Series(0, before.fixtures, dict(before.pins), [before]),
        Series(0, after.fixtures, dict(after.pins), [after]),
    )
