"""The runs of a history as a table: fixture sets, series, the breaks between them, runs,
and the files that could not be read.

A `CursorView` like the case list: `history_rows` lays a `History` out as rows
once, and only the rows on screen become strips. The cursor moves over run rows only;
headings, break separators and unreadable files are inert text. Every string from a run
file (slot labels, models, env values, case ids, paths, errors) is made inert and
rendered as a plain segment, never as markup.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from rich.segment import Segment
from textual.strip import Strip

from evalpin.core.judge.series import (
    DATED_BY_MTIME,
    ENV_CHANGE,
    Break,
    Change,
    History,
    HistoryRun,
    Series,
    Unreadable,
)
from evalpin.core.sanitize import inert_line
from evalpin.core.tiers import TIER_CHANGE
from evalpin.tui.widgets.cursor_view import CursorView
from evalpin.tui.widgets.tones import component_css, tone_style, verdict_tone
from evalpin.tui.widgets.trend import MARKED, PALETTE

FIXTURES, SERIES, NOTE, BREAK, RUN, UNREADABLE, ERROR, BLANK = (
    "fixtures",
    "series",
    "note",
    "break",
    "run",
    "unreadable",
    "error",
    "blank",
)
# Run columns: heading and width (the file name takes what is left).
COLUMNS = (
    ("", 2),
    ("series", 7),
    ("started", 18),
    ("mean", 7),
    ("per seed %", 27),
    ("spread", 7),
    ("verdict", 18),
    ("notes", 18),
    ("file", 0),
)
VALUE_WIDTH = 40
WRAP_INDENT = 4  # cells before the continuation of a wrapped heading or note
FILE_MARK = "\0"  # where the file name starts: a long one is cut from its start

Cells = list[tuple[str, str | None]]  # text and a component class (None: plain)


@dataclass(frozen=True)
class Row:
    """One line of the table; `run` is set on run rows (the only ones the cursor visits)."""

    kind: str
    series: Series | None = None
    run: HistoryRun | None = None
    brk: Break | None = None
    text: str = ""
    part: int = 0
    """Which piece of a heading or note too long for the table's width (0: its start;
    the rest follow on lines of their own, indented: see `HistoryTable.wrapped`)."""


def value_text(value: object, width: int = VALUE_WIDTH) -> str:
    """A pin or env value, inert and cut: `<missing>` when absent."""
    text = "<missing>" if value is None else inert_line(str(value))
    return text if len(text) <= width else text[: width - 1] + "…"


def changes_text(changes: Sequence[Change]) -> str:
    return " · ".join(
        f"{inert_line(c.key)} {value_text(c.before)} → {value_text(c.after)}" for c in changes
    )


def history_rows(history: History) -> list[Row]:
    """The history as rows: per fixture set its series in order, each series after the
    break that started it; the unreadable files last."""
    breaks = {b.after: b for b in history.breaks}
    rows: list[Row] = []
    fixtures: object = object()
    for series in history.series:
        if series.fixtures != fixtures:
            fixtures = series.fixtures
            if rows:
                rows.append(Row(BLANK))
            rows.append(Row(FIXTURES, series=series))
        elif (brk := breaks.get(series.index)) is not None:
            pins = [c for c in brk.changes if not c.key.startswith("env.")]
            env = [c for c in brk.changes if c.key.startswith("env.")]
            rows.append(Row(BREAK, series=series, brk=brk))
            if pins:
                rows.append(Row(BREAK, series=series, text="   moved  " + changes_text(pins)))
            if env:
                moved = [Change(c.key[4:], c.before, c.after) for c in env]
                rows.append(Row(BREAK, series=series, text="   env    " + changes_text(moved)))
        rows.append(Row(SERIES, series=series))
        rows += [Row(NOTE, series=series, text=note) for note in series_notes(series)]
        rows += [Row(RUN, series=series, run=run) for run in series.runs]
    if history.unreadable:
        if rows:
            rows.append(Row(BLANK))
        rows.append(Row(UNREADABLE, text=f"unreadable files ({len(history.unreadable)})"))
        rows += [Row(ERROR, text=unreadable_text(u)) for u in history.unreadable]
    return rows


def unreadable_text(u: Unreadable) -> str:
    """`name: what is wrong`, the folder dropped from the error (it names the file)."""
    error = u.error[len(u.path) :].lstrip(": ") if u.error.startswith(u.path) else u.error
    name = Path(u.path).name
    return inert_line(f"{name}: {error}" if not error.startswith(name) else error)


def label_class(label: str) -> str:
    return f"history--{verdict_tone(label)}"


def pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{100 * rate:.1f}%"


def _moved_key(change: Change) -> str:
    """A moved env component by name; a moved backend tier names the tier it moved to."""
    if change.key == TIER_CHANGE:
        return f"tier {inert_line(str(change.after))}"
    return inert_line(change.key)


def run_notes(run: HistoryRun) -> list[tuple[str, str]]:
    """Short flags for a run row: a reproduction (of which run), env change (and what
    moved), incomplete, non-det, cases not judged (error, disputed)."""
    notes = []
    if run.reproduces is not None:  # the same recording replayed: not a night
        notes.append(("reproduction", "history--warn"))
    if run.env_change is not None:
        moved = ", ".join(map(_moved_key, run.env_change)) or "env"
        notes.append(("~ " + moved, "history--env"))
    if run.complete is False:
        notes.append(("INCOMPLETE", "history--bad"))
    if run.verdict.non_deterministic:
        notes.append(("non-det", "history--bad"))
    if run.verdict.errors:
        notes.append((f"{run.verdict.errors} err", "history--warn"))
    if run.verdict.disputed:
        notes.append((f"{run.verdict.disputed} disputed", "history--warn"))
    return notes


def fit(text: str, width: int) -> str:
    """`text` in a column of `width` cells: cut (with an ellipsis) to leave one blank
    cell before the next column, and padded."""
    if len(text) > width - 1:
        text = text[: max(0, width - 2)] + "…" if width > 1 else ""
    return text.ljust(width)


def column_heading() -> str:
    return "".join(fit(name, width) if width else name for name, width in COLUMNS)


def run_cells(run: HistoryRun, series: Series, marked: bool, colour: int) -> Cells:
    v = run.verdict
    widths = [w for _, w in COLUMNS]
    when = run.when.strftime("%Y-%m-%d %H:%M") + ("*" if run.dated_by == DATED_BY_MTIME else "")
    seeds = " ".join(
        f"{'-' if s is None else s}:{100 * r:.1f}" for s, r in v.pass_rate_by_seed.items()
    )
    notes = run_notes(run)
    cells: Cells = [
        ((" " + (MARKED if marked else " ")).ljust(widths[0]), "history--marked"),
        (fit(f"━ {series.index}", widths[1]), f"trend--s{colour % PALETTE}"),
        (fit(when, widths[2]), None),
        (fit(pct(run.mean_rate), widths[3]), "history--key"),
        (fit(seeds or "-", widths[4]), None),
        (fit(f"{100 * v.spread:.1f}", widths[5]), "history--warn" if v.unstable else None),
        (fit(v.label, widths[6]), label_class(v.label)),
    ]
    room = widths[7] - 1
    for text, cls in notes:
        if room <= 1:
            break
        piece = text if len(text) < room else text[: room - 2] + "…"
        cells.append((piece + " ", cls))
        room -= len(piece) + 1
    cells.append((" " * max(0, room + 1), None))
    cells.append((FILE_MARK + inert_line(Path(run.path).name), "history--muted"))
    if run.reproduces is not None:
        cells.append((f" = {inert_line(Path(run.reproduces).name)}", "history--warn"))
    return cells


def series_cells(series: Series, colour: int) -> Cells:
    pins = series.pins
    dataset = pins["dataset_hash"]
    n = len(series.runs)
    cells: Cells = [
        (" ━━ ", f"trend--s{colour % PALETTE}"),
        (f"series {series.index}", "history--heading"),
        ("  slot ", "history--muted"),
        (value_text(pins["model_slot"]), None),
        ("  model ", "history--muted"),
        (value_text(pins["reported_model"]), None),
        ("  grader ", "history--muted"),
        (value_text(pins["grader_version"], 16), None),
        ("  dataset ", "history--muted"),
        (value_text(dataset[:12] if dataset else None), None),
        (f"  {n} run{'s' if n != 1 else ''}", "history--muted"),
    ]
    return cells


def series_notes(series: Series) -> list[str]:
    """What makes a series suspect: a missing pin, a backend that did not reproduce."""
    notes = []
    if series.unpinned:
        missing = ", ".join(series.unpinned)
        notes.append(f"unpinned: {missing} missing, so comparable with no other run")
    if series.non_deterministic:
        conflicts = series.repeat_conflicts
        within = [m for r in series.runs for m in r.verdict.repeat_mismatches]
        case_id, seed = (conflicts[0].case_id, conflicts[0].seed) if conflicts else within[0]
        count = len(conflicts) + len(within)
        word = series.runs[0].repeat_label if series.runs else "seed"
        where = f"no {word}" if seed is None else f"{word} {seed}"
        notes.append(
            f"non-deterministic backend: {count} repeated (case, {word}) pair(s) gave another "
            f"completion, e.g. {value_text(case_id)} ({where})"
        )
    return notes


def break_cells(row: Row, width: int) -> Cells:
    brk = row.brk
    if brk is None:
        return [(row.text, "history--muted")]
    kinds = " · ".join(brk.kinds)
    head = f" ╌╌ break: {kinds} ╌╌ not a trend: a new series starts"
    if brk.overlap:
        head += " (the two series overlap in time)"
    if ENV_CHANGE in brk.kinds and not any(c.key.startswith("env.") for c in brk.changes):
        head += " (env components not recorded)"
    if brk.edit is not None:
        head += f" · {inert_line(brk.edit.describe())}"
        if brk.edit.no_bump:
            head += " · EDITED WITHOUT A VERSION BUMP"
    return [(head + " " + "╌" * max(0, width - len(head) - 1), "history--break")]


class HistoryTable(CursorView):
    """Fixture sets, series headings, break separators and runs; the cursor on runs."""

    # Each component class and its tone (tones.py): its style here, and its name for Textual.
    TONES_OF: ClassVar[dict[str, str]] = {
        "history--muted": "muted",
        "history--heading": "strong",
        "history--key": "strong",
        "history--good": "good",
        "history--warn": "warn",
        "history--env": "warn",
        "history--break": "alert",
        "history--bad": "bad",
        "history--marked": "marked",
        "history--cursor": "cursor",
        "history--cursor-blurred": "cursor-blurred",
        **{f"trend--s{k}": f"series-{k}" for k in range(PALETTE)},
    }
    DEFAULT_CSS = component_css("HistoryTable", TONES_OF)

    CURSOR_CLASSES = ("history--cursor", "history--cursor-blurred")
    CACHE_SIZE = 512
    COMPONENT_CLASSES: ClassVar[set[str]] = set(TONES_OF)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.logical: list[Row] = []  # as given to `show`
        self.rows: list[Row] = []  # as drawn, one a line (long headings wrapped)
        self._wrap_width = 0
        self.colours: dict[int, int] = {}
        self.marked: tuple[str, ...] = ()

    # -- data ------------------------------------------------------------------------

    def show(self, rows: list[Row], colours: dict[int, int], cursor: int = 0) -> None:
        """Show `rows`; `colours` maps a series number to its palette slot."""
        self.logical, self.colours = rows, colours
        self._wrap_width = self.scrollable_content_region.width
        self.rows = self.wrapped(rows, self._wrap_width)
        stops = [k for k, row in enumerate(self.rows) if row.kind == RUN and not row.part]
        self.reset(stops, cursor)

    def wrapped(self, rows: list[Row], width: int) -> list[Row]:
        """`rows` with continuation lines after each row too long for `width` (a narrow
        terminal), so none of it is cut off: a heading, a note, or what a run's columns
        leave over (its verdict, notes and file name; the cursor stops on its first line).
        Nothing is split: whole pieces move to the next line (`layout`)."""
        if width <= WRAP_INDENT + 1:
            return list(rows)
        out: list[Row] = []
        for row in rows:
            out.append(row)
            if row.kind == BLANK:
                continue
            lines = layout(self._cells(row, width, False), width, row.kind == RUN)
            out += [replace(row, part=k) for k in range(1, len(lines))]
        return out

    def _scroll_into_view(self, old: int) -> None:
        """As a one-line row, and then the run's continuation lines too, where they fit."""
        super()._scroll_into_view(old)
        line = self.cursor_line
        if line is None:
            return
        last = line
        while last + 1 < len(self.rows) and self.rows[last + 1].part:
            last += 1
        height = self.scrollable_content_region.height
        if height and last - line < height and last >= round(self.scroll_y) + height:
            self.scroll_to(y=last - height + 1, animate=False)

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if self.logical and width != self._wrap_width:
            self.show(self.logical, self.colours, self.cursor)

    def show_empty(self, message: str) -> None:
        self.rows = self.logical = []
        self.placeholder = message
        self.reset([], None)

    def set_marked(self, marked: Sequence[str]) -> None:
        self.marked = tuple(marked)
        self.redraw()

    @property
    def run_rows(self) -> Sequence[int]:
        """Row positions of the runs, top to bottom (where the cursor may stop)."""
        return self.stops

    @property
    def runs(self) -> list[HistoryRun]:
        return [self.rows[k].run for k in self.stops]  # type: ignore[misc]

    @property
    def current(self) -> HistoryRun | None:
        """The run under the cursor, or None when there is none."""
        line = self.cursor_line
        return None if line is None else self.rows[line].run

    def text(self) -> str:
        """Every row as plain text (what scrolling would show)."""
        width = max(120, self.scrollable_content_region.width)
        return "\n".join(
            "".join(
                t.lstrip(FILE_MARK) for t, _ in self._cells(row, width, self._marked(row))
            ).rstrip()
            for row in self.logical
        )

    def _marked(self, row: Row) -> bool:
        return row.run is not None and row.run.path in self.marked

    def line_count(self) -> int:
        return len(self.rows)

    def line_key(self, line: int) -> tuple[int, bool]:
        return line, self._marked(self.rows[line])

    def _cells(self, row: Row, width: int, marked: bool) -> Cells:
        colour = self.colours.get(row.series.index, 0) if row.series is not None else 0
        if row.kind == RUN and row.run is not None and row.series is not None:
            return run_cells(row.run, row.series, marked, colour)
        if row.kind == SERIES and row.series is not None:
            return series_cells(row.series, colour)
        if row.kind == BREAK:
            return break_cells(row, width)
        if row.kind == FIXTURES and row.series is not None:
            return [
                (" fixtures  ", "history--muted"),
                (
                    value_text(row.series.fixtures, 80)
                    if row.series.fixtures
                    else "<no fixture set recorded>",
                    "history--heading",
                ),
            ]
        if row.kind == NOTE:
            return [("    " + row.text, "history--bad")]
        if row.kind == UNREADABLE:
            return [(" " + row.text, "history--bad")]
        if row.kind == ERROR:
            return [("   " + row.text, None)]
        return [("", None)]

    def draw_line(self, line: int, width: int) -> Strip:
        row = self.rows[line]
        base = self.base_style
        cells = self._cells(row, width, self._marked(row))
        wraps = row.part or (line + 1 < len(self.rows) and self.rows[line + 1].part)
        if wraps:  # one of the lines a row too long for the width takes
            lines = layout(cells, width, row.kind == RUN)
            cells = lines[min(row.part, len(lines) - 1)]
        else:  # one line: the file name takes what the columns leave (cut from its start)
            used = sum(len(text) for text, _ in cells[:-1])
            cells = [
                (_cut_start(text[1:], width - used), cls)
                if text.startswith(FILE_MARK)
                else (text, cls)
                for text, cls in cells
            ]
        segments = [
            Segment(text, base + tone_style(self, cls) if cls else base) for text, cls in cells
        ]
        return Strip(segments).crop(0, width).adjust_cell_length(width, base)


