"""Terminal text for `evalpin diff`: the refusal, or the moves with their reasons."""

from __future__ import annotations

from pathlib import Path

from evalpin.cli.console import console, rate_text, reasons_text, seed_text, text
from evalpin.core.compare import row_digest
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
        if len(m.pairs) == 1 and m.key != "fixture_hash":
            out.print(
                text(
                    f"  {m.key}: ",
                    (inert_line(lv), "red"),
                    " (left) vs ",
                    (inert_line(rv), "red"),
                    f" (right) on {m.cases} case(s)",
                )
            )
            continue
        case_id, seed = m.example
        out.print(text(f"  {m.key}: differs on {m.cases} case(s), e.g. "))
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


def _p_value(p: float) -> str:
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.4f}"


def _print_paired(out, diff) -> None:
    """Rates with intervals, the exact McNemar test and the flips it would take, so
    that "3 regressed" is read against what this many cases can show."""
    from evalpin.core.stats import paired_stats

    paired = paired_stats(diff)
    if paired is None:
        return
    p = paired.pooled
    out.print(
        text(
            ("pass rate  ", "dim"),
            f"left {rate_text(p.left)}  right {rate_text(p.right)}  "
            f"on {p.shared} shared (case, seed) pairs, 95% Wilson",
        )
    )
    verdict = (
        (f"significant at {p.alpha}", "bold red" if p.regressed > p.fixed else "bold green")
        if p.significant
        else (f"not significant at {p.alpha}: within noise", "yellow")
    )
    out.print(
        text(
            ("paired     ", "dim"),
            f"{p.regressed} regressed, {p.fixed} fixed: exact McNemar {_p_value(p.p_value)}, ",
            verdict,
        )
    )
    if p.fixed > p.regressed:
        other, other_kind, needed, kind = p.regressed, "regressed", p.fixes_needed, "fixes"
        room = f"only {p.shared - p.left.passed} pair(s) failed on the left"
    else:
        other, other_kind, needed, kind = p.fixed, "fixed", p.regressions_needed, "regressions"
        room = f"only {p.left.passed} pair(s) passed on the left"
    threshold = (
        f"with {other} {other_kind}, {needed} {kind} would be the fewest to reach p < {p.alpha}"
        if needed is not None
        else f"with {other} {other_kind}, no number of {kind} could reach p < {p.alpha}: {room}"
    )
    out.print(text(("           ", "dim"), threshold))
    if len(paired.by_seed) > 1:
        for seed, s in paired.by_seed.items():
            out.print(
                text(
                    (f"  {seed_text(seed):<9}", "dim"),
                    f"left {rate_text(s.left)}  right {rate_text(s.right)}  "
                    f"{s.regressed} regressed, {s.fixed} fixed, {_p_value(s.p_value)}",
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
