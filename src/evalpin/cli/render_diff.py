"""Terminal text for `evalpin diff`: the refusal, or the moves with their reasons."""

from __future__ import annotations

from pathlib import Path

from evalpin.cli.console import console, rate_text, reasons_text, seed_text, text
from evalpin.core.compare import PIN_LABELS, row_digest
from evalpin.core.sanitize import inert_line

_KIND_STYLE = {"regressed": "bold red", "fixed": "bold green", "drift": "yellow"}


def _print_sides(out, lrun, rrun) -> None:
    for name, run in (("left ", lrun), ("right", rrun)):
        incomplete = run.complete is False or run.torn
        out.print(
            text(
                (name, "bold"),
                "  ",
                inert_line(run.path),
                "  ",
                (inert_line(run.label()), "bold yellow" if incomplete else "dim"),
            )
        )


def print_refusal(refuse_line: str, diff, lrun, rrun, artifact: Path | None) -> None:
    out = console()
    out.print(text((refuse_line, "bold red")))
    for m in diff.key_mismatches():
        lv, rv, n = m.pairs[0]
        name = PIN_LABELS.get(m.key, m.key)
        if len(m.pairs) == 1 and m.key != "fixture_hash":
            out.print(
                text(
                    f"  {name}: ",
                    (inert_line(lv), "red"),
                    " (left) vs ",
                    (inert_line(rv), "red"),
                    f" (right) on {m.cases} case(s)",
                )
            )
            continue
        case_id, seed = m.example
        out.print(text(f"  {name}: differs on {m.cases} case(s), e.g. "))
        for lv, rv, n in m.pairs[:3]:
            out.print(
                text("    ", (inert_line(lv), "red"), " vs ", (inert_line(rv), "red"), f" ({n})")
            )
        if len(m.pairs) > 3:
            out.print(text(f"    and {len(m.pairs) - 3} more pairs"))
        out.print(text(f"    first: {inert_line(case_id)} ({seed_text(seed, lrun.repeat_label)})"))
    _print_sides(out, lrun, rrun)
    out.print(
        text(
            f"{diff.compared} common case(s) were measured with different instruments: a change "
            "between them is a backend delta, not a prompt regression."
        )
    )
    if artifact is not None:
        out.print(text("backend delta written to ", inert_line(str(artifact))))
    else:
        out.print(
            text(("To study it anyway: evalpin diff LEFT RIGHT --artifact delta.json", "dim"))
        )


def _print_paired(out, diff) -> None:
    """The clustered call over cases first (the headline: signal or within noise), its
    paired difference and the whole cases it would take; then, as detail, the rates with
    intervals and the exact McNemar over (case, seed) pairs, pooled and per seed."""
    from evalpin.core.stats import p_text, paired_stats

    paired = paired_stats(diff)
    if paired is None:
        return
    c = paired.clustered
    worse = c.regressed_cases > c.fixed_cases
    style = ("bold red" if worse else "bold green") if c.significant else "yellow"
    head, _, call = c.headline().rpartition(": ")
    out.print(text(("headline   ", "dim"), head, ": ", (call, style)))
    for detail in (c.difference_text(), c.needed_text()):
        if detail:
            out.print(text(("           ", "dim"), detail))
    p = paired.pooled
    out.print(
        text(
            ("pass rate  ", "dim"),
            f"left {rate_text(p.left)}  right {rate_text(p.right)}  "
            f"on {p.shared} shared (case, seed) pairs, 95% Wilson",
        )
    )
    out.print(
        text(
            ("pairs      ", "dim"),
            f"{p.regressed} regressed, {p.fixed} fixed: exact McNemar {p_text(p.p_value)} "
            "(detail: counts seeds as independent pairs)",
        )
    )
    if len(paired.by_seed) > 1:
        for seed, s in paired.by_seed.items():
            out.print(
                text(
                    (f"  {seed_text(seed):<9}", "dim"),
                    f"left {rate_text(s.left)}  right {rate_text(s.right)}  "
                    f"{s.regressed} regressed, {s.fixed} fixed, {p_text(s.p_value)}",
                )
            )


def print_diff(diff, lrun, rrun, limit: int) -> None:
    out = console()
    _print_sides(out, lrun, rrun)
    counts = diff.counts()
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    out.print(
        text(
            f"compared {diff.compared} case(s): ",
            (summary, "bold"),
            f"; {len(diff.only_left)} only left, {len(diff.only_right)} only right",
        )
    )
    for note in diff.settings_notes():
        out.print(text((f"note: {note}", "yellow")))
    if diff.duplicates:
        out.print(
            text((f"note: {diff.duplicates} repeated (case, seed) records; last kept", "yellow"))
        )
    _print_paired(out, diff)
    if not diff.moved:
        out.print(text(("no movement: every common case kept its grade and digest", "green")))
    order = ("regressed", "fixed", "drift")
    ranked = sorted(diff.moved, key=lambda m: order.index(m.kind))
    shown = ranked if limit <= 0 else ranked[:limit]
    reasons = diff.reasons([m.pair for m in shown if m.kind != "drift"])
    for m in shown:
        out.print(
            text(
                (f"{m.kind.upper():<10}", _KIND_STYLE[m.kind]),
                inert_line(m.case_id),
                f"  {seed_text(m.seed, lrun.repeat_label)}",
            )
        )
        if m.kind == "drift":
            out.print(
                text(
                    "    completion digest " if m.left.completion_digest else "    text digest ",
                    inert_line(row_digest(m.left) or ""),
                    " -> ",
                    inert_line(row_digest(m.right) or ""),
                    f"  (both {'pass' if m.left.passed else 'fail'})",
                )
            )
            continue
        for name, row, why in zip(
            ("left ", "right"), (m.left, m.right), reasons[m.pair], strict=True
        ):
            verdict = ("pass", "green") if row.passed else ("fail", "red")
            out.print(text(f"    {name} ", verdict, "  ", reasons_text(why)))
    if len(shown) < len(diff.moved):
        out.print(
            text(f"... and {len(diff.moved) - len(shown)} more (--limit 0 or --json for all)")
        )
    for name, keys in (("only left", diff.only_left), ("only right", diff.only_right)):
        if keys:
            listed = ", ".join(
                f"{inert_line(c)} ({seed_text(s, lrun.repeat_label)})" for c, s in keys[:10]
            )
            more = f" and {len(keys) - 10} more" if len(keys) > 10 else ""
            out.print(text((f"{name}: ", "bold"), listed + more))
