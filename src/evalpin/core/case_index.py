"""The case table built while the runs are still being read.

A run pair of a million records takes seconds to read; the reviewer should not wait on
an empty list. `CaseIndex` takes the rows each side holds so far (the lists grow as the
reader decodes blocks), groups them by case id, pairs the (case, seed) keys both sides
already hold and notes the first pair whose pins differ, so the review can list the
known prefix and raise its refusal banner before the files are done.

What it shows while partial is provisional and never a movement claim: a pin mismatch
anywhere in the files refuses the whole comparison, so a case whose grade or digest
moved is `changed` (not `regressed` or `fixed`) and a case seen on one side only is
`pending`. `finish` turns the same cases into the complete table, classified from the
authoritative join (`core.compare`), keeping every case's number so a cursor stays put.
"""

from __future__ import annotations

from collections import Counter
from itertools import accumulate, compress, count, islice, pairwise
from operator import attrgetter, ne

from evalpin.core.cases import (
    CHANGED_STATUS,
    COMPARE,
    DELTA,
    DIFFERS,
    FAIL,
    FLAKY,
    PASS,
    PENDING,
    SAME,
    SINGLE,
    UNCHANGED,
    Case,
    CaseTable,
    classify,
)
from evalpin.core.compare import DRIFT, PIN_KEYS, Diff, movement, pin_failures, pins_equal
from evalpin.core.records import CaseRow
from evalpin.core.runfile import TRIPLE, RunFile

_CASE_ID = attrgetter("case_id")
_PASSED = attrgetter("passed")
_SEED = attrgetter("seed")
_KEY = attrgetter("case_id", "seed")
_TRIPLE_GETTERS = [attrgetter(key) for key in TRIPLE]
_CHANGED = (CHANGED_STATUS, DIFFERS)  # what n/p stop at while partial


