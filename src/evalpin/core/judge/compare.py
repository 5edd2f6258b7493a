"""Joining two runs on (case_id, seed) and refusing comparisons that do not hold.

Two results are comparable only when their triples (fixture hash, grader version, model
slot) are identical, and a slot label whose provider-reported model differs is a
re-pointed alias, not the same instrument. A missing pin is never equal to anything: a
triple that cannot be established cannot be shown identical. When any common case
fails the check the whole comparison is refused; the per-case picture survives only as
a `backend_delta`, never as regressions or fixes.

The runs' own pins decide first (`run_mismatches`): two runs whose headers (or, without
one, whose every case) name another fixture set, grader version, slot label or slot
settings digest are refused even when they share no case, so a golden set beside a
coding set is never "no movement".

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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, filterfalse, repeat
from operator import and_, attrgetter, is_, is_not, ne, or_
from typing import Any, NamedTuple

from evalpin.core.columns import MIXED, Columns, lone
from evalpin.core.instrument.pins import probe_split
from evalpin.core.read.discovery import header_pins, pins_mismatch
from evalpin.core.read.rundata import TRIPLE, RunFile, gc_paused
from evalpin.core.records import CaseRow
from evalpin.core.shared_pins import PINS

REGRESSED, FIXED, DRIFT = "regressed", "fixed", "drift"
# Moves into error and into dispute (a case that could not be judged, or that plain
# pytest passed and the witness did not, on the right) and out of either (recovered):
# their own kinds, never a regression or a fix, since one side has no grade.
ERRORED, DISPUTED, RECOVERED = "errored", "disputed", "recovered"
KINDS = (REGRESSED, FIXED, DRIFT, ERRORED, DISPUTED, RECOVERED)
SLOT_SETTINGS = "slot_settings"
PIN_KEYS = (*TRIPLE, "reported_model", SLOT_SETTINGS)
# How a pin key is named to people where its field name would not say it.
PIN_LABELS = {SLOT_SETTINGS: "slot settings", "fixture_set": "fixture set"}
MISSING = "<missing>"

Key = tuple[str, int | None]


class Pair(NamedTuple):
    """One (case_id, seed) present on both sides, with each side's row index (a tuple:
    a refused pair of 1M-record runs makes a million of them)."""

    key: Key
    left: int
    right: int


class Pairs(Sequence[Pair]):
    """Common pairs as two parallel lists of row indices, each `Pair` made when asked:
    a refused pair of 1M-record runs has a million mismatched pairs, and most readers
    want their count, the first, or a column (`left`, `right`, `case_ids`)."""

    def __init__(self, lrows: Sequence[CaseRow], left: list[int], right: list[int]) -> None:
        self.rows = lrows
        self.left = left
        self.right = right

    def __len__(self) -> int:
        return len(self.left)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        li = self.left[i]
        row = self.rows[li]
        return Pair((row.case_id, row.seed), li, self.right[i])

    def case_ids(self) -> list[str]:
        return list(map(_CASE, map(self.rows.__getitem__, self.left)))


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
    """One pin key that differs: how many cases, and the distinct left/right pairs.
    `whole_run`: told by the runs' own pins (headers), before any case is joined; then
    `cases` is 0, the one pair's count too, and there is no example."""

    key: str
    cases: int
    pairs: list[tuple[str, str, int]]  # (left value, right value, cases), most common first
    example: Key | None
    whole_run: bool = False

    @property
    def extent(self) -> str:
        """Where the pin differs, in the words every renderer uses."""
        if self.whole_run:
            return "in the runs' own pins"
        return f"on {self.cases:,} pair{'s' if self.cases != 1 else ''}"


