"""`evalpin import SHAPE SOURCE --out DIR`: a public benchmark as a sealed coding set
(core/instrument/importers/)."""

from __future__ import annotations

from pathlib import Path

import click

from evalpin.cli.console import emit_json
from evalpin.cli.option_kinds import resolved_later

_SHAPES = ("humaneval", "mbpp", "bigcodebench", "dataframebench", "exercises")


@click.command("import")
@click.argument("shape", type=click.Choice(_SHAPES))
@click.argument("source", type=click.Path(dir_okay=True, path_type=Path))
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A new (or empty) folder for the set; an import never overwrites.",
)
@click.option("--id", "dataset_id", help="The set's dataset_id (default: the source's name).")
@click.option(
    "--version",
    "dataset_version",
    help="The set's dataset_version (default: sha256- and the source's first 12 hex digits).",
)
@click.option("--frozen-at", help="The set's frozen_at (default: now, UTC).")
@resolved_later(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, min_open=True),
    help="Each item's timeout_s (pytest's start included); bigcodebench and dataframebench: 60.",
    shown=10.0,
)
@click.option(
    "--library",
    default="free",
    show_default=True,
    help="dataframebench: the data processing library its prompts ask for (pandas, polars,"
    " any module name), or free (the model chooses).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a summary.")
def import_cmd(
    shape: str,
    source: Path,
    out: Path,
    dataset_id: str | None,
    dataset_version: str | None,
    frozen_at: str | None,
    timeout_s: float | None,
    library: str,
    as_json: bool,
) -> None:
    """Turn a benchmark file you have into a sealed coding set that `evalpin check` passes.

    SHAPE is `humaneval` (a HumanEval-style JSONL, gzipped or not: HumanEval, HumanEval+,
    MultiPL-E's Python half; the candidate file is the prompt followed by the
    completion, as its harness runs it), `mbpp` (an MBPP-style JSONL or JSON list; the
    completion alone is the candidate file), `bigcodebench` (BigCodeBench's JSONL:
    unittest modules run in one namespace with the solution, after the stub its harness
    calibrates with; each task's libraries recorded), `dataframebench` (DataFrameBench's
    JSONL, its prompts filled for `--library`) or `exercises` (a folder per exercise, as
    Exercism's Python track and Aider's polyglot set lay them out). Nothing is fetched:
    SOURCE is a file (or folder) on disk. The set records its provenance (the source's
    name and sha256, the importer's version) and is sealed. Exit 0 written, 3 when the
    source cannot be read as SHAPE (nothing is written then)."""
    from evalpin.core.instrument.importers import FREE, default_timeout, import_set

    if library != FREE and shape != "dataframebench":
        raise click.UsageError("--library is for dataframebench only")
    if not library.isidentifier() and library != FREE:
        raise click.BadParameter(f"{library!r} is no module name", param_hint="--library")
    done = import_set(
        shape,
        source,
        out,
        dataset_id=dataset_id,
        dataset_version=dataset_version,
        frozen_at=frozen_at,
        timeout_s=timeout_s or default_timeout(shape),
        library=library,
    )
    fs = done.fixtures
    if as_json:
        emit_json(
            {
                "path": str(fs.path),
                "dataset_id": fs.dataset_id,
                "dataset_version": fs.dataset_version,
                "items": len(fs.cases),
                "envelope_hash": fs.envelope_hash,
                "source": fs.source,
                "skipped": done.skipped,
            }
        )
        return
    from evalpin.cli.console import console
    from evalpin.core.sanitize import inert_line

    out_console = console()
    out_console.print(
        f"{len(fs.cases)} items from {inert_line(source.name)} -> {inert_line(str(fs.path))}"
        f" (sealed: {inert_line(fs.path.name)}.lock)",
        markup=False,
        highlight=False,
    )
    out_console.print(f"envelope {fs.envelope_hash}", markup=False, highlight=False)
    for why in done.skipped:
        out_console.print(f"left out: {inert_line(why)}", markup=False, highlight=False)
    out_console.print(
        f"next: evalpin check {inert_line(str(fs.path))} --jobs 2", markup=False, highlight=False
    )
