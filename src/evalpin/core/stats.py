"""Pass rates across seeds: per seed, spread, and the cases that flip between seeds."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from evalpin.core.records import CaseRow


def pass_rate(rows: Iterable[CaseRow]) -> float | None:
    total = passed = 0
    for row in rows:
        total += 1
        passed += row.passed
    return passed / total if total else None


def pass_rate_by_seed(rows: Iterable[CaseRow]) -> dict[int | None, float]:
    """Pass rate for each seed, in seed order (None, a seedless record, first)."""
    totals: dict[int | None, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        t = totals[row.seed]
        t[0] += row.passed
        t[1] += 1
    order = sorted(totals, key=lambda s: (s is not None, s or 0))
    return {seed: totals[seed][0] / totals[seed][1] for seed in order}


def spread(rates: dict[int | None, float]) -> float:
    """Largest minus smallest per-seed pass rate; 0 with fewer than two seeds."""
    values = list(rates.values())
    return max(values) - min(values) if len(values) > 1 else 0.0


def flaky_cases(rows: Iterable[CaseRow]) -> list[str]:
    """Case ids that pass on some seeds and fail on others, in first-seen order."""
    outcomes: dict[str, set[bool]] = {}
    for row in rows:
        outcomes.setdefault(row.case_id, set()).add(row.passed)
    return [case_id for case_id, seen in outcomes.items() if len(seen) == 2]
