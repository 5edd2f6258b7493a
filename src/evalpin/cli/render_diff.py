"""Terminal text for `evalpin diff`: the refusal, or the moves with their reasons.

Reads a finished `DiffReport` only; nothing here asks the core for more."""

from __future__ import annotations

from pathlib import Path

from evalpin.cli.console import console, rate_text, reasons_text, seed_text, text
from evalpin.core.judge.causes import APPEARED, TOOL, Cause
from evalpin.core.judge.compare import PIN_LABELS, probes_differ
from evalpin.core.judge.mcnemar import p_text
from evalpin.core.judge.paired import PairedStats
from evalpin.core.judge.passk import side_by_side
from evalpin.core.judge.report import REFUSE_LINE, BaselineChoice, DiffReport, shown_part
from evalpin.core.read.notes import MARK, sorted_notes
from evalpin.core.sanitize import inert_line

_KIND_STYLE = {
    "regressed": "bold red",
    "fixed": "bold green",
    "drift": "yellow",
    "errored": "bold magenta",
    "disputed": "bold magenta",
    "recovered": "magenta",
}
_STATUS_STYLE = {"pass": "green", "fail": "red", "error": "bold magenta", "disputed": "magenta"}
# The headline sentence's colour, by the exit code it states.
_HEADLINE_STYLE = {0: "green", 1: "bold red", 4: "bold yellow"}


def _print_sides(out, report: DiffReport) -> None:
    for name, side in (("left ", report.left), ("right", report.right)):
        if side is None:
            out.print(text((name, "bold"), "  ", ("no comparable run", "bold yellow")))
            continue
        out.print(
            text(
                (name, "bold"),
                "  ",
                inert_line(side.path),
                "  ",
                (inert_line(side.label), "bold yellow" if side.incomplete else "dim"),
            )
        )


def _print_baseline(out, choice: BaselineChoice) -> None:
    """Why `--baseline` found nothing comparable: what changed since the last run."""
    if choice.last_on_fixtures is None:
        out.print(
            text(
                "  no earlier run on these fixtures in ",
                inert_line(choice.folder),
                ": nothing to compare with",
            )
        )
        return
    out.print(
        text(
            "  no earlier run in ",
            inert_line(choice.folder),
            " on the same instrument; since the last run on these fixtures: ",
            (", ".join(choice.kinds), "bold red"),
        )
    )
    for c in choice.changes:
        out.print(
            text(
                f"  {inert_line(c.key)}: ",
                (inert_line(str(c.before)), "red"),
                " (last) vs ",
                (inert_line(str(c.after)), "red"),
                " (this run)",
            )
        )


def print_refusal(report: DiffReport, artifact: Path | None) -> None:
    out = console()
    out.print(text((REFUSE_LINE, "bold red")))
    label = report.repeat_label
    if report.baseline is not None and report.baseline.refused:
        _print_baseline(out, report.baseline)
    print_prompt_changes(out, report)
    for m in report.mismatches:
        lv, rv, n = m.pairs[0]
        name = PIN_LABELS.get(m.key, m.key)
        if probes_differ(m):
            out.print(text(("  backend changed under its label: probes differ", "bold red")))
        if m.example is None or (len(m.pairs) == 1 and m.key != "fixture_hash"):
            out.print(
                text(
                    f"  {name}: ",
                    (inert_line(lv), "red"),
                    " (left) vs ",
                    (inert_line(rv), "red"),
                    f" (right) {m.extent}",
                )
            )
            continue
        case_id, seed = m.example
        out.print(
            text(
                f"  {name}: differs {m.extent}, e.g. ",
                inert_line(case_id),
                f" ({seed_text(seed, label)})",
            )
        )
        for lv, rv, n in m.pairs[:3]:
            out.print(
                text("    ", (inert_line(lv), "red"), " vs ", (inert_line(rv), "red"), f" ({n})")
            )
        if len(m.pairs) > 3:
            out.print(text(f"    and {len(m.pairs) - 3} more pairs"))
    _print_sides(out, report)
    for note in report.notes:
        out.print(text((f"note: {note}", "yellow")))
    print_review_notes(out, report)
    if report.left is None:
        return
    out.print(text(report.refusal_said()))
    if artifact is not None:
        out.print(text("backend delta written to ", inert_line(str(artifact))))
    else:
        out.print(
            text(("To study it anyway: evalpin diff LEFT RIGHT --artifact delta.json", "dim"))
        )


def print_prompt_changes(out, report: DiffReport) -> None:
    """What the user changed in the prompt, named (few-shot count, chat template, system
    instruction, solver chain): said before the pins it moved."""
    for c in report.prompt_changes:
        out.print(
            text(
                ("  prompt changed: ", "bold red"),
                f"{inert_line(c.key)}: ",
                (inert_line(shown_part(c.before)), "red"),
                " (left) vs ",
                (inert_line(shown_part(c.after)), "red"),
                " (right)",
            )
        )


