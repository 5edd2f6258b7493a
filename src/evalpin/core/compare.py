"""Joining two runs on (case_id, seed) and refusing comparisons that do not hold.

Two results are comparable only when their triples (fixture hash, grader version, model
slot) are identical, and a slot label whose provider-reported model differs is a
re-pointed alias, not the same instrument. A missing pin is never equal to anything: a
triple that cannot be established cannot be shown identical. When any common case
fails the check the whole comparison is refused; the per-case picture survives only as
a `backend_delta`, never as regressions or fixes.

The slot's settings digest (`slot_settings`: its model and sampling, or the sha256 of
the agent code a command slot runs) is checked like a reported model: a label whose
digest moved was re-pointed. It is an identity check beside the triple, not part of it:
runs recorded before it existed carry none, and where either side lacks it the check
cannot be made; the comparison goes on and says so (`settings_notes`), as two such runs
always compared before.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress, count, filterfalse, repeat
from operator import attrgetter, is_, ne
from typing import Any

from evalpin.core.columns import Columns
from evalpin.core.records import CaseRow
from evalpin.core.runfile import TRIPLE, RunFile, gc_paused

REGRESSED, FIXED, DRIFT = "regressed", "fixed", "drift"
KINDS = (REGRESSED, FIXED, DRIFT)
SLOT_SETTINGS = "slot_settings"
PIN_KEYS = (*TRIPLE, "reported_model", SLOT_SETTINGS)
# How a pin key is named to people where its field name would not say it.
PIN_LABELS = {SLOT_SETTINGS: "slot settings"}
MISSING = "<missing>"

Key = tuple[str, int | None]


@dataclass(frozen=True)
class Pair:
    """One (case_id, seed) present on both sides, with each side's row index."""

    key: Key
    left: int
    right: int


@dataclass(frozen=True)
class Moved:
    """A comparable case whose grade flipped or whose completion moved."""

    pair: Pair
    kind: str
    left: CaseRow
    right: CaseRow

    @property
    def case_id(self) -> str:
        return self.pair.key[0]

    @property
    def seed(self) -> int | None:
        return self.pair.key[1]


@dataclass(frozen=True)
class KeyMismatch:
    """One pin key that differs: how many cases, and the distinct left/right pairs."""

    key: str
    cases: int
    pairs: list[tuple[str, str, int]]  # (left value, right value, cases), most common first
    example: Key