@dataclass
class Diff:
    """The outcome of joining two runs."""

    left: RunFile
    right: RunFile
    # Common cases as parallel sequences of row indices (ranges when the runs align):
    # no object per case on the hot path.
    common_left: Sequence[int] = field(default_factory=lambda: array("q"))
    common_right: Sequence[int] = field(default_factory=lambda: array("q"))
    mismatched: Pairs = field(default_factory=lambda: Pairs([], [], []))
    moved: list[Moved] = field(default_factory=list)
    only_left: list[Key] = field(default_factory=list)
    only_right: list[Key] = field(default_factory=list)
    duplicates: int = 0
    # The left rows' columns when the runs align (every left row is shared): built for
    # the key check and reused by the paired statistics.
    left_columns: Columns | None = field(default=None, repr=False)
    # Run-level pins that differ (`run_mismatches`): a refusal whatever the cases share.
    run_mismatched: list[KeyMismatch] = field(default_factory=list)

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
        return bool(self.mismatched) or bool(self.run_mismatched)

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
        """Mismatches grouped per pin key, for the refusal message: each key's value
        pairs counted in C over the mismatched rows, `pins_equal` asked once per
        distinct pair. A pin that holds one value in each whole run (a relabelled or
        re-pointed slot, usually) is counted from the runs' pin values alone."""
        n = len(self.mismatched)
        out: list[KeyMismatch] = []
        if not n:
            return list(self.run_mismatched)
        rows: tuple[list[CaseRow], list[CaseRow]] | None = None
        for key in PIN_KEYS:
            ones = self._lone_values(key)
            if ones is not None:
                if pins_equal(key, *ones):
                    continue
                counted = Counter({ones: n})
                at = 0
            else:
                if rows is None:
                    rows = (
                        list(map(self.left.rows.__getitem__, self.mismatched.left)),
                        list(map(self.right.rows.__getitem__, self.mismatched.right)),
                    )
                get = attrgetter(key)
                lv, rv = list(map(get, rows[0])), list(map(get, rows[1]))
                if lv == rv and (key not in TRIPLE or None not in lv):
                    continue  # no row differs in this pin (the usual case, checked in C)
                counted = Counter(zip(lv, rv, strict=True))
                at = -1
            unequal = {v for v in counted if not pins_equal(key, *v)}
            if not unequal:
                continue
            if at < 0:
                at = next(i for i, v in enumerate(zip(lv, rv, strict=True)) if v in unequal)
            shown: Counter[tuple[str, str]] = Counter()
            for (lval, rval), k in counted.items():
                if (lval, rval) in unequal:
                    shown[(_show(lval), _show(rval))] += k
            ranked = [(lval, rval, k) for (lval, rval), k in shown.most_common()]
            out.append(KeyMismatch(key, shown.total(), ranked, self.mismatched[at].key))
        told = {m.key for m in out}
        return [m for m in self.run_mismatched if m.key not in told] + out

    def _lone_values(self, key: str) -> tuple[str | None, str | None] | None:
        """(left, right) when `key` holds one value (or is missing) on every row of each
        run; None otherwise, or for a pin the runs do not count (the fixture hash)."""
        if key not in PINS:
            return None
        left, right = self.left.pin_values[key], self.right.pin_values[key]
        if len(left) != 1 or len(right) != 1:
            return None
        return next(iter(left)), next(iter(right))

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


def run_pins(run: RunFile) -> dict[str, str | None]:
    """A run's run-level pins: the fixture set its header names; the grader version,
    slot label and settings digest its cases all carry (a run whose cases carry several,
    such as a many-task lm-eval log, names none: the join decides), else its header's
    (a run with no cases, or cases that carry none)."""
    pins = header_pins(run.header)
    for key in ("grader_version", "model_slot", SLOT_SETTINGS):
        carried = run.pin_values[key] - {None}
        if carried:
            pins[key] = next(iter(carried)) if len(carried) == 1 else None
    return pins


def run_mismatches(left: RunFile, right: RunFile) -> list[KeyMismatch]:
    """The run-level pins both runs name and that differ: a refusal before any case is
    joined (two runs on other fixture sets, graders or slots share no instrument)."""
    found = pins_mismatch(run_pins(left), run_pins(right)) or []
    return [KeyMismatch(key, 0, [(lv, rv, 0)], None, whole_run=True) for key, lv, rv in found]


