"""Power for planning: how many cases (and seeds) a comparison needs, from one run.

Miller (2024), "Adding Error Bars to Evals", sec. 5: to detect a true difference `delta`
between two models with power 1 - beta at two-sided level alpha, on n cases each run K
times,

    n = (z_{alpha/2} + z_beta)^2 (omega^2 + sigma^2 / K) / delta^2

where omega^2 is the variance between cases and sigma^2 the variance within a case,
across its seeds. Here alpha = 0.05 and power 80%, so the factor is (1.959964 +
0.841621)^2 = 7.85. The estimators, from one run's records (every record of a case
counts as one of its K_k draws):

- p_k: case k's pass rate over its K_k records.
- sigma^2 = mean over the cases with K_k >= 2 of K_k / (K_k - 1) * p_k (1 - p_k): each
  case's unbiased variance of a 0/1 grade across its seeds. With one record a case it
  cannot be told apart from omega^2; it is then reported as None and taken as 0, and
  the whole variance of the case pass rates stands as omega^2 (so more seeds cannot be
  shown to help).
- omega^2 = max(0, s^2 - sigma^2 * mean_k(1 / K_k)), with s^2 the sample variance (n - 1)
  of the p_k: the method-of-moments estimate (one-way random effects), since
  Var(p_k) = omega^2 + sigma^2 / K_k.
- One run stands for both sides of the future comparison: its omega^2 is used as the
  variance of per-case differences. That is conservative for two models that agree on
  most cases (their per-case differences vary less than their pass rates do).

The smallest drop this run can detect as it is: delta = 2.8016 * sqrt((omega^2 +
sigma^2 * mean(1 / K_k)) / n), that is 2.8016 * s / sqrt(n) when the estimate of omega^2
is not clipped. With no variance at all (every case gave the same grade on every seed)
the run cannot estimate the noise, and both numbers are None. With fewer than
`MIN_CASES` cases the variance between cases is itself a guess: the detectable drop is
None too, "too few cases to say" (the cases needed are still planned from it).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

from evalpin.core.columns import Columns
from evalpin.core.judge.stats import MIN_CASES, TOO_FEW, Z80, Z95, Graded

DEFAULT_DROP = 0.02
FACTOR = (Z95 + Z80) ** 2  # alpha 0.05 two-sided, power 80%
SEED_PLANS = (1, 3, 5, 10)  # seed counts shown beside the one asked for


@dataclass(frozen=True)
class Power:
    """One run's variance components and what they imply for a comparison."""

    cases: int
    seeds: int  # distinct seeds in the run (a seedless record counts as one)
    omega2: float | None  # between cases; None with fewer than two cases
    sigma2: float | None  # within a case, across seeds; None when no case repeats
    mean_inverse_seeds: float  # mean over cases of 1 / K_k
    drop: float
    plan_seeds: int
    needed: dict[int, int | None] = field(default_factory=dict)  # K -> cases
    # Records left out as not judged (error and disputed cases): never a fail here.
    unjudged: int = 0

    @property
    def variance(self) -> float | None:
        """omega^2 + sigma^2 / K_k as this run has it (None: not estimable)."""
        if self.omega2 is None:
            return None
        return self.omega2 + (self.sigma2 or 0.0) * self.mean_inverse_seeds

    @property
    def mde80(self) -> float | None:
        """The smallest true drop this run, as it is, detects with 80% power."""
        v = self.variance
        if v is None or v <= 0:
            return None
        return math.sqrt(FACTOR * v / self.cases)

    @property
    def too_few(self) -> bool:
        """Fewer cases than `MIN_CASES`: the detectable drop is not reported."""
        return self.cases < MIN_CASES

    @property
    def cases_needed(self) -> int | None:
        return self.needed.get(self.plan_seeds)

    def why_not(self) -> str:
        """Why there is no detectable drop to report (empty when there is one)."""
        if self.cases == 0:
            if self.unjudged:
                return (
                    f"nothing judged: all {self.unjudged:,} case record(s) are error or "
                    "disputed cases, neither a pass nor a fail"
                )
            return "no cases"
        if self.omega2 is None:
            return "one case: no variance between cases"
        if self.too_few:
            return f"{TOO_FEW}: {self.cases} cases, fewer than {MIN_CASES}"
        if self.mde80 is None:
            return "every case gave the same grade on every seed: no variance observed"
        return ""

    def mde_text(self) -> str:
        """The one line `verdict` and the verdict screen show."""
        mde = self.mde80
        if mde is None or self.too_few:  # past the floor, a 0/1 grade's mde is under 0.5
            return f"this run cannot estimate its noise: {self.why_not()}"
        return (
            f"this run can detect drops of {mde * 100:.1f} points or more "
            f"(80% power, alpha 0.05, {self.cases} cases)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": 0.05,
            "power": 0.8,
            "cases": self.cases,
            "seeds": self.seeds,
            "omega2": self.omega2,
            "sigma2": self.sigma2,
            "mde80": None if self.too_few else self.mde80,
            "too_few_cases": self.too_few,
            "drop": self.drop,
            "unjudged": self.unjudged,
            "plan_seeds": self.plan_seeds,
            "cases_needed": self.cases_needed,
            "by_seeds": [{"seeds": k, "cases_needed": n} for k, n in self.needed.items()],
        }


