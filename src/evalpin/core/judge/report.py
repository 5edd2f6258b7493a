"""One comparison, computed once and complete, for every renderer to print.

`diff` used to assemble its terminal text and its JSON each from `compare`, `runfile`
and `stats` in turn, so every output format repeated that assembly. Here the core does it
once: both sides and their pins, the refusal and its mismatches, every movement with its
reasons and tails, the cases on one side only, the paired statistics and, on refusal,
the backend delta. Renderers (terminal, JSON, Markdown, JUnit, HTML) only read it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from evalpin.core.judge import envelope
from evalpin.core.judge.causes import Cause, find_causes
from evalpin.core.judge.compare import (
    DISPUTED,
    DRIFT,
    ERRORED,
    FIXED,
    KINDS,
    RECOVERED,
    REGRESSED,
    Diff,
    Key,
    KeyMismatch,
    compare,
    row_digest,
)
from evalpin.core.judge.nothing import nothing_compared
from evalpin.core.judge.paired import PairedStats, paired_stats
from evalpin.core.judge.series import Change, moved_parts
from evalpin.core.read.notes import Note, NoteBook, notes_json
from evalpin.core.read.rundata import RunFile
from evalpin.core.recordings import pinned_instead
from evalpin.core.records import CaseRecord, CaseRow

REFUSE_LINE = "REFUSE_DIFF: triple mismatch, not a prompt regression"
# `diff`'s exit codes (DESIGN: commands), decided here once for every caller.
EXIT_SAME, EXIT_MOVED, EXIT_REFUSED, EXIT_NOTHING = 0, 1, 2, 4
# The pins a reader checks first, in the order the pins tables show them.
PIN_ROWS = (
    "dataset_hash",
    "envelope_hash",
    "grader_version",
    "model_slot",
    "reported_model",
    "slot_settings",
    "env_digest",
    "scorer_commit",
    "seeds",
)
# How moves are listed: regressions, then moves into error and dispute, fixes,
# recoveries, drift.
_RANK = {REGRESSED: 0, ERRORED: 1, DISPUTED: 2, FIXED: 3, RECOVERED: 4, DRIFT: 5}
assert set(_RANK) == set(KINDS)


@dataclass(frozen=True)
class Side:
    """One run as the report names it: where, what, whether it finished, its pins."""

    path: str
    label: str
    complete: bool | None
    incomplete: bool
    pins: dict[str, str | None]
    repeat_label: str = "seed"  # what the run calls its repeat key: seed, epoch, repeat
    # What a pin left empty on purpose says instead (a replay slot has no settings: its
    # recording pins it), for the pins tables only; `pins` keeps what was recorded.
    instead: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "label": self.label, "complete": self.complete}


@dataclass(frozen=True)
class Movement:
    """A comparable (case, seed) whose grade flipped or whose completion moved."""

    case_id: str
    seed: int | None
    kind: str
    left_pass: bool
    right_pass: bool
    left_reasons: list[str] | None
    right_reasons: list[str] | None
    left_digest: str | None
    right_digest: str | None
    left_tail: str | None
    right_tail: str | None
    digest_kind: str = "completion digest"  # else "text digest" (another tool's log)
    detailed: bool = True  # reasons and tails decoded (see build_report's `detail`)
    # "pass", "fail", "error" or "disputed" on each side, and an unjudged case's own
    # words (an error's message; what the witness of a disputed case saw).
    left_status: str = ""
    right_status: str = ""
    left_error: str | None = None
    right_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """One entry of `silent_regressions` in `diff --json`."""
        return {
            "case_id": self.case_id,
            "seed": self.seed,
            "left_pass": self.left_pass,
            "right_pass": self.right_pass,
            "left_reasons": self.left_reasons,
            "right_reasons": self.right_reasons,
            "left_digest": self.left_digest,
            "right_digest": self.right_digest,
            "kind": self.kind,
            "left_status": self.left_status,
            "right_status": self.right_status,
        }


@dataclass(frozen=True)
class Outcome:
    """One shared (case, seed): both grades and its movement, if any (for JUnit)."""

    case_id: str
    seed: int | None
    left_pass: bool
    right_pass: bool
    movement: Movement | None


@dataclass(frozen=True)
class InstrumentChange:
    """A pin that moved between the baseline candidate and the run (diff --baseline)."""

    key: str
    before: Any
    after: Any


@dataclass(frozen=True)
class BaselineChoice:
    """How `--baseline DIR` picked the left side, or why it found none comparable."""

    folder: str
    chosen: str | None  # the newest earlier run on the same instrument
    last_on_fixtures: str | None  # else: the newest earlier run on the same fixtures
    kinds: list[str]  # backend delta, rubric change, dataset edit, unpinned, ...
    changes: list[InstrumentChange]
    skipped: list[str]  # unreadable files passed over, "path: error"

    @property
    def refused(self) -> bool:
        return self.chosen is None

    def said(
        self,
        esc: Callable[[str], str],
        kinds: Callable[[list[str]], str],
        pin: Callable[[Any], str] | None = None,
    ) -> tuple[str, list[str]]:
        """A refusal in the words every report uses: its first line and one line per
        moved pin, with values escaped by `esc` (pins' values by `pin`) for the format."""
        if self.last_on_fixtures is None:
            return f"no earlier run on these fixtures in {esc(self.folder)}", []
        shown = pin or (lambda value: esc(str(value)))
        first = (
            f"no earlier run in {esc(self.folder)} on the same instrument; since the last run"
            f" on these fixtures ({esc(self.last_on_fixtures)}): {kinds(self.kinds)}"
        )
        moved = [
            f"{esc(c.key)}: {shown(c.before)} (last) vs {shown(c.after)} (this run)"
            for c in self.changes
        ]
        return first, moved

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": self.folder,
            "chosen": self.chosen,
            "last_on_fixtures": self.last_on_fixtures,
            "kinds": self.kinds,
            "changes": [{"key": c.key, "before": c.before, "after": c.after} for c in self.changes],
            "skipped": self.skipped,
        }


