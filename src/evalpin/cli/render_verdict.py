"""Terminal text for `evalpin verdict`: label, pins, rates, spread, reasons."""

from __future__ import annotations

from evalpin.cli.console import console, pct, rate_text, seed_text, text
from evalpin.core.judge.verdict import NOTHING_JUDGED
from evalpin.core.sanitize import inert_line

LABEL_STYLE = {
    "publishable": "bold green",
    "exploratory-probe": "bold yellow",
    "internal": "bold yellow",
    "demo-note": "bold yellow",
    "uncontrolled": "bold red",
    "contaminated": "bold red",
}


def print_verdict(run, v) -> None:
    out = console()
    out.print(
        text(("run       ", "dim"), inert_line(run.path), "  ", (inert_line(run.label()), "dim"))
    )
    out.print(text(("label     ", "dim"), (v.label, LABEL_STYLE[v.label])))
    width = max((len(c.rule) for c in v.checklist), default=0) + 2
    if v.label_meaning:
        out.print(text(("          ", "dim"), v.label_meaning))
    for k, check in enumerate(v.checklist):
        mark = ("ok  ", "green") if check.ok else ("FAIL", "bold red")
        out.print(
            text(
                ("checks    " if k == 0 else "          ", "dim"),
                mark,
                "  ",
                f"{check.rule:<{width}}",
                inert_line(check.shown),
            )
        )
    if v.nothing_judged:
        out.print(text(("pass rate ", "dim"), (NOTHING_JUDGED, "bold yellow")))
        _print_rest(out, run, v)
        return
    pooled = v.pooled_rate
    out.print(
        text(
            ("pass rate ", "dim"),
            (pct(v.pass_rate), "bold"),
            f" [{pooled.low:.3f}, {pooled.high:.3f}]  {pooled.passed}/{pooled.total}, 95% Wilson"
            if pooled
            else "",
            (f"  over the judged cases; {v.apart} apart", "bold yellow") if v.apart else "",
        )
    )
    if v.tool_score is not None:
        score = v.tool_score
        out.print(
            text(
                (f"{'tool':<10}", "dim"),
                f"{inert_line(score.name)} {pct(score.value)}",
                (f"  ({inert_line(score.why)})", "dim") if score.why else "",
            )
        )
    for seed, rate in v.rate_by_seed.items():
        out.print(
            text(
                (f"  {seed_text(seed, run.repeat_label):<8} ", "dim"),
                f"{rate_text(rate)}  {rate.passed}/{rate.total}",
            )
        )
    stability = ("UNSTABLE", "bold red") if v.unstable else ("stable", "green")
    out.print(text(("spread    ", "dim"), f"{v.spread:.3f} (band {v.band:.3f}) ", stability))
    if v.stability is not None:
        st = v.stability
        flips = "" if st.flip_rate is None else f"; flip rate {st.flip_rate:.3f}"
        single = f", {st.single_seed} seen on one seed only" if st.single_seed else ""
        out.print(
            text(
                ("cases     ", "dim"),
                f"{st.stable_pass} stable pass, {st.stable_fail} stable fail, "
                f"{st.flaky} flaky{single}{flips}",
            )
        )
    if v.power is not None:
        out.print(text(("power     ", "dim"), v.power.mde_text()))
    for n, estimate in enumerate(v.pass_at_k):
        out.print(text(("pass@k    " if n == 0 else "          ", "dim"), estimate.describe()))
    _print_rest(out, run, v)


def _print_rest(out, run, v) -> None:
    """Usage, flaky cases, repeats, reasons and notes: after the rates, or in their
    place when nothing was judged."""
    usage = run.summary.usage if run.summary is not None else None
    if usage is not None:
        out.print(text(("usage     ", "dim"), usage.describe()))
    if v.flaky_cases:
        listed = ", ".join(inert_line(c) for c in v.flaky_cases[:12])
        more = f" and {len(v.flaky_cases) - 12} more" if len(v.flaky_cases) > 12 else ""
        out.print(text(("flaky     ", "dim"), f"{len(v.flaky_cases)}: ", listed + more))
    if v.repeat_mismatches:
        out.print(
            text(
                ("repeats   ", "dim"),
                (
                    f"{len(v.repeat_mismatches)} repeated (case, seed) pairs did not "
                    "reproduce their digests: non-deterministic backend",
                    "bold red",
                ),
            )
        )
        listed = ", ".join(
            f"{inert_line(c)} ({seed_text(s, run.repeat_label)})"
            for c, s in v.repeat_mismatches[:5]
        )
        more = f" and {len(v.repeat_mismatches) - 5} more" if len(v.repeat_mismatches) > 5 else ""
        out.print(text(("          ", "dim"), f"e.g. {listed}{more}"))
    for reason in v.reasons:
        out.print(text(("  - ", "dim"), inert_line(reason)))
    for note in v.notes:
        out.print(text(("  note: ", "dim"), inert_line(note)))
