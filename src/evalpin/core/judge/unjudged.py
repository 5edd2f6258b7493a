"""Cases a run could not judge, and the verdict's rules on them: errors (no grade at all)
and disputes (plain pytest passed, the witness did not). Both are counted apart, never as
fails or passes, and either keeps a run from a formal claim."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from evalpin.core.columns import unjudged_rows
from evalpin.core.errors import InputError
from evalpin.core.read.rundata import RunFile
from evalpin.core.reasons import is_disputed, is_error
from evalpin.core.records import DISPUTED


def errored_reasons(run: RunFile, at: list[int] | None = None) -> dict[str, int]:
    """Error cases by reason code, most common first (decoded for the error rows only,
    `at`: the unjudged rows, when the caller found them: a run without any decodes
    nothing). Any status but "disputed" is an error."""
    at = unjudged_rows(run.rows) if at is None else at
    at = [i for i in at if run.rows[i].status != DISPUTED]
    if not at:
        return {}
    try:
        records = run.records(at)
    except InputError:
        return {"unknown": len(at)}
    counted: Counter[str] = Counter()
    for rec in records.values():
        counted.update([next((r for r in rec.reasons or () if is_error(r)), "error")])
    return dict(counted.most_common())


@dataclass(frozen=True)
class Disputes:
    """A run's disputed cases: how many, by witness reason, and which cases."""

    count: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    cases: list[str] = field(default_factory=list)


def disputes(run: RunFile, at: list[int] | None = None) -> Disputes:
    """The disputed cases (decoded for those rows only; `at`: the unjudged rows, when
    the caller found them)."""
    at = unjudged_rows(run.rows) if at is None else at
    at = [i for i in at if run.rows[i].status == DISPUTED]
    if not at:
        return Disputes()
    cases = sorted({run.rows[i].case_id for i in at})
    try:
        records = run.records(at)
    except InputError:
        return Disputes(len(at), {"unknown": len(at)}, cases)
    counted: Counter[str] = Counter()
    for rec in records.values():
        counted.update([next((r for r in rec.reasons or () if is_disputed(r)), DISPUTED)])
    return Disputes(len(at), dict(counted.most_common()), cases)


def disputes_rule(dispute: Disputes, check: Callable[..., None], label: str) -> None:
    """Disputed cases (issue 38) keep a run at most `label` (`internal`): plain pytest passed them
    and the witness did not, so the run is not fully graded; the items are named. Shown
    only when there are any."""
    if not dispute.count:
        return
    items = dispute.cases
    shown = ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")
    kinds = ", ".join(f"{k} x{c}" for k, c in list(dispute.reasons.items())[:4])
    why = (
        f"{dispute.count} disputed case(s) on {shown} ({kinds}): plain pytest passed them, "
        "the witness (process isolation) did not; counted apart, not as fails or passes "
        "(evalpin check names items whose tests the witness cannot carry)"
    )
    shown_value = f"{dispute.count} disputed case(s) on {len(items)} item(s): {shown}"
    check("witnessed", False, items, why, label, shown=shown_value)


def errors_rule(
    error_reasons: dict[str, int], check: Callable[..., None], label: str, *, ours: bool = True
) -> None:
    """Errors left (cases that could not be judged) keep a run at most `label` (`internal`): its
    pass rate is over fewer cases than the set holds. Shown only when there are any;
    `ours`: an evalpin run, whose errors `--retry-errors` can ask again."""
    if not error_reasons:
        return
    n = sum(error_reasons.values())
    kinds = ", ".join(f"{k} x{c}" for k, c in list(error_reasons.items())[:4])
    again = (
        "re-ask them (evalpin run --resume --retry-errors) before publishing"
        if ours
        else "re-run them with the tool that made the log before publishing"
    )
    why = f"{n} error case(s) left, not judged ({kinds}): counted apart, not as fails; {again}"
    check("errors", False, n, why, label, shown=f"{n} error case(s): {kinds}")
