"""`evalpin diff LEFT RIGHT`: join two runs on (case_id, seed), or refuse."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalpin.cli.console import emit_json, side, write_json_atomic
from evalpin.cli.log_options import log_options

if TYPE_CHECKING:
    from evalpin.core.formats import ReadOptions

REFUSE_LINE = "REFUSE_DIFF: triple mismatch, not a prompt regression"


@click.command("diff")
@click.argument("left", type=click.Path(path_type=Path))
@click.argument("right", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option(
    "--artifact",
    type=click.Path(dir_okay=False, path_type=Path),
    help="On refusal, write the per-case backend delta (JSON) to this path.",
)
@click.option(
    "--limit",
    default=50,
    show_default=True,
    help="Moved cases listed in the human output (0: all). --json lists all.",
)
@log_options
def diff_cmd(
    left: Path,
    right: Path,
    as_json: bool,
    artifact: Path | None,
    limit: int,
    options: ReadOptions,
) -> None:
    """Compare two runs joined on (case_id, seed).

    Exit 0: nothing moved. 1: silent regressions (a pass flip or a digest change).
    2: refused, the triples differ (an instrument change, not a prompt regression).
    """
    from evalpin.cli import render_diff
    from evalpin.core.compare import compare
    from evalpin.core.runfile import read_run

    lrun, rrun = read_run(left, options), read_run(right, options)
    diff = compare(lrun, rrun)
    only = {
        "only_left": [{"case_id": c, "seed": s} for c, s in diff.only_left],
        "only_right": [{"case_id": c, "seed": s} for c, s in diff.only_right],
    }
    if diff.refused:
        delta = {
            "kind": "backend_delta",
            "note": "triple mismatch: these rows are a backend delta, not regressions or fixes",
            "left": side(lrun),
            "right": side(rrun),
            "mismatch_summary": [
                {"key": m.key, "cases": m.cases, "pairs": [list(p) for p in m.pairs]}
                for m in diff.key_mismatches()
            ],
            "cases": diff.backend_delta(),
        }
        if artifact is not None:
            write_json_atomic(artifact, delta)
        if as_json:
            click.echo(REFUSE_LINE, err=True)
            emit_json(
                {
                    "refused": True,
                    "compared_cases": diff.compared,
                    "silent_regressions": [],
                    "mismatches": diff.mismatch_json(),
                    **only,
                    "backend_delta": delta,
                    "stats": None,
                    "notes": diff.settings_notes(),
                }
            )
        else:
            render_diff.print_refusal(REFUSE_LINE, diff, lrun, rrun, artifact)
        sys.exit(2)

    moved = diff.moved
    if artifact is not None:
        click.echo("note: runs are comparable; no backend-delta artifact written", err=True)
    if as_json:
        from evalpin.core.stats import paired_stats

        paired = paired_stats(diff)
        emit_json(
            {
                "refused": False,
                "compared_cases": diff.compared,
                "silent_regressions": diff.moved_json(),
                "mismatches": [],
                **only,
                "left": side(lrun),
                "right": side(rrun),
                "stats": paired.to_json() if paired else None,
                "notes": diff.settings_notes(),
            }
        )
    else:
        render_diff.print_diff(diff, lrun, rrun, limit)
    sys.exit(1 if moved else 0)