@dataclass
class DiffReport:
    """Everything `diff` says about two runs. `left` is None only when `--baseline`
    found no earlier run on these fixtures at all."""

    left: Side | None
    right: Side
    refused: bool
    compared: int
    duplicates: int
    counts: dict[str, int]
    movements: list[Movement]  # in join order, as `--json` lists them
    mismatches: list[KeyMismatch]
    only_left: list[Key]
    only_right: list[Key]
    stats: PairedStats | None
    notes: list[str] = field(default_factory=list)  # e.g. slot settings not checked
    baseline: BaselineChoice | None = None
    # What moved, by cause (reasons, tools, failing tests that came or went): none on refusal.
    causes: list[Cause] = field(default_factory=list)
    # Reviewers' notes on the cases it lists, by case id (`attach_notes`): shown beside
    # them, never a grade, a count or the exit code.
    review_notes: dict[str, Note] = field(default_factory=dict)
    prompt_changes: list[Change] = field(default_factory=list)
    # Why nothing was compared, when the pins agree but no (case, seed) was judged on
    # both sides (a side with no cases, no shared case, only errors): exit 4, never
    # "no movement". None when something was compared (or on refusal).
    nothing: str | None = None
    # On refusal: how many of the `compared` common pairs were measured with different
    # instruments (the rest agree); every renderer says "N of M" from these two.
    mismatched: int = 0
    _shared: tuple[Sequence[CaseRow], Sequence[CaseRow], Sequence[int], Sequence[int]] = (
        (),
        (),
        (),
        (),
    )
    # A refusal's per-case lists, built when an output asks for them (`--json`,
    # `--artifact`, `--html`): a refused pair of 1M-record runs has a million rows, and
    # the terminal's refusal needs only the per-key summary.
    _diff: Diff | None = field(default=None, repr=False)

    @cached_property
    def mismatch_rows(self) -> list[dict[str, Any]]:
        return self._diff.mismatch_json() if self._diff is not None else []

    @cached_property
    def backend_delta(self) -> list[dict[str, Any]] | None:
        """Every common case left beside right (decoded from disk): on refusal only."""
        if not self.refused:
            return None
        return self._diff.backend_delta() if self._diff is not None else []

    def pin_rows(self) -> list[tuple[str, str | None, str | None, bool]]:
        """(pin, left, right, differs) for the pins tables. Missing on both sides is
        not marked as differing; a pin empty on purpose says what pins the run instead
        (`Side.instead`: a replay slot records no settings, its recording pins it)."""
        rows = []
        for key in PIN_ROWS:
            lv = self.left.pins.get(key) if self.left else None
            rv = self.right.pins.get(key)
            lshown = lv or (self.left.instead.get(key) if self.left else None)
            rows.append((key, lshown, rv or self.right.instead.get(key), lv != rv))
        return rows

    @property
    def repeat_label(self) -> str:
        """The repeat key's name as the left run says it (the right's with no left)."""
        return (self.left or self.right).repeat_label

    @property
    def exit_code(self) -> int:
        """2 refused, 4 nothing compared, 1 something moved, 0 nothing moved."""
        if self.refused:
            return EXIT_REFUSED
        if self.nothing is not None:
            return EXIT_NOTHING
        return EXIT_MOVED if self.movements else EXIT_SAME

    def refusal_said(self) -> str:
        """The sentence under a refusal's mismatches, the same in every renderer: how
        many of the common pairs differ in instrument, or that the runs' own pins do."""
        if self.mismatched:
            label = self.repeat_label
            return (
                f"{self.mismatched:,} of {self.compared:,} common (case, {label}) pairs were"
                " measured with a different instrument: a change between them is a backend"
                " delta, not a prompt regression."
            )
        return (
            "the runs' own pins differ, so no case of one can be compared with a case of "
            "the other: they share no instrument."
        )

    def headline(self) -> str:
        """The one sentence that says what the exit code says and, where cases moved,
        whether the change in pass rate is larger than noise (the clustered call)."""
        if self.refused:
            return REFUSE_LINE
        if self.nothing is not None:
            return f"nothing compared: {self.nothing} (exit 4)"
        label = self.repeat_label
        if not self.movements:
            return (
                f"no movement: all {self.compared} shared (case, {label}) pairs kept their "
                "grade and digest (exit 0)"
            )
        moved = ", ".join(f"{n} {kind}" for kind, n in self.counts.items() if n)
        first = f"cases moved: {moved} of {self.compared} shared (case, {label}) pairs (exit 1)"
        c = self.stats.clustered if self.stats is not None else None
        if c is None:
            return first
        return f"{first}; {c.noise_clause()}"

    def ranked(self) -> list[Movement]:
        """Regressions first, then fixes, then drift (stable within each)."""
        return sorted(self.movements, key=lambda m: _RANK[m.kind])

    def outcomes(self) -> Iterator[Outcome]:
        """Every shared (case, seed) in join order, with its movement where it moved."""
        moved = {(m.case_id, m.seed): m for m in self.movements}
        lrows, rrows, lidx, ridx = self._shared
        for li, ri in zip(lidx, ridx, strict=True):
            lrow, rrow = lrows[li], rrows[ri]
            key = (lrow.case_id, lrow.seed)
            yield Outcome(key[0], key[1], lrow.passed, rrow.passed, moved.get(key))

    def delta_artifact(self) -> dict[str, Any]:
        """The `--artifact` file (and `backend_delta` of `--json`) on refusal."""
        return {
            "kind": "backend_delta",
            "note": "triple mismatch: these rows are a backend delta, not regressions or fixes",
            "left": self.left.to_json() if self.left else None,
            "right": self.right.to_json(),
            "mismatch_summary": [
                {
                    "key": m.key,
                    "cases": m.cases,
                    "pairs": [list(p) for p in m.pairs],
                    "whole_run": m.whole_run,
                }
                for m in self.mismatches
            ],
            "cases": self.backend_delta or [],
        }

    def to_json(self) -> dict[str, Any]:
        """The `diff --json` payload (needs a report built with every detail)."""
        if not all(m.detailed for m in self.movements):
            raise ValueError("report built with partial detail: build_report(detail=None)")
        only = {
            "only_left": [{"case_id": c, "seed": s} for c, s in self.only_left],
            "only_right": [{"case_id": c, "seed": s} for c, s in self.only_right],
        }
        if self.refused:
            out = {
                "refused": True,
                "compared_cases": self.compared,
                "silent_regressions": [],
                "mismatches": self.mismatch_rows,
                **only,
                "backend_delta": self.delta_artifact(),
                "run_mismatches": [
                    {"key": m.key, "left": m.pairs[0][0], "right": m.pairs[0][1]}
                    for m in self.mismatches
                    if m.whole_run
                ],
                "stats": None,
                "notes": self.notes,
            }
        else:
            out = {
                "refused": False,
                "nothing_compared": self.nothing,
                "compared_cases": self.compared,
                "silent_regressions": [m.to_json() for m in self.movements],
                "mismatches": [],
                **only,
                "left": self.left.to_json() if self.left else None,
                "right": self.right.to_json(),
                "stats": self.stats.to_json() if self.stats else None,
                "notes": self.notes,
                "causes": [c.to_json() for c in self.causes],
            }
        out["prompt_changes"] = [
            {"part": c.key, "left": c.before, "right": c.after} for c in self.prompt_changes
        ]
        if self.baseline is not None:
            out["baseline"] = self.baseline.to_json()
        if self.review_notes:
            out["review_notes"] = notes_json(self.review_notes)
        return out


