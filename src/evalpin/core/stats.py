"""Honest numbers beside every score: intervals, a paired test, and stability across seeds.

Pure Python (`math` only), so the core stays light. Three tools:

- **Wilson 95% interval** for a pass rate (Wilson 1927; Newcombe 1998, method 3): unlike
  the textbook `p ± 1.96·sqrt(p(1-p)/n)` it stays inside [0, 1] and keeps its coverage
  near 0 and 1, where pass rates of good models live.
- **Exact McNemar test** for two runs on the cases they share: only the discordant pairs
  (`b` regressions: pass → fail, `c` fixes: fail → pass) carry information, and under "no
  change" each is a fair coin, so `p = min(1, 2·P(X ≤ min(b, c)))` with
  `X ~ Binomial(b + c, 1/2)`. Per seed, and pooled across seeds by adding the counts
  (the sum of independent Binomial(n_s, 1/2) is Binomial(Σn_s, 1/2)). The pooled test
  treats a case's seeds as independent pairs; they are not quite (a hard case tends to
  fail on every seed), so read a pooled p near the threshold with care.
- **Flips needed** (`flips_needed`): the fewest flips in one direction that these cases
  could show as significant. For regressions: given the fixes observed, the least `x`
  with exact McNemar `p(x, fixes) < alpha` and `x <=` the shared pairs that passed on the
  left (only those can regress); for fixes, the same with the roles swapped and the
  pairs that failed on the left. None when no such `x` fits. Because the exact test
  conditions on the discordant pairs, the case count enters only as that ceiling: with
  no fixes, 6 regressions are the fewest that reach p < 0.05 (p = 2/64 = 0.031) however
  many cases were compared, and 5 or fewer passing pairs cannot show a regression at
  all. So "3 regressions, 0 fixes" (p = 0.25) is noise by this test, on 200 cases or on
  20,000.
- **Clustered comparison** (`clustered`): the headline. A case's seeds are not
  independent (at temperature 0 they are near copies), so the case is the unit.
  Durkalski et al. (2003)'s clustered McNemar: with b_k, c_k the case's regressed and
  fixed seed pairs, `X^2 = (sum_k (b_k - c_k))^2 / sum_k (b_k - c_k)^2`, chi-square with
  1 df. With one seed per case it is McNemar's chi-square, and the p-value is then the
  exact McNemar's, as for the pooled test. Beside it the per-case paired difference
  `d_k = (c_k - b_k) / n_k` (right pass rate minus left over the case's n_k shared
  seeds), its mean, the cluster-robust SE `sd(d) / sqrt(n)` over the n shared cases
  (Miller 2024, "Adding Error Bars to Evals"), the 95% interval `mean +- 1.959964 SE`
  and the minimum detectable effect at 80% power, `(1.959964 + 0.841621) SE`.
  Edge cases, by definition: no discordant case (every b_k = c_k, which includes "no
  flips at all") gives X^2 = 0 and p = 1; a case regressed on one seed and fixed on
  another counts for neither side; one shared case leaves sd(d) undefined, so SE,
  interval and MDE are None; cases whose d_k are all equal (nothing moved, or every
  case moved alike) give SE = 0: the formula's answer, a zero-width interval that
  says the cases agree, not that the estimate is exact; no shared case: X^2 = 0,
  p = 1, every other number None.

Stability across seeds: a case that passed on every seed it ran (two or more) is a stable
pass, one that failed on every seed a stable fail, one that did both is flaky; the flip
rate is flaky / (stable pass + stable fail + flaky). A case seen on one seed only with
one grade has not had the chance to flip and is counted apart (`single_seed`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, gt, itemgetter, not_
from typing import Any, Protocol

from evalpin.core.columns import Columns, judged
from evalpin.core.compare import ERRORED, FIXED, REGRESSED, Diff, Moved

ALPHA = 0.05
Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal
Z80 = 0.8416212335729143  # the 80th percentile: 80% power
_LN2 = math.log(2.0)

Seed = int | None


class Graded(Protocol):
    """Anything with a case id, a seed and a grade (a CaseRow or a CaseRecord)."""

    case_id: str
    seed: int | None
    passed: bool


_CASE_SEED = attrgetter("case_id", "seed")


def _seed_order(seed: Seed) -> tuple[bool, int]:
    return (seed is not None, seed or 0)


# -- pass rates ---------------------------------------------------------------------


def pass_counts_by_seed(
    rows: Iterable[Graded], columns: Columns | None = None
) -> dict[Seed, tuple[int, int]]:
    """(passed, total) for each seed, in seed order (None, a seedless record, first).
    Counted in C over the seed column (`columns`: the rows' own, when the caller has
    them), so it costs little on a million rows."""
    cols = columns or Columns(rows if isinstance(rows, Sequence) else list(rows))
    totals = Counter(cols.seeds)
    passes = Counter(compress(cols.seeds, cols.passed))
    return {s: (passes[s], totals[s]) for s in sorted(totals, key=_seed_order)}


def pass_rate_by_seed(rows: Iterable[Graded]) -> dict[Seed, float]:
    """Pass rate for each seed, in seed order (None, a seedless record, first)."""
    return {s: k / n for s, (k, n) in pass_counts_by_seed(rows).items()}


def spread(rates: dict[Seed, float]) -> float:
    """Largest minus smallest per-seed pass rate; 0 with fewer than two seeds."""
    values = list(rates.values())
    return max(values) - min(values) if len(values) > 1 else 0.0


def wilson(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for `passed` of `total` (95% by default)."""
    if total <= 0:
        raise ValueError("a proportion needs at least one trial")
    if not 0 <= passed <= total:
        raise ValueError(f"{passed} passed of {total}")
    p = passed / total
    z2n = z * z / total
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / total + z2n / (4 * total)) / (1 + z2n)
    # Clamp rounding noise: at 0 or n passed the bound is exactly 0 or 1.
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == total else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Rate:
    """`passed` of `total`, with its 95% Wilson interval."""

    passed: int
    total: int
    low: float
    high: float

    @classmethod
    def of(cls, passed: int, total: int) -> Rate:
        return cls(passed, total, *wilson(passed, total))

    @property
    def rate(self) -> float:
        return self.passed / self.total

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "total": self.total,
            "rate": self.rate,
            "low": self.low,
            "high": self.high,
        }


