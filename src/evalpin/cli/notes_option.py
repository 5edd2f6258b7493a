"""`--notes PATH`: the review notes file, for the commands that show notes (`review`, `diff`)."""

from __future__ import annotations

from pathlib import Path

import click

DEFAULT = "default: notes.jsonl beside the right run, or $EVALPIN_NOTES"


def notes_option(what: str):
    """The option, its help led by what the command does with the notes (`what`); the
    value arrives as `notes_file`."""
    return click.option(
        "--notes",
        "notes_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help=f"{what} ({DEFAULT}).",
    )