def status_word(row: CaseRow) -> str:
    """pass, fail, error or disputed: what a row's grade is called everywhere (a status
    another evalpin may record is an error here: not judged)."""
    if row.status is None:
        return "pass" if row.passed else "fail"
    return "disputed" if row.disputed else "error"


def unjudged_words(row: CaseRow, rec: CaseRecord) -> str | None:
    """Why an unjudged case has no grade, in its own words: an error case's message, or
    what a disputed case's witness saw (the tests it did not pass, else its last line)."""
    if row.errored:
        return rec.error
    if not row.disputed:
        return None
    if rec.witness_failed_tests:
        return "the witness did not pass " + ", ".join(rec.witness_failed_tests)
    lines = [ln.strip() for ln in (rec.witness_tail or "").splitlines() if ln.strip()]
    return f"the witness: {lines[-1]}" if lines else None


def side_of(run: RunFile) -> Side:
    """A run's name, label and pins (the header's, else the one value its rows share)."""
    h = run.header

    def shared(key: str) -> str | None:
        values = run.pin_values[key] - {None, ""}
        return ", ".join(sorted(values)) or None

    pins: dict[str, str | None] = {
        "dataset_hash": run.dataset_hash,
        "envelope_hash": run.envelope_hash,
        "grader_version": (h.grader_version if h else None) or shared("grader_version"),
        "model_slot": (h.model_slot if h else None) or shared("model_slot"),
        "reported_model": shared("reported_model"),
        "slot_settings": (h.slot.get("settings_digest") if h else None) or shared("slot_settings"),
        "env_digest": h.env_digest if h else None,
        "scorer_commit": h.scorer_commit if h else None,
        "seeds": ", ".join(map(str, run.seeds)) or None,
    }
    return Side(
        path=run.path,
        label=run.label(),
        complete=run.complete,
        incomplete=run.complete is False or run.torn,
        pins={k: v or None for k, v in pins.items()},
        repeat_label=run.repeat_label,
        instead=pinned_instead(h.slot if h else None, pins["slot_settings"]),
    )