def rates_by_seed(rows: Iterable[Graded], columns: Columns | None = None) -> dict[Seed, Rate]:
    """Each seed's pass rate with its interval, in seed order."""
    return {s: Rate.of(k, n) for s, (k, n) in pass_counts_by_seed(rows, columns).items()}


def pooled(rates: Iterable[Rate]) -> Rate | None:
    """All seeds together; None when nothing was graded."""
    passed = total = 0
    for r in rates:
        passed += r.passed
        total += r.total
    return Rate.of(passed, total) if total else None


# -- the exact McNemar test ---------------------------------------------------------


_EXACT_UP_TO = 1000  # discordant pairs summed in exact integers, beyond it in floats


def binom_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2).

    Up to 1,000 trials, exactly: the binomial coefficients summed as integers and divided
    once (correctly rounded), so 3 of 3 gives 0.125, not 0.12500000000000003. Beyond,
    summed from the largest term of the lower tail downward, each term from the one above
    by a ratio, the top one from `lgamma`: no big integers, no underflow, relative error
    near 1e-12 even for hundreds of thousands of trials.
    """
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if n <= _EXACT_UP_TO:
        term = total = 1
        for i in range(1, k + 1):
            term = term * (n - i + 1) // i
            total += term
        return total / (1 << n)
    if 2 * k >= n:  # upper half: by symmetry, P(X <= k) = 1 - P(X <= n - k - 1)
        return 1.0 - binom_half_cdf(n - k - 1, n)
    log_top = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * _LN2
    total = term = 1.0
    for i in range(k, 0, -1):
        term *= i / (n - i + 1)
        total += term
        if term < total * 1e-17:
            break
    return min(1.0, math.exp(log_top) * total)


def mcnemar_exact(regressed: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts; 1 when there are none."""
    if regressed < 0 or fixed < 0:
        raise ValueError("discordant counts cannot be negative")
    n = regressed + fixed
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * binom_half_cdf(min(regressed, fixed), n))


