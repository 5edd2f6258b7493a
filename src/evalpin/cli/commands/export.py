"""`evalpin export RUN`: a run's completions as a benchmark's samples (task_id,
completion), for its own harness to re-grade (core/judge/samples.py)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("export")
@click.argument("run", type=click.Path(path_type=Path))
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the samples here (JSONL) instead of to standard output.",
)
@click.option(
    "--fixtures",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The run's coding set, when it is not where the run's header says.",
)
def export_cmd(run: Path, out: Path | None, fixtures: Path | None) -> None:
    """Write RUN's judged completions in a benchmark's samples format: one JSON line
    `{"task_id", "completion", "seed"}` per (case, seed), the completion being the code
    the item's `candidate:` convention took from the answer. HumanEval's harness then
    re-grades them (`evaluate_functional_correctness samples.jsonl --problem_file ...`)
    and `evalpin crosscheck RUN samples.jsonl_results.jsonl` compares its verdicts with
    the run's. Cases not judged (errors) are left out and counted on stderr. Exit 0, 3
    when the run or its set cannot be read."""
    from evalpin.core.errors import InputError
    from evalpin.core.files import write_atomic
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.judge.samples import samples
    from evalpin.core.judge.verdict import locate_fixtures
    from evalpin.core.read.runfile import read_run

    runfile = read_run(run)
    if fixtures is not None:
        fs = load_fixtures(fixtures)
    else:
        fs, why = locate_fixtures(runfile)
        if fs is None:
            raise InputError(run, f"{why}; name the set with --fixtures")
    found = samples(runfile, fs)
    import json

    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in found.lines)
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(out, text)
    where = str(out) if out is not None else "standard output"
    click.echo(f"{len(found.lines)} samples written to {where}", err=True)
    if found.left_out:
        click.echo(f"{len(found.left_out)} case(s) left out (not judged)", err=True)