@dataclass
class Diff:
    """The outcome of joining two runs."""

    left: RunFile
    right: RunFile
    # Common cases as parallel sequences of row indices (ranges when the runs align):
    # no object per case on the hot path.
    common_left: Sequence[int] = field(default_factory=lambda: array("q"))
    common_right: Sequence[int] = field(default_factory=lambda: array("q"))
    mismatched: list[Pair] = field(default_factory=list)
    moved: list[Moved] = field(default_factory=list)
    only_left: list[Key] = field(default_factory=list)
    only_right: list[Key] = field(default_factory=list)
    duplicates: int = 0
    # The left rows' columns when the runs align (every left row is shared): built for
    # the key check and reused by the paired statistics.
    left_columns: Columns | None = field(default=None, repr=False)

    @property
    def compared(self) -> int:
        return len(self.common_left)

    @property
    def common(self) -> list[Pair]:
        rows = self.left.rows
        return [
            Pair((rows[li].case_id, rows[li].seed), li, ri)
            for li, ri in zip(self.common_left, self.common_right, strict=True)
        ]

    @property
    def refused(self) -> bool:
        return bool(self.mismatched)

    def settings_notes(self) -> list[str]:
        """Sides that do not record a slot settings digest, so it was not checked (a
        replay slot records null by design: it stands in for whatever recorded it)."""
        lacking = [
            name
            for name, run in (("left", self.left), ("right", self.right))
            if run.header is None or "settings_digest" not in run.header.slot
        ]
        if not lacking:
            return []
        where = " and ".join(lacking)
        return [
            f"slot settings not checked: no settings digest recorded on the {where} "
            "(a run made before evalpin 0.2.0, or another tool's file); a changed model, "
            "sampling or agent code under the same label cannot be seen"
        ]

    def counts(self) -> dict[str, int]:
        found = Counter(m.kind for m in self.moved)
        return {kind: found.get(kind, 0) for kind in KINDS}

    def rows(self, pair: Pair) -> tuple[CaseRow, CaseRow]:
        return self.left.rows[pair.left], self.right.rows[pair.right]

    def key_mismatches(self) -> list[KeyMismatch]:
        """Mismatches grouped per pin key, for the refusal message."""
        out = []
        for key in PIN_KEYS:
            pairs: Counter[tuple[str, str]] = Counter()
            example: Key | None = None
            for pair in self.mismatched:
                lrow, rrow = self.rows(pair)
                lv, rv = getattr(lrow, key), getattr(rrow, key)
                if not pins_equal(key, lv, rv):
                    pairs[(_show(lv), _show(rv))] += 1
                    example = example or pair.key
            if pairs and example is not None:
                ranked = [(lv, rv, n) for (lv, rv), n in pairs.most_common()]
                out.append(KeyMismatch(key, sum(pairs.values()), ranked, example))
        return out

    def mismatch_json(self) -> list[dict[str, Any]]:
        """Per-case mismatches in the `diff --json` shape."""
        out = []
        for pair in self.mismatched:
            lrow, rrow = self.rows(pair)
            out.append(
                {
                    "case_id": pair.key[0],
                    "seed": pair.key[1],
                    "left": {k: getattr(lrow, k) for k in PIN_KEYS},
                    "right": {k: getattr(rrow, k) for k in PIN_KEYS},
                }
            )
        return out

    def reasons(self, pairs: list[Pair]) -> dict[Pair, tuple[list[str] | None, list[str] | None]]:
        """Reason codes of both sides for these pairs, decoded lazily from disk."""
        lrec = self.left.records(p.left for p in pairs)
        rrec = self.right.records(p.right for p in pairs)
        return {p: (lrec[p.left].reasons, rrec[p.right].reasons) for p in pairs}

    def moved_json(self) -> list[dict[str, Any]]:
        """`silent_regressions` of `diff --json`."""
        reasons = self.reasons([m.pair for m in self.moved])
        return [
            {
                "case_id": m.case_id,
                "seed": m.seed,
                "left_pass": m.left.passed,
                "right_pass": m.right.passed,
                "left_reasons": reasons[m.pair][0],
                "right_reasons": reasons[m.pair][1],
                "left_digest": row_digest(m.left),
                "right_digest": row_digest(m.right),
                "kind": m.kind,
            }
            for m in self.moved
        ]

    def backend_delta(self) -> list[dict[str, Any]]:
        """Every common case, left beside right, labelled `backend_delta` only."""
        reasons = self.reasons(self.common)
        out = []
        for pair in self.common:
            lrow, rrow = self.rows(pair)
            out.append(
                {
                    "case_id": pair.key[0],
                    "seed": pair.key[1],
                    "label": "backend_delta",
                    "differs": lrow.passed != rrow.passed,
                    "left_pass": lrow.passed,
                    "right_pass": rrow.passed,
                    "left_reasons": reasons[pair][0],
                    "right_reasons": reasons[pair][1],
                    "left_model": lrow.reported_model,
                    "right_model": rrow.reported_model,
                }
            )
        return out


def pins_equal(key: str, left: str | None, right: str | None) -> bool:
    """Triple pins must be present and equal; a reported model and a slot settings
    digest only have to agree where both sides record one (a case with no completion
    reports no model; a run made before settings digests existed has none)."""
    if key in ("reported_model", SLOT_SETTINGS):
        return left is None or right is None or left == right
    return left is not None and left == right


def _show(value: str | None) -> str:
    return MISSING if value is None else value


def movement(lrow: CaseRow, rrow: CaseRow) -> str | None:
    """regressed, fixed, drift (same grade, digest moved), or None.

    The completion digest decides where both sides carry one; where only the text
    digest is recorded (seed-style header-less records), drift is text-digest movement.
    """
    if lrow.passed != rrow.passed:
        return REGRESSED if lrow.passed else FIXED
    for ld, rd in (
        (lrow.completion_digest, rrow.completion_digest),
        (lrow.text_digest, rrow.text_digest),
    ):
        if ld is not None and rd is not None:
            return DRIFT if ld != rd else None
    return None