_TOKEN = re.compile(r"\s*\S+|\s+")


def units(cells: Cells, run: bool) -> list[Cells]:
    """The pieces a row may move to another line whole: each column of a run row; else
    each word with the white space before it, a word that follows on without a space (a
    value after its label, `slot lab_free_1`) kept with the one before it."""
    if run:
        return [[cell] for cell in cells]
    out: list[Cells] = []
    for text, cls in cells:
        for token in _TOKEN.findall(text):
            if out and (not token[0].isspace() or token.isspace()):
                out[-1].append((token, cls))
            else:
                out.append([(token, cls)])
    return out


def _size(unit: Cells) -> tuple[int, int]:
    """A piece's width, and its width without the white space it ends with."""
    size = sum(len(text) for text, _ in unit)
    last = unit[-1][0]
    return size, size - (len(last) - len(last.rstrip()))


def layout(cells: Cells, width: int, run: bool = False) -> list[Cells]:
    """A row's cells as lines of at most `width` cells: its pieces (`units`) in order,
    one that does not fit moved whole to the next line (indented `WRAP_INDENT`), one wider
    than a whole line cut with an ellipsis (a file name from its start, so its name
    stays). Never a hash, a label or a name split across two lines."""
    lines: list[Cells] = [[]]
    used, fresh = 0, True
    for unit in units(cells, run):
        file = unit[0][0].startswith(FILE_MARK)
        if file:
            unit = [(unit[0][0][1:], unit[0][1])]
        if not fresh and used + _size(unit)[1] > width:
            lines.append([(" " * WRAP_INDENT, None)])
            used, fresh = WRAP_INDENT, True
        if fresh and used:  # a continuation line: the piece's leading space goes
            unit = [(unit[0][0].lstrip(), unit[0][1]), *unit[1:]]
        if _size(unit)[1] > width - used:
            unit = _cut(unit, width - used, file=file)
        lines[-1] += unit
        used, fresh = used + _size(unit)[0], False
    return lines


def _cut(unit: Cells, room: int, *, file: bool) -> Cells:
    """A piece wider than the line, cut to `room` cells with an ellipsis: a file name
    from its start, anything else from its end."""
    if file:
        text, cls = unit[0]
        return [(_cut_start(text.strip(), room), cls)]
    out: Cells = []
    left = room - 1
    for text, cls in unit:
        if left <= 0:
            break
        out.append((text[:left], cls))
        left -= len(text[:left])
    out.append(("…", unit[-1][1]))
    return out


def _cut_start(text: str, room: int) -> str:
    """`text` in `room` cells: cut from its start with an ellipsis when too long."""
    if len(text) <= room:
        return text
    return ("…" + text[len(text) - room + 1 :]) if room > 1 else ""
