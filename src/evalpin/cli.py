"""The command line: `review`, `run`, `diff`, `verdict`, `history`, `hash`.

Commands import what they need inside their bodies, so `evalpin diff` never loads
Textual or the openai SDK and starts like a plain script. Every invalid input ends the
same way: one line naming the file (and line) on stderr, exit 3, nothing half-written.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from evalpin import __version__
from evalpin.core.errors import InputError
from evalpin.core.sanitize import inert_line

EXIT_INPUT = 3


def _console(stderr: bool = False):  # -> rich.console.Console
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def _text(*parts: str | tuple[str, str]):  # -> rich.text.Text
    """Plain Text from (string, style) parts: never markup, whatever the string holds."""
    from rich.text import Text

    return Text.assemble(*parts)


def _emit_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=True, allow_nan=False) + "\n")


def _write_atomic(path: Path, payload: Any) -> None:
    """Write JSON beside its destination and rename, so nothing is left half-written."""
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            json.dump(payload, fh, indent=2, ensure_ascii=True, allow_nan=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.3f}"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalpin")
def cli() -> None:
    """Pinned evaluation runs: a score is evidence only when its instrument is pinned.

    Every result carries its triple (fixture hash, grader version, model slot);
    comparisons across different triples are refused, not filed as regressions.
    """


# -- hash ---------------------------------------------------------------------------


@cli.command("hash")
@click.argument("fixtures", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def hash_cmd(fixtures: Path, as_json: bool) -> None:
    """Print a fixture set's dataset hash, the grader version and each case's hash."""
    from evalpin.core.fixtures import load_fixtures
    from evalpin.core.pins import grader_version

    fs = load_fixtures(fixtures)
    gv = grader_version()
    if as_json:
        _emit_json(
            {
                "path": str(fs.path),
                "kind": fs.kind,
                "dataset_id": fs.dataset_id,
                "dataset_version": fs.dataset_version,
                "dataset_hash": fs.dataset_hash,
                "grader_version": gv,
                "cases": [{"id": c.id, "fixture_hash": c.fixture_hash} for c in fs.cases],
            }
        )
        return
    out = _console()
    version = f" version {fs.dataset_version}" if fs.dataset_version else ""
    out.print(_text(("fixtures        ", "dim"), inert_line(str(fs.path))))
    out.print(
        _text(("dataset         ", "dim"), inert_line(fs.dataset_id + version), f" ({fs.kind})")
    )
    out.print(_text(("dataset_hash    ", "dim"), fs.dataset_hash))
    out.print(_text(("grader_version  ", "dim"), gv))
    out.print(_text(("cases           ", "dim"), str(len(fs.cases))))
    for case in fs.cases:
        out.print(_text((case.fixture_hash, "cyan"), "  ", inert_line(case.id)))


# -- diff ---------------------------------------------------------------------------

_KIND_STYLE = {"regressed": "bold red", "fixed": "bold green", "drift": "yellow"}
REFUSE_LINE = "REFUSE_DIFF: triple mismatch, not a prompt regression"


def _side(run) -> dict[str, Any]:  # run: RunFile
    return {"path": run.path, "label": run.label(), "complete": run.complete}


def _seed_text(seed: int | None) -> str:
    return "no seed" if seed is None else f"seed {seed}"


def _reasons_text(reasons: list[str] | None) -> str:
    if reasons is None:
        return "<reasons missing>"
    return ", ".join(inert_line(r) for r in reasons) or "-"


@cli.command("diff")
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
def diff_cmd(left: Path, right: Path, as_json: bool, artifact: Path | None, limit: int) -> None:
    """Compare two runs joined on (case_id, seed).

    Exit 0: nothing moved. 1: silent regressions (a pass flip or a digest change).
    2: refused, the triples differ (an instrument change, not a prompt regression).
    """
    from evalpin.core.compare import compare
    from evalpin.core.runfile import read_run

    lrun, rrun = read_run(left), read_run(right)
    diff = compare(lrun, rrun)
    only = {
        "only_left": [{"case_id": c, "seed": s} for c, s in diff.only_left],
        "only_right": [{"case_id": c, "seed": s} for c, s in diff.only_right],
    }
    if diff.refused:
        delta = {
            "kind": "backend_delta",
            "note": "triple mismatch: these rows are a backend delta, not regressions or fixes",
            "left": _side(lrun),
            "right": _side(rrun),
            "mismatch_summary": [
                {"key": m.key, "cases": m.cases, "pairs": [list(p) for p in m.pairs]}
                for m in diff.key_mismatches()
            ],
            "cases": diff.backend_delta(),
        }
        if artifact is not None:
            _write_atomic(artifact, delta)
        if as_json:
            click.echo(REFUSE_LINE, err=True)
            _emit_json(
                {
                    "refused": True,
                    "compared_cases": diff.compared,
                    "silent_regressions": [],
                    "mismatches": diff.mismatch_json(),
                    **only,
                    "backend_delta": delta,
                    "stats": None,
                }
            )
        else:
            _print_refusal(diff, lrun, rrun, artifact)
        sys.exit(2)

    moved = diff.moved
    if artifact is not None:
        click.echo("note: runs are comparable; no backend-delta artifact written", err=True)
    if as_json:
        from evalpin.core.stats import paired_stats

        paired = paired_stats(diff)
        _emit_json(
            {
                "refused": False,
                "compared_cases": diff.compared,
                "silent_regressions": diff.moved_json(),
                "mismatches": [],
                **only,
                "left": _side(lrun),
                "right": _side(rrun),
                "stats": paired.to_json() if paired else None,
            }
        )
    else:
        _print_diff(diff, lrun, rrun, limit)
    sys.exit(1 if moved else 0)


def _print_sides(out, lrun, rrun) -> None:
    for name, run in (("left ", lrun), ("right", rrun)):
        incomplete = run.complete is False or run.torn
        out.print(
            _text(
                (name, "bold"),
                "  ",
                inert_line(run.path),
                "  ",
                (inert_line(run.label()), "bold yellow" if incomplete else "dim"),
            )
        )


def _print_refusal(diff, lrun, rrun, artifact: Path | None) -> None:
    out = _console()
    out.print(_text((REFUSE_LINE, "bold red")))
    for m in diff.key_mismatches():
        lv, rv, n = m.pairs[0]
        if len(m.pairs) == 1 and m.key != "fixture_hash":
            out.print(
                _text(
                    f"  {m.key}: ",
                    (inert_line(lv), "red"),
                    " (left) vs ",
                    (inert_line(rv), "red"),
                    f" (right) on {m.cases} case(s)",
                )
            )
            continue
        case_id, seed = m.example
        out.print(_text(f"  {m.key}: differs on {m.cases} case(s), e.g. "))
        for lv, rv, n in m.pairs[:3]:
            out.print(
                _text("    ", (inert_line(lv), "red"), " vs ", (inert_line(rv), "red"), f" ({n})")
            )
        if len(m.pairs) > 3:
            out.print(_text(f"    and {len(m.pairs) - 3} more pairs"))
        out.print(_text(f"    first: {inert_line(case_id)} ({_seed_text(seed)})"))
    _print_sides(out, lrun, rrun)
    out.print(
        _text(
            f"{diff.compared} common case(s) were measured with different instruments: a change "
            "between them is a backend delta, not a prompt regression."
        )
    )
    if artifact is not None:
        out.print(_text("backend delta written to ", inert_line(str(artifact))))
    else:
        out.print(
            _text(("To study it anyway: evalpin diff LEFT RIGHT --artifact delta.json", "dim"))
        )


def _p_value(p: float) -> str:
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.4f}"


def _rate_text(rate) -> str:  # rate: stats.Rate
    return f"{rate.rate:.3f} [{rate.low:.3f}, {rate.high:.3f}]"


def _print_paired(out, diff) -> None:
    """Rates with intervals, the exact McNemar test and the flips it would take, so
    that "3 regressed" is read against what this many cases can show."""
    from evalpin.core.stats import paired_stats

    paired = paired_stats(diff)
    if paired is None:
        return
    p = paired.pooled
    out.print(
        _text(
            ("pass rate  ", "dim"),
            f"left {_rate_text(p.left)}  right {_rate_text(p.right)}  "
            f"on {p.shared} shared (case, seed) pairs, 95% Wilson",
        )
    )
    verdict = (
        (f"significant at {p.alpha}", "bold red" if p.regressed > p.fixed else "bold green")
        if p.significant
        else (f"not significant at {p.alpha}: within noise", "yellow")
    )
    out.print(
        _text(
            ("paired     ", "dim"),
            f"{p.regressed} regressed, {p.fixed} fixed: exact McNemar {_p_value(p.p_value)}, ",
            verdict,
        )
    )
    if p.fixed > p.regressed:
        other, other_kind, needed, kind = p.regressed, "regressed", p.fixes_needed, "fixes"
        room = f"only {p.shared - p.left.passed} pair(s) failed on the left"
    else:
        other, other_kind, needed, kind = p.fixed, "fixed", p.regressions_needed, "regressions"
        room = f"only {p.left.passed} pair(s) passed on the left"
    threshold = (
        f"with {other} {other_kind}, {needed} {kind} would be the fewest to reach p < {p.alpha}"
        if needed is not None
        else f"with {other} {other_kind}, no number of {kind} could reach p < {p.alpha}: {room}"
    )
    out.print(_text(("           ", "dim"), threshold))
    if len(paired.by_seed) > 1:
        for seed, s in paired.by_seed.items():
            out.print(
                _text(
                    (f"  {_seed_text(seed):<9}", "dim"),
                    f"left {_rate_text(s.left)}  right {_rate_text(s.right)}  "
                    f"{s.regressed} regressed, {s.fixed} fixed, {_p_value(s.p_value)}",
                )
            )


def _print_diff(diff, lrun, rrun, limit: int) -> None:
    from evalpin.core.compare import row_digest

    out = _console()
    _print_sides(out, lrun, rrun)
    counts = diff.counts()
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    out.print(
        _text(
            f"compared {diff.compared} case(s): ",
            (summary, "bold"),
            f"; {len(diff.only_left)} only left, {len(diff.only_right)} only right",
        )
    )
    if diff.duplicates:
        out.print(
            _text((f"note: {diff.duplicates} repeated (case, seed) records; last kept", "yellow"))
        )
    _print_paired(out, diff)
    if not diff.moved:
        out.print(_text(("no movement: every common case kept its grade and digest", "green")))
    order = ("regressed", "fixed", "drift")
    ranked = sorted(diff.moved, key=lambda m: order.index(m.kind))
    shown = ranked if limit <= 0 else ranked[:limit]
    reasons = diff.reasons([m.pair for m in shown if m.kind != "drift"])
    for m in shown:
        out.print(
            _text(
                (f"{m.kind.upper():<10}", _KIND_STYLE[m.kind]),
                inert_line(m.case_id),
                f"  {_seed_text(m.seed)}",
            )
        )
        if m.kind == "drift":
            out.print(
                _text(
                    "    completion digest " if m.left.completion_digest else "    text digest ",
                    inert_line(row_digest(m.left) or ""),
                    " -> ",
                    inert_line(row_digest(m.right) or ""),
                    f"  (both {'pass' if m.left.passed else 'fail'})",
                )
            )
            continue
        for name, row, why in zip(
            ("left ", "right"), (m.left, m.right), reasons[m.pair], strict=True
        ):
            verdict = ("pass", "green") if row.passed else ("fail", "red")
            out.print(_text(f"    {name} ", verdict, "  ", _reasons_text(why)))
    if len(shown) < len(diff.moved):
        out.print(
            _text(f"... and {len(diff.moved) - len(shown)} more (--limit 0 or --json for all)")
        )
    for name, keys in (("only left", diff.only_left), ("only right", diff.only_right)):
        if keys:
            listed = ", ".join(f"{inert_line(c)} ({_seed_text(s)})" for c, s in keys[:10])
            more = f" and {len(keys) - 10} more" if len(keys) > 10 else ""
            out.print(_text((f"{name}: ", "bold"), listed + more))


# -- verdict ------------------------------------------------------------------------

_LABEL_STYLE = {
    "publishable": "bold green",
    "exploratory-probe": "bold yellow",
    "internal": "bold yellow",
    "demo-note": "bold yellow",
    "uncontrolled": "bold red",
    "contaminated": "bold red",
}


@cli.command("verdict")
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@click.option(
    "--disclosed",
    type=click.Path(path_type=Path),
    help="File of disclosed case ids or prompts, one a line ('#' comments).",
)
@click.option(
    "--band",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1),
    help="Spread across seeds above which the run is flagged unstable.",
)
def verdict_cmd(run: Path, as_json: bool, disclosed: Path | None, band: float) -> None:
    """Apply the publish rule to RUN. Exit 0 only when it is publishable."""
    from evalpin.core.runfile import read_run
    from evalpin.core.verdict import PUBLISHABLE, Disclosure, judge

    disclosure = Disclosure.load(disclosed) if disclosed is not None else None
    runfile = read_run(run)
    v = judge(runfile, disclosed=disclosure, band=band)
    if as_json:
        _emit_json({"run": _side(runfile), **v.to_json()})
    else:
        _print_verdict(runfile, v)
    sys.exit(0 if v.label == PUBLISHABLE else 1)


def _print_verdict(run, v) -> None:
    out = _console()
    out.print(
        _text(("run       ", "dim"), inert_line(run.path), "  ", (inert_line(run.label()), "dim"))
    )
    out.print(_text(("label     ", "dim"), (v.label, _LABEL_STYLE[v.label])))
    names = {
        "fixture_hash": "fixture hash ",
        "scorer_commit": "scorer commit",
        "seeds": "seed list    ",
        "env_digest": "env digest   ",
    }
    for key, pin in v.pins.items():
        value = pin.value
        if key == "seeds":
            value = ", ".join(map(str, value)) + f" (n={len(value)})" if value else None
        mark = ("ok     ", "green") if pin.present else ("MISSING", "red")
        shown = inert_line(str(value)) if value else "-"
        out.print(
            _text(
                ("pins      " if key == "fixture_hash" else "          ", "dim"),
                mark,
                "  ",
                names[key],
                "  ",
                shown,
            )
        )
    pooled = v.pooled_rate
    out.print(
        _text(
            ("pass rate ", "dim"),
            (_pct(v.pass_rate), "bold"),
            f" [{pooled.low:.3f}, {pooled.high:.3f}]  {pooled.passed}/{pooled.total}, 95% Wilson"
            if pooled
            else "",
        )
    )
    for seed, rate in v.rate_by_seed.items():
        out.print(
            _text(
                (f"  {_seed_text(seed):<8}", "dim"),
                f"{_rate_text(rate)}  {rate.passed}/{rate.total}",
            )
        )
    stability = ("UNSTABLE", "bold red") if v.unstable else ("stable", "green")
    out.print(_text(("spread    ", "dim"), f"{v.spread:.3f} (band {v.band:.3f}) ", stability))
    if v.stability is not None:
        st = v.stability
        flips = "" if st.flip_rate is None else f"; flip rate {st.flip_rate:.3f}"
        single = f", {st.single_seed} seen on one seed only" if st.single_seed else ""
        out.print(
            _text(
                ("cases     ", "dim"),
                f"{st.stable_pass} stable pass, {st.stable_fail} stable fail, "
                f"{st.flaky} flaky{single}{flips}",
            )
        )
    if v.flaky_cases:
        listed = ", ".join(inert_line(c) for c in v.flaky_cases[:12])
        more = f" and {len(v.flaky_cases) - 12} more" if len(v.flaky_cases) > 12 else ""
        out.print(_text(("flaky     ", "dim"), f"{len(v.flaky_cases)}: ", listed + more))
    if v.repeat_mismatches:
        out.print(
            _text(
                ("repeats   ", "dim"),
                (
                    f"{len(v.repeat_mismatches)} repeated (case, seed) pairs did not "
                    "reproduce their digests: non-deterministic backend",
                    "bold red",
                ),
            )
        )
        listed = ", ".join(f"{inert_line(c)} ({_seed_text(s)})" for c, s in v.repeat_mismatches[:5])
        more = f" and {len(v.repeat_mismatches) - 5} more" if len(v.repeat_mismatches) > 5 else ""
        out.print(_text(("          ", "dim"), f"e.g. {listed}{more}"))
    for reason in v.reasons:
        out.print(_text(("  - ", "dim"), inert_line(reason)))
    for note in v.notes:
        out.print(_text(("  note: ", "dim"), inert_line(note)))


# -- history ------------------------------------------------------------------------


@cli.command("history")
@click.argument("folder", required=False, default="runs", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the history as JSON.")
def history_cmd(folder: Path, as_json: bool) -> None:
    """Group the run files in FOLDER (default ./runs) into series by instrument.

    A series shares dataset hash, grader version, model slot and reported model; where
    one gives way to the next the break is named (backend delta, rubric change, dataset
    edit). Environment changes are marked inside a series, and (case, seed) pairs that
    did not reproduce their completion are flagged. Unreadable files are listed, never
    fatal. Exit 0; 3 when FOLDER is not a readable folder.
    """
    from evalpin.core.history import load_history

    history = load_history(folder)
    if as_json:
        _emit_json(history.to_json())
    else:
        _print_history(history)


def _value_text(value: Any) -> str:
    if value is None:
        return "<missing>"
    return inert_line(value if isinstance(value, str) else json.dumps(value, sort_keys=True))


def _changes_text(changes) -> str:  # changes: list[history.Change]
    return "; ".join(
        f"{inert_line(c.key)} {_value_text(c.before)} -> {_value_text(c.after)}" for c in changes
    )


def _print_history(history) -> None:  # history: history.History
    out = _console()
    out.print(
        _text(
            ("history   ", "dim"),
            inert_line(history.folder),
            f"  {history.runs} run(s) in {len(history.series)} series"
            + (f", {len(history.unreadable)} unreadable" if history.unreadable else ""),
        )
    )
    breaks = {b.after: b for b in history.breaks}
    fixtures: object = object()
    for series in history.series:
        if series.fixtures != fixtures:
            fixtures = series.fixtures
            out.print(_text(("fixtures  ", "bold"), _value_text(series.fixtures)))
        elif (brk := breaks.get(series.index)) is not None:
            overlap = " (the two series overlap in time)" if brk.overlap else ""
            out.print(
                _text(
                    ("  break   ", "dim"),
                    (", ".join(brk.kinds), "bold magenta"),
                    ": ",
                    _changes_text(brk.changes),
                    f"; not a trend: a new series starts{overlap}",
                )
            )
        _print_series(out, series)
    if history.unreadable:
        out.print(_text(("unreadable", "bold red")))
        for u in history.unreadable:
            out.print(_text("  ", inert_line(u.error)))


def _print_series(out, series) -> None:  # series: history.Series
    from evalpin.core.history import DATED_BY_MTIME

    pins = series.pins
    dataset = pins["dataset_hash"]
    out.print(
        _text(
            (f"  series {series.index}", "bold"),
            "  dataset ",
            _value_text(dataset[:12] if dataset else None),
            "  grader ",
            _value_text(pins["grader_version"]),
            "  slot ",
            _value_text(pins["model_slot"]),
            "  model ",
            _value_text(pins["reported_model"]),
            f"  ({len(series.runs)} run(s))",
        )
    )
    if series.unpinned:
        out.print(
            _text(
                ("    unpinned: ", "bold yellow"),
                ", ".join(series.unpinned) + " missing; comparable with no other run",
            )
        )
    for run in series.runs:
        if run.env_change is not None:
            moved = _changes_text(run.env_change) or "components not recorded"
            out.print(_text(("    ~ environment change: ", "yellow"), moved))
        v = run.verdict
        when = run.when.strftime("%Y-%m-%d %H:%M") + ("*" if run.dated_by == DATED_BY_MTIME else "")
        rate = f"{_rate_text(v.pooled_rate)}" if v.pooled_rate else "n/a"
        per_seed = "  ".join(
            f"{'-' if s is None else s}: {_pct(r)}" for s, r in v.pass_rate_by_seed.items()
        )
        state = "" if run.complete is not False else "  INCOMPLETE"
        out.print(
            _text(
                f"    {when:<17} {rate}  {per_seed}  mean {_pct(run.mean_rate)}  "
                f"spread {v.spread:.3f}  ",
                (v.label, _LABEL_STYLE[v.label]),
                (state, "bold yellow"),
                "  ",
                (inert_line(Path(run.path).name), "dim"),
            )
        )
        if v.non_deterministic:
            listed = ", ".join(
                f"{inert_line(c)} ({_seed_text(s)})" for c, s in v.repeat_mismatches[:3]
            )
            out.print(
                _text(
                    ("      non-deterministic backend: ", "bold red"),
                    f"{len(v.repeat_mismatches)} repeated pair(s) within the run, e.g. {listed}",
                )
            )
    if any(r.dated_by == DATED_BY_MTIME for r in series.runs):
        out.print(_text(("    * no start time recorded: dated by file modification time", "dim")))
    if series.repeat_conflicts:
        c = series.repeat_conflicts[0]
        out.print(
            _text(
                ("    non-deterministic backend: ", "bold red"),
                f"{len(series.repeat_conflicts)} (case, seed) pair(s) gave a different "
                "completion across runs under the same controls and slot, e.g. ",
                f"{inert_line(c.case_id)} ({_seed_text(c.seed)}) ",
                inert_line(Path(c.first_run).name),
                " vs ",
                inert_line(Path(c.run).name),
            )
        )


# -- review -------------------------------------------------------------------------


@cli.command("review")
@click.argument("left", required=False, type=click.Path(path_type=Path))
@click.argument("right", required=False, type=click.Path(path_type=Path))
def review_cmd(left: Path | None, right: Path | None) -> None:
    """Open the review TUI: LEFT (earlier) beside RIGHT (newer), or one run alone.

    With no argument: the newest run in ./runs beside the newest earlier run on the same
    fixture set; where ./runs holds no run, the bundled demo. A file that cannot be read
    exits 3 before any screen opens.
    """
    from evalpin.core.index import pair_to_review
    from evalpin.core.runfile import read_run

    if left is None:
        left, right, note = pair_to_review(Path("runs"))
        if note:
            click.echo(note, err=True)
    left_run = read_run(left)
    right_run = read_run(right) if right is not None else None
    from evalpin.tui.app import make_app

    make_app(left_run, right_run).run()


# -- run ----------------------------------------------------------------------------


@cli.command("run")
@click.option(
    "--fixtures",
    "fixtures",
    type=click.Path(path_type=Path),
    help="Fixture set: golden JSONL or coding YAML. Default: $EVAL_DATASET.",
)
@click.option("--slot", "slot", help="Slot label from the slots file, or LABEL=replay:PATH.")
@click.option(
    "--slots",
    "slots_file",
    type=click.Path(path_type=Path),
    help="Slots file.  [default: ./slots.yaml]",
)
@click.option("--seeds", help="Comma-separated seeds. Default: $EVAL_SEEDS, else 11,29,47.")
@click.option(
    "--temperature", type=float, help="Sampling temperature. Default: $EVAL_TEMPERATURE, else 0."
)
@click.option(
    "--max-tokens", type=click.IntRange(min=1), help="Completion token cap.  [default: 2048]"
)
@click.option(
    "--loops",
    type=click.IntRange(min=0),
    help="Repair rounds for coding items (failing tail sent back).  [default: 0]",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Cases run at once (golden sets on replay slots run in one thread).  [default: cores]",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Run file to write.  [default: runs/DATE-SLOT-HASH.jsonl]",
)
@click.option(
    "--resume", is_flag=True, help="Finish the missing cases of an unfinished --out file."
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
    jobs: int | None,
    out: Path | None,
    resume: bool,
    progress: str,
) -> None:
    """Run a fixture set against a model slot and record a pinned run file.

    Exit 0 when the run finished, 1 when it failed to run, 130 when interrupted (the
    file stays whole: finish it with --resume --out FILE).
    """
    from evalpin.run.session import RunRequest, start_run

    request = RunRequest(
        fixtures=fixtures,
        slot=slot,
        slots_file=slots_file,
        seeds=seeds,
        temperature=temperature,
        max_tokens=max_tokens,
        loops=loops,
        jobs=jobs,
        out=out,
        resume=resume,
    )
    display = _RunDisplay(progress)
    code = start_run(request, os.environ, display.emit)
    display.close()
    sys.exit(code)


class _RunDisplay:
    """Shows runner events: a Rich bar on a terminal, JSON lines, or plain lines."""

    def __init__(self, mode: str) -> None:
        self.err = _console(stderr=True)
        if mode == "auto":
            mode = "bar" if self.err.is_terminal else "none"
        self.mode = mode
        self.bar = None
        self.task = None

    def emit(self, event: dict[str, Any]) -> None:
        if self.mode == "json":
            sys.stdout.write(json.dumps(event, ensure_ascii=True) + "\n")
            sys.stdout.flush()
        kind = event["event"]
        if kind == "warning":
            self._note(("warning: ", "bold yellow"), inert_line(event["message"]))
        elif kind == "start" and self.mode == "bar":
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("[bold]run[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=self.err,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(
                "run", total=event["total"], completed=event["total"] - event["todo"], status=""
            )
        elif kind == "case" and self.bar is not None:
            status = f"[green]{event['passed']} pass[/] [red]{event['failed']} fail[/]"
            self.bar.update(self.task, completed=event["done"], status=status)
        elif kind in ("done", "interrupted", "failed"):
            self.close()
            self._final(event)

    def _note(self, *parts: str | tuple[str, str]) -> None:
        if self.mode != "json":
            (self.bar.console if self.bar else self.err).print(_text(*parts))

    def _final(self, event: dict[str, Any]) -> None:
        if self.mode == "json":
            return
        out = inert_line(event.get("out", ""))
        if event["event"] == "done":
            self.err.print(
                _text(
                    ("wrote ", "green"),
                    out,
                    f": {event['passed']}/{event['records']} passed in {event['seconds']:.1f} s",
                )
            )
            self.err.print(_text(("next: ", "dim"), f"evalpin verdict {out}"))
        elif event["event"] == "interrupted":
            self.err.print(
                _text(
                    ("interrupted ", "bold yellow"),
                    f"after {event['done']} of {event['total']} cases; the file is whole.",
                )
            )
            self.err.print(_text("resume with: ", (f"evalpin run --resume --out {out}", "bold")))
        else:
            self.err.print(_text(("run failed: ", "bold red"), inert_line(event["message"])))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


# -- entry point --------------------------------------------------------------------


def _fail(message: str) -> NoReturn:
    click.echo(f"evalpin: error: {inert_line(message)}", err=True)
    sys.exit(EXIT_INPUT)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: map every input error to exit 3 and one line."""
    try:
        cli.main(args=argv, prog_name="evalpin", standalone_mode=False)
    except InputError as exc:
        _fail(str(exc))
    except click.exceptions.Abort:
        click.echo("evalpin: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_INPUT)
    except BrokenPipeError:
        sys.exit(1)
