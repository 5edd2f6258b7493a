"""pass@k: the chance that at least one of k samples of a problem passes, estimated
without bias from n >= k samples of which c passed (Chen et al. 2021, "Evaluating Large
Language Models Trained on Code", eq. 1):

    pass@k = 1 - C(n - c, k) / C(n, k)

in the numerically stable product form of the paper's own code, `1 - prod(1 - k / i)`
for i in n-c+1 .. n (1 when n - c < k), averaged over problems. A problem's samples are
its judged records (every seed, repeats included): error and other not-judged cases are
no sample of either kind. pass@k is reported for k in 1, 10, 100 when every problem has
at least k samples (as the benchmark's own harness reports it), and for the largest k
they all have.

Its spread: the standard error of the mean over problems (sample standard deviation of
the per-problem estimates over the square root of their number) and a 95% normal
interval clipped to [0, 1]; with fewer than MIN_CASES problems the interval is not given.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalpin.core.judge.stats import MIN_CASES, Z95, Graded

STANDARD_KS = (1, 10, 100)


def estimate(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one problem: n samples, c of them passing."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@{k} needs 1 <= k <= n and 0 <= c <= n (n={n}, c={c})")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


@dataclass(frozen=True)
class PassAtK:
    """pass@k over problems, with its spread."""

    k: int
    value: float
    problems: int
    min_samples: int
    max_samples: int
    se: float | None
    low: float | None
    high: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "value": self.value,
            "problems": self.problems,
            "samples": {"min": self.min_samples, "max": self.max_samples},
            "se": self.se,
            "ci95": None if self.low is None else [self.low, self.high],
        }

    def describe(self) -> str:
        """`pass@1 62.3% ± 3.1 (164 problems, 3 samples each)`, as every face shows it."""
        spread = "" if self.se is None else f" ± {100 * self.se:.1f}"
        each = (
            f"{self.min_samples} samples each"
            if self.min_samples == self.max_samples
            else f"{self.min_samples}-{self.max_samples} samples"
        )
        return f"pass@{self.k} {100 * self.value:.1f}%{spread} ({self.problems} problems, {each})"


def sample_counts(rows: Iterable[Graded]) -> dict[str, tuple[int, int]]:
    """(samples, passes) of each problem, in first-seen order."""
    samples: Counter[str] = Counter()
    passes: Counter[str] = Counter()
    for row in rows:
        samples[row.case_id] += 1
        passes[row.case_id] += bool(row.passed)
    return {case: (n, passes[case]) for case, n in samples.items()}


def pass_at_k(counts: dict[str, tuple[int, int]], ks: Iterable[int] | None = None) -> list[PassAtK]:
    """pass@k for each k of `ks` (default: STANDARD_KS that every problem has samples
    for, and the largest such k) over problems' (samples, passes)."""
    if not counts:
        return []
    sizes = [n for n, _ in counts.values()]
    least = min(sizes)
    if ks is None:
        ks = [k for k in STANDARD_KS if k <= least] + ([least] if least not in STANDARD_KS else [])
    found = []
    for k in sorted(set(ks)):
        if k > least or k < 1:
            continue
        values = [estimate(n, c, k) for n, c in counts.values()]
        found.append(_summary(k, values, least, max(sizes)))
    return found


def _summary(k: int, values: list[float], least: int, most: int) -> PassAtK:
    m = len(values)
    mean = math.fsum(values) / m
    se = low = high = None
    if m > 1:
        var = math.fsum((v - mean) ** 2 for v in values) / (m - 1)
        se = math.sqrt(var / m)
        if m >= MIN_CASES:
            low, high = max(0.0, mean - Z95 * se), min(1.0, mean + Z95 * se)
    return PassAtK(k, mean, m, least, most, se, low, high)


def side_by_side(sides: dict[str, list[PassAtK]]) -> list[str]:
    """One line per k for a comparison: `pass@1 left 62.3% ± 3.1, right 65.0% ± 3.0
    (164 problems)`, as diff's faces show it."""
    right = {p.k: p for p in sides.get("right", [])}
    lines = []
    for p in sides.get("left", []):
        q = right.get(p.k)
        if q is None:
            continue
        lines.append(f"pass@{p.k} left {_pct(p)}, right {_pct(q)} ({p.problems} problems)")
    return lines


def _pct(p: PassAtK) -> str:
    return f"{100 * p.value:.1f}%" + ("" if p.se is None else f" ± {100 * p.se:.1f}")
