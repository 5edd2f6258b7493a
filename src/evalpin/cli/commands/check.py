"""`evalpin check F`: validate a fixture set before it is sealed (run/set_check.py)."""

from __future__ import annotations

from pathlib import Path

import click

from evalpin.cli.console import emit_json


@click.command("check")
@click.argument("fixtures", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a report.")
@click.option(
    "--strict", is_flag=True, help="What could not be checked (no reference) is a problem too."
)
def check_cmd(fixtures: Path, as_json: bool, strict: bool) -> None:
    """Validate a fixture set: each coding item's reference solution passes, its starting
    code fails on a test, and both isolations grade them alike; golden cases are
    well-formed. Every problem is listed (unknown keys with the nearest valid key,
    duplicate ids, malformed cases, cases that can never pass), not only the first.
    Exit 0 when nothing is wrong, 1 when something is (each named), 3 when the file
    cannot be read as a set at all or has a key its format does not have (as `run`,
    `hash` and `seal` exit; every problem is still listed first)."""
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.schema import Problems
    from evalpin.run.set_check import check_set

    found = Problems(fixtures, collect=True)
    fs = load_fixtures(fixtures, found)

    def progress(n: int, total: int, item_id: str) -> None:
        from evalpin.core.sanitize import inert_line

        click.echo(f"[{n}/{total}] {inert_line(item_id)}", err=True)

    report = check_set(fs, progress=None if as_json else progress, found=found.found)
    failed = report.problems(strict) > 0
    if as_json:
        emit_json(report.to_json(strict))
    else:
        from evalpin.cli.render_check import print_check

        print_check(report, strict)
    if found.unknown:
        raise SystemExit(3)
    if failed:
        raise SystemExit(1)
