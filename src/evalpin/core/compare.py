"""Joining two runs on (case_id, seed) and refusing comparisons that do not hold.

Two results are comparable only when their triples (fixture hash, grader version, model
slot) are identical, and a slot label whose provider-reported model differs is a
re-pointed alias, not the same instrument. A missing pin is never equal to anything: a
triple that cannot be established cannot be shown identical. When any common case
fails the check the whole comparison is refused; the per-case picture survives only as
a `backend_delta`, never as regressions or fixes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from evalpin.core.records import CaseRow
from evalpin.core.runfile import TRIPLE, RunFile

REGRESSED, FIXED, DRIFT = "regressed", "fixed", "drift"
KINDS = (REGRESSED, FIXED, DRIFT)
PIN_KEYS = (*TRIPLE, "reported_model")
MISSING = "<missing>"

Key = tuple[str, int | None]


@dataclass(frozen=True)
class Moved:
    """A comparable case whose grade flipped or whose completion moved."""

    case_id: str
    seed: int | None
    kind: str
    left: CaseRow
    right: CaseRow

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "seed": self.seed,
            "left_pass": self.left.passed,
            "right_pass": self.right.passed,
            "left_reasons": self.left.reasons,
            "right_reasons": self.right.reasons,
            "left_digest": self.left.completion_digest,
            "right_digest": self.right.completion_digest,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class KeyMismatch:
    """One pin key that differs: how many cases, and the distinct left/right pairs."""

    key: str
    cases: int
    pairs: list[tuple[str, str, int]]  # (left value, right value, cases), most common first
    example: Key


@dataclass
class Diff:
    """The outcome of joining two runs."""

    compared: int
    moved: list[Moved] = field(default_factory=list)
    mismatched: list[tuple[Key, CaseRow, CaseRow]] = field(default_factory=list)
    only_left: list[Key] = field(default_factory=list)
    only_right: list[Key] = field(default_factory=list)
    common: list[tuple[Key, CaseRow, CaseRow]] = field(default_factory=list, repr=False)
    duplicates: int = 0

    @property
    def refused(self) -> bool:
        return bool(self.mismatched)

    def counts(self) -> dict[str, int]:
        found = Counter(m.kind for m in self.moved)
        return {kind: found.get(kind, 0) for kind in KINDS}

    def key_mismatches(self) -> list[KeyMismatch]:
        """Mismatches grouped per pin key, for the refusal message."""
        out = []
        for key in PIN_KEYS:
            pairs: Counter[tuple[str, str]] = Counter()
            example: Key | None = None
            for case_key, left, right in self.mismatched:
                lv, rv = _pin(left, key), _pin(right, key)
                if not _pins_equal(key, lv, rv):
                    pairs[(_show(lv), _show(rv))] += 1
                    example = example or case_key
            if pairs and example is not None:
                ranked = [(lv, rv, n) for (lv, rv), n in pairs.most_common()]
                out.append(KeyMismatch(key, sum(pairs.values()), ranked, example))
        return out

    def backend_delta(self) -> list[dict[str, Any]]:
        """Every common case, left beside right, labelled `backend_delta` only."""
        rows = []
        for (case_id, seed), left, right in self.common:
            rows.append(
                {
                    "case_id": case_id,
                    "seed": seed,
                    "label": "backend_delta",
                    "differs": left.passed != right.passed,
                    "left_pass": left.passed,
                    "right_pass": right.passed,
                    "left_reasons": left.reasons,
                    "right_reasons": right.reasons,
                    "left_model": left.reported_model,
                    "right_model": right.reported_model,
                }
            )
        return rows


def _pin(row: CaseRow, key: str) -> str | None:
    return getattr(row, key)


def _pins_equal(key: str, left: str | None, right: str | None) -> bool:
    if key == "reported_model":
        # A case with no completion reports no model; only two reports can disagree.
        return left is None or right is None or left == right
    return left is not None and left == right


def _show(value: str | None) -> str:
    return MISSING if value is None else value


def index_rows(rows: list[CaseRow]) -> tuple[dict[Key, CaseRow], int]:
    """Rows keyed by (case_id, seed); the last record of a repeated key wins."""
    keyed = {(r.case_id, r.seed): r for r in rows}
    return keyed, len(rows) - len(keyed)


def compare(left: RunFile, right: RunFile) -> Diff:
    """Join on (case_id, seed), check every common case's pins, classify movement."""
    lrows, ldup = index_rows(left.rows)
    rrows, rdup = index_rows(right.rows)
    diff = Diff(compared=0, duplicates=ldup + rdup)
    common = diff.common
    for key, lrow in lrows.items():
        rrow = rrows.get(key)
        if rrow is None:
            diff.only_left.append(key)
            continue
        common.append((key, lrow, rrow))
        if (
            lrow.fixture_hash is None
            or lrow.fixture_hash != rrow.fixture_hash
            or lrow.grader_version is None
            or lrow.grader_version != rrow.grader_version
            or lrow.model_slot is None
            or lrow.model_slot != rrow.model_slot
            or not _pins_equal("reported_model", lrow.reported_model, rrow.reported_model)
        ):
            diff.mismatched.append((key, lrow, rrow))
    diff.only_right = [key for key in rrows if key not in lrows]
    diff.compared = len(common)
    if diff.refused:
        return diff
    for (case_id, seed), lrow, rrow in common:
        if lrow.passed != rrow.passed:
            kind = REGRESSED if lrow.passed else FIXED
        elif (
            lrow.completion_digest is not None
            and rrow.completion_digest is not None
            and lrow.completion_digest != rrow.completion_digest
        ):
            kind = DRIFT
        else:
            continue
        diff.moved.append(Moved(case_id, seed, kind, lrow, rrow))
    return diff


def mismatch_json(diff: Diff) -> list[dict[str, Any]]:
    """Per-case mismatches in the `diff --json` shape."""
    return [
        {
            "case_id": case_id,
            "seed": seed,
            "left": {k: _pin(left, k) for k in PIN_KEYS},
            "right": {k: _pin(right, k) for k in PIN_KEYS},
        }
        for (case_id, seed), left, right in diff.mismatched
    ]
