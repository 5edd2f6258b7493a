"""Two comparable runs' paired statistics, from a Diff's moves and a tally of its shared
rows: the clustered comparison over cases (the headline), and the exact McNemar test
pooled across seeds and for each seed (the tests themselves are in `mcnemar.py`).

Python loops only over the moved rows; the shared rows are counted in C over their
columns, in one process (`tally_of`) or over the halves of two big runs, one process
each, and summed (`core/review/halves.py`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from operator import not_
from typing import Any

from evalpin.core.columns import Columns, judged
from evalpin.core.instrument.fixtures import KIND_CODING
from evalpin.core.judge.compare import DISPUTED, ERRORED, FIXED, REGRESSED, Diff, Moved
from evalpin.core.judge.mcnemar import (
    Clustered,
    cases_needed,
    clustered,
    flips_needed,
    mcnemar_exact,
)
from evalpin.core.judge.passk import PassAtK, pass_at_k, sample_counts
from evalpin.core.judge.stats import ALPHA, Graded, Rate, Seed, pass_counts_by_seed, seed_order


@dataclass(frozen=True)
class Paired:
    """Two comparable runs on the (case, seed) pairs they share: rates, flips, the test."""

    shared: int
    left: Rate
    right: Rate
    regressed: int
    fixed: int
    p_value: float
    regressions_needed: int | None
    fixes_needed: int | None
    alpha: float = ALPHA

    @classmethod
    def of(
        cls, shared: int, left_passed: int, regressed: int, fixed: int, alpha: float = ALPHA
    ) -> Paired:
        right_passed = left_passed - regressed + fixed
        return cls(
            shared=shared,
            left=Rate.of(left_passed, shared),
            right=Rate.of(right_passed, shared),
            regressed=regressed,
            fixed=fixed,
            p_value=mcnemar_exact(regressed, fixed),
            regressions_needed=flips_needed(fixed, left_passed, alpha),
            fixes_needed=flips_needed(regressed, shared - left_passed, alpha),
            alpha=alpha,
        )

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha

    def to_json(self) -> dict[str, Any]:
        return {
            "shared": self.shared,
            "left": self.left.to_json(),
            "right": self.right.to_json(),
            "regressed": self.regressed,
            "fixed": self.fixed,
            "p_value": self.p_value,
            "significant": self.significant,
            "regressions_needed": self.regressions_needed,
            "fixes_needed": self.fixes_needed,
        }


@dataclass(frozen=True)
class PairedStats:
    """The paired comparison: over cases (the headline), pooled across seeds and for
    each seed (detail)."""

    clustered: Clustered
    pooled: Paired
    by_seed: dict[Seed, Paired]
    alpha: float = ALPHA
    # Coding runs: each side's pass@k over the shared pairs judged on both sides.
    pass_at_k: dict[str, list[PassAtK]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        shown = {
            "test": "exact McNemar, two-sided, on discordant (case, seed) pairs",
            "interval": "Wilson 95%",
            "alpha": self.alpha,
            "clustered": self.clustered.to_json(),
            "pooled": self.pooled.to_json(),
            "by_seed": [{"seed": s, **p.to_json()} for s, p in self.by_seed.items()],
        }
        if self.pass_at_k:
            shown["pass_at_k"] = {
                side: [p.to_json() for p in found] for side, found in self.pass_at_k.items()
            }
        return shown


@dataclass(frozen=True)
class SharedTally:
    """What the paired statistics need of the shared left rows, beside the Diff's moves.

    Counted over the rows in one process (`tally_of`), or summed over the halves of two
    big runs counted in two processes (`core/review/halves.py`: a case's rows never straddle
    halves, so case counts add). The two distinct-case counts cost two C passes, so the
    clustered comparison asks for them only when they could decide its answer."""

    counts: dict[Seed, tuple[int, int]]  # (passed, total) per seed, in seed order
    rows: int
    cases: int
    flipped_rows: Counter[str]  # shared rows of each case with a pass flip
    passing_cases: Callable[[], int]  # cases with a left pass
    failing_cases: Callable[[], int]  # cases with a left fail

    @classmethod
    def summed(cls, parts: Sequence[SharedTally]) -> SharedTally:
        """The tally of disjoint sets of cases, together."""
        counts: dict[Seed, list[int]] = {}
        for part in parts:
            for seed, (k, n) in part.counts.items():
                both = counts.setdefault(seed, [0, 0])
                both[0] += k
                both[1] += n
        passing = sum(p.passing_cases() for p in parts)
        failing = sum(p.failing_cases() for p in parts)
        return cls(
            counts={s: (counts[s][0], counts[s][1]) for s in sorted(counts, key=seed_order)},
            rows=sum(p.rows for p in parts),
            cases=sum(p.cases for p in parts),
            flipped_rows=sum((p.flipped_rows for p in parts), Counter()),
            passing_cases=lambda: passing,
            failing_cases=lambda: failing,
        )


def tally_of(diff: Diff) -> SharedTally:
    """Tally the shared left rows of a Diff: C-level passes over the rows, and a Python
    pass over the moved rows only."""
    shared = shared_left(diff)
    # Pairs with an error or disputed case on either side have no pair of grades: left out.
    rows = judged(shared)
    errored_right = {m.pair.key for m in diff.moved if m.kind in (ERRORED, DISPUTED)}
    if errored_right:
        rows = [r for r in rows if (r.case_id, r.seed) not in errored_right]
    shared = rows
    columns = (diff.left_columns if shared is diff.left.rows else None) or Columns(shared)
    flipped = {m.case_id for m in diff.moved if m.kind in (REGRESSED, FIXED)}
    return SharedTally(
        counts=pass_counts_by_seed(shared, columns),
        rows=len(shared),
        cases=columns.distinct_cases,
        flipped_rows=Counter(filter(flipped.__contains__, columns.case_ids)),
        passing_cases=lambda: len(set(compress(columns.case_ids, columns.passed))),
        failing_cases=lambda: len(set(compress(columns.case_ids, map(not_, columns.passed)))),
    )


def paired_stats(diff: Diff, alpha: float = ALPHA) -> PairedStats | None:
    """The paired test for a comparison that was not refused; None when it was, or when
    the runs share no pair judged on both sides."""
    if diff.refused or not diff.compared:
        return None
    found = paired_from(diff.moved, tally_of(diff), alpha)
    h = diff.left.header
    if found is None or h is None or h.fixtures.kind != KIND_CODING:
        return found
    return replace(found, pass_at_k=sides_pass_at_k(diff))


def sides_pass_at_k(diff: Diff) -> dict[str, list[PassAtK]]:
    """Each side's pass@k over the pairs judged on both sides (a coding run's problems
    are few: counted in Python). The right side's passes are the left's moved by its
    regressions and fixes, as the rates of `Paired`."""
    errored_right = {m.pair.key for m in diff.moved if m.kind == ERRORED}
    rows = [r for r in judged(shared_left(diff)) if (r.case_id, r.seed) not in errored_right]
    left = sample_counts(rows)
    right = dict(left)
    for m in diff.moved:
        if m.kind in (REGRESSED, FIXED) and m.case_id in right:
            n, c = right[m.case_id]
            right[m.case_id] = (n, c + (1 if m.kind == FIXED else -1))
    return {"left": pass_at_k(left), "right": pass_at_k(right)}


def paired_from(
    moved: Sequence[Moved], tally: SharedTally, alpha: float = ALPHA
) -> PairedStats | None:
    """The paired test from a comparison's moves and its shared rows' tally; None when
    no shared pair was judged on both sides (every one an error case on a side): there
    is no pair of grades to test, and no rate has a denominator."""
    if not tally.rows:
        return None
    flips = Counter((m.seed, m.kind) for m in moved if m.kind in (REGRESSED, FIXED))
    by_seed = {
        s: Paired.of(n, k, flips[(s, REGRESSED)], flips[(s, FIXED)], alpha)
        for s, (k, n) in tally.counts.items()
    }
    pooled_test = Paired.of(
        sum(p.shared for p in by_seed.values()),
        sum(p.left.passed for p in by_seed.values()),
        sum(p.regressed for p in by_seed.values()),
        sum(p.fixed for p in by_seed.values()),
        alpha,
    )
    return PairedStats(clustered_from(moved, tally, alpha), pooled_test, by_seed, alpha)


def shared_left(diff: Diff) -> Sequence[Graded]:
    """The left rows of the shared (case, seed) pairs (the rows themselves when aligned)."""
    rows = diff.left.rows
    common = diff.common_left
    if isinstance(common, range) and common == range(len(rows)):
        return rows
    return list(map(rows.__getitem__, common))


def clustered_from(moved: Sequence[Moved], tally: SharedTally, alpha: float = ALPHA) -> Clustered:
    """The clustered comparison of a Diff's moves over its shared rows' tally.

    Python loops only over the moved rows. The ceilings of the cases-needed lines (cases
    with a left pass, with a left fail) cost two C passes, so they are counted only when
    they could decide the answer: the busiest seed's left passes (fails) are distinct
    cases, a lower bound that usually already clears the threshold."""
    flips: dict[str, list[int]] = {}
    for m in moved:
        if m.kind in (REGRESSED, FIXED):
            bc = flips.setdefault(m.case_id, [0, 0])
            bc[m.kind == FIXED] += 1
    pairs = tally.flipped_rows
    per_case = [(pairs[c], b, f) for c, (b, f) in flips.items()]
    cases = tally.cases
    unmoved = {"unmoved_cases": cases - len(flips), "unmoved_pairs": tally.rows - pairs.total()}
    first = clustered(per_case, **unmoved, alpha=alpha)
    exact = first.exact
    can_regress = max((k for k, _ in tally.counts.values()), default=0)
    can_fix = max((n - k for k, n in tally.counts.values()), default=0)
    if (cases_needed(first.fixed_cases, cases, exact, alpha) or cases) > can_regress:
        can_regress = tally.passing_cases()
    if (cases_needed(first.regressed_cases, cases, exact, alpha) or cases) > can_fix:
        can_fix = tally.failing_cases()
    return clustered(per_case, **unmoved, can_regress=can_regress, can_fix=can_fix, alpha=alpha)
