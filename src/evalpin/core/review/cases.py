"""The case table behind the review screen: one row per case id, headless and fast.

Built from one run, or from two runs and their `Diff`, in a single pass over the lean
rows (no record is decoded in full here: detail is read lazily from byte offsets when a
case is shown). Each case carries its row indices on each side, its pass count per side
and a status:

- comparing two runs with the same instrument: regressed, fixed, drift, flaky,
  unchanged, only left, only right (worst seed wins: a case that regressed on one seed
  and was fixed on another is `regressed`);
- a refused comparison browsed as a backend delta: differs, flaky, same, only left, only
  right, and never a regression or fix label;
- one run alone: fail, flaky, pass;
- while the runs are still being read (`partial`, built by `core.case_index`): changed,
  flaky, unchanged, pending, or as a delta differs, flaky, same, pending: never a
  regression or fix label before the whole join is known.

Also here: the filters the `f` key cycles through, search by case id and the status
counts. (Which runs `evalpin review` opens is `core.discovery`; the byte offsets that let a
record be decoded alone are `line_index.LineIndex`.)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import and_, attrgetter, lt, ne, not_

import msgspec

from evalpin.core.columns import unjudged_rows
from evalpin.core.judge.compare import (
    DISPUTED,
    DRIFT,
    ERRORED,
    FIXED,
    RECOVERED,
    REGRESSED,
    Diff,
)
from evalpin.core.read.rundata import RunFile

_PASSED = attrgetter("passed")
_MISMATCHED = attrgetter("mismatched")
# A case's status and flakiness, as getters (shared with core.case_index).
STATUS_OF = attrgetter("status")
FLAKY_OF = attrgetter("flaky")
_SLICE = 16384  # cases a C-level pass takes at once where other threads wait on the GIL
# A case's rows and its pass count on each side (0 left, 1 right), as getters.
ROWS_ON = (attrgetter("left"), attrgetter("right"))
PASSED_ON = (attrgetter("left_passed"), attrgetter("right_passed"))

# Modes.
COMPARE, DELTA, SINGLE = "compare", "delta", "single"

# Statuses.
FLAKY = "flaky"
UNCHANGED = "unchanged"
ONLY_LEFT, ONLY_RIGHT = "only left", "only right"
DIFFERS, SAME = "differs", "same"
PASS, FAIL = "pass", "fail"
ERROR = "error"  # one run alone: a seed could not be judged, and none failed
# DISPUTED (compare's word): one run alone, a seed was disputed (plain pytest passed, the
# witness did not) and none failed; in a pair, a move into dispute.
CHANGED_STATUS, PENDING = "changed", "pending"  # partial only: provisional

STATUSES: dict[str, tuple[str, ...]] = {
    COMPARE: (
        REGRESSED,
        FIXED,
        DRIFT,
        ERRORED,
        DISPUTED,
        RECOVERED,
        FLAKY,
        UNCHANGED,
        ONLY_LEFT,
        ONLY_RIGHT,
    ),
    DELTA: (DIFFERS, FLAKY, SAME, ONLY_LEFT, ONLY_RIGHT),
    SINGLE: (FAIL, ERROR, DISPUTED, FLAKY, PASS),
}
# What `n`/`p` step through.
CHANGED: dict[str, frozenset[str]] = {
    COMPARE: frozenset(
        {REGRESSED, FIXED, DRIFT, ERRORED, DISPUTED, RECOVERED, ONLY_LEFT, ONLY_RIGHT}
    ),
    DELTA: frozenset({DIFFERS, ONLY_LEFT, ONLY_RIGHT}),
    SINGLE: frozenset({FAIL, ERROR, DISPUTED, FLAKY}),
}
# What `f` cycles through, in order.
ALL, CHANGED_FILTER = "all", "changed"
FILTERS: dict[str, tuple[str, ...]] = {
    COMPARE: (ALL, CHANGED_FILTER, REGRESSED, FIXED, DRIFT, ERRORED, FLAKY, DISPUTED),
    DELTA: (ALL, DIFFERS, FLAKY),
    SINGLE: (ALL, FAIL, ERROR, FLAKY, DISPUTED),
}
# While partial (see core.case_index): no movement claim, nothing "only" on one side yet.
PARTIAL_STATUSES: dict[str, tuple[str, ...]] = {
    COMPARE: (CHANGED_STATUS, FLAKY, UNCHANGED, PENDING),
    DELTA: (DIFFERS, FLAKY, SAME, PENDING),
    SINGLE: STATUSES[SINGLE],
}
PARTIAL_CHANGED: dict[str, frozenset[str]] = {
    COMPARE: frozenset({CHANGED_STATUS}),
    DELTA: frozenset({DIFFERS}),
    SINGLE: CHANGED[SINGLE],
}
PARTIAL_FILTERS: dict[str, tuple[str, ...]] = {
    COMPARE: (ALL, CHANGED_FILTER, FLAKY),
    DELTA: FILTERS[DELTA],
    SINGLE: FILTERS[SINGLE],
}
_RANK = {REGRESSED: 0, ERRORED: 1, DISPUTED: 2, FIXED: 3, RECOVERED: 4, DRIFT: 5}


class Case(msgspec.Struct, gc=False):
    """One case id: its rows on each side (indices into `RunFile.rows`) and its status.

    A struct made in C and invisible to the cyclic GC: a million-record pair has a
    third of a million cases, made in bulk while the runs are read (`core.case_index`).
    """

    case_id: str
    # Row indices on each side: a `range` while they are consecutive lines (the usual
    # case, and far smaller than a list), else a list.
    left: Sequence[int] = ()
    right: Sequence[int] = ()
    left_passed: int = 0
    right_passed: int = 0
    status: str = ""  # set once its rows are grouped
    flaky: bool = False
    mismatched: bool = False  # a pin differs on one of its common seeds (delta mode)
    flips: bool = False  # while partial: a common seed's grade differs
    drifts: bool = False  # while partial: a common seed's digest moved, same grade


@dataclass
class CaseTable:
    """Every case of one run or of a pair, with statuses, counts, filters and search."""

    mode: str
    left: RunFile
    right: RunFile | None
    cases: list[Case]
    diff: Diff | None = None
    # While the runs are still being read: `cases` grows behind this table, and the
    # index keeps the counts and the cases n/p stop at as it goes.
    partial: bool = False
    partial_counts: Counter[str] | None = field(default=None, repr=False)
    changed_cases: list[int] | None = field(default=None, repr=False)
    _lower: list[str] | None = field(default=None, repr=False)
    # `changed_cases` sorted, how many of them that holds (it grows between calls) and
    # for which mode (a refusal starts the index's list again, in delta mode).
    _changed_sorted: list[int] = field(default_factory=list, repr=False)
    _changed_merged: int = field(default=0, repr=False)
    _changed_mode: str = field(default="", repr=False)
    # A complete table's whole list, its counts, changed positions and first position,
    # worked out once (`prepare`): a third of a million cases take tenths of a second.
    _all: list[int] | None = field(default=None, repr=False)
    _prepared: tuple[dict[str, int], list[int], int] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.cases)

    @property
    def statuses(self) -> tuple[str, ...]:
        return (PARTIAL_STATUSES if self.partial else STATUSES)[self.mode]

    @property
    def filters(self) -> tuple[str, ...]:
        return (PARTIAL_FILTERS if self.partial else FILTERS)[self.mode]

    @property
    def changed(self) -> frozenset[str]:
        """The statuses `n`/`p` stop at."""
        return (PARTIAL_CHANGED if self.partial else CHANGED)[self.mode]

    def counts(self) -> dict[str, int]:
        """Cases per status, every status of the mode listed (zeros included): they add
        up to the cases. `flaky` counts the cases whose status is flaky; the flaky filter
        also shows the flaky cases whose status is a movement such as `regressed`.
        Counted in C (a third of a million cases is counted while a reviewer waits on
        the screen)."""
        if self.partial_counts is not None:
            return {status: self.partial_counts.get(status, 0) for status in self.statuses}
        if self._prepared is not None:
            return dict(self._prepared[0])
        return self._counted(list(map(STATUS_OF, self.cases)))

    def _counted(self, statuses: list[str]) -> dict[str, int]:
        found = Counter(statuses)
        return {status: found.get(status, 0) for status in self.statuses}

    def visible(self, filter_name: str = ALL, search: str = "") -> Sequence[int]:
        """Case numbers shown under a filter and a case-id search (substring, any case)."""
        if filter_name not in self.filters:
            raise ValueError(f"unknown filter {filter_name!r} in {self.mode} mode")
        cases = self.cases
        if search:
            needle = search.lower()
            if self.partial:  # still growing: no cache
                lower = [c.case_id.lower() for c in cases]
            else:
                if self._lower is None:
                    self._lower = [c.case_id.lower() for c in cases]
                lower = self._lower
            holds = map(str.__contains__, lower, repeat(needle))
            found: Sequence[int] = list(compress(count(), holds))
        else:
            if filter_name == ALL and not self.partial:
                if self._all is None:
                    self._all = list(range(len(cases)))
                return self._all
            found = range(len(cases))
        if filter_name == ALL:
            return found if self.partial and isinstance(found, range) else list(found)
        if filter_name == FLAKY:
            passes = map(FLAKY_OF, map(cases.__getitem__, found))
        else:
            wanted = self.changed if filter_name == CHANGED_FILTER else frozenset({filter_name})
            passes = map(wanted.__contains__, map(STATUS_OF, map(cases.__getitem__, found)))
        return list(compress(found, passes))

    def changed_positions(self, visible: Sequence[int]) -> list[int]:
        """Positions in `visible` of the cases `n`/`p` stop at (found in C)."""
        if self.changed_cases is not None and isinstance(visible, range) and visible.start == 0:
            # The whole list while partial: the index's list, not a pass over every case.
            known = self._changed_so_far()
            return known[: bisect_left(known, visible.stop)]
        if self._prepared is not None and visible is self._all:
            return self._prepared[1]
        return self._stops(map(STATUS_OF, map(self.cases.__getitem__, visible)))

    def _stops(self, statuses: Iterable[str]) -> list[int]:
        """Positions of the statuses n/p stop at."""
        return list(compress(count(), map(self.changed.__contains__, statuses)))

    def _changed_so_far(self) -> list[int]:
        """The index's changed cases, sorted, merged in as the list grows (asked at every
        growth of a partial list: not sorted whole each time)."""
        found = self.changed_cases
        assert found is not None
        if self._changed_mode != self.mode or len(found) < self._changed_merged:
            self._changed_sorted, self._changed_merged = [], 0
            self._changed_mode = self.mode
        if len(found) > self._changed_merged:
            new = found[self._changed_merged :]
            self._changed_sorted = sorted({*self._changed_sorted, *new})
            self._changed_merged = len(found)
        return self._changed_sorted

    def prepare(self) -> None:
        """Work out, once, what showing the whole complete table asks for (its counts,
        where n/p stop, where it opens): the review's loader does it before the table is
        handed to the screen, so the screen does not stall on it. The statuses are taken
        in slices, so the screen's thread gets the GIL in between."""
        if self.partial:
            return
        self.visible()  # the whole list, kept: what is worked out here is for it
        statuses: list[str] = []
        for lo in range(0, len(self.cases), _SLICE):
            statuses += map(STATUS_OF, self.cases[lo : lo + _SLICE])
        self._prepared = (
            self._counted(statuses),
            self._stops(statuses),
            self._opening(statuses),
        )

    def first_position(self, visible: Sequence[int]) -> int:
        """Where the list opens: the first regression, else the first changed case."""
        if self._prepared is not None and visible is self._all:
            return self._prepared[2]
        return self._opening(list(map(STATUS_OF, map(self.cases.__getitem__, visible))))

    def _opening(self, statuses: list[str]) -> int:
        for want in ({REGRESSED}, self.changed):
            at = next(compress(count(), map(want.__contains__, statuses)), None)
            if at is not None:
                return at
        return 0

    def mismatch_marks(self) -> bool:
        """Whether a case's `mismatched` mark tells it apart from the others: some case
        held on both sides kept its instrument. Where every common case was measured with
        another one (a slot or grader changed for the whole run), a mark on every row says
        nothing the backend-delta bar does not ("≠ same" on every line). In C."""
        if self.mode != DELTA:
            return False
        cases = self.cases
        if all(map(_MISMATCHED, cases)) or not any(map(_MISMATCHED, cases)):
            return False
        marked = list(map(_MISMATCHED, cases))
        held = map(and_, map(bool, map(ROWS_ON[0], cases)), map(bool, map(ROWS_ON[1], cases)))
        return any(map(and_, held, map(not_, marked)))

    def seeds(self, case: Case) -> list[tuple[int | None, int | None, int | None]]:
        """(seed, left row, right row) per seed of a case, in seed order; the last record
        of a repeated (case, seed) wins, as in the diff."""
        lrows = self.left.rows
        left = {lrows[i].seed: i for i in case.left}
        right: dict[int | None, int] = {}
        if self.right is not None:
            rrows = self.right.rows
            right = {rrows[i].seed: i for i in case.right}
        order = sorted(set(left) | set(right), key=lambda s: (s is not None, s or 0))
        return [(s, left.get(s), right.get(s)) for s in order]


