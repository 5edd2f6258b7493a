"""The paired tests of two runs on the (case, seed) pairs they share: exact McNemar, per
seed and pooled, the flips needed, and the clustered comparison over cases (the headline).

Pure Python (`math` only), so the core stays light. Three tools:

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
  another counts for neither side; no shared case: X^2 = 0, p = 1, every other number
  None.

When there is too little to say, it says so rather than print a number that means
nothing (`Clustered.limits`):
- **Fewer than `MIN_CASES` (10) shared cases**: no interval and no detectable effect
  (with so few cases sd(d) is itself too uncertain: the normal interval of 2 cases spans
  more than the whole scale), and the call is "too few cases to say" rather than
  "within noise". It is "signal" only when the exact sign test over whole cases (the
  exact McNemar on regressed against fixed cases, valid at any count) is significant
  too: 8 of 8 cases regressed is a signal on 8 cases. The SE and p-value are reported.
- **SE = 0** (every case's d_k equal: nothing moved, or every case moved alike): there
  is no spread to measure noise by, so no interval and no detectable effect (never
  "detectable: 0.0 points").
- The interval is clipped to the scale, a difference of pass rates lies in [-1, +1]
  ([-100, +100] points), and a detectable effect over 1 (100 points) is none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalpin.core.judge.stats import ALPHA, MIN_CASES, TOO_FEW, Z80, Z95

_LN2 = math.log(2.0)


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
        """p below alpha; with too few cases, only when the exact sign test over whole
        cases (regressed against fixed cases, valid at any count) agrees."""
        if self.p_value >= self.alpha:
            return False
        return (
            not self.too_few or mcnemar_exact(self.regressed_cases, self.fixed_cases) < self.alpha
        )

    @property
    def too_few(self) -> bool:
        """Fewer shared cases than `MIN_CASES`: too few to say anything about noise."""
        return self.cases < MIN_CASES

    @property
    def call(self) -> str:
        """The headline word every renderer uses."""
        if self.significant:
            return "signal"
        return TOO_FEW if self.too_few else "within noise"

    @property
    def limits(self) -> str | None:
        """Why there is no interval or detectable effect, when there is none."""
        if self.mean_difference is None:
            return None
        if self.too_few:
            return (
                f"{TOO_FEW} how precise it is ({self.cases} shared case(s), fewer than "
                f"{MIN_CASES}): no interval, no detectable effect"
            )
        if self.se == 0:
            return (
                "every case's difference is the same (SE 0): no spread to measure noise "
                "by, so no interval and no detectable effect"
            )
        return None

    def noise_clause(self) -> str:
        """Whether a change is larger than noise, as the diff's headline sentence ends."""
        if self.too_few and not self.significant:
            return (
                f"{TOO_FEW} whether the change in pass rate is larger than noise "
                f"({self.cases} shared case(s), fewer than {MIN_CASES})"
            )
        word = "larger than noise" if self.significant else "within noise"
        if self.exact:
            test = f"exact McNemar {p_text(self.p_value)}"
        else:
            test = f"X^2 = {self.statistic:.2f}, {p_text(self.p_value)}"
        return f"over {self.cases} cases the change in pass rate is {word} ({test})"

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
        if self.limits is not None or self.ci95 is None or self.se is None:
            return f"{mean}; {self.limits}"
        lo, hi = self.ci95
        detectable = (
            f"{self.mde80 * 100:.1f} points"
            if self.mde80 is not None
            else "no change within the scale (100 points)"
        )
        return (
            f"{mean}, 95% [{lo * 100:+.1f}, {hi * 100:+.1f}], SE {self.se * 100:.1f}; "
            f"detectable at 80% power: {detectable}"
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
            "too_few_cases": self.too_few,
            "min_cases": MIN_CASES,
            "limits": self.limits,
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
        if n >= MIN_CASES and se:  # else too few cases, or no spread: `limits` says which
            ci = (max(-1.0, mean - Z95 * se), min(1.0, mean + Z95 * se))
            mde = (Z95 + Z80) * se
            mde = mde if mde <= 1.0 else None  # no difference of rates is larger
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
