"""`diff --markdown`: a compact report for `$GITHUB_STEP_SUMMARY` or a pull-request comment.

The pins table with differences marked, the clustered call, the regressed cases with
their reason codes, drift and fixes folded in <details>, or the refusal and its reasons.
Every untrusted string goes through `escape.md`; the only HTML is this module's own.
"""

from __future__ import annotations

from evalpin.cli.escape import md
from evalpin.core.judge.passk import side_by_side
from evalpin.core.judge.report import REFUSE_LINE, DiffReport, Movement, shown_part
from evalpin.core.read.notes import MARK, sorted_notes

# A step summary holds at most 1 MiB: past these the report says how many it left out.
MAX_ROWS = 200


def _seed(seed: int | None) -> str:
    return "-" if seed is None else str(seed)


def _reasons(reasons: list[str] | None) -> str:
    if reasons is None:
        return "*reasons missing*"
    return ", ".join(md(r) for r in reasons) or "-"


def _value(value: str | None) -> str:
    return "*missing*" if value is None else md(value)


def _pins(report: DiffReport) -> list[str]:
    lines = ["| pin | left | right |", "|---|---|---|"]
    for key, lv, rv, differs in report.pin_rows():
        mark = " **differs**" if differs else ""
        lines.append(f"| {key}{mark} | {_value(lv)} | {_value(rv)} |")
    return lines


def _sides(report: DiffReport) -> list[str]:
    lines = []
    for name, side in (("left", report.left), ("right", report.right)):
        if side is None:
            lines.append(f"- **{name}**: no comparable run")
        else:
            flag = " **(incomplete)**" if side.incomplete else ""
            lines.append(f"- **{name}**: {md(side.path)}: {md(side.label)}{flag}")
    return lines


def _refusal(report: DiffReport) -> list[str]:
    lines = [f"> **{md(REFUSE_LINE)}**", ""]
    choice = report.baseline
    if choice is not None and choice.refused:
        first, moved = choice.said(
            md, lambda kinds: "**" + ", ".join(md(k) for k in kinds) + "**", pin=_pin
        )
        lines += [f"- {first}", *(f"  - {line}" for line in moved)]
    for c in report.prompt_changes:
        lines.append(
            f"- prompt changed: {md(c.key)}: {md(shown_part(c.before))} (left) vs"
            f" {md(shown_part(c.after))} (right)"
        )
    for m in report.mismatches:
        lines.append(f"- {md(m.key)} differs {m.extent}:")
        for lv, rv, n in m.pairs[:3]:
            count = "" if m.whole_run else f", {n} pair{'s' if n != 1 else ''}"
            lines.append(f"  - {md(lv)} (left) vs {md(rv)} (right){count}")
        if len(m.pairs) > 3:
            lines.append(f"  - and {len(m.pairs) - 3} more pairs")
        if m.example is not None:
            case_id, seed = m.example
            lines.append(f"  - first: {md(case_id)} (seed {_seed(seed)})")
    if report.left is not None:
        lines += ["", md(report.refusal_said())]
    return lines


def _pin(value: object) -> str:
    """A pin's value; a pin that was not recorded reads *missing*."""
    return _value(None if value is None else str(value))


def _call(report: DiffReport) -> list[str]:
    counts = ", ".join(f"{n} {kind}" for kind, n in report.counts.items())
    lines = [
        f"Compared {report.compared} (case, {report.repeat_label}) pairs: **{counts}**; "
        f"{len(report.only_left)} only left, {len(report.only_right)} only right.",
        "",
    ]
    lines += [f"**{md(report.headline())}**", ""]
    if report.stats is not None:
        c = report.stats.clustered
        head, _, call = c.headline().rpartition(": ")
        lines.append(f"**Clustered call: {call}** ({head})")
        lines += [f"- {d}" for d in (c.difference_text(), c.needed_text(report.repeat_label)) if d]
        lines += [f"- {line}" for line in side_by_side(report.stats.pass_at_k)]  # our own words
        lines.append("")
    return lines


def _table(moves: list[Movement], with_reasons: bool, label: str = "seed") -> list[str]:
    if with_reasons:
        lines = [f"| case | {label} | left | right |", "|---|---|---|---|"]
    else:
        lines = [f"| case | {label} | completion digest |", "|---|---|---|"]
    for m in moves[:MAX_ROWS]:
        case = md(m.case_id)
        if with_reasons:
            left = f"{m.left_status or 'fail'} " + _reasons(m.left_reasons)
            right = f"{m.right_status or 'fail'} " + _reasons(m.right_reasons)
            if m.right_status == "disputed" and m.right_error:  # what the witness saw
                right += f" ({md(m.right_error[:200])})"
            lines.append(f"| {case} | {_seed(m.seed)} | {left} | {right} |")
        else:
            digests = f"{_value(m.left_digest)} → {_value(m.right_digest)}"
            lines.append(f"| {case} | {_seed(m.seed)} | {digests} |")
    if len(moves) > MAX_ROWS:
        lines += ["", f"... and {len(moves) - MAX_ROWS} more (see `--json` or `--html`)"]
    return lines