def step(positions: Sequence[int], current: int, forward: bool) -> int | None:
    """The next (or previous) entry of sorted `positions` strictly after (before) `current`."""
    if forward:
        k = bisect_right(positions, current)
        return positions[k] if k < len(positions) else None
    k = bisect_left(positions, current)
    return positions[k - 1] if k > 0 else None


def classify(
    table: CaseTable, where: dict[str, int], diff: Diff, *, mismatched_known: bool = False
) -> None:
    """Final statuses of a pair's cases, from the join of the whole runs.
    `mismatched_known`: the cases' `mismatched` marks already say which cases hold a
    mismatched pair of this join (the review's index paired exactly its pairs).

    One Python loop over the cases: measured faster here than a dozen C-level passes
    over the same third of a million objects (210 ms against 70 ms at 2 x 1M: the
    passes are bound by memory), and it lets other threads in between."""
    cases = table.cases
    delta = table.mode == DELTA
    settled = SAME if delta else UNCHANGED
    for c in cases:
        c.flaky = 0 < c.left_passed < len(c.left) or 0 < c.right_passed < len(c.right)
        if not c.right:
            c.status = ONLY_LEFT
        elif not c.left:
            c.status = ONLY_RIGHT
        elif c.flaky:
            c.status = FLAKY
        else:
            c.status = settled
    if delta:
        lrows, rrows = diff.left.rows, diff.right.rows
        # Grades compared a column at a time in C: every common pair, few that differ.
        lpass = map(_PASSED, map(lrows.__getitem__, diff.common_left))
        rpass = map(_PASSED, map(rrows.__getitem__, diff.common_right))
        for li in compress(diff.common_left, map(ne, lpass, rpass)):
            cases[where[lrows[li].case_id]].status = DIFFERS
        if not mismatched_known:
            for case_id in set(diff.mismatched.case_ids()):
                cases[where[case_id]].mismatched = True
        return
    for moved in diff.moved:
        c = cases[where[moved.case_id]]
        if c.status not in _RANK or _RANK[moved.kind] < _RANK[c.status]:
            c.status = moved.kind
    settle_errors(table, where)