def row_digest(row: CaseRow) -> str | None:
    """The digest a row is compared by: its completion digest, else its text digest."""
    return row.completion_digest if row.completion_digest is not None else row.text_digest


_KEY = attrgetter("case_id", "seed")
_PINS = attrgetter(*PIN_KEYS)
_TRIPLE = attrgetter(*TRIPLE)
# Every field of a lean row, for rows of two different types (see shared_pins).
_FIELDS = attrgetter(*CaseRow.__struct_fields__)


def _aligned(lrows: list[CaseRow], rrows: list[CaseRow], columns: Columns) -> list[int] | None:
    """Indices of the rows that differ at all, when both runs list the same keys in
    the same order without repeats (the usual case); None when they do not.
    `columns`: the left rows'."""
    n = len(lrows)
    if n != len(rrows):
        return None
    types = set(map(type, lrows))
    if len(types) == 1 and types == set(map(type, rrows)):
        differ = list(compress(range(n), map(ne, lrows, rrows)))  # whole-struct, in C
    else:  # structs of two types never compare equal: compare their fields
        differ = list(compress(range(n), map(ne, map(_FIELDS, lrows), map(_FIELDS, rrows))))
    for i in differ:
        if lrows[i].case_id != rrows[i].case_id or lrows[i].seed != rrows[i].seed:
            return None
    return differ if columns.unique_keys else None


def compare(left: RunFile, right: RunFile) -> Diff:
    """Join on (case_id, seed), check every common case's pins, classify movement.

    Files hold up to a million records. When both list the same keys in the same
    order, one C-level pass finds the rows that differ and only those are looked at in
    Python; otherwise the runs are joined through a dict of keys.
    """
    lrows, rrows = left.rows, right.rows
    with gc_paused():
        columns = Columns(lrows)
        differ = _aligned(lrows, rrows, columns)
        if differ is not None:
            diff = Diff(left, right, range(len(lrows)), range(len(rrows)), left_columns=columns)
            suspects = set(differ)
            for key in TRIPLE:  # a missing pin is never equal: look at those rows too
                if key in left.missing_pins:
                    nones = map(is_, map(attrgetter(key), lrows), repeat(None))
                    suspects.update(compress(count(), nones))
            candidates = [(i, i) for i in sorted(suspects)]
        else:
            diff, candidates = _join(left, right)
        mismatched, moved = [], []
        for li, ri in candidates:
            lrow, rrow = lrows[li], rrows[ri]
            pair = Pair((lrow.case_id, lrow.seed), li, ri)
            lpins = _PINS(lrow)
            agree = lpins == _PINS(rrow) and None not in lpins[:3]  # the usual case, at once
            if not agree and not all(
                pins_equal(k, getattr(lrow, k), getattr(rrow, k)) for k in PIN_KEYS
            ):
                mismatched.append(pair)
                continue
            if (kind := movement(lrow, rrow)) is not None:
                moved.append(Moved(pair, kind, lrow, rrow))
    diff.mismatched = mismatched
    diff.moved = [] if mismatched else moved
    return diff


def _join(left: RunFile, right: RunFile) -> tuple[Diff, list[tuple[int, int]]]:
    """The general join through a dict of keys; the last of a repeated key wins."""
    lrows, rrows = left.rows, right.rows
    lindex = dict(zip(map(_KEY, lrows), count()))
    rindex = dict(zip(map(_KEY, rrows), count()))
    diff = Diff(
        left,
        right,
        only_right=list(filterfalse(lindex.__contains__, rindex)),
        duplicates=len(lrows) - len(lindex) + len(rrows) - len(rindex),
    )
    add_left, add_right = diff.common_left.append, diff.common_right.append
    candidates = []
    for key, li in lindex.items():
        ri = rindex.get(key)
        if ri is None:
            diff.only_left.append(key)
            continue
        add_left(li)
        add_right(ri)
        lrow, rrow = lrows[li], rrows[ri]
        if _FIELDS(lrow) != _FIELDS(rrow) or None in _TRIPLE(lrow):
            candidates.append((li, ri))
    return diff, candidates
