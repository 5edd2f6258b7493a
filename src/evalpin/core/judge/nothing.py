"""Why a comparison whose pins agree compared nothing, in words that say what happened:
a side without cases, no shared (case, seed), or shared pairs none of which was judged
on both sides, counted by what kept them unjudged (ungraded is not errored)."""

from __future__ import annotations

from evalpin.core.errors import InputError
from evalpin.core.judge.compare import Diff
from evalpin.core.reasons import LOG_ERROR


def nothing_compared(diff: Diff, label: str) -> str:
    """Why a comparison whose pins agree compared nothing: a side without cases, no
    shared (case, seed), or shared pairs none of which was judged on both sides."""
    lrows, rrows = len(diff.left.rows), len(diff.right.rows)
    if not lrows or not rrows:
        sides = [name for name, n in (("left", lrows), ("right", rrows)) if not n]
        return f"the {' and '.join(sides)} run{'s have' if len(sides) > 1 else ' has'} no cases"
    if not diff.compared:
        return (
            f"the runs share no (case, {label}): {len(diff.only_left)} only left, "
            f"{len(diff.only_right)} only right"
        )
    return (
        f"none of the {diff.compared} shared (case, {label}) pairs was judged on both sides "
        f"({unjudged_kinds(diff)})"
    )


# Decoded at most this many unjudged rows a side to name what they are.
_KINDS_LOOKED_AT = 2000
UNSCORED = LOG_ERROR("unscored")


def unjudged_kinds(diff: Diff) -> str:
    """What kept the common pairs from being judged, counted by kind over both sides'
    unjudged rows: `ungraded` (the log records no score for them: a predict-only run,
    `log_error:unscored`), `error`, `disputed`. Ungraded is not errored."""
    counted: dict[str, int] = {}
    for run, at in ((diff.left, diff.common_left), (diff.right, diff.common_right)):
        unjudged = [i for i in at if run.rows[i].status is not None][:_KINDS_LOOKED_AT]
        try:
            records = run.records(unjudged)
        except InputError:
            records = {}
        for i in unjudged:
            row, rec = run.rows[i], records.get(i)
            kind = "disputed" if row.disputed else "error"
            if kind == "error" and rec is not None and UNSCORED in (rec.reasons or ()):
                kind = "ungraded"
            counted[kind] = counted.get(kind, 0) + 1
    if set(counted) == {"ungraded"}:
        return (
            "ungraded, not errored: the logs record no score for them (a predict-only run),"
            " so nothing was graded to compare"
        )
    words = {"ungraded": "ungraded (no score recorded)", "error": "error", "disputed": "disputed"}
    kinds = ", ".join(f"{n:,} {words[k]}" for k, n in counted.items())
    return f"unjudged on one side or both, {kinds}: nothing was graded to compare"
