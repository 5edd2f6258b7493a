"""`evalpin power RUN`: cases and seeds a comparison needs, from one run's variance."""

from __future__ import annotations

from pathlib import Path

import click

from evalpin.cli.console import emit_json, side
from evalpin.cli.option_kinds import bounded, resolved_later


@click.command("power")
@click.argument("run", type=click.Path(path_type=Path))
@bounded(
    "--drop",
    default=0.02,
    low=0,
    high=1,
    low_open=True,
    help="Pass-rate drop to detect (0.02: two points).",
)
@resolved_later(
    "--seeds",
    type=click.IntRange(min=1),
    help="Seeds per case to plan for.",
    shown="the run's",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def power_cmd(run: Path, drop: float, seeds: int | None, as_json: bool) -> None:
    """How many cases (at how many seeds) detect a DROP with 80% power at alpha 0.05,
    and the smallest drop RUN can detect as it is (Miller's formula, from RUN's
    between-case and within-case variance). Exit 0; 3 on bad input."""
    from dataclasses import replace

    from evalpin.core.columns import judged
    from evalpin.core.judge.power import power
    from evalpin.core.read.runfile import read_run

    runfile = read_run(run)
    rows = judged(runfile.rows)  # an error or disputed case is no grade: never a fail here
    plan = replace(power(rows, drop=drop, seeds=seeds), unjudged=len(runfile.rows) - len(rows))
    if as_json:
        emit_json({"run": side(runfile), **plan.to_json()})
    else:
        from evalpin.cli.render_power import print_power

        print_power(runfile, plan)