def cases_for(omega2: float, sigma2: float, seeds: int, drop: float) -> int | None:
    """Miller's n for a drop `drop` at K = `seeds`; None when the variance is 0 (nothing
    observed to plan from)."""
    if drop <= 0 or seeds < 1:
        raise ValueError("the drop must be above 0 and the seeds at least 1")
    variance = omega2 + sigma2 / seeds
    if variance <= 0:
        return None
    return max(2, math.ceil(FACTOR * variance / (drop * drop) - 1e-9))


def power(
    rows: Sequence[Graded],
    drop: float = DEFAULT_DROP,
    seeds: int | None = None,
    columns: Columns | None = None,
) -> Power:
    """Variance components of one run and the cases needed to detect `drop` with K =
    `seeds` (default: the run's seed count), plus the SEED_PLANS for comparison.
    `columns`: the rows' own, when the caller has them (the verdict)."""
    if not 0 < drop <= 1:
        raise ValueError(f"the drop is a pass-rate difference in (0, 1], not {drop}")
    if seeds is not None and seeds < 1:
        raise ValueError("seeds must be at least 1")
    cols = columns or Columns(rows)
    totals = cols.rows_per_case
    passes = Counter(compress(cols.case_ids, cols.passed))
    run_seeds = max(1, len(set(cols.seeds)))
    plan = seeds or run_seeds
    n = len(totals)
    # Cases share few (records, passes) shapes (3 seeds: four), so the sums run over
    # shapes counted in C, not over 30k cases in Python.
    shapes = Counter(zip(totals.values(), map(passes.__getitem__, totals), strict=True))
    within = repeated = 0.0
    rate_sum = inverse = 0.0
    for (k, x), count in shapes.items():
        p = x / k
        rate_sum += count * p
        inverse += count / k
        if k > 1:
            within += count * k / (k - 1) * p * (1 - p)
            repeated += count
    sigma2 = within / repeated if repeated else None
    omega2 = None
    if n > 1:
        mean = rate_sum / n
        s2 = math.fsum(c * (x / k - mean) ** 2 for (k, x), c in shapes.items()) / (n - 1)
        omega2 = max(0.0, s2 - (sigma2 or 0.0) * inverse / n)
    needed: dict[int, int | None] = {}
    if omega2 is not None:
        for k in sorted({*SEED_PLANS, plan}):
            needed[k] = cases_for(omega2, sigma2 or 0.0, k, drop)
    return Power(
        cases=n,
        seeds=run_seeds,
        omega2=omega2,
        sigma2=sigma2,
        mean_inverse_seeds=inverse / n if n else 1.0,
        drop=drop,
        plan_seeds=plan,
        needed=needed,
    )
