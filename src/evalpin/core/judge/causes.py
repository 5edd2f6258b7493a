"""What moved, by cause: the reason codes, tools and failing tests that came or went.

When forty cases moved, the reviewer's first question is why, not which. Over every
moved (case, seed) of a comparable pair, this module sets the right side's reasons,
tool calls and failing tests against the left's and groups the differences: `+
missing_text:sorry` on 1 case (3 seeds), `- calls escalate_to_human`, `+ fails
test_refund`. A pair that did not move has the same completion under the same grader,
so it cannot hold a cause: only moved pairs are read, and of those only the three
fields (`RunFile.marks`), so the view is ready at a million records per side.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from evalpin.core.judge.compare import Diff, Moved
from evalpin.core.records import Marks

APPEARED, GONE = "+", "-"
REASON, TOOL, TEST = "reason", "tool", "test"
KINDS = (REASON, TOOL, TEST)
# How each kind reads after its sign: "+ missing_text:sorry", "- calls cancel_order".
_VERB = {REASON: "", TOOL: "calls ", TEST: "fails "}
CHUNK = 2048  # moved pairs read between two calls of `pause`


@dataclass(frozen=True)
class Cause:
    """One difference between the sides, with the moved cases (and pairs) that show it."""

    sign: str  # APPEARED on the right, or GONE from it
    kind: str  # REASON, TOOL or TEST
    name: str  # the reason code, the tool's name, the test's id
    cases: tuple[str, ...]  # case ids, in join order
    pairs: int  # (case, seed) pairs

    @property
    def label(self) -> str:
        return f"{self.sign} {_VERB[self.kind]}{self.name}"

    def describe(self, repeat_label: str = "seed") -> str:
        """`+ missing_text:sorry  1 case (3 seeds)`, as the text and Markdown say it."""
        cases = f"{len(self.cases)} case{'s' * (len(self.cases) != 1)}"
        return f"{self.label}  {cases} ({self.pairs} {repeat_label}{'s' * (self.pairs != 1)})"

    def to_json(self) -> dict[str, Any]:
        return {
            "sign": self.sign,
            "kind": self.kind,
            "name": self.name,
            "label": self.label,
            "cases": list(self.cases),
            "pairs": self.pairs,
        }


# (kind, sign, name) -> (the case ids in join order, [pairs]): what a join's moves show,
# kept plain so that the two halves of a big diff (core/review/halves.py) can each tally theirs.
Tally = dict[tuple[str, str, str], tuple[dict[str, None], list[int]]]


def find_causes(diff: Diff, pause: Callable[[], None] | None = None) -> list[Cause]:
    """Every cause over the pair's moved cases, most cases first within each kind
    (reasons, then tools, then tests). `pause` is called between chunks of reading (the
    review yields to its screen there). A refused pair has no causes: its differences
    are the instrument's."""
    return causes_of(tally_causes(diff, pause))


def causes_of(found: Tally) -> list[Cause]:
    """The causes a tally holds, in the order every output lists them."""
    causes = [
        Cause(sign, kind, name, tuple(cases), count[0])
        for (kind, sign, name), (cases, count) in found.items()
    ]
    order = {kind: i for i, kind in enumerate(KINDS)}
    causes.sort(key=lambda c: (order[c.kind], -len(c.cases), -c.pairs, c.sign, c.name))
    return causes


def merged(first: Tally, second: Tally) -> Tally:
    """Two halves' tallies as one: `first` holds the earlier cases of the join."""
    out: Tally = {key: (dict(cases), list(count)) for key, (cases, count) in first.items()}
    for key, (cases, count) in second.items():
        mine = out.setdefault(key, ({}, [0]))
        mine[0].update(cases)
        mine[1][0] += count[0]
    return out


def tally_causes(diff: Diff, pause: Callable[[], None] | None = None) -> Tally:
    """The differences of every moved pair of `diff`, reading their three fields."""
    found: Tally = {}
    if diff.refused or not diff.moved:
        return found
    for start in range(0, len(diff.moved), CHUNK):
        if pause is not None and start:
            pause()
        chunk = diff.moved[start : start + CHUNK]
        left = diff.left.marks(m.pair.left for m in chunk)
        right = diff.right.marks(m.pair.right for m in chunk)
        for m in chunk:
            _tally(found, m, left[m.pair.left], right[m.pair.right])
    return found


def _tally(
    found: Tally,
    moved: Moved,
    left: Marks,
    right: Marks,
) -> None:
    for kind, before, after in (
        (REASON, left.reasons, right.reasons),
        (TOOL, left.tool_names, right.tool_names),
        (TEST, left.failed_tests, right.failed_tests),
    ):
        was, now = _set(before), _set(after)
        for sign, names in ((APPEARED, now - was), (GONE, was - now)):
            for name in names:
                cases, count = found.setdefault((kind, sign, name), ({}, [0]))
                cases[moved.case_id] = None
                count[0] += 1


def _set(values: Iterable[str] | None) -> set[str]:
    return set(values) if values else set()