def flips_needed(other: int, room: int, alpha: float = ALPHA) -> int | None:
    """The fewest flips in one direction that could show as significant, given `other`
    flips in the opposite direction and `room` pairs able to flip this way: the least
    x <= room with mcnemar_exact(x, other) < alpha; None when no such x exists."""
    if room <= other or mcnemar_exact(room, other) >= alpha:
        return None
    low, high = other, room  # p(low) >= alpha (p = 1 at x == other), p(high) < alpha
    while high - low > 1:
        mid = (low + high) // 2
        if mcnemar_exact(mid, other) < alpha:
            high = mid
        else:
            low = mid
    return high


# -- the clustered comparison: cases, not seeds ---------------------------------------


def chi2_1df_sf(x: float) -> float:
    """P(X >= x) for X ~ chi-square with 1 df: a squared standard normal, so erfc."""
    if x <= 0:
        return 1.0
    return math.erfc(math.sqrt(x / 2.0))


CaseFlips = tuple[int, int, int]  # (shared seed pairs, regressed pairs, fixed pairs)


def cases_needed(other: int, room: int, exact: bool, alpha: float = ALPHA) -> int | None:
    """The fewest whole cases flipping one way (on every seed) that the headline test
    could call signal, given `other` cases flipped the opposite way and `room` cases able
    to flip this way; None when no such number fits. Whole-case flips of s seeds give
    X^2 = (s x - s o)^2 / (s^2 x + s^2 o) = (x - o)^2 / (x + o) whatever s is; with one
    seed per case (`exact`) the headline is the exact McNemar, so is this."""
    if exact:
        return flips_needed(other, room, alpha)

    def significant(x: int) -> bool:
        return x > other and chi2_1df_sf((x - other) ** 2 / (x + other)) < alpha

    if not significant(room):
        return None
    low, high = other, room  # (x - o)^2 / (x + o) grows with x beyond o
    while high - low > 1:
        mid = (low + high) // 2
        if significant(mid):
            high = mid
        else:
            low = mid
    return high


@dataclass(frozen=True)
class Clustered:
    """Two runs compared case by case (see the module docstring for the definitions)."""

    cases: int
    regressed_cases: int
    fixed_cases: int
    statistic: float
    p_value: float
    exact: bool  # one seed per case: p_value is the exact McNemar's
    mean_difference: float | None
    se: float | None
    ci95: tuple[float, float] | None
    mde80: float | None
    regressions_needed: int | None = None
    fixes_needed: int | None = None
    # Cases with a left pass / a left fail: the ceilings of the two lines above. At least
    # this many, and exact whenever the ceiling decides the answer (see clustered_from).
    can_regress: int | None = None
    can_fix: int | None = None
    alpha: float = ALPHA

    @property
    def significant(self) -> bool:
        return self.p_value < self.alpha

    @property
    def call(self) -> str:
        """The headline word every renderer uses."""
        return "signal" if self.significant else "within noise"

    def headline(self) -> str:
        """`clustered over 200 cases: 16 regressed, 3 fixed, X^2 = 6.91, p = 0.0086: signal`"""
        if self.exact:
            over, test = " (one seed each)", f"exact McNemar {p_text(self.p_value)}"
        else:
            over, test = "", f"X^2 = {self.statistic:.2f}, {p_text(self.p_value)}"
        return (
            f"clustered over {self.cases} cases{over}: {self.regressed_cases} regressed, "
            f"{self.fixed_cases} fixed, {test}: {self.call}"
        )

    def difference_text(self) -> str | None:
        """The paired difference in pass-rate points, its interval and the MDE."""
        if self.mean_difference is None:
            return None
        mean = f"paired difference {self.mean_difference * 100:+.1f} points (right - left)"
        if self.se is None or self.ci95 is None or self.mde80 is None:
            return mean + "; one case: no standard error, interval or detectable effect"
        lo, hi = self.ci95
        return (
            f"{mean}, 95% [{lo * 100:+.1f}, {hi * 100:+.1f}], SE {self.se * 100:.1f}; "
            f"detectable at 80% power: {self.mde80 * 100:.1f} points"
        )

    def needed_text(self, label: str = "seed") -> str | None:
        """How many whole cases would have had to flip for the headline to say signal."""
        if self.fixed_cases > self.regressed_cases:
            other, other_kind, needed, kind, room = (
                self.regressed_cases,
                "regressed",
                self.fixes_needed,
                "fixed",
                self.can_fix,
            )
            side = "failed"
        else:
            other, other_kind, needed, kind, room = (
                self.fixed_cases,
                "fixed",
                self.regressions_needed,
                "regressed",
                self.can_regress,
            )
            side = "passed"
        if room is None:
            return None
        if needed is not None:
            return (
                f"with {other} {other_kind} case(s), {needed} whole cases {kind} (on every "
                f"{label}) would be the fewest to reach p < {self.alpha}"
            )
        return (
            f"with {other} {other_kind} case(s), no number of {kind} cases could reach "
            f"p < {self.alpha}: only {room} case(s) {side} on the left"
        )

    @property
    def test(self) -> str:
        if self.exact:
            return "exact McNemar over cases (one seed per case)"
        return "clustered McNemar over cases (Durkalski 2003), chi-square 1 df"

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "cases": self.cases,
            "regressed_cases": self.regressed_cases,
            "fixed_cases": self.fixed_cases,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "significant": self.significant,
            "mean_difference": self.mean_difference,
            "se": self.se,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "mde80": self.mde80,
            "regressions_needed": self.regressions_needed,
            "fixes_needed": self.fixes_needed,
        }


