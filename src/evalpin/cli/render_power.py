"""Terminal text for `evalpin power`."""

from __future__ import annotations

from evalpin.cli.console import console, text
from evalpin.core.sanitize import inert_line


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _var(value: float | None, missing: str) -> str:
    return missing if value is None else f"{value:.4f}"


def print_power(run, plan) -> None:  # plan: power.Power
    out = console()
    out.print(
        text(("run       ", "dim"), inert_line(run.path), "  ", (inert_line(run.label()), "dim"))
    )
    out.print(
        text(
            ("variance  ", "dim"),
            f"{plan.cases} cases x {plan.seeds} seed(s): between cases omega^2 = "
            f"{_var(plan.omega2, 'n/a (fewer than 2 cases)')}, within a case sigma^2 = "
            f"{_var(plan.sigma2, 'n/a (no case ran twice)')}",
        )
    )
    if plan.unjudged:
        out.print(
            text(
                ("left out  ", "dim"),
                f"{plan.unjudged:,} error or disputed case record(s): not judged, so neither"
                " a pass nor a fail here",
            )
        )
    out.print(text(("as it is  ", "dim"), (plan.mde_text(), "bold")))
    if plan.cases_needed is None:
        out.print(text(("plan      ", "dim"), "nothing to plan from: " + plan.why_not()))
        return
    out.print(
        text(
            ("plan      ", "dim"),
            f"to detect a drop of {plan.drop * 100:.1f} points (80% power, alpha 0.05): ",
            (f"{plan.cases_needed:,} cases at {plan.plan_seeds} seed{_s(plan.plan_seeds)}", "bold"),
        )
    )
    others = "  ".join(
        f"{k} seed(s): {n:,}" for k, n in plan.needed.items() if k != plan.plan_seeds and n
    )
    out.print(text(("          ", "dim"), f"cases needed at {others}"))
    if plan.sigma2 is None:
        out.print(
            text(
                ("          ", "dim"),
                "one seed a case: seed noise cannot be told from case difficulty, so more "
                "seeds are not credited",
            )
        )
