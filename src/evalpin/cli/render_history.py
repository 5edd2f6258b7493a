"""Terminal text for `evalpin history`: series, the breaks between them, per-run rates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalpin.cli.console import console, pct, rate_text, seed_text, text
from evalpin.cli.render_verdict import LABEL_STYLE
from evalpin.core.sanitize import inert_line


def _value_text(value: Any) -> str:
    if value is None:
        return "<missing>"
    return inert_line(value if isinstance(value, str) else json.dumps(value, sort_keys=True))


def _changes_text(changes) -> str:  # changes: list[history.Change]
    return "; ".join(
        f"{inert_line(c.key)} {_value_text(c.before)} -> {_value_text(c.after)}" for c in changes
    )


def print_history(history) -> None:  # history: history.History
    out = console()
    out.print(
        text(
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
            out.print(text(("fixtures  ", "bold"), _value_text(series.fixtures)))
        elif (brk := breaks.get(series.index)) is not None:
            overlap = " (the two series overlap in time)" if brk.overlap else ""
            out.print(
                text(
                    ("  break   ", "dim"),
                    (", ".join(brk.kinds), "bold magenta"),
                    ": ",
                    _changes_text(brk.changes),
                    f"; not a trend: a new series starts{overlap}",
                )
            )
            if brk.edit is not None:
                out.print(text(("          ", "dim"), inert_line(brk.edit.describe(limit=5))))
                if brk.edit.flag():
                    out.print(text(("          ", "dim"), (brk.edit.flag(), "bold red")))
        _print_series(out, series)
    if history.unreadable:
        out.print(text(("unreadable", "bold red")))
        for u in history.unreadable:
            out.print(text("  ", inert_line(u.error)))


def _print_series(out, series) -> None:  # series: history.Series
    from evalpin.core.judge.series import DATED_BY_MTIME

    pins = series.pins
    dataset = pins["dataset_hash"]
    out.print(
        text(
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
            text(
                ("    unpinned: ", "bold yellow"),
                ", ".join(series.unpinned) + " missing; comparable with no other run",
            )
        )
    for run in series.runs:
        if run.env_change is not None:
            moved = _changes_text(run.env_change) or "components not recorded"
            out.print(text(("    ~ environment change: ", "yellow"), moved))
        v = run.verdict
        when = run.when.strftime("%Y-%m-%d %H:%M") + ("*" if run.dated_by == DATED_BY_MTIME else "")
        rate = f"{rate_text(v.pooled_rate)}" if v.pooled_rate else "n/a"
        per_seed = "  ".join(
            f"{'-' if s is None else s}: {pct(r)}" for s, r in v.pass_rate_by_seed.items()
        )
        state = "" if run.complete is not False else "  INCOMPLETE"
        if v.apart:  # the rate is over the judged cases
            state += f"  {v.apart} apart"
        out.print(
            text(
                f"    {when:<17} {rate}  {per_seed}  mean {pct(run.mean_rate)}  "
                f"spread {v.spread:.3f}  ",
                (v.label, LABEL_STYLE[v.label]),
                (state, "bold yellow"),
                "  ",
                (inert_line(Path(run.path).name), "dim"),
            )
        )
        if run.reproduces is not None:
            out.print(
                text(
                    ("      reproduction of ", "bold"),
                    inert_line(Path(run.reproduces).name),
                    ": the same recorded answers replayed; it measures nothing new",
                )
            )
        if v.non_deterministic:
            listed = ", ".join(
                f"{inert_line(c)} ({seed_text(s, run.repeat_label)})"
                for c, s in v.repeat_mismatches[:3]
            )
            out.print(
                text(
                    ("      non-deterministic backend: ", "bold red"),
                    f"{len(v.repeat_mismatches)} repeated pair(s) within the run, e.g. {listed}",
                )
            )
    if any(r.dated_by == DATED_BY_MTIME for r in series.runs):
        out.print(text(("    * no start time recorded: dated by file modification time", "dim")))
    if series.repeat_conflicts:
        c = series.repeat_conflicts[0]
        word = series.runs[0].repeat_label if series.runs else "seed"
        out.print(
            text(
                ("    non-deterministic backend: ", "bold red"),
                f"{len(series.repeat_conflicts)} (case, {word}) pair(s) gave a different "
                "completion across runs under the same controls and slot, e.g. ",
                f"{inert_line(c.case_id)} ({seed_text(c.seed, word)}) ",
                inert_line(Path(c.first_run).name),
                " vs ",
                inert_line(Path(c.run).name),
            )
        )