def clustered(
    per_case: Iterable[CaseFlips],
    *,
    unmoved_cases: int = 0,
    unmoved_pairs: int = 0,
    can_regress: int | None = None,
    can_fix: int | None = None,
    alpha: float = ALPHA,
) -> Clustered:
    """The clustered comparison from each shared case's (pairs, regressed, fixed).

    Cases with no flip add nothing to the test and d_k = 0 to the difference, so a
    caller on 100k rows may list only the cases that flipped and give the rest as
    `unmoved_cases` (holding `unmoved_pairs` pairs). `can_regress` / `can_fix`: the
    cases with a left pass / a left fail, the ceilings of the cases-needed lines (None:
    not computed)."""
    n = unmoved_cases
    single = unmoved_pairs == unmoved_cases
    regressed_cases = fixed_cases = b_total = c_total = 0
    net = squares = 0
    diffs: list[float] = []
    for pairs, b, c in per_case:
        if pairs < 1 or b < 0 or c < 0 or b + c > pairs:
            raise ValueError(f"impossible case counts: {b} regressed, {c} fixed of {pairs}")
        n += 1
        single = single and pairs == 1
        b_total += b
        c_total += c
        regressed_cases += b > c
        fixed_cases += c > b
        net += b - c
        squares += (b - c) ** 2
        if b != c:
            diffs.append((c - b) / pairs)
    statistic = net * net / squares if squares else 0.0
    exact = single and n > 0
    p_value = mcnemar_exact(b_total, c_total) if exact else chi2_1df_sf(statistic)
    mean = se = ci = mde = None
    if n:
        mean = math.fsum(diffs) / n
        if n > 1:
            ss = math.fsum((d - mean) ** 2 for d in diffs) + (n - len(diffs)) * mean * mean
            se = math.sqrt(ss / (n - 1) / n)
            ci = (mean - Z95 * se, mean + Z95 * se)
            mde = (Z95 + Z80) * se
    return Clustered(
        cases=n,
        regressed_cases=regressed_cases,
        fixed_cases=fixed_cases,
        statistic=statistic,
        p_value=p_value,
        exact=exact,
        mean_difference=mean,
        se=se,
        ci95=ci,
        mde80=mde,
        regressions_needed=(
            None if can_regress is None else cases_needed(fixed_cases, can_regress, exact, alpha)
        ),
        fixes_needed=(
            None if can_fix is None else cases_needed(regressed_cases, can_fix, exact, alpha)
        ),
        can_regress=can_regress,
        can_fix=can_fix,
        alpha=alpha,
    )


