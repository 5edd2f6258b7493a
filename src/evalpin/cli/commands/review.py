"""`evalpin review [LEFT [RIGHT]]`: the TUI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalpin.cli.log_options import log_options

if TYPE_CHECKING:
    from evalpin.core.formats import ReadOptions


@click.command("review")
@click.argument("left", required=False, type=click.Path(path_type=Path))
@click.argument("right", required=False, type=click.Path(path_type=Path))
@click.option("--launch/--no-launch", default=True, hidden=True)  # set by `evalpin serve`
@log_options
def review_cmd(left: Path | None, right: Path | None, launch: bool, options: ReadOptions) -> None:
    """Open the review TUI: LEFT (earlier) beside RIGHT (newer), or one run alone.

    With no argument: the newest run in ./runs beside the newest earlier run on the same
    fixture set; where ./runs holds no run, the bundled demo. A file that cannot be read
    exits 3 before any screen opens.
    """
    from evalpin.core.discovery import pair_to_review
    from evalpin.core.runfile import read_run

    if left is None:
        left, right, note = pair_to_review(Path("runs"))
        if note:
            click.echo(note, err=True)
    left_run = read_run(left, options)
    right_run = read_run(right, options) if right is not None else None
    from evalpin.tui.app import make_app

    make_app(left_run, right_run, launch=launch).run()
