"""`evalpin review [LEFT [RIGHT]]`: the TUI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalpin.cli.log_options import log_options
from evalpin.cli.notes_option import notes_option

if TYPE_CHECKING:
    from evalpin.core.read.formats import ReadOptions


@click.command("review")
@click.argument("left", required=False, type=click.Path(path_type=Path))
@click.argument("right", required=False, type=click.Path(path_type=Path))
@click.option("--launch/--no-launch", default=True, hidden=True)  # set by `evalpin serve`
@notes_option("The review notes file: `m` writes to it")
@log_options
def review_cmd(
    left: Path | None,
    right: Path | None,
    launch: bool,
    notes_file: Path | None,
    options: ReadOptions,
) -> None:
    """Open the review TUI: LEFT (earlier) beside RIGHT (newer), or one run alone.

    With no argument: the newest run in ./runs beside the newest earlier run on the same
    fixture set; where ./runs holds no run, the bundled demo. A folder alone (`evalpin
    review runs/`): its newest pair, chosen the same way. A file that is no run, or
    whose first block cannot be read, exits 3 before any screen opens; the rest is read
    behind the first screen of cases, and a bad line further on is reported there.
    """
    from evalpin.core.read.discovery import review_pair
    from evalpin.core.read.formats import RunStream
    from evalpin.core.sanitize import inert_line

    left, right, note = review_pair(left, right)
    if note:
        click.echo(inert_line(note), err=True)
    streams = [RunStream(path, options) for path in (left, right) if path is not None]
    for stream in streams:
        stream.step()
    from evalpin.tui.app import make_app

    make_app(*streams, launch=launch, notes=notes_file).run()
