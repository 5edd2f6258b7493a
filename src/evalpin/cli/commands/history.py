"""`evalpin history [DIR]`: series by instrument and the breaks between them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalpin.cli.console import emit_json
from evalpin.cli.log_options import log_options

if TYPE_CHECKING:
    from evalpin.core.read.formats import ReadOptions


@click.command("history")
@click.argument("folder", required=False, default="runs", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
@log_options
def history_cmd(folder: Path, as_json: bool, options: ReadOptions) -> None:
    """Group the run files in FOLDER (default ./runs) into series by instrument.

    Reads evalpin runs and other tools' logs alike (inspect-ai .eval/.json, lm-eval).

    A series shares dataset hash, grader version, model slot and reported model; where
    one gives way to the next the break is named (backend delta, rubric change, dataset
    edit). Environment changes are marked inside a series, and (case, seed) pairs that
    did not reproduce their completion are flagged. Unreadable files are listed, never
    fatal. Exit 0; 3 when FOLDER is not a readable folder.
    """
    from evalpin.core.judge.history import load_history

    history = load_history(folder, options)
    if as_json:
        emit_json(history.to_json())
    else:
        from evalpin.cli.render_history import print_history

        print_history(history)