def _print_paired(out, paired: PairedStats | None, label: str = "seed") -> None:
    """The clustered call over cases (signal, within noise, or too few cases to say), its
    paired difference and the whole cases it would take; then, as detail, the rates with
    intervals and the exact McNemar over (case, seed) pairs, pooled and per seed."""
    if paired is None:
        return
    c = paired.clustered
    worse = c.regressed_cases > c.fixed_cases
    style = ("bold red" if worse else "bold green") if c.significant else "yellow"
    head, _, call = c.headline().rpartition(": ")
    out.print(text(("cases      ", "dim"), head, ": ", (call, style)))
    for detail in (c.difference_text(), c.needed_text(label)):
        if detail:
            out.print(text(("           ", "dim"), detail))
    p = paired.pooled
    out.print(
        text(
            ("pass rate  ", "dim"),
            f"left {rate_text(p.left)}  right {rate_text(p.right)}  "
            f"on {p.shared} shared (case, {label}) pairs, 95% Wilson",
        )
    )
    out.print(
        text(
            ("pairs      ", "dim"),
            f"{p.regressed} regressed, {p.fixed} fixed: exact McNemar {p_text(p.p_value)} "
            f"(detail: counts {label}s as independent pairs)",
        )
    )
    for n, line in enumerate(side_by_side(paired.pass_at_k)):
        out.print(text(("pass@k     " if n == 0 else "           ", "dim"), line))
    if len(paired.by_seed) > 1:
        for seed, s in paired.by_seed.items():
            out.print(
                text(
                    (f"  {seed_text(seed, label):<8} ", "dim"),
                    f"left {rate_text(s.left)}  right {rate_text(s.right)}  "
                    f"{s.regressed} regressed, {s.fixed} fixed, {p_text(s.p_value)}",
                )
            )


CASES_NAMED = 3  # case ids named on a cause's line
NOTES_NAMED = 50  # review notes listed before "and N more"


def print_review_notes(out, report: DiffReport) -> None:
    """The reviewers' notes on the cases listed (`notes.jsonl`): one inert line each."""
    notes = sorted_notes(report.review_notes)
    if not notes:
        return
    out.print(text((f"review notes ({len(notes)}):", "bold")))
    for case_id, note in notes[:NOTES_NAMED]:
        by = note.byline()
        out.print(
            text(
                f"  {MARK} ",
                inert_line(case_id),
                "  ",
                (inert_line(note.summary())[:300], "cyan"),
                (f"  ({inert_line(by)})" if by else "", "dim"),
            )
        )
    if len(notes) > NOTES_NAMED:
        out.print(text(f"  ... and {len(notes) - NOTES_NAMED} more (--json for all)"))


def _cause_style(cause: Cause) -> str:
    """A reason or failing test that appeared is worse, one that went is better; a tool
    call that came or went is neither by itself."""
    if cause.kind == TOOL:
        return "yellow"
    return "red" if cause.sign == APPEARED else "green"


def print_causes(out, causes: list[Cause], label: str, limit: int) -> None:
    """What moved, by cause: one line each, with its counts and its first cases."""
    if not causes:
        return
    out.print(text(("what moved, by cause:", "bold")))
    shown = causes if limit <= 0 else causes[:limit]
    for cause in shown:
        named = ", ".join(inert_line(c) for c in cause.cases[:CASES_NAMED])
        more = (
            f" and {len(cause.cases) - CASES_NAMED} more" if len(cause.cases) > CASES_NAMED else ""
        )
        out.print(
            text(
                "  ",
                (inert_line(cause.label), _cause_style(cause)),
                (cause.describe(label)[len(cause.label) :], "bold"),
                ("  " + named + more, "dim"),
            )
        )
    if len(shown) < len(causes):
        out.print(text(f"  ... and {len(causes) - len(shown)} more causes (--json for all)"))


def print_diff(report: DiffReport, limit: int) -> None:
    out = console()
    label = report.repeat_label
    if report.baseline is not None:
        out.print(text(("baseline   ", "dim"), inert_line(report.baseline.chosen or "")))
    _print_sides(out, report)
    counts = report.counts
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    out.print(
        text(
            f"compared {report.compared} (case, {label}) pairs: ",
            (summary, "bold"),
            f"; {len(report.only_left)} only left, {len(report.only_right)} only right",
        )
    )
    for note in report.notes:
        out.print(text((f"note: {note}", "yellow")))
    if report.duplicates:
        out.print(
            text((f"note: {report.duplicates} repeated (case, seed) records; last kept", "yellow"))
        )
    out.print(text(("headline   ", "dim"), (report.headline(), _HEADLINE_STYLE[report.exit_code])))
    _print_paired(out, report.stats, label)
    print_causes(out, report.causes, label, limit)
    ranked = report.ranked()
    shown = ranked if limit <= 0 else ranked[:limit]
    for m in shown:
        out.print(
            text(
                (f"{m.kind.upper():<10}", _KIND_STYLE[m.kind]),
                inert_line(m.case_id),
                f"  {seed_text(m.seed, label)}",
            )
        )
        if m.kind == "drift":
            out.print(
                text(
                    f"    {m.digest_kind} ",
                    inert_line(m.left_digest or ""),
                    " -> ",
                    inert_line(m.right_digest or ""),
                    f"  (both {m.left_status})",
                )
            )
            if m.left_reasons != m.right_reasons:  # a move between failing values: P -> I
                out.print(
                    text(
                        "    ",
                        reasons_text(m.left_reasons),
                        " -> ",
                        reasons_text(m.right_reasons),
                    )
                )
            continue
        for name, status, why, error in (
            ("left ", m.left_status, m.left_reasons, m.left_error),
            ("right", m.right_status, m.right_reasons, m.right_error),
        ):
            row = text(f"    {name} ", (status, _STATUS_STYLE[status]), "  ", reasons_text(why))
            if error:
                row.append_text(text(("  ", "dim"), (inert_line(error)[:300], "dim")))
            out.print(row)
    if len(shown) < len(ranked):
        out.print(text(f"... and {len(ranked) - len(shown)} more (--limit 0 or --json for all)"))
    for name, keys in (("only left", report.only_left), ("only right", report.only_right)):
        if keys:
            listed = ", ".join(f"{inert_line(c)} ({seed_text(s, label)})" for c, s in keys[:10])
            more = f" and {len(keys) - 10} more" if len(keys) > 10 else ""
            out.print(text((f"{name}: ", "bold"), listed + more))
    print_review_notes(out, report)