def _causes(report: DiffReport) -> list[str]:
    """What moved, by cause: a table of the reasons, tools and tests that came or went."""
    if not report.causes:
        return []
    label = report.repeat_label
    lines = [
        f"### What moved, by cause ({len(report.causes)})",
        "",
        f"| cause | cases | {label}s | first cases |",
        "|---|---|---|---|",
    ]
    for c in report.causes[:MAX_ROWS]:
        first = ", ".join(md(case) for case in c.cases[:3])
        more = f" and {len(c.cases) - 3} more" if len(c.cases) > 3 else ""
        lines.append(f"| {md(c.label)} | {len(c.cases)} | {c.pairs} | {first}{more} |")
    if len(report.causes) > MAX_ROWS:
        lines += ["", f"... and {len(report.causes) - MAX_ROWS} more (see `--json`)"]
    return [*lines, ""]


def _review_notes(report: DiffReport) -> list[str]:
    """The reviewers' notes on the cases listed (`notes.jsonl`), one table row each."""
    notes = sorted_notes(report.review_notes)
    if not notes:
        return []
    lines = [
        f"### Review notes ({len(notes)})",
        "",
        "| case | note | by |",
        "|---|---|---|",
    ]
    for case_id, note in notes[:MAX_ROWS]:
        by = md(note.byline()) or "-"
        lines.append(f"| {MARK} {md(case_id)} | {md(note.summary())} | {by} |")
    if len(notes) > MAX_ROWS:
        lines += ["", f"... and {len(notes) - MAX_ROWS} more (see `--json`)"]
    return [*lines, ""]


def render_markdown(report: DiffReport) -> str:
    """The whole Markdown document."""
    if report.refused:
        title = "refused: instrument changed"
    elif report.nothing is not None:
        title = "nothing compared"
    elif report.counts.get("regressed"):
        title = f"{report.counts['regressed']} regressed"
    elif report.movements:
        title = "moved, no regression"
    else:
        title = "no movement"
    lines = [f"## evalpin diff: {title}", ""]
    lines += [*_sides(report), ""]
    if report.notes:
        lines += [*(f"- note: {md(note)}" for note in report.notes), ""]
    if report.refused:
        lines += [*_refusal(report), ""]
    lines += [*_pins(report), ""]
    if report.refused:
        return "\n".join(lines + _review_notes(report))
    lines += _call(report)
    lines += _causes(report)
    ranked = report.ranked()
    regressed = [m for m in ranked if m.kind == "regressed"]
    fixed = [m for m in ranked if m.kind == "fixed"]
    drift = [m for m in ranked if m.kind == "drift"]
    errored = [m for m in ranked if m.kind == "errored"]
    disputed = [m for m in ranked if m.kind == "disputed"]

    def table(moves: list[Movement], with_reasons: bool) -> list[str]:
        return _table(moves, with_reasons, report.repeat_label)

    recovered = [m for m in ranked if m.kind == "recovered"]
    if regressed:
        lines += [
            f"### Regressed ({len(regressed)})",
            "",
            *table(regressed, True),
            "",
        ]
    if errored:  # judged before, not judged now: an outage is not a regression
        lines += [
            f"### Errored ({len(errored)}: not judged)",
            "",
            *table(errored, True),
            "",
        ]
    if disputed:  # plain pytest passed them, the witness did not: not judged either
        lines += [
            f"### Disputed ({len(disputed)}: plain pytest passed, the witness did not)",
            "",
            *table(disputed, True),
            "",
        ]
    if recovered:
        lines += [
            f"### Recovered ({len(recovered)})",
            "",
            *table(recovered, True),
            "",
        ]
    if fixed or drift:
        lines += [
            "<details>",
            f"<summary>Fixed ({len(fixed)}) and drift ({len(drift)})</summary>",
            "",
        ]
        if fixed:
            lines += [
                f"#### Fixed ({len(fixed)})",
                "",
                *table(fixed, True),
                "",
            ]
        if drift:
            lines += [
                f"#### Drift ({len(drift)})",
                "",
                *table(drift, False),
                "",
            ]
        lines += ["</details>", ""]
    lines += _review_notes(report)
    return "\n".join(lines)
