"""Honest numbers beside every score: pass rates with their intervals, and stability
across seeds.

Pure Python (`math` only), so the core stays light.

**Wilson 95% interval** for a pass rate (Wilson 1927; Newcombe 1998, method 3): unlike
the textbook `p ± 1.96·sqrt(p(1-p)/n)` it stays inside [0, 1] and keeps its coverage
near 0 and 1, where pass rates of good models live.

Stability across seeds: a case that passed on every seed it ran (two or more) is a stable
pass, one that failed on every seed a stable fail, one that did both is flaky; the flip
rate is flaky / (stable pass + stable fail + flaky). A case seen on one seed only with
one grade has not had the chance to flip and is counted apart (`single_seed`).

The paired tests of two runs on the cases they share are in `mcnemar.py` (exact and
clustered McNemar, the flips and cases needed) and `paired.py` (a comparison's tests,
from its moves and its shared rows).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, gt, itemgetter, not_
from typing import Any, Protocol

from evalpin.core.columns import Columns

ALPHA = 0.05
Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal
Z80 = 0.8416212335729143  # the 80th percentile: 80% power
# Cases below which a normal-approximation interval or detectable effect means nothing
# (sd over a handful of cases is itself a guess): the paired call and `power` then say
# "too few cases to say" (mcnemar.py's docstring).
MIN_CASES = 10
TOO_FEW = "too few cases to say"

Seed = int | None


class Graded(Protocol):
    """Anything with a case id, a seed and a grade (a CaseRow or a CaseRecord)."""

    case_id: str
    seed: int | None
    passed: bool


_CASE_SEED = attrgetter("case_id", "seed")


def seed_order(seed: Seed) -> tuple[bool, int]:
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
    return {s: (passes[s], totals[s]) for s in sorted(totals, key=seed_order)}


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
