"""`evalpin run`: a pinned run of a fixture set against a model slot."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from evalpin.cli.option_kinds import resolved_later

# One thread per completion in flight: a typo such as 100000 must not start that many.
MAX_CONCURRENCY = 1024


@click.command("run")
@click.option(
    "--fixtures",
    "fixtures",
    type=click.Path(path_type=Path),
    help="Fixture set: golden JSONL or coding YAML. Default: $EVAL_DATASET.",
)
@click.option(
    "--slot",
    "slot",
    help="Slot label from the slots file, or an inline replay: LABEL=replay:PATH, with"
    " ,tier=TIER to declare its backend (free, dedicated or local).",
)
@resolved_later(
    "--slots",
    "slots_file",
    type=click.Path(path_type=Path),
    help="Slots file.",
    shown="./slots.yaml",
)
@click.option(
    "--seeds",
    help="Comma-separated seeds, or ranges (1..20: n samples per item for pass@k)."
    " Default: $EVAL_SEEDS, else 11,29,47.",
)
@click.option(
    "--temperature", type=float, help="Sampling temperature. Default: $EVAL_TEMPERATURE, else 0."
)
@resolved_later(
    "--max-tokens", type=click.IntRange(min=1), help="Completion token cap.", shown=2048
)
@resolved_later(
    "--loops",
    type=click.IntRange(min=0),
    help="Repair rounds for coding items (failing tail sent back).",
    shown=0,
)
@resolved_later(
    "--max-turns",
    type=click.IntRange(min=1),
    help="Model requests in one tool conversation (golden sets).",
    shown=4,
)
@resolved_later(
    "--jobs",
    type=click.IntRange(min=1),
    help="Sandboxed grading processes at once (coding sets).",
    shown="cores",
)
@resolved_later(
    "--concurrency",
    type=click.IntRange(min=1, max=MAX_CONCURRENCY),
    help="Fix the completions in flight (one thread each; lowered on rate limits, raised"
    " again as requests succeed).",
    shown="found as the run goes, from 1 up to 16: more while throughput rises, fewer when"
    " latency grows without it",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Grade coding items on a Dask cluster: tcp://HOST:PORT or local:N "
    "(needs evalpin[cluster]).",
)
@resolved_later(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Run file to write.",
    shown="a new file in runs/",
)
@click.option(
    "--resume", is_flag=True, help="Finish the missing cases of an unfinished --out file."
)
@click.option(
    "--retry-errors",
    is_flag=True,
    help="With --resume: ask again exactly the error cases of --out (no completion, a "
    "provider or sandbox error), finished run or not; every other line stays as it is.",
)
@click.option(
    "--witness",
    type=click.Choice(["beside", "alone"]),
    help="Coding sets: how the witness runs. beside (the default): beside the run's"
    " other sandboxes; alone: with nothing else of the run alive, so no timing channel"
    " reaches it (slower). Recorded; the verdict names it.",
)
@click.option(
    "--allow-unenforced-limits",
    "allow_unenforced",
    is_flag=True,
    help="Run even where a limit the items set cannot be enforced here (memory without a"
    " cgroup); the header records it and the verdict says internal. Without it such a"
    " run refuses to start.",
)
@click.option(
    "--progress",
    type=click.Choice(["auto", "bar", "json", "none"]),
    default="auto",
    show_default=True,
    help="Progress display; json: one event per line on stdout.",
)
def run_cmd(
    fixtures: Path | None,
    slot: str | None,
    slots_file: Path | None,
    seeds: str | None,
    temperature: float | None,
    max_tokens: int | None,
    loops: int | None,
    max_turns: int | None,
    jobs: int | None,
    concurrency: int | None,
    cluster: str | None,
    out: Path | None,
    resume: bool,
    retry_errors: bool,
    witness: str | None,
    allow_unenforced: bool,
    progress: str,
) -> None:
    """Run a fixture set against a model slot and record a pinned run file.

    Exit 0 when the run finished, 1 when it failed to run (not one case could be
    judged counts: every request failed), 130 when interrupted (the file stays whole:
    finish it with --resume --out FILE).
    """
    from evalpin.cli.render_run import RunDisplay

    if jobs is not None and cluster is not None:
        raise click.UsageError("--jobs and --cluster exclude each other: pick one executor")
    if retry_errors and not resume:
        raise click.UsageError("--retry-errors re-asks the error cases of a run: add --resume")
    from evalpin.run.session import RunRequest, start_run

    request = RunRequest(
        fixtures=fixtures,
        slot=slot,
        slots_file=slots_file,
        seeds=seeds,
        temperature=temperature,
        max_tokens=max_tokens,
        loops=loops,
        max_turns=max_turns,
        jobs=jobs,
        concurrency=concurrency,
        cluster=cluster,
        out=out,
        resume=resume,
        retry_errors=retry_errors,
        witness=witness,
        allow_unenforced=allow_unenforced,
    )
    display = RunDisplay(progress)
    code = start_run(request, os.environ, display.emit)
    display.close()
    sys.exit(code)
