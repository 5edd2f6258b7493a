"""`evalpin diff LEFT RIGHT` (or `--baseline DIR RUN`): join two runs on (case_id, seed),
or refuse. The core builds one report; each output is a renderer of it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from evalpin.cli.console import emit_json, write_json_atomic
from evalpin.cli.log_options import log_options
from evalpin.cli.notes_option import notes_option
from evalpin.core.judge.report import REFUSE_LINE

if TYPE_CHECKING:
    from evalpin.core.read.formats import ReadOptions

__all__ = ["REFUSE_LINE", "diff_cmd"]

_OUT = click.Path(dir_okay=False, path_type=Path)


@click.command("diff")
@click.argument("runs", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--baseline",
    type=click.Path(file_okay=False, path_type=Path),
    help="Compare RUN with the newest earlier run in this folder on the same instrument.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option(
    "--artifact",
    type=_OUT,
    help="On refusal, write the per-case backend delta (JSON) to this path.",
)
@click.option("--markdown", type=_OUT, help="Write a Markdown report (for a CI step summary).")
@click.option("--junit", type=_OUT, help="Write JUnit XML: one test case per (case, seed).")
@click.option("--html", type=_OUT, help="Write a self-contained HTML report.")
@notes_option(
    "Review notes to show beside the cases; they never change a grade, a count or the exit code"
)
@click.option(
    "--limit",
    default=50,
    show_default=True,
    help="Moved cases listed in the human output (0: all). --json lists all.",
)
@log_options
def diff_cmd(
    runs: tuple[Path, ...],
    baseline: Path | None,
    as_json: bool,
    artifact: Path | None,
    markdown: Path | None,
    junit: Path | None,
    html: Path | None,
    notes_file: Path | None,
    limit: int,
    options: ReadOptions,
) -> None:
    """Compare two runs joined on (case_id, seed): `diff LEFT RIGHT`, or
    `diff --baseline DIR RUN` (the left side: the newest earlier run in DIR on RUN's
    instrument; none there is a refusal naming what changed).

    Exit 0: nothing moved. 1: silent regressions (a pass flip or a digest change).
    2: refused, the triples differ (an instrument change, not a prompt regression), or
    the runs' own pins do (other fixture sets, graders or slots), shared cases or not.
    4: nothing compared: the pins agree but no (case, seed) was judged on both sides
    (a side with no cases, no shared case, only error cases).
    """
    from evalpin.cli import render_diff
    from evalpin.core.judge.report import attach_notes
    from evalpin.core.read.rundata import gc_paused

    # The terminal alone shows `limit` moves; JSON and every file show them all.
    everything = as_json or bool(markdown or junit or html) or limit <= 0
    detail = None if everything else limit
    want = 1 if baseline is not None else 2
    if len(runs) != want:
        usage = "--baseline DIR RUN" if baseline is not None else "LEFT RIGHT"
        raise click.UsageError(f"expected {usage}: {want} run file(s), got {len(runs)}")
    book = _notes(runs[-1], notes_file)
    # Rows and the report hold no cycles: the collector would only walk big lists.
    with gc_paused():
        # Notes are matched on every row: a run with notes is not joined in halves.
        report = _build(runs, baseline, options, detail, junit is not None or bool(book.latest))
    attach_notes(report, book)

    _write_files(report, markdown, junit, html)
    if report.refused:
        if artifact is not None:
            write_json_atomic(artifact, report.delta_artifact())
        if as_json:
            click.echo(REFUSE_LINE, err=True)
            emit_json(report.to_json())
        else:
            render_diff.print_refusal(report, artifact)
        sys.exit(2)

    if artifact is not None:
        click.echo("note: runs are comparable; no backend-delta artifact written", err=True)
    if as_json:
        if report.nothing is not None:
            click.echo(report.headline(), err=True)
        emit_json(report.to_json())
    else:
        render_diff.print_diff(report, limit)
    sys.exit(report.exit_code)


def _notes(run: Path, notes_file: Path | None):
    """The review notes for the runs (a NoteBook); lines that are no note are named on
    stderr, and nothing else changes: the file is never written here."""
    from evalpin.core.read.notes import notes_path, read_notes
    from evalpin.core.sanitize import inert_line

    book = read_notes(notes_path(run, notes_file))
    warning = book.skipped_text()
    if warning:
        click.echo(f"evalpin: notes: {inert_line(warning)}", err=True)
    return book


def _build(
    runs: tuple[Path, ...],
    baseline: Path | None,
    options: ReadOptions,
    detail: int | None,
    every_row: bool,
):
    """Read both sides and build the report. Two big evalpin runs are read a half per
    process (core/review/halves.py) unless an output lists every row (`--junit`)."""
    from evalpin.core.judge.report import build_report, refusal_without_left
    from evalpin.core.read.runfile import read_run

    if baseline is not None:
        from evalpin.core.judge.baseline import choose_baseline

        rrun = read_run(runs[0], options)
        choice, lrun = choose_baseline(baseline, runs[0], rrun, options)
        if lrun is None:
            return refusal_without_left(rrun, choice)
        return build_report(lrun, rrun, choice, detail)
    if not every_row:
        from evalpin.core.review.halves import diff_in_halves

        report = diff_in_halves(runs[0], runs[1], detail)
        if report is not None:
            return report
    lrun, rrun = read_run(runs[0], options), read_run(runs[1], options)
    return build_report(lrun, rrun, detail=detail)


def _write_files(report, markdown: Path | None, junit: Path | None, html: Path | None) -> None:
    """Each requested report file, rendered in full, then renamed into place."""
    from evalpin.core.files import write_atomic

    if markdown is not None:
        from evalpin.cli.render_markdown import render_markdown

        write_atomic(markdown, render_markdown(report))
    if junit is not None:
        from evalpin.cli.render_junit import render_junit

        write_atomic(junit, render_junit(report))
    if html is not None:
        from evalpin.cli.render_html import render_html

        write_atomic(html, render_html(report))