def shown_part(value: object) -> str:
    """A prompt part's value as a report line shows it: none, or its text (JSON for
    another value) cut to 80 characters. Every renderer escapes it for its format."""
    if value is None:
        return "none"
    shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def run_notes(left: RunFile, right: RunFile) -> list[str]:
    """What the readers said of the two logs (`RunFile.notes`), once each: a note of
    both sides unprefixed, else prefixed with its side."""
    out = []
    for note in dict.fromkeys([*left.notes, *right.notes]):
        mine, theirs = note in left.notes, note in right.notes
        out.append(note if mine and theirs else f"{'left' if mine else 'right'}: {note}")
    return out


def build_report(
    left: RunFile,
    right: RunFile,
    baseline: BaselineChoice | None = None,
    detail: int | None = None,
) -> DiffReport:
    """Join, judge and measure two runs once; decode the detail every renderer shows.

    `detail`: how many movements, in ranked order, get their reasons and tails decoded
    from disk (None: all). The terminal shows 50 by default, and on 100k-record runs
    with thousands of moves decoding the rest would cost most of the command's time;
    every file and JSON output asks for all.

    A baseline that found no comparable run refuses even where the common cases agree
    (a dataset edit that only added cases leaves every shared fixture hash as it was).
    """
    diff = compare(left, right)
    refused = diff.refused or (baseline is not None and baseline.refused)
    stats = None if refused else paired_stats(diff)
    causes = [] if refused else find_causes(diff)
    return _report(diff, side_of(left), side_of(right), refused, baseline, detail, stats, causes)


