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

Most of the work is done a column at a time in C, because two runs evalpin wrote list
the same cases in the same order:

- the left's cases are made a block at a time (a block's case ids all new, each case's
  rows one run of lines);
- while both runs list the same keys in the same order (checked on every row that
  differs at all), the right's rows below the paired point are the left's, row for
  row, so the right is never grouped apart: its cases get the left's row ranges, and a
  pass count of their own only where a grade flipped (`_mirror`);
- `join` hands `compare` what the pairing learnt (the rows that differ, keys unique),
  so the whole join is not made twice.

Anything else (runs in different orders, repeats, a case whose rows are apart) goes case
by case and key by key, with the same result (checked by tests/core/test_case_index.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Sequence
from itertools import accumulate, compress, count, islice, repeat
from operator import add, and_, attrgetter, eq, is_, lt, mul, ne, not_, or_, sub

from evalpin.core.judge.compare import (
    DRIFT,
    PIN_KEYS,
    Aligned,
    Diff,
    compare,
    movement,
    pin_failures,
    pins_equal,
)
from evalpin.core.read.rundata import TRIPLE, RunFile
from evalpin.core.records import CaseRow
from evalpin.core.review.cases import (
    CHANGED_STATUS,
    COMPARE,
    DELTA,
    DIFFERS,
    FAIL,
    FLAKY,
    FLAKY_OF,
    PARTIAL_CHANGED,
    PASS,
    PASSED_ON,
    PENDING,
    ROWS_ON,
    SAME,
    SINGLE,
    STATUS_OF,
    UNCHANGED,
    Case,
    CaseTable,
    classify,
    flaky_on,
    settle_errors,
)

_CASE_ID = attrgetter("case_id")
_PASSED = attrgetter("passed")
_SEED = attrgetter("seed")
_KEY = attrgetter("case_id", "seed")
_TRIPLE_GETTERS = [attrgetter(key) for key in TRIPLE]
_FLIPS = attrgetter("flips")
_DRIFTS = attrgetter("drifts")
# The names of a case's rows and pass count on each side.
_FIELDS = (("left", "left_passed"), ("right", "right_passed"))
_LEFT_STOP = attrgetter("left.stop")


def build_case_table(
    left: RunFile, right: RunFile | None = None, diff: Diff | None = None
) -> CaseTable:
    """The case list of one run, or of a pair (`diff` is `compare(left, right)`), from
    runs read whole (the review builds the same table while reading, with `CaseIndex`)."""
    return CaseIndex(pair=right is not None).finish(left, right, diff)


class CaseIndex:
    """Cases of one run or a pair, grown block by block; see the module docstring."""

    def __init__(self, *, pair: bool) -> None:
        self.pair = pair
        self.cases: list[Case] = []
        self.where: dict[str, int] = {}
        self.refused = False  # a pair whose pins differ has been found (or the headers say so)
        self.mismatch: tuple[CaseRow, CaseRow] | None = None  # the first such pair
        self.counts: Counter[str] = Counter()
        self._seen = [0, 0]  # rows grouped per side (the right: mirrored, while mirroring)
        self._paired = 0  # aligned pairing: rows paired position by position
        self._keys: list[dict[tuple[str, int | None], int]] | None = None  # unaligned
        self._keyed_seen = [0, 0]
        self._touched: list[int] = []  # cases to give a status one by one
        self._filled: list[tuple[int, int]] = []  # ranges of cases to give one a column
        self._mirrored_ranges: list[tuple[int, int]] = []  # ... whose right rows are the left's
        self._changed: list[int] = []  # the cases n/p stop at (`PARTIAL_CHANGED`), as found
        # The left's cases are ranges of lines in case order, tiling its rows (so the
        # right's rows can be mirrored), and no (case, seed) repeats among them.
        self._tiled = True
        self._unique = True
        self._last_key: tuple[str, int | None] | None = None  # the left's last row's
        self._mirroring = pair
        self._mirrored = 0  # cases before this one have their right rows mirrored
        self._differ: list[int] = []  # aligned: rows of the pair that differ at all
        self._failing: list[int] = []  # aligned: those of them whose pins do not agree

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
            if self._keys is None:
                self._pair_aligned(left, right)
            else:
                self._pair_keyed(left, right)
            if self._mirroring and self._tiled and self._keys is None:
                self._mirror(right)
            else:
                self._mirroring = False
                self._group(right, 1)
        self._restatus()

    def refuse(self) -> None:
        """The comparison is refused (the headers or a pair say so): browse as a delta."""
        if not self.refused:
            self.refused = True
            # Every case anew, a column at a time, and those that moved (the ones n/p
            # stopped at) one by one: n/p now step through what differs in grade.
            self._touched.extend(self._changed)
            self._changed.clear()  # in place: the partial table shares the list
            self._filled.append((0, len(self.cases)))
            self._restatus()

    def _group(self, rows: list[CaseRow], side: int) -> None:
        """Add the new rows to their cases: per run of equal case ids (found in C), and
        where the block is in step with the other side (or all new), its cases made or
        filled a column at a time. A case's rows are a `range` while they are
        consecutive lines (the usual case, and far smaller than a list)."""
        start, end = self._seen[side], len(rows)
        if start == end:
            return
        self._seen[side] = end
        block = rows[start:end]
        ids = list(map(_CASE_ID, block))
        apart = list(map(ne, islice(ids, 1, None), ids))  # row i+1 starts another case
        firsts = [0, *compress(count(1), apart)]
        lasts = [*islice(firsts, 1, None), len(ids)]
        heads = list(map(ids.__getitem__, firsts))
        passes = list(accumulate(map(_PASSED, block), initial=0))
        won = list(map(sub, map(passes.__getitem__, lasts), map(passes.__getitem__, firsts)))
        spans = list(map(range, map(add, firsts, repeat(start)), map(add, lasts, repeat(start))))
        known = list(map(self.where.get, heads))
        if side == 0 and self.pair and self._unique:
            self._check_unique(block, ids, apart)
        at = 0
        if self._in_step(known, 0, side) == 0 and known[0] is not None:
            k = known[0]  # the case the last block ended in, most often
            if side == 0 and not (k == len(self.cases) - 1 and _follows(self.cases[k], spans[0])):
                self._tiled = False
            self._add(k, spans[0], won[0], side)
            at = 1
        met = self._in_step(known, at, side)
        if met > at:
            self._tiled &= side == 1
            self._fill(known[at], spans[at:met], won[at:met], side)
            at = met
        rest = heads[at:]
        if rest and known.count(None) == len(rest) and len(set(rest)) == len(rest):
            self._create(rest, spans[at:], won[at:], side)
            return
        if side == 0 and rest:
            self._tiled = False
        for i in range(at, len(heads)):  # anything else: case by case
            k = self.where.get(heads[i])
            if k is None:
                k = self.where[heads[i]] = len(self.cases)
                self.cases.append(Case(heads[i]))
            self._add(k, spans[i], won[i], side)

    def _check_unique(self, block: list[CaseRow], ids: list[str], apart: list[bool]) -> None:
        """Whether the left's keys stay unique: its seeds rise within each run of equal
        case ids (as evalpin writes them; checked in C), across blocks too. Case ids are
        not met twice apart while the left stays tiled (`_group`)."""
        seeds = list(map(_SEED, block))
        together = list(map(not_, apart))
        try:
            rising = all(map(lt, compress(seeds, together), compress(seeds[1:], together)))
            if self._last_key is not None and self._last_key[0] == ids[0]:
                rising = rising and self._last_key[1] < seeds[0]  # type: ignore[operator]
        except TypeError:  # a seedless record beside seeded ones
            rising = False
        self._unique = rising
        self._last_key = (ids[-1], seeds[-1])

    def _in_step(self, known: list[int | None], at: int, side: int) -> int:
        """How far from `at` the block's cases are the next cases in order, none of them
        with rows on this side yet (checked in C): where `_fill` may stop."""
        if at >= len(known) or known[at] is None:
            return at
        first = known[at]
        in_order = map(eq, islice(known, at, None), count(first))
        n = next(compress(count(), map(not_, in_order)), len(known) - at)
        if any(map(ROWS_ON[side], self.cases[first : first + n])):
            return at
        return at + n

    def _create(self, heads: list[str], spans: list[range], won: list[int], side: int) -> None:
        """New cases, in one pass. Of a pair they are `pending` (one side has no rows
        yet), flaky as their one side says; one run's are given a status with the next
        `_restatus`."""
        first = len(self.cases)
        if not self.pair:
            self.cases.extend(map(Case, heads, spans, repeat(()), won))
            self._filled.append((first, len(self.cases)))
        else:
            flaky = map(and_, map(lt, repeat(0), won), map(lt, won, map(len, spans)))
            rows = (spans, repeat(())) if side == 0 else (repeat(()), spans)
            wins = (won, repeat(0)) if side == 0 else (repeat(0), won)
            self.cases.extend(map(Case, heads, *rows, *wins, repeat(PENDING), flaky))
            self.counts[PENDING] += len(heads)
        self.where.update(zip(heads, count(first)))

    def _fill(self, first: int, spans: list[range], won: list[int], side: int) -> None:
        """Cases `first`, `first + 1`, ... get their first rows on this side."""
        cases = self.cases[first : first + len(spans)]
        rows_field, won_field = _FIELDS[side]
        deque(map(setattr, cases, repeat(rows_field), spans), 0)
        deque(map(setattr, cases, repeat(won_field), won), 0)
        self._filled.append((first, first + len(spans)))

    def _add(self, k: int, lines: range, won: int, side: int) -> None:
        """More rows for case `k` on one side."""
        c = self.cases[k]
        if side:
            c.right = _joined(c.right, lines)
            c.right_passed += won
        else:
            c.left = _joined(c.left, lines)
            c.left_passed += won
        self._touched.append(k)

    def _mirror(self, right: list[CaseRow]) -> None:
        """The right's rows up to the paired point, given to the cases the left's same
        rows are in (aligned runs: row i is the same key on both sides). A case's right
        pass count is its left one unless a grade flipped in it; then it is counted."""
        paired, cases = self._paired, self.cases
        if paired <= self._seen[1]:
            return
        first = self._mirrored
        last = bisect_right(cases, paired, lo=first, key=_LEFT_STOP)  # rows all paired
        whole = cases[first:last]
        deque(map(setattr, whole, repeat("right"), map(ROWS_ON[0], whole)), 0)
        deque(map(setattr, whole, repeat("right_passed"), map(PASSED_ON[0], whole)), 0)
        for c in compress(whole, map(_FLIPS, whole)):
            c.right_passed = sum(map(_PASSED, map(right.__getitem__, c.right)))
        self._mirrored_ranges.append((first, last))
        if last < len(cases) and cases[last].left.start < paired:  # paired part way
            c = cases[last]
            c.right = range(c.left.start, paired)
            c.right_passed = sum(map(_PASSED, right[c.left.start : paired]))
            self._touched.append(last)
        # The left's last case may have more rows to come: mirror it again next time.
        self._mirrored = min(last, len(cases) - 1)
        self._seen[1] = paired

    def _pair_aligned(self, left: list[CaseRow], right: list[CaseRow]) -> None:
        """Pair position by position while both runs list the same keys in the same
        order (the usual case): one C-level pass finds the rows that differ at all."""
        start, end = self._paired, min(len(left), len(right))
        if start >= end:
            return
        lblock, rblock = left[start:end], right[start:end]
        every = _of_other_types(lblock, rblock)  # rows of two types never compare equal
        if every:
            differ, lsub, rsub = range(len(lblock)), lblock, rblock
        else:
            differ = list(compress(count(), map(ne, lblock, rblock)))
            lsub = list(map(lblock.__getitem__, differ))
            rsub = list(map(rblock.__getitem__, differ))
        lseeds, rseeds = list(map(_SEED, lsub)), list(map(_SEED, rsub))
        if list(map(_CASE_ID, lsub)) != list(map(_CASE_ID, rsub)) or lseeds != rseeds:
            self._unalign(left, right)  # pairs every row again, through keys
            return
        rows = list(range(start, end)) if every else list(map(add, differ, repeat(start)))
        self._differ += rows
        self._check_aligned(lsub, rsub, rows)
        if not every:  # (else every row was looked at above)
            self._missing_pin(lblock, rblock, start, differ)
        self._paired = end

    def _missing_pin(
        self, lblock: list[CaseRow], rblock: list[CaseRow], start: int, differ: list[int]
    ) -> None:
        """A missing triple pin is never equal, not even to another missing one. Rows
        that differ were checked (`pin_failures`); equal rows miss a pin on both sides
        alike, so the left's are looked through (a C-level scan per pin; none, usually)
        and every such pair is checked, so the mismatched cases are all known."""
        lacking: set[int] = set()
        for get in _TRIPLE_GETTERS:
            if None in map(get, lblock):
                lacking.update(compress(count(), map(is_, map(get, lblock), repeat(None))))
        if lacking:
            for j in sorted(lacking.difference(differ)):
                self._failing.append(start + j)
                self._check(lblock[j], rblock[j])
            self._failing.sort()

    def _unalign(self, left: list[CaseRow], right: list[CaseRow]) -> None:
        """The runs list keys in different orders: pair through dicts from now on."""
        self._keys = [{}, {}]
        self._differ, self._failing = [], []
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

    def _check_aligned(self, lrows: list[CaseRow], rrows: list[CaseRow], at: Sequence[int]) -> None:
        """`_check` for many common pairs at once (`at`: their row numbers), their pins and
        grades a column at a time in C (a refused pair of big runs differs on every row)."""
        bad = pin_failures(lrows, rrows)
        if bad:
            self._failing += at if len(bad) == len(at) else map(at.__getitem__, bad)
            self._mark_mismatched(lrows, bad, at)
            if self.mismatch is None:
                self.mismatch = (lrows[bad[0]], rrows[bad[0]])
                self.refuse()
            # Whether a grade differs is known even where the pins do not agree: that
            # is what a backend delta shows (`differs`).
            every = len(bad) == len(lrows)
            lpass = map(_PASSED, lrows if every else map(lrows.__getitem__, bad))
            rpass = map(_PASSED, rrows if every else map(rrows.__getitem__, bad))
            for j in compress(bad, map(ne, lpass, rpass)):
                self._flipped(lrows[j].case_id)
            if len(bad) == len(lrows):
                return
        skip = set(bad)
        for j, (lrow, rrow) in enumerate(zip(lrows, rrows, strict=True)):
            if j not in skip:
                self._moved(lrow, rrow)

    def _mark_mismatched(self, lrows: list[CaseRow], bad: list[int], at: Sequence[int]) -> None:
        """Mark the cases of the failing pairs `bad` (positions in `lrows`, which sit at
        rows `at`). Where they are one unbroken stretch of rows of a tiled left (a refused
        pair: every row), the cases over it are marked a column at a time."""
        first, last = at[bad[0]], at[bad[-1]]
        if self._tiled and last - first + 1 == len(bad):
            lo = bisect_right(self.cases, first, key=_LEFT_STOP)
            hi = bisect_right(self.cases, last, key=_LEFT_STOP)
            deque(map(setattr, self.cases[lo : hi + 1], repeat("mismatched"), repeat(True)), 0)
            return
        for case_id in set(map(_CASE_ID, map(lrows.__getitem__, bad))):
            self.cases[self.where[case_id]].mismatched = True

    def _check(self, lrow: CaseRow, rrow: CaseRow) -> None:
        """One common (case, seed): its pins, then whether its grade or digest moved."""
        c = self.cases[self.where[lrow.case_id]]
        if not all(pins_equal(k, getattr(lrow, k), getattr(rrow, k)) for k in PIN_KEYS):
            c.mismatched = True
            if self.mismatch is None:
                self.mismatch = (lrow, rrow)
                self.refuse()
            if lrow.passed != rrow.passed:
                self._flipped(lrow.case_id)
            return
        self._moved(lrow, rrow)

    def _moved(self, lrow: CaseRow, rrow: CaseRow) -> None:
        """Mark a common pair's case when its grade or digest moved."""
        kind = movement(lrow, rrow)
        if kind is None:
            return
        if kind != DRIFT:
            self._flipped(lrow.case_id)
            return
        k = self.where[lrow.case_id]
        self.cases[k].drifts = True
        self._touched.append(k)

    def _flipped(self, case_id: str) -> None:
        k = self.where[case_id]
        self.cases[k].flips = True
        self._touched.append(k)

    # -- statuses --------------------------------------------------------------------

    def _restatus(self) -> None:
        """New statuses for the cases rows or pairs touched since the last call: the
        ranges made or filled a column at a time, then the cases touched one by one
        (those that moved among them: a column's status assumes no movement)."""
        for first, last in _merged(self._mirrored_ranges):
            self._restatus_mirrored(first, last)
        for first, last in _merged(self._filled):
            self._restatus_range(first, last)
        self._filled, self._mirrored_ranges = [], []
        steps = PARTIAL_CHANGED[self.mode]
        cases, counts, delta = self.cases, self.counts, self.refused
        for k in set(self._touched):
            c = cases[k]
            old = c.status  # "" for a case new in this block
            new = _partial_status(c, self.pair, delta)
            if new != old:
                if new in steps and old not in steps:
                    self._changed.append(k)
                c.status = new
                if old:
                    counts[old] -= 1
                counts[new] += 1
        self._touched = []

    def _restatus_range(self, first: int, last: int) -> None:
        """`_partial_status` of cases `first` to `last` as if none moved, in C: flaky on
        either side, pending while a side has no rows, else settled; those that did move
        are left to `_restatus`, one by one."""
        cases = self.cases[first:last]
        old = list(map(STATUS_OF, cases))
        flaky = flaky_on(cases, 0)
        if self.pair:
            flaky = list(map(or_, flaky, flaky_on(cases, 1)))
            both = map(and_, map(bool, map(ROWS_ON[0], cases)), map(bool, map(ROWS_ON[1], cases)))
            which = map(mul, both, map(add, flaky, repeat(1)))  # 0, 1 or 2
            names = (PENDING, SAME if self.refused else UNCHANGED, FLAKY)
        else:
            all_passed = map(eq, map(PASSED_ON[0], cases), map(len, map(ROWS_ON[0], cases)))
            which = map(add, map(mul, flaky, repeat(2)), all_passed)  # 0, 1 or 2
            names = (FAIL, PASS, FLAKY)
        new = list(map(names.__getitem__, which))
        moved = list(map(or_, map(_FLIPS, cases), map(_DRIFTS, cases)))
        if any(moved):  # these keep their status here, and get one in `_restatus`
            new = list(map(tuple.__getitem__, zip(new, old, strict=True), moved))
            self._touched.extend(compress(count(first), moved))
        deque(map(setattr, cases, repeat("flaky"), flaky), 0)
        deque(map(setattr, cases, repeat("status"), new), 0)
        gone = Counter(old)
        gone.pop("", None)  # cases new in this block had none
        self.counts.subtract(gone)
        self.counts.update(new)
        steps = PARTIAL_CHANGED[self.mode]
        entered = map(and_, map(steps.__contains__, new), map(not_, map(steps.__contains__, old)))
        self._changed.extend(compress(count(first), entered))

    def _restatus_mirrored(self, first: int, last: int) -> None:
        """`_restatus_range` of mirrored cases: their right rows and passes are their
        left ones unless a grade flipped (those moved: one by one in `_restatus`), so
        each is flaky as its left says, and settled."""
        cases = self.cases[first:last]
        old = list(map(STATUS_OF, cases))
        names = (SAME if self.refused else UNCHANGED, FLAKY)
        new = list(map(names.__getitem__, map(FLAKY_OF, cases)))
        moved = list(map(or_, map(_FLIPS, cases), map(_DRIFTS, cases)))
        if any(moved):  # these keep their status here, and get one in `_restatus`
            new = list(map(tuple.__getitem__, zip(new, old, strict=True), moved))
            self._touched.extend(compress(count(first), moved))
        deque(map(setattr, cases, repeat("status"), new), 0)
        gone = Counter(old)
        gone.pop("", None)
        self.counts.subtract(gone)
        self.counts.update(new)

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

    def join(self, left: RunFile, right: RunFile) -> Diff:
        """`compare(left, right)` of the whole runs, told what the pairing found when
        the runs were aligned throughout (the rows that differ; keys unique)."""
        self.advance(left.rows, right.rows)
        found = Aligned(self._differ, self._failing) if self._aligned(left, right) else None
        return compare(left, right, aligned=found)

    def _aligned(self, left: RunFile, right: RunFile) -> bool:
        """Whether the whole runs were paired position by position, keys unique: the
        pairing then saw exactly the join's pairs (its mismatched cases are the join's)."""
        return (
            self._keys is None
            and self._tiled
            and self._unique
            and self._paired == len(left.rows) == len(right.rows)
        )

    def finish(self, left: RunFile, right: RunFile | None, diff: Diff | None) -> CaseTable:
        """The complete table, classified from the join (`diff`) of the whole runs."""
        self.advance(left.rows, right.rows if right is not None else None)
        if right is None:
            table = CaseTable(SINGLE, left, None, self.cases)
            settle_errors(table, self.where)
            return table
        if diff is None:
            raise ValueError("a pair needs its diff")
        table = CaseTable(DELTA if diff.refused else COMPARE, left, right, self.cases, diff)
        classify(table, self.where, diff, mismatched_known=self._aligned(left, right))
        return table


def _of_other_types(lblock: list[CaseRow], rblock: list[CaseRow]) -> bool:
    """Whether each block's rows are of one type and the two types differ (a refused
    pair's files, whose pin values differ: see core.shared_pins)."""
    ltype, rtype = type(lblock[0]), type(rblock[0])
    if ltype is rtype:
        return False
    return all(map(is_, map(type, lblock), repeat(ltype))) and all(
        map(is_, map(type, rblock), repeat(rtype))
    )


def _follows(c: Case, lines: range) -> bool:
    """Whether `lines` carry on case `c`'s left rows (its range grows)."""
    return isinstance(c.left, range) and c.left.stop == lines.start


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching ranges of case numbers as one (a case restatused once)."""
    out: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if first >= last:
            continue
        if out and first <= out[-1][1]:
            out[-1] = (out[-1][0], max(last, out[-1][1]))
        else:
            out.append((first, last))
    return out


def _joined(rows: Sequence[int], lines: range) -> Sequence[int]:
    """A case's rows on one side with more lines: a range while they follow on."""
    if not rows:
        return lines
    if isinstance(rows, range) and rows.stop == lines.start:
        return range(rows.start, lines.stop)
    return [*rows, *lines]


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
