"""`v`: the publish rule applied to each run, as a checklist; `e` exports publish cards."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from evalpin.core.judge import stats
from evalpin.core.judge.compare import Diff
from evalpin.core.judge.paired import paired_stats
from evalpin.core.judge.passk import side_by_side
from evalpin.core.judge.verdict import NOTHING_JUDGED, Check, Verdict
from evalpin.core.read.runfile import RunFile
from evalpin.core.tiers import TIER_CHANGE, tier_of
from evalpin.tui.safe import line, path_line
from evalpin.tui.widgets.pins import badge_class
from evalpin.tui.widgets.tones import restyled, tone_style

FLAKY_SHOWN = 8
STACK_BELOW = 120  # columns: below this the runs' checklists stack instead of side by side


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """Nested env components as dotted keys with JSON-ish values."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value if isinstance(value, str) else json.dumps(value, sort_keys=True)}


def _interval(rate: stats.Rate | None) -> str:
    """`  [0.44, 0.97]  5/6` for a rate, or nothing."""
    if rate is None:
        return ""
    return f"  [{rate.low:.3f}, {rate.high:.3f}]  {rate.passed}/{rate.total}"


def env_differences(left: RunFile, right: RunFile) -> list[tuple[str, str | None, str | None]]:
    """Env components that differ, and the backend tier when it differs (as history
    names it: an environment change, not a different instrument)."""
    lenv = flatten(left.header.env) if left.header else {}
    renv = flatten(right.header.env) if right.header else {}
    keys = sorted(set(lenv) | set(renv))
    diffs = [(k, lenv.get(k), renv.get(k)) for k in keys if lenv.get(k) != renv.get(k)]
    ltier = tier_of(left.header.slot if left.header else None)
    rtier = tier_of(right.header.slot if right.header else None)
    return diffs + ([(TIER_CHANGE, ltier, rtier)] if ltier != rtier else [])


