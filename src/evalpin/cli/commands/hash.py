"""`evalpin hash F`: the pins a fixture set carries before any run."""

from __future__ import annotations

from pathlib import Path

import click

from evalpin.cli.console import emit_json


@click.command("hash")
@click.argument("fixtures", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def hash_cmd(fixtures: Path, as_json: bool) -> None:
    """Print a fixture set's dataset hash, its envelope hash (the fixture file and every
    file its cases read: the one to publish), the grader version and each case's hash."""
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.instrument.pins import grader_version

    fs = load_fixtures(fixtures)
    gv = grader_version()
    if as_json:
        emit_json(
            {
                "path": str(fs.path),
                "kind": fs.kind,
                "dataset_id": fs.dataset_id,
                "dataset_version": fs.dataset_version,
                "dataset_hash": fs.dataset_hash,
                "envelope_hash": fs.envelope_hash,
                "files": dict(sorted(fs.files.items())),
                "grader_version": gv,
                "cases": [{"id": c.id, "fixture_hash": c.fixture_hash} for c in fs.cases],
            }
        )
        return
    from evalpin.cli.render_hash import print_hashes

    print_hashes(fs, gv)