def probes_differ(mismatch: KeyMismatch) -> bool:
    """A reported model that differs only in its calibration probes' digest: the same
    name from the server, another backend behind it (run/probes.py)."""
    if mismatch.key != "reported_model":
        return False
    for lv, rv, _ in mismatch.pairs:
        (lname, ldigest), (rname, rdigest) = probe_split(lv), probe_split(rv)
        if lname == rname and ldigest and rdigest and ldigest != rdigest:
            return True
    return False


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
    """regressed, fixed, drift (same grade, digest moved, or another tool's failing score
    moved: P -> I), errored (then an error case),
    disputed (then a disputed case), recovered (an error or disputed case, then judged),
    or None (also for one status on both sides: neither has a grade to move).

    The completion digest decides where both sides carry one; where only the text
    digest is recorded (seed-style header-less records), drift is text-digest movement.
    """
    if lrow.status is not None or rrow.status is not None:
        if lrow.status == rrow.status:
            return None
        if rrow.status is None:
            return RECOVERED
        return DISPUTED if rrow.disputed else ERRORED
    if lrow.passed != rrow.passed:
        return REGRESSED if lrow.passed else FIXED
    if lrow.score != rrow.score:  # another tool's failing grade moved (P -> I)
        return DRIFT
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
_CASE, _SEED = attrgetter("case_id"), attrgetter("seed")
_TRIPLE = attrgetter(*TRIPLE)
# Every field of a lean row, for rows of two different types (see shared_pins).
_FIELDS = attrgetter(*CaseRow.__struct_fields__)


def _aligned(lrows: list[CaseRow], rrows: list[CaseRow], columns: Columns) -> Sequence[int] | None:
    """Indices of the rows to look at (those that differ at all), when both runs list
    the same keys in the same order without repeats (the usual case); None when they
    do not. `columns`: the left rows'. Keys are compared a column at a time, in C."""
    n = len(lrows)
    if n != len(rrows):
        return None
    types = set(map(type, lrows))
    if len(types) == 1 and types == set(map(type, rrows)):
        differ: Sequence[int] = list(compress(range(n), map(ne, lrows, rrows)))  # in C
        lsub, rsub = list(map(lrows.__getitem__, differ)), list(map(rrows.__getitem__, differ))
        lids, lseeds = list(map(_CASE, lsub)), list(map(_SEED, lsub))
    else:
        # Rows of two types never compare equal (their files' pin values differ, see
        # shared_pins; a refused pair, usually): look at every row, pins by column.
        differ, rsub = range(n), rrows
        lids, lseeds = columns.case_ids, columns.seeds
    if lids != list(map(_CASE, rsub)) or lseeds != list(map(_SEED, rsub)):
        return None
    return differ if columns.unique_keys else None


class Aligned(NamedTuple):
    """What a caller that paired two runs position by position already knows (the
    review's index, `core.case_index`), given only when both list the same keys in the
    same order with no key repeated: the rows that differ at all (every other row is
    equal field for field), and those of them that fail `pins_equal` on some pin."""

    differ: Sequence[int]
    failing: Sequence[int]


def compare(left: RunFile, right: RunFile, *, aligned: Aligned | None = None) -> Diff:
    """Join on (case_id, seed), check every common case's pins, classify movement.

    Files hold up to a million records. When both list the same keys in the same
    order, one C-level pass finds the rows that differ and only those are looked at;
    otherwise the runs are joined through a dict of keys. Pins are checked a column at a
    time in C (`pin_failures`), so a refused pair of big runs, where every row differs,
    costs a few passes, not a Python loop per row and pin. `aligned`: what the caller's
    own pairing found (see `Aligned`), so that work is not done twice.
    """
    whole = run_mismatches(left, right)
    with gc_paused():
        diff = _compare(left, right, aligned)
    diff.run_mismatched = whole
    return diff