class CaseIndex:
    """Cases of one run or a pair, grown block by block; see the module docstring."""

    def __init__(self, *, pair: bool) -> None:
        self.pair = pair
        self.cases: list[Case] = []
        self.where: dict[str, int] = {}
        self.refused = False  # a pair whose pins differ has been found (or the headers say so)
        self.mismatch: tuple[CaseRow, CaseRow] | None = None  # the first such pair
        self.counts: Counter[str] = Counter()
        self._seen = [0, 0]  # rows grouped per side
        self._paired = 0  # aligned pairing: rows paired position by position
        self._keys: list[dict[tuple[str, int | None], int]] | None = None  # unaligned
        self._keyed_seen = [0, 0]
        self._touched: list[int] = []
        self._changed: list[int] = []  # case numbers that moved or differ, as found

    @property
    def mode(self) -> str:
        if not self.pair:
            return SINGLE
        return DELTA if self.refused else COMPARE

    # -- growing ---------------------------------------------------------------------

    def advance(self, left: list[CaseRow], right: list[CaseRow] | None = None) -> None:
        """Take the rows `left` and `right` gained since the last call. The lists are the
        readers' own, growing at the end only."""
        self._group(left, 0)
        if right is not None:
            self._group(right, 1)
            if self._keys is None:
                self._pair_aligned(left, right)
            else:
                self._pair_keyed(left, right)
        self._restatus()

    def refuse(self) -> None:
        """The comparison is refused (the headers or a pair say so): browse as a delta."""
        if not self.refused:
            self.refused = True
            self._touched = list(range(len(self.cases)))
            self._restatus()
            # What n/p step through is now what differs in grade, not every movement.
            self._changed[:] = [k for k, c in enumerate(self.cases) if c.status == DIFFERS]

    def _group(self, rows: list[CaseRow], side: int) -> None:
        """Add the new rows to their cases. A case's seeds usually sit on consecutive
        lines, so the Python work is per run of equal case ids (found in C), and a case's
        rows are kept as a `range` until a second, separate run of lines needs a list."""
        start, end = self._seen[side], len(rows)
        if start == end:
            return
        cases, where, touched = self.cases, self.where, self._touched
        get = where.get
        block = rows[start:end]
        ids = list(map(_CASE_ID, block))
        # Where each run of equal case ids begins, and passes so far: both in C.
        bounds = [0, *compress(count(1), map(ne, islice(ids, 1, None), ids)), len(ids)]
        passes = list(accumulate(map(_PASSED, block), initial=0))
        for b, e in pairwise(bounds):
            case_id = ids[b]
            k = get(case_id)
            if k is None:
                k = where[case_id] = len(cases)
                cases.append(Case(case_id))
            c = cases[k]
            touched.append(k)
            lines = range(start + b, start + e)
            if side:
                c.right = lines if not c.right else [*c.right, *lines]
                c.right_passed += passes[e] - passes[b]
            else:
                c.left = lines if not c.left else [*c.left, *lines]
                c.left_passed += passes[e] - passes[b]
        self._seen[side] = end

    def _pair_aligned(self, left: list[CaseRow], right: list[CaseRow]) -> None:
        """Pair position by position while both runs list the same keys in the same
        order (the usual case): one C-level pass finds the rows that differ at all."""
        start, end = self._paired, min(len(left), len(right))
        if start >= end:
            return
        lblock, rblock = left[start:end], right[start:end]
        differ = list(compress(count(), map(ne, lblock, rblock)))
        lsub = list(map(lblock.__getitem__, differ))
        rsub = list(map(rblock.__getitem__, differ))
        lseeds, rseeds = list(map(_SEED, lsub)), list(map(_SEED, rsub))
        if list(map(_CASE_ID, lsub)) != list(map(_CASE_ID, rsub)) or lseeds != rseeds:
            self._unalign(left, right)  # pairs every row again, through keys
            return
        self._check_aligned(lsub, rsub)
        if self.mismatch is None:
            self._missing_pin(lblock, rblock)
        self._paired = end

    def _missing_pin(self, lblock: list[CaseRow], rblock: list[CaseRow]) -> None:
        """A missing triple pin is never equal, not even to another missing one; equal
        rows hide it from the pass above, so look for one (a C-level scan per pin)."""
        for get in _TRIPLE_GETTERS:
            if None in map(get, lblock) or None in map(get, rblock):
                for lrow, rrow in zip(lblock, rblock, strict=True):
                    if get(lrow) is None or get(rrow) is None:
                        self._check(lrow, rrow)
                        return

    def _unalign(self, left: list[CaseRow], right: list[CaseRow]) -> None:
        """The runs list keys in different orders: pair through dicts from now on."""
        self._keys = [{}, {}]
        self._pair_keyed(left, right)

    def _pair_keyed(self, left: list[CaseRow], right: list[CaseRow]) -> None:
        assert self._keys is not None
        sides = (left, right)
        for side in (0, 1):
            rows, other = sides[side], sides[1 - side]
            mine, theirs = self._keys[side], self._keys[1 - side]
            start = self._keyed_seen[side]
            for i in range(start, len(rows)):
                key = _KEY(rows[i])
                mine[key] = i
                j = theirs.get(key)
                if j is not None:
                    pair = (rows[i], other[j]) if side == 0 else (other[j], rows[i])
                    self._check(*pair)
            self._keyed_seen[side] = len(rows)

    def _check_aligned(self, lrows: list[CaseRow], rrows: list[CaseRow]) -> None:
        """`_check` for many common pairs at once, their pins a column at a time in C (a
        refused pair of big runs differs on every row)."""
        bad = pin_failures(lrows, rrows)
        if bad:
            for case_id in set(map(_CASE_ID, map(lrows.__getitem__, bad))):
                self.cases[self.where[case_id]].mismatched = True
            if self.mismatch is None:
                self.mismatch = (lrows[bad[0]], rrows[bad[0]])
                self.refuse()
            if len(bad) == len(lrows):
                return
        skip = set(bad)
        for j, (lrow, rrow) in enumerate(zip(lrows, rrows, strict=True)):
            if j not in skip:
                self._moved(lrow, rrow)

    def _check(self, lrow: CaseRow, rrow: CaseRow) -> None:
        """One common (case, seed): its pins, then whether its grade or digest moved."""
        c = self.cases[self.where[lrow.case_id]]
        if not all(pins_equal(k, getattr(lrow, k), getattr(rrow, k)) for k in PIN_KEYS):
            c.mismatched = True
            if self.mismatch is None:
                self.mismatch = (lrow, rrow)
                self.refuse()
            return
        self._moved(lrow, rrow)

    def _moved(self, lrow: CaseRow, rrow: CaseRow) -> None:
        """Mark a common pair's case when its grade or digest moved."""
        kind = movement(lrow, rrow)
        if kind is None:
            return
        c = self.cases[self.where[lrow.case_id]]
        if kind == DRIFT:
            c.drifts = True
        else:
            c.flips = True
        self._touched.append(self.where[lrow.case_id])

    def _restatus(self) -> None:
        """New statuses for the cases rows or pairs touched since the last call."""
        cases, counts, delta = self.cases, self.counts, self.refused
        changed = self._changed
        for k in set(self._touched):
            c = cases[k]
            old = c.status  # "" for a case new in this block
            new = _partial_status(c, self.pair, delta)
            if new != old:
                if new in _CHANGED and old not in _CHANGED:
                    changed.append(k)
                c.status = new
                if old:
                    counts[old] -= 1
                counts[new] += 1
        self._touched = []

    # -- tables ----------------------------------------------------------------------

    def table(self, left: RunFile, right: RunFile | None) -> CaseTable:
        """The partial table: the cases known so far, over the runs read so far."""
        return CaseTable(
            self.mode,
            left,
            right,
            self.cases,
            partial=True,
            partial_counts=self.counts,
            changed_cases=self._changed,
        )

    def finish(self, left: RunFile, right: RunFile | None, diff: Diff | None) -> CaseTable:
        """The complete table, classified from the join (`diff`) of the whole runs."""
        self.advance(left.rows, right.rows if right is not None else None)
        if right is None:
            return CaseTable(SINGLE, left, None, self.cases)
        if diff is None:
            raise ValueError("a pair needs its diff")
        table = CaseTable(DELTA if diff.refused else COMPARE, left, right, self.cases, diff)
        classify(table, self.where, diff)
        return table


def _partial_status(c: Case, pair: bool, delta: bool) -> str:
    if not pair:
        n = len(c.left)
        c.flaky = 0 < c.left_passed < n
        return FLAKY if c.flaky else (PASS if c.left_passed == n else FAIL)
    c.flaky = 0 < c.left_passed < len(c.left) or 0 < c.right_passed < len(c.right)
    if not c.left or not c.right:
        return PENDING
    if c.flips or (c.drifts and not delta):
        return DIFFERS if delta else CHANGED_STATUS
    if c.flaky:
        return FLAKY
    return SAME if delta else UNCHANGED