class VerdictScreen(Screen[None]):
    """Each run's checklist, label, per-seed pass rates, spread, flaky cases; env diffs."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "export", "export card"),
        Binding("escape,v", "close", "back"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "verdict--ok",
        "verdict--missing",
        "verdict--key",
        "verdict--muted",
        "pins--good",
        "pins--warn",
        "pins--bad",
    }

    def __init__(
        self,
        left: RunFile,
        right: RunFile | None,
        left_verdict: Verdict,
        right_verdict: Verdict | None,
        diff: Diff | None = None,
    ) -> None:
        super().__init__()
        self.diff = diff
        self.runs = [(left, left_verdict)]
        if right is not None and right_verdict is not None:
            self.runs.append((right, right_verdict))
        self.messages: list[Text] = []
        self.paired = paired_stats(diff) if diff is not None else None
        self.stacked = False  # runs one above the other (a narrow terminal)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="verdict"):
            yield Static(markup=False, id="verdict-body")
            yield Static(markup=False, id="verdict-paired")
            yield Static(markup=False, id="verdict-env")
            yield Static(markup=False, id="verdict-export")
        yield Footer()

    def on_mount(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
        self._redraw()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted:
            restyled(self, self._redraw)

    def _style(self, name: str):
        return tone_style(self, name)

    def _redraw(self) -> None:
        names = ("left", "right") if len(self.runs) == 2 else ("run",)
        self.stacked = self.app.size.width < STACK_BELOW
        columns = [self._column(n, run, v) for n, (run, v) in zip(names, self.runs, strict=False)]
        table = Table.grid(padding=(0, 4), expand=True)
        if self.stacked:  # one run above the other, each full width
            table.add_column(ratio=1)
            for k, column in enumerate(columns):
                table.add_row(Group(Text(""), column) if k else column)
        else:
            for _ in self.runs:
                table.add_column(ratio=1)
            table.add_row(*columns)
        self.query_one("#verdict-body", Static).update(table)
        self.query_one("#verdict-paired", Static).update(self._paired())
        self.query_one("#verdict-env", Static).update(self._env())
        self.query_one("#verdict-export", Static).update(
            Group(*self.messages) if self.messages else Text("")
        )

    def _check(self, check: Check) -> Text:
        ok = check.ok
        mark = ("✓ ", self._style("verdict--ok")) if ok else ("✗ ", self._style("verdict--missing"))
        text = Text.assemble(mark, (f"{check.rule + ' ':<14}", self._style("verdict--key")))
        text.append_text(line(check.shown, width=200 if self.stacked else 44))  # stacked: whole
        return text

    def _column(self, name: str, run: RunFile, v: Verdict) -> Group:
        muted = self._style("verdict--muted")
        parts: list[Text] = [
            Text.assemble((name + "  ", "bold"), path_line(run.path, width=64)),
            Text.assemble(
                "label  ",
                (f" {v.label} ", self._style(badge_class(v.label))),
                "  ",
                (run.label(), muted),
            ),
            *(
                [Text(v.label_meaning, style=self._style("verdict--key"))]
                if v.label_meaning
                else []
            ),
            Text(""),
            Text("publish rule", style="bold"),
        ]
        parts += [self._check(check) for check in v.checklist]
        if v.reasons:
            parts.append(Text(""))
            parts.append(Text("why not publishable", style="bold"))
            parts += [Text.assemble("  - ", line(r)) for r in v.reasons]
        parts += [Text(""), Text("pass rates (95% Wilson interval)", style="bold")]
        if v.nothing_judged:  # no rate, spread or interval: never a spread that reads stable
            parts.append(Text(NOTHING_JUDGED, style=self._style("verdict--missing")))
            for note in v.notes:
                parts.append(Text.assemble(("note  ", muted), line(note)))
            return Group(*parts)
        rate = "n/a" if v.pass_rate is None else f"{v.pass_rate:.3f}"
        parts.append(Text.assemble(("overall        ", muted), rate, _interval(v.pooled_rate)))
        if v.apart:  # the denominator said: errors and disputes are not fails
            parts.append(
                Text(
                    f"               over {v.judged:,} judged; {v.apart} apart",
                    style=self._style("verdict--missing"),
                )
            )
        for seed, r in v.pass_rate_by_seed.items():
            parts.append(
                Text.assemble(
                    (f"{run.repeat_label} {'-' if seed is None else seed:<10}", muted),
                    f"{r:.3f}",
                    _interval(v.rate_by_seed.get(seed)),
                )
            )
        stable = (
            ("UNSTABLE", self._style("pins--bad"))
            if v.unstable
            else ("stable", self._style("pins--good"))
        )
        parts.append(
            Text.assemble(
                ("spread         ", muted), f"{v.spread:.3f} (band {v.band:.3f})  ", stable
            )
        )
        if v.flaky_cases:
            shown = ", ".join(v.flaky_cases[:FLAKY_SHOWN])
            more = (
                f" and {len(v.flaky_cases) - FLAKY_SHOWN} more"
                if len(v.flaky_cases) > FLAKY_SHOWN
                else ""
            )
            parts.append(
                Text.assemble(
                    ("flaky cases    ", muted), f"{len(v.flaky_cases)}: ", line(shown + more)
                )
            )
        else:
            parts.append(Text.assemble(("flaky cases    ", muted), "none"))
        if v.repeat_mismatches:
            parts.append(
                Text(
                    f"{len(v.repeat_mismatches)} repeated (case, seed) pairs did not reproduce "
                    "their digests",
                    style=self._style("pins--bad"),
                )
            )
        stability = v.stability
        if stability is not None:
            flip = stability.flip_rate
            parts.append(
                Text.assemble(
                    ("across seeds   ", muted),
                    f"{stability.stable_pass} stable pass · {stability.stable_fail} stable fail"
                    f" · {stability.flaky} flaky · flip rate "
                    + ("n/a" if flip is None else f"{flip:.3f}"),
                )
            )
        if v.power is not None:
            parts.append(Text.assemble(("sensitivity    ", muted), v.power.mde_text()))
        for n, estimate in enumerate(v.pass_at_k):
            head = "pass@k         " if n == 0 else "               "
            parts.append(Text.assemble((head, muted), estimate.describe()))
        usage = run.summary.usage if run.summary is not None else None
        if usage is not None:
            parts.append(Text.assemble(("usage          ", muted), usage.describe()))
        for note in v.notes:
            parts.append(Text.assemble(("note  ", muted), line(note)))
        return Group(*parts)

    def _paired(self) -> Group | Text:
        """The comparison of the two runs: the call over cases first (signal or within
        noise), then the exact McNemar over (case, seed) pairs as detail."""
        if self.diff is None:
            return Text("")
        head = Text("\npaired comparison, left → right", style="bold")
        if self.diff.refused:
            return Group(
                head,
                Text(
                    "refused: the triples differ, so no regression test applies (backend delta)",
                    style=self._style("pins--warn"),
                ),
            )
        result = self.paired
        if result is None:  # no (case, seed) judged on both sides: never "within noise"
            return Group(
                head,
                Text(
                    "nothing compared: no (case, seed) was judged on both sides",
                    style=self._style("pins--warn"),
                ),
            )
        muted = self._style("verdict--muted")
        c = result.clustered
        style = (
            self._style("pins--bad" if c.regressed_cases > c.fixed_cases else "pins--good")
            if c.significant
            else muted
        )
        call, _, word = c.headline().rpartition(": ")
        rows: list[Text] = [
            head,
            Text.assemble((f"{'cases':<15}", muted), call, ": ", (word, style)),
        ]
        rows += [
            Text.assemble((" " * 15, muted), detail)
            for detail in (c.difference_text(), c.needed_text(self.diff.left.repeat_label))
            if detail
        ]
        for name, p in [
            ("pairs (detail)", result.pooled),
            *((f"{self.diff.left.repeat_label} {s}", q) for s, q in result.by_seed.items()),
        ]:
            rows.append(
                Text.assemble(
                    (f"{name:<15}", muted),
                    f"{p.shared:,} shared · {p.regressed} regressed · {p.fixed} fixed · "
                    f"exact McNemar p = {p.p_value:.3g}",
                )
            )
        rows += [
            Text.assemble(("pass@k" if n == 0 else "", muted), " " * (15 - 6 * (n == 0)), line)
            for n, line in enumerate(side_by_side(result.pass_at_k))
        ]
        return Group(*rows)

    def _env(self) -> Group | Text:
        if len(self.runs) < 2:
            return Text("")
        diffs = env_differences(self.runs[0][0], self.runs[1][0])
        head = Text("\nenvironment components that differ", style="bold")
        if not diffs:
            return Group(
                head,
                Text("none: the env components are identical", style=self._style("verdict--muted")),
            )
        table = Table(box=None, padding=(0, 2), show_header=True, header_style="bold")
        table.add_column("component", no_wrap=True)
        table.add_column("left", overflow="fold")
        table.add_column("right", overflow="fold")
        for key, lv, rv in diffs:
            table.add_row(
                line(key),
                line(lv if lv is not None else "<absent>"),
                line(rv if rv is not None else "<absent>"),
            )
        return Group(head, table)

    # -- actions ---------------------------------------------------------------------

    def action_close(self) -> None:
        self.dismiss(None)

    def action_export(self) -> None:
        self.messages = [Text("exporting…", style=self._style("verdict--muted"))]
        self._redraw()
        self.export()

    @work(thread=True, exclusive=True, exit_on_error=False, group="export")
    def export(self) -> None:
        """Write a card beside each publishable run; say why not for the others."""
        from evalpin.core.judge.card import NotPublishable, export_card

        out: list[tuple[str, str]] = []
        names = ("left", "right") if len(self.runs) == 2 else ("run",)
        for name, (run, v) in zip(names, self.runs, strict=False):
            try:
                path = export_card(run, v, paired=self.paired)
            except NotPublishable as exc:
                out.append(("bad", f"{name}: no card: {exc}"))
            except OSError as exc:
                out.append(("bad", f"{name}: card not written: {exc.strerror or exc}"))
            else:
                out.append(("good", f"{name}: publish card written to {path}"))
        self.app.call_from_thread(self._exported, out)

    def _exported(self, out: list[tuple[str, str]]) -> None:
        styles = {"good": self._style("pins--good"), "bad": self._style("pins--warn")}
        self.messages = [line(text, styles[kind], width=400) for kind, text in out]
        self._redraw()
        for kind, text in out:
            self.notify(text, severity="information" if kind == "good" else "warning", markup=False)