def p_text(p: float) -> str:
    """A p-value as every renderer prints it."""
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.4f}"


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

    def to_json(self) -> dict[str, Any]:
        return {
            "test": "exact McNemar, two-sided, on discordant (case, seed) pairs",
            "interval": "Wilson 95%",
            "alpha": self.alpha,
            "clustered": self.clustered.to_json(),
            "pooled": self.pooled.to_json(),
            "by_seed": [{"seed": s, **p.to_json()} for s, p in self.by_seed.items()],
        }


@dataclass(frozen=True)
class SharedTally:
    """What the paired statistics need of the shared left rows, beside the Diff's moves.

    Counted over the rows in one process (`tally_of`), or summed over the halves of two
    big runs counted in two processes (`core/halves.py`: a case's rows never straddle
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
            counts={s: (counts[s][0], counts[s][1]) for s in sorted(counts, key=_seed_order)},
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
    # Pairs with an error case on either side have no pair of grades: left out.
    rows = judged(shared)
    errored_right = {m.pair.key for m in diff.moved if m.kind == ERRORED}
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
    the runs share no pair."""
    if diff.refused or not diff.compared:
        return None
    return paired_from(diff.moved, tally_of(diff), alpha)


def paired_from(moved: Sequence[Moved], tally: SharedTally, alpha: float = ALPHA) -> PairedStats:
    """The paired test from a comparison's moves and its shared rows' tally."""
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


# -- stability across seeds ---------------------------------------------------------


@dataclass(frozen=True)
class Stability:
    """How each case behaved across its seeds, and which cases flipped."""

    stable_pass: int
    stable_fail: int
    single_seed: int
    flaky_cases: tuple[str, ...] = ()  # in first-seen order

    @property
    def flaky(self) -> int:
        return len(self.flaky_cases)

    @property
    def flip_rate(self) -> float | None:
        """Flaky cases over the cases that could flip; None when there are none."""
        could = self.stable_pass + self.stable_fail + self.flaky
        return self.flaky / could if could else None

    def to_json(self) -> dict[str, Any]:
        return {
            "stable_pass": self.stable_pass,
            "stable_fail": self.stable_fail,
            "flaky": self.flaky,
            "single_seed": self.single_seed,
            "flip_rate": self.flip_rate,
        }


def case_stability(rows: Sequence[Graded], columns: Columns | None = None) -> Stability:
    """Classify every case across its seeds (see the module docstring). A case graded
    both ways is flaky even on one seed: a repeat that changed its grade.

    Counted in C over the columns (`columns`: the rows' own, when the caller has them):
    sets of case ids by grade, rows per case (a case's distinct seeds, when no (case,
    seed) repeats), so a verdict on a million rows stays cheap."""
    cols = columns or Columns(rows)
    cases, passed = cols.case_ids, cols.passed
    passes = set(compress(cases, passed))
    fails = set(compress(cases, map(not_, passed)))
    if cols.unique_keys:
        seeds = cols.rows_per_case
    else:
        seeds = Counter(map(itemgetter(0), set(map(_CASE_SEED, rows))))
    single = set(compress(seeds, map(gt, repeat(2), seeds.values())))
    flaky = passes & fails
    return Stability(
        stable_pass=len(passes - fails - single),
        stable_fail=len(fails - passes - single),
        single_seed=len(single - flaky),
        flaky_cases=tuple(filter(flaky.__contains__, cols.rows_per_case)),
    )


def digest_conflicts(keyed: Iterable[tuple[Any, str | None]]) -> list[Any]:
    """Keys recorded with more than one completion digest, in first-seen order.
    A missing digest (no completion, e.g. a provider error) is not evidence either way."""
    first: dict[Any, str] = {}
    conflicts: dict[Any, None] = {}
    for key, digest in keyed:
        if digest is None:
            continue
        seen = first.setdefault(key, digest)
        if seen != digest:
            conflicts[key] = None
    return list(conflicts)