SAME_FILE = "LEFT and RIGHT are the same file: a run compared with itself cannot move"


def same_file(left: str, right: str) -> bool:
    """Whether two paths name one file (`diff A A`, or the same file by two names)."""
    import os

    try:
        return os.path.samefile(left, right)
    except OSError:
        return False


def build_from(
    diff: Diff, stats: PairedStats | None, detail: int | None, causes: list[Cause]
) -> DiffReport:
    """The report of a join made elsewhere, with its paired statistics and causes
    (`core/review/halves.py` joins two big runs a half per process and sums their tallies)."""
    left, right = side_of(diff.left), side_of(diff.right)
    return _report(diff, left, right, diff.refused, None, detail, stats, causes)


def attach_notes(report: DiffReport, book: NoteBook) -> DiffReport:
    """Give `report` the live notes of its cases (either run's; a case on both sides is
    keyed by the right run's fixture hash). Needs every row (not a report joined in
    halves); a note changes nothing else in the report."""
    if book.latest:
        lrows, rrows = report._shared[0], report._shared[1]
        report.review_notes = book.for_rows(rrows, lrows)
    return report


def refusal_without_left(right: RunFile, baseline: BaselineChoice) -> DiffReport:
    """`--baseline` found no earlier run on these fixtures: nothing to compare with."""
    return DiffReport(
        left=None,
        right=side_of(right),
        refused=True,
        compared=0,
        duplicates=0,
        counts=dict.fromkeys(KINDS, 0),
        movements=[],
        mismatches=[],
        only_left=[],
        only_right=[],
        stats=None,
        baseline=baseline,
    )


def _report(
    diff: Diff,
    left: Side,
    right: Side,
    refused: bool,
    baseline: BaselineChoice | None,
    detail: int | None,
    stats: PairedStats | None,
    causes: list[Cause],
) -> DiffReport:
    moved = [] if refused else diff.moved
    ranked = sorted(moved, key=lambda m: _RANK[m.kind])
    wanted = ranked if detail is None else ranked[: max(detail, 0)]
    records_l = diff.left.records(m.pair.left for m in wanted)
    records_r = diff.right.records(m.pair.right for m in wanted)
    blank = CaseRecord(case_id="", passed=False)
    movements = []
    for m in moved:
        lrec = records_l.get(m.pair.left, blank)
        rrec = records_r.get(m.pair.right, blank)
        movements.append(
            Movement(
                case_id=m.case_id,
                seed=m.seed,
                kind=m.kind,
                left_pass=m.left.passed,
                right_pass=m.right.passed,
                left_reasons=lrec.reasons,
                right_reasons=rrec.reasons,
                left_digest=row_digest(m.left),
                right_digest=row_digest(m.right),
                left_tail=lrec.tail,
                right_tail=rrec.tail,
                digest_kind="completion digest" if m.left.completion_digest else "text digest",
                detailed=m.pair.left in records_l,
                left_status=status_word(m.left),
                right_status=status_word(m.right),
                left_error=unjudged_words(m.left, lrec),
                right_error=unjudged_words(m.right, rrec),
            )
        )
    notes = diff.settings_notes()
    if not any(m.key == "fixture_set" for m in diff.run_mismatched):  # an edit of one set
        notes += envelope.notes(diff.left.header, diff.right.header)
    if same_file(diff.left.path, diff.right.path):
        notes.insert(0, SAME_FILE)
    return DiffReport(
        left=left,
        right=right,
        refused=refused,
        nothing=None if refused or stats is not None else nothing_compared(diff, left.repeat_label),
        compared=diff.compared,
        mismatched=len(diff.mismatched),
        duplicates=diff.duplicates,
        counts=dict.fromkeys(KINDS, 0) if refused else diff.counts(),
        movements=movements,
        mismatches=diff.key_mismatches(),
        only_left=diff.only_left,
        only_right=diff.only_right,
        stats=stats,
        notes=notes + run_notes(diff.left, diff.right),
        baseline=baseline,
        causes=[] if refused else causes,
        prompt_changes=moved_parts(diff.left.prompt_parts, diff.right.prompt_parts),
        _shared=(diff.left.rows, diff.right.rows, diff.common_left, diff.common_right),
        _diff=diff,
    )