def settle_errors(table: CaseTable, where: dict[str, int]) -> None:
    """Cases with error or disputed rows (not judged): flaky only by their judged rows,
    and one run's case is `disputed` when a seed was disputed and none failed, else
    `error` when a seed errored and none failed. A pass over those rows only (none, in
    most runs: one C pass finds that)."""
    sides = [(0, table.left)] + ([(1, table.right)] if table.right is not None else [])
    unjudged: dict[int, list[int]] = {}
    disputed: set[int] = set()
    for side, run in sides:
        for i in unjudged_rows(run.rows):
            k = where[run.rows[i].case_id]
            unjudged.setdefault(k, [0, 0])[side] += 1
            if run.rows[i].disputed:
                disputed.add(k)
    cases = table.cases
    for k, (lout, rout) in unjudged.items():
        c = cases[k]
        ljudged, rjudged = len(c.left) - lout, len(c.right) - rout
        was = c.flaky
        c.flaky = 0 < c.left_passed < ljudged or 0 < c.right_passed < rjudged
        if table.mode == SINGLE:
            failed = ljudged - c.left_passed
            c.status = (
                FLAKY if c.flaky else FAIL if failed else DISPUTED if k in disputed else ERROR
            )
        elif was and not c.flaky and c.status == FLAKY:
            c.status = SAME if table.mode == DELTA else UNCHANGED


def flaky_on(cases: Sequence[Case], side: int) -> list[bool]:
    """Whether each case passes on some but not all of its rows on one side (0 left,
    1 right), in C."""
    won = list(map(PASSED_ON[side], cases))
    rows = map(len, map(ROWS_ON[side], cases))
    return list(map(and_, map(lt, repeat(0), won), map(lt, won, rows)))
