"""`h`: the runs folder as history. Series by instrument, a chart, the runs in a table.

The folder (by default the left run's) is read with `core.history.load_history` in a
thread worker that posts `HistoryRead` (or `HistoryFailed`); `r` reads it again. The
chart shows the series of the fixture set under the table's cursor, one line each,
never joined across a break. Space marks a run (two at most); Enter dismisses with the
marked pair, older first, and the review screen opens it with `open_runs`: the path
`evalpin review LEFT RIGHT` takes, so two runs of one series open side by side and two
runs of different series meet the blocking banner.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual.worker import Worker, WorkerState

from evalpin.core.errors import InputError
from evalpin.core.judge.history import load_history
from evalpin.core.judge.series import History, HistoryRun, Series
from evalpin.core.sanitize import inert_line
from evalpin.tui.messages import HistoryFailed, HistoryRead
from evalpin.tui.safe import line, path_line
from evalpin.tui.widgets.history_table import HistoryTable, column_heading, history_rows
from evalpin.tui.widgets.tones import restyled, tone_style
from evalpin.tui.widgets.trend import Line, Point, TrendChart

if TYPE_CHECKING:
    from evalpin.tui.app import EvalpinApp

PAIR = 2
WHEN = "%Y-%m-%d %H:%M"


def legend_label(series: Series) -> str:
    """`2 lab_free_1 · orders-mini@fp_3a1c · g 9729b85f`: slot, reported model, grader."""
    pins = series.pins
    grader = pins["grader_version"]
    parts = [
        f"{series.index} {pins['model_slot'] or '<no slot>'}",
        pins["reported_model"] or "<no model reported>",
        f"g {grader[:8]}" if grader else "<no grader>",
    ]
    label = " · ".join(inert_line(p) for p in parts)
    return label + (" (unpinned)" if series.unpinned else "")


def run_name(run: HistoryRun, series: Series) -> str:
    return f"s{series.index} {run.when.strftime(WHEN)}"


class HistoryScreen(Screen[tuple[str, str] | None]):
    """Every run of a folder: chart above, table below; dismisses with a pair to open."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "mark", "mark", tooltip="mark a run, two at most (Space again unmarks)"),
        Binding(
            "enter,o",
            "open",
            "open pair",
            key_display="⏎",
            tooltip="open the marked pair: one series side by side, two: the banner",
        ),
        Binding("r", "reload", "reload", tooltip="read the folder again"),
        Binding("escape,h", "close", "back", tooltip="back to the cases"),
        Binding("question_mark", "help", "help", key_display="?", tooltip="every key"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "history-status--muted",
        "history-status--key",
        "history-status--good",
        "history-status--warn",
        "history-status--bad",
    }

    def __init__(self, folder: str | Path, *, current: str | None = None) -> None:
        super().__init__()
        self.folder = Path(folder)
        self.start_at = current  # the run the cursor starts on (the review's), by path
        self.history: History | None = None
        self.marked: list[str] = []
        self.series_of: dict[str, Series] = {}  # run path -> its series
        self.colours: dict[int, int] = {}  # series number -> palette slot
        self.charted: object = object()  # the fixture set the chart shows
        self.generation = 0
        self.error: str | None = None

    # -- layout ----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(markup=False, id="history-status")
        yield TrendChart(id="trend")
        yield Static(Text(column_heading()), markup=False, id="history-columns")
        yield HistoryTable(id="history-runs")
        yield Static(markup=False, id="history-marks")
        yield Footer()

    @property
    def table(self) -> HistoryTable:
        return self.query_one(HistoryTable)

    @property
    def chart(self) -> TrendChart:
        return self.query_one(TrendChart)

    def on_mount(self) -> None:
        self.table.focus()
        self.watch(self.table, "cursor", self._cursor_moved, init=False)
        self.action_reload()

    # -- loading ---------------------------------------------------------------------

    def action_reload(self) -> None:
        """(Re)read the folder; the marks and the cursor survive where their runs do."""
        self.generation += 1
        self.error = None
        if self.history is None:
            reading = f"reading {inert_line(str(self.folder))}…"
            self.table.show_empty(reading)
            self.chart.show_empty(reading)
        self._update_status(reading=True)
        self.load(self.folder, self.generation)

    @work(thread=True, exclusive=True, exit_on_error=False, group="history")
    def load(self, folder: Path, generation: int) -> None:
        """Read every run file of `folder` into series; post the result."""
        try:
            history = load_history(folder)
        except InputError as exc:
            self.post_message(HistoryFailed(str(exc), generation))
            return
        except OSError as exc:
            self.post_message(HistoryFailed(f"{folder}: {exc.strerror or exc}", generation))
            return
        self.post_message(HistoryRead(history, generation))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "history" and event.state == WorkerState.ERROR:
            error = event.worker.error
            self.post_message(HistoryFailed(f"{type(error).__name__}: {error}", self.generation))

    @on(HistoryFailed)
    def _failed(self, message: HistoryFailed) -> None:
        if message.generation != self.generation:
            return
        self.error = message.error
        self.history = None
        self.table.show_empty("cannot read the runs folder: " + inert_line(message.error))
        self.chart.show_empty("no history")
        self._update_status()

    @on(HistoryRead)
    def _read(self, message: HistoryRead) -> None:
        if message.generation != self.generation:
            return
        keep = self.table.current.path if self.table.current is not None else self.start_at
        history = self.history = message.history
        self.series_of = {run.path: s for s in history.series for run in s.runs}
        self.colours = {}
        tracks: dict[str | None, int] = {}
        for s in history.series:
            self.colours[s.index] = tracks.get(s.fixtures, 0)
            tracks[s.fixtures] = self.colours[s.index] + 1
        self.marked = [path for path in self.marked if path in self.series_of]
        self.charted = object()
        rows = history_rows(history)
        if not rows:
            self.table.show_empty(f"no run files in {inert_line(history.folder)}")
            self.chart.show_empty("no runs to chart")
        else:
            self.table.show(rows, self.colours)
            paths = [Path(run.path).resolve() for run in self.table.runs]
            target = Path(keep).resolve() if keep else None
            self.table.move_to(paths.index(target) if target in paths else len(paths) - 1)
            self.table.set_marked(self.marked)
        if not history.runs:
            self.chart.show_empty("no runs to chart")
        self._cursor_moved()
        self._update_status()

    # -- chart and status ------------------------------------------------------------

    def _cursor_moved(self) -> None:
        """The chart follows the cursor: the fixture set of its run, the run highlighted."""
        current = self.table.current
        if self.history is None or current is None:
            self.chart.highlight(None)
            return
        series = self.series_of[current.path]
        if series.fixtures != self.charted:
            self._chart(series.fixtures)
        self.chart.highlight(current.path, self.marked)

    def _chart(self, fixtures: str | None) -> None:
        assert self.history is not None
        self.charted = fixtures
        track = [s for s in self.history.series if s.fixtures == fixtures]
        lines = [
            Line(
                s.index,
                self.colours[s.index],
                legend_label(s),
                tuple(
                    Point(r.path, r.when, r.mean_rate) for r in s.runs if r.mean_rate is not None
                ),
            )
            for s in track
        ]
        first = {s.index: s.runs[0].path for s in track}
        breaks_at = [first[b.after] for b in self.history.breaks if b.after in first]
        env_at = [r.path for s in track for r in s.runs if r.env_change is not None]
        runs = sorted(r.when for s in track for r in s.runs)
        span = runs[0].strftime("%Y-%m-%d")
        if runs[-1].date() != runs[0].date():
            span += " → " + runs[-1].strftime("%Y-%m-%d")
        names = list(dict.fromkeys(s.fixtures for s in self.history.series))
        title = f"pass rate, mean over seeds · {inert_line(str(fixtures))} · {span}"
        if len(names) > 1:
            which = names.index(fixtures) + 1
            title += f" · fixture set {which} of {len(names)} (follows the cursor)"
        self.chart.show(lines, title=title, breaks_at=breaks_at, env_at=env_at)

    def _style(self, name: str):
        return tone_style(self, name)

    def _update_status(self, *, reading: bool = False) -> None:
        muted, key = self._style("history-status--muted"), self._style("history-status--key")
        text = Text.assemble(("history  ", key), path_line(self.folder, width=64))
        history = self.history
        if self.error is not None:
            text.append("   cannot read: ", style=self._style("history-status--bad"))
            text.append_text(line(self.error, width=100))
        elif history is None or reading:
            text.append("   reading…", style=muted)
        if history is not None:
            text.append(
                f"   {history.runs} run{'s' if history.runs != 1 else ''} · "
                f"{len(history.series)} series · {len(history.breaks)} "
                f"break{'s' if len(history.breaks) != 1 else ''}",
                style=muted,
            )
            if history.unreadable:
                text.append(
                    f" · {len(history.unreadable)} unreadable",
                    style=self._style("history-status--bad"),
                )
        self.query_one("#history-status", Static).update(text)
        marks = self._pair_text() if history is not None else Text("")
        self.query_one("#history-marks", Static).update(marks)

    def _pair_text(self) -> Text:
        muted = self._style("history-status--muted")
        marked = self._pair()
        if not marked:
            return Text("space marks a run, ⏎ opens two", style=muted)
        names = " + ".join(run_name(r, self.series_of[r.path]) for r in marked)
        text = Text.assemble(("marked ", muted), (names, self._style("history-status--key")))
        if len(marked) < PAIR:
            text.append("   mark one more", style=muted)
        elif self.series_of[marked[0].path] is self.series_of[marked[1].path]:
            good = self._style("history-status--good")
            text.append("   one series: ⏎ opens them side by side", style=good)
        else:
            text.append(
                "   different series: ⏎ meets the refusal banner",
                style=self._style("history-status--warn"),
            )
        return text

    def _pair(self) -> list[HistoryRun]:
        """The marked runs, older first."""
        runs = [r for s in (self.history.series if self.history else []) for r in s.runs]
        by_path = {r.path: r for r in runs}
        return sorted((by_path[p] for p in self.marked), key=lambda r: (r.when, r.path))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.is_mounted:
            restyled(self, self._update_status)

    # -- actions ---------------------------------------------------------------------

    def action_mark(self) -> None:
        current = self.table.current
        if current is None:
            return
        if current.path in self.marked:
            self.marked.remove(current.path)
        elif len(self.marked) >= PAIR:
            self.notify("two runs are marked already: space on one of them unmarks it", timeout=3)
            return
        else:
            self.marked.append(current.path)
        self.table.set_marked(self.marked)
        self.chart.highlight(current.path, self.marked)
        self._update_status()

    def action_open(self) -> None:
        """Open the two marked runs in the review, older on the left."""
        pair = self._pair()
        if len(pair) != PAIR:
            self.notify("mark two runs with space, then ⏎ opens them", timeout=3)
            return
        self.dismiss((pair[0].path, pair[1].path))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_help(self) -> None:
        cast("EvalpinApp", self.app).show_help()
