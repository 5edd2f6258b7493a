"""The publish card: a Markdown summary written beside a publishable run file.

Headless (no Textual import). It carries the four pins, the seeds, per-seed pass rates,
the spread, the smallest drop the run can detect, the comparison it was exported beside
(the call over cases first), the metric family (pass rate, static-check violations, mean
repair loops, latency p50 and max) and the verdict's notes (e.g. "backend tier not
declared"). Written only for a run whose verdict is `publishable`, by the TUI (`e` on the
verdict screen, beside the run) and by `evalpin verdict RUN --card PATH`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from evalpin.core.files import write_atomic
from evalpin.core.judge.mcnemar import p_text
from evalpin.core.judge.paired import PairedStats
from evalpin.core.judge.verdict import NOTHING_JUDGED, PUBLISHABLE, Verdict
from evalpin.core.read.rundata import RunFile
from evalpin.core.reasons import is_static
from evalpin.core.sanitize import inert_line


@dataclass(frozen=True)
class Metrics:
    records: int
    pass_rate: float | None
    static_violations: int
    mean_loops: float | None
    latency_p50: float | None
    latency_max: float | None


def metrics(run: RunFile) -> Metrics:
    """The metric family, from every record decoded in full (reasons, loops, seconds)."""
    records = run.records(range(len(run.rows))).values()
    static = loops_total = loops_n = 0
    seconds = []
    for rec in records:
        if any(is_static(r) for r in rec.reasons or ()):
            static += 1
        if rec.loops is not None:
            loops_total += rec.loops
            loops_n += 1
        if rec.seconds is not None:
            seconds.append(rec.seconds)
    n = len(run.rows)
    return Metrics(
        records=n,
        pass_rate=sum(r.passed for r in run.rows) / n if n else None,
        static_violations=static,
        mean_loops=loops_total / loops_n if loops_n else None,
        latency_p50=statistics.median(seconds) if seconds else None,
        latency_max=max(seconds) if seconds else None,
    )


def card_path(run: RunFile) -> Path:
    path = Path(run.path)
    return path.with_name(path.stem + ".card.md")


def _md(value: object) -> str:
    """A value for a Markdown table cell: inert, pipes and backticks escaped."""
    return inert_line(str(value)).replace("|", "\\|").replace("`", "'")


def _num(value: float | None, fmt: str = ".3f", unit: str = "") -> str:
    return "n/a" if value is None else f"{value:{fmt}}{unit}"


def _comparison(paired: PairedStats) -> list[str]:
    """The paired comparison the card was exported beside: the call over cases first,
    the pooled (case, seed) pairs test only as detail."""
    c, p = paired.clustered, paired.pooled
    lines = ["", "## Compared left -> right", "", f"**{_md(c.headline())}**."]
    for detail in (c.difference_text(), c.needed_text()):
        if detail:
            lines += ["", _md(detail[0].upper() + detail[1:]) + "."]
    lines += [
        "",
        f"Detail, counting seeds as independent pairs: {p.regressed} regressed, {p.fixed} "
        f"fixed of {p.shared} (case, seed) pairs, exact McNemar {p_text(p.p_value)}.",
    ]
    return lines


def render_card(
    run: RunFile, verdict: Verdict, m: Metrics, paired: PairedStats | None = None
) -> str:
    h = run.header
    lines = [
        f"# Publish card: {_md(Path(run.path).name)}",
        "",
        f"Verdict: **{verdict.label}** (evalpin publish rule).",
        "",
        "| publish rule | value |",
        "|---|---|",
        *(f"| {_md(c.rule)} | {_md(c.shown)} |" for c in verdict.checklist),
    ]
    if h is not None:
        envelope = h.fixtures.envelope_hash or "not recorded"
        seal = h.seal
        where = (
            f", published in commit `{_md(seal.commit)}` at {_md(seal.committed_at)}"
            f" ({_md(seal.lock)}) before the run started at {_md(h.started_at)}"
            if seal is not None and seal.commit
            else ", not published before the run started"
        )
        lines += [
            f"| dataset | {_md(h.fixtures.dataset_id or h.fixtures.path)}"
            f"{' ' + _md(h.fixtures.dataset_version) if h.fixtures.dataset_version else ''} |",
            f"| envelope hash (publish this) | `{_md(envelope)}`{where} |",
            f"| grader version | `{_md(h.grader_version)}` |",
            f"| model slot | {_md(h.model_slot)} |",
        ]
    lines += ["", "## Pass rate per seed", "", "| seed | pass rate |", "|---|---|"]
    for seed, rate in verdict.pass_rate_by_seed.items():
        lines.append(f"| {'-' if seed is None else seed} | {rate:.3f} |")
    stability = "UNSTABLE" if verdict.unstable else "stable"
    if verdict.nothing_judged:
        lines += ["", f"{NOTHING_JUDGED[0].upper()}{NOTHING_JUDGED[1:]}."]
    else:
        lines += [
            "",
            f"Spread across seeds: {verdict.spread:.3f} (band {verdict.band:.3f}, {stability}).",
        ]
    if verdict.power is not None:
        lines += ["", f"Sensitivity: {_md(verdict.power.mde_text())}."]
    if verdict.pass_at_k:
        lines += ["", "pass@k (Chen et al. 2021, unbiased; ± one standard error over problems):"]
        lines += ["", *(f"- {_md(p.describe())}" for p in verdict.pass_at_k)]
    if paired is not None:
        lines += _comparison(paired)
    lines += [
        "",
        "## Metrics",
        "",
        "| metric | value |",
        "|---|---|",
        f"| records | {m.records} |",
        f"| pass rate | {_num(m.pass_rate)} |",
        f"| static-check violations | {m.static_violations} |",
        f"| mean repair loops | {_num(m.mean_loops, '.2f')} |",
        f"| latency p50 | {_num(m.latency_p50, '.2f', ' s')} |",
        f"| latency max | {_num(m.latency_max, '.2f', ' s')} |",
    ]
    if verdict.flaky_cases:
        lines += [
            "",
            f"Flaky cases (pass on some seeds, fail on others): {len(verdict.flaky_cases)}.",
        ]
    if verdict.notes:
        lines += ["", "## Notes", "", *(f"- {_md(note)}" for note in verdict.notes)]
    return "\n".join(lines) + "\n"


class NotPublishable(ValueError):
    """The card was refused: the message says why, the same on every face."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(f"not publishable ({why_not(verdict)})")


def export_card(
    run: RunFile, verdict: Verdict, path: Path | None = None, paired: PairedStats | None = None
) -> Path:
    """Write the card atomically (default: beside the run file); only when publishable.
    `paired`: the comparison it was exported beside (the TUI's two runs), if any."""
    if verdict.label != PUBLISHABLE:
        raise NotPublishable(verdict)
    text = render_card(run, verdict, metrics(run), paired)
    path = card_path(run) if path is None else path
    write_atomic(path, text)
    return path


def why_not(verdict: Verdict) -> str:
    """One line: the label and every reason that stands between the run and publication."""
    return f"{verdict.label}: " + "; ".join(verdict.reasons or ["not publishable"])
