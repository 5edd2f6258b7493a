"""A run's rows as columns, each built once in C and shared by the passes that need it.

A verdict on a million rows asks the same questions several times over: the case id
of every row (stability, power, the repeat check), its grade, its seed, how many rows
each case has and whether any (case, seed) repeats. Each answer is one C-level pass
(`map`, `Counter`, `compress`, no Python loop per row and no tuple per row), computed
on first use and kept while the verdict is made.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from itertools import chain, compress, count, islice, repeat
from operator import attrgetter, eq, is_not, lt, not_
from typing import Any

_CASE = attrgetter("case_id")
_SEED = attrgetter("seed")
_PASSED = attrgetter("passed")
_STATUS = attrgetter("status")


# What `lone` says of a column that holds more than one value (or none).
MIXED: Any = object()


def lone(values: list[Any]) -> Any:
    """The one value every entry of a column holds (a pin over a block, a relabelled
    slot's), or MIXED: one C-level `list.count`, faster than a set takes every value."""
    if values and values.count(values[0]) == len(values):
        return values[0]
    return MIXED


def unjudged_rows(rows: Sequence[Any]) -> list[int]:
    """Indices of the cases that were not judged (a status: "error" or "disputed");
    none, in most runs, found in one C pass."""
    statuses = list(map(_STATUS, rows))
    if statuses.count(None) == len(statuses):
        return []
    return list(compress(count(), map(is_not, statuses, repeat(None))))


def judged(rows: Sequence[Any], errors: list[int] | None = None) -> Sequence[Any]:
    """The rows that were judged, pass or fail: every row but the error and disputed
    cases (counted apart; `errors`: their indices, when the caller has them). The rows
    themselves when every one was judged."""
    errors = unjudged_rows(rows) if errors is None else errors
    if not errors:
        return rows
    keep = [True] * len(rows)
    for i in errors:
        keep[i] = False
    return list(compress(rows, keep))


class Columns:
    """Columns of `rows` (anything with case_id, seed and passed), built lazily."""

    def __init__(self, rows: Sequence[Any]) -> None:
        self.rows = rows

    @cached_property
    def case_ids(self) -> list[str]:
        return list(map(_CASE, self.rows))

    @cached_property
    def passed(self) -> list[bool]:
        return list(map(_PASSED, self.rows))

    @cached_property
    def seeds(self) -> list[int | None]:
        return list(map(_SEED, self.rows))

    @cached_property
    def rows_per_case(self) -> Counter[str]:
        """Rows of each case, in first-seen order (a Counter keeps insertion order)."""
        return Counter(self.case_ids)

    @cached_property
    def distinct_cases(self) -> int:
        if "rows_per_case" in self.__dict__:
            return len(self.rows_per_case)
        return len(set(self.case_ids))  # a set costs less than counting

    @cached_property
    def unique_keys(self) -> bool:
        """Whether no (case_id, seed) repeats. Runs list a case's seeds together in
        rising order, which is checked in C without a key tuple per row (a set of a
        million tuples costs more than the rest of a verdict); other orders fall back
        to that set."""
        ids = self.case_ids
        same = list(map(eq, islice(ids, 1, None), ids))  # row i+1 continues row i's case
        heads = list(compress(ids, chain((True,), map(not_, same))))  # each stretch's case
        if len(set(heads)) == len(heads):  # each case's rows are together
            self.__dict__.setdefault("distinct_cases", len(heads))
            seeds = self.seeds
            try:
                if all(map(lt, compress(seeds, same), compress(islice(seeds, 1, None), same))):
                    return True
            except TypeError:  # a seedless record beside seeded ones
                pass
        return len(set(zip(ids, self.seeds, strict=True))) == len(ids)
