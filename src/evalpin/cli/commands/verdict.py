"""`evalpin verdict RUN`: the publish rule, and the publish card when it holds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalpin.cli.console import emit_json, fail, side
from evalpin.cli.log_options import log_options
from evalpin.cli.option_kinds import bounded

if TYPE_CHECKING:
    from evalpin.core.read.formats import ReadOptions


@click.command("verdict")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@click.option(
    "--disclosed",
    type=click.Path(path_type=Path),
    help="File of disclosed case ids or prompts, one a line ('#' comments).",
)
@bounded(
    "--band",
    default=0.05,
    low=0,
    high=1,
    help="Spread across seeds above which the run is flagged unstable.",
)
@click.option(
    "--card",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the publish card (Markdown) to this path; refused unless publishable.",
)
@log_options
def verdict_cmd(
    run: Path,
    as_json: bool,
    disclosed: Path | None,
    band: float,
    card: Path | None,
    options: ReadOptions,
) -> None:
    """Apply the publish rule to RUN. Exit 0 only when it is publishable."""
    from evalpin.core.judge.verdict import PUBLISHABLE, Disclosure, judge
    from evalpin.core.read.runfile import read_run

    disclosure = Disclosure.load(disclosed) if disclosed is not None else None
    runfile = read_run(run, options)
    v = judge(runfile, disclosed=disclosure, band=band)
    if as_json:
        emit_json({"run": side(runfile), **v.to_json()})
    else:
        from evalpin.cli.render_verdict import print_verdict

        print_verdict(runfile, v)
    if card is not None:
        _export_card(runfile, v, card)
    sys.exit(0 if v.label == PUBLISHABLE else 1)


def _export_card(runfile, v, path: Path) -> None:  # runfile: RunFile, v: Verdict
    """Write the card, or say on stderr why not, in the TUI's words."""
    from evalpin.core.judge.card import NotPublishable, export_card

    try:
        written = export_card(runfile, v, path)
    except NotPublishable as exc:
        click.echo(f"evalpin: no card: {exc}", err=True)
    except OSError as exc:
        fail(f"{path}: card not written: {exc.strerror or exc}")
    else:
        click.echo(f"publish card written to {written}", err=True)