def _compare(left: RunFile, right: RunFile, aligned: Aligned | None) -> Diff:
    """`compare`'s join and case-level check (run with the cyclic GC paused)."""
    lrows, rrows = left.rows, right.rows
    columns = Columns(lrows)
    differ, failing = (_aligned(lrows, rrows, columns), None) if aligned is None else aligned
    if differ is None:
        diff, lidx, ridx = _join(left, right)
    else:
        diff = Diff(left, right, range(len(lrows)), range(len(rrows)), left_columns=columns)
        # A missing triple pin is never equal: equal rows that lack one fail too.
        lacking = set(_lacking_triple(left)).difference(differ)
        lidx = ridx = sorted(lacking.union(differ)) if lacking else differ
        if failing is not None:  # the caller checked the rows that differ
            bad_rows = sorted(lacking.union(failing)) if lacking else failing
            if bad_rows:
                diff.mismatched = Pairs(lrows, list(bad_rows), list(bad_rows))
                return diff
            lidx = ridx = differ
    lsub = list(map(lrows.__getitem__, lidx))
    rsub = list(map(rrows.__getitem__, ridx))
    bad = [] if failing is not None else pin_failures(lsub, rsub)
    if bad:  # positions into lidx and ridx
        left_at, right_at = map(lidx.__getitem__, bad), map(ridx.__getitem__, bad)
        diff.mismatched = Pairs(lrows, list(left_at), list(right_at))
        return diff
    for li, ri, lrow, rrow in zip(lidx, ridx, lsub, rsub, strict=True):
        if (kind := movement(lrow, rrow)) is not None:
            diff.moved.append(Moved(Pair((lrow.case_id, lrow.seed), li, ri), kind, lrow, rrow))
    return diff


def _lacking_triple(run: RunFile) -> Iterator[int]:
    """Rows of `run` missing a triple pin (none, usually: known from its pin values)."""
    for key in TRIPLE:
        if key in run.missing_pins:
            yield from compress(count(), map(is_, map(attrgetter(key), run.rows), repeat(None)))


def pin_failures(lrows: Sequence[CaseRow], rrows: Sequence[CaseRow]) -> list[int]:
    """Positions where the rows paired position by position fail `pins_equal` on some
    pin: one C-level pass per pin and side, whatever the share that fails."""
    failed: list[bool] | None = None
    for key in PIN_KEYS:
        get = attrgetter(key)
        lv, rv = list(map(get, lrows)), list(map(get, rrows))
        if lv == rv and (key not in TRIPLE or None not in lv):
            continue  # no row differs in this pin (the usual case)
        ones = lone(lv), lone(rv)
        if ones[0] is not MIXED and ones[1] is not MIXED:  # one value a side: decided once
            if pins_equal(key, *ones):
                continue
            return list(range(len(lv)))  # every pair fails on this pin
        differs = map(ne, lv, rv)
        if key in TRIPLE:  # present and equal
            differs = map(or_, differs, map(is_, lv, repeat(None)))
        else:  # equal where both sides record one
            both = map(and_, map(is_not, lv, repeat(None)), map(is_not, rv, repeat(None)))
            differs = map(and_, differs, both)
        failed = list(differs) if failed is None else list(map(or_, failed, differs))
    return [] if failed is None else list(compress(count(), failed))


def _join(left: RunFile, right: RunFile) -> tuple[Diff, list[int], list[int]]:
    """The general join through a dict of keys; the last of a repeated key wins.
    Returns the Diff and the row indices, left and right, of the pairs to look at."""
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
    lidx, ridx = [], []
    for key, li in lindex.items():
        ri = rindex.get(key)
        if ri is None:
            diff.only_left.append(key)
            continue
        add_left(li)
        add_right(ri)
        lrow, rrow = lrows[li], rrows[ri]
        if _FIELDS(lrow) != _FIELDS(rrow) or None in _TRIPLE(lrow):
            lidx.append(li)
            ridx.append(ri)
    return diff, lidx, ridx
