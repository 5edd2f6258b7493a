"""The history chart: pass rate over time, one braille line per series, breaks as breaks.

Each series' runs are joined point to point, and only to each other: two series are never
joined, so a change of instrument shows as a gap with a dotted `┊` where the new series
starts, never as a slope a reader could take for a trend. An environment change (which
does not start a series) is a `~` on the time axis.

`plot` is pure (plain characters, no Textual): it lays the plot area out for a size and
returns its cells with the pixel segments it joined, so tests can check both. `TrendChart`
is a small Line-API widget that renders a `plot` with the stylesheet's colours, the
y axis (0-100%), the dates under the x axis and a legend naming each series.

The x axis is time. Where runs started too close together to tell apart on it (the
bundled demo runs start within a minute), it is run order instead, and the title says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import ClassVar, NamedTuple

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from evalpin.core.sanitize import inert_line
from evalpin.tui.widgets.tones import SERIES, component_css, tone_style

PALETTE = len(SERIES)  # series colours; a ninth series takes the first again
TIME = "time"
ORDER = "run order"
BRAILLE = 0x2800
# Braille dot bits by (x, y) within a cell of 2 x 4 dots.
_DOTS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
RUN, MARKED = "●", "◆"
BREAK, ENV, TICK, RULE = "┊", "~", "┬", "─"
GUTTER = 6  # "100% ┤"
Y_LABELS = (1.0, 0.75, 0.5, 0.25, 0.0)


class Point(NamedTuple):
    """One run on the chart: its file (the key), when it started, its pass rate."""

    path: str
    when: datetime
    rate: float


@dataclass(frozen=True)
class Line:
    """One series: `series` is its number in the history, `colour` a palette slot."""

    series: int
    colour: int
    label: str
    points: tuple[Point, ...]


@dataclass
class Plot:
    """The plot area of `width` x `height` cells, laid out.

    `cells[row][col]` is a character and its role (`s<colour>` for a series, `break`,
    or None); `segments[series]` the pixel segments joined for each series (pixels are
    2 x 4 per cell, y down); `points` each run's marker cell; `ticks` the x-axis labels
    by column; `breaks` and `env` the columns of series breaks and environment changes.
    """

    width: int
    height: int
    mode: str
    cells: list[list[tuple[str, str | None]]]
    segments: dict[int, list[tuple[tuple[int, int], tuple[int, int]]]]
    points: dict[str, tuple[int, int]]
    ticks: list[tuple[int, str]] = field(default_factory=list)
    breaks: list[int] = field(default_factory=list)
    env: list[int] = field(default_factory=list)

    def rows(self) -> list[str]:
        """The plot area as plain text, one string a row."""
        return ["".join(ch for ch, _ in row) for row in self.cells]


def _x_positions(order: list[tuple[datetime, str]], pixels: int) -> tuple[dict[str, int], str]:
    """Pixel column per run: by time, unless that would bunch runs that run order keeps
    apart (more than a third of the marker columns lost)."""
    n = len(order)
    if n == 1:
        return {order[0][1]: pixels // 2}, ORDER
    by_order = {path: round(i * (pixels - 1) / (n - 1)) for i, (_, path) in enumerate(order)}
    span = (order[-1][0] - order[0][0]).total_seconds()
    if span <= 0:
        return by_order, ORDER
    t0 = order[0][0]
    by_time = {
        path: round((when - t0).total_seconds() / span * (pixels - 1)) for when, path in order
    }

    def columns(xs: dict[str, int]) -> int:
        return len({x // 2 for x in xs.values()})

    if columns(by_time) * 3 < columns(by_order) * 2:
        return by_order, ORDER
    return by_time, TIME


def _y(rate: float, pixels: int) -> int:
    return round((1.0 - max(0.0, min(1.0, rate))) * (pixels - 1))


def _segment_pixels(a: tuple[int, int], b: tuple[int, int]) -> list[tuple[int, int]]:
    """Bresenham: every pixel from a to b, both ends included."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    err = dx + dy
    out = []
    while True:
        out.append((x0, y0))
        if (x0, y0) == (x1, y1):
            return out
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy


def whole_parts(parts: Sequence[str], width: int, sep: str) -> str:
    """`parts` joined by `sep`, as many as fit in `width` whole; the first alone is cut
    at a word (with an ellipsis) when even it does not fit. A heading never ends in the
    middle of a word or a date."""
    shown = ""
    for part in parts:
        joined = f"{shown}{sep}{part}" if shown else part
        if len(joined) > width:
            break
        shown = joined
    if shown or not parts or width < 2:
        return shown
    words = parts[0][: width - 1].rsplit(" ", 1)[0]
    return words.rstrip(" ,·") + "…"


def date_format(order: Sequence[tuple[datetime, str]]) -> str:
    """Day and month; with the time of day when every run is on one day."""
    days = {when.date() for when, _ in order}
    return "%m-%d %H:%M" if len(days) <= 1 else "%m-%d"


def plot(
    lines: Sequence[Line],
    width: int,
    height: int,
    *,
    breaks_at: Sequence[str] = (),
    env_at: Sequence[str] = (),
) -> Plot:
    """Lay `lines` out on `width` x `height` cells.

    `breaks_at` names the runs where a new series starts (a dotted column is drawn there
    through the empty cells), `env_at` the runs where the environment changed.
    """
    width, height = max(1, width), max(1, height)
    cells: list[list[tuple[str, str | None]]] = [[(" ", None)] * width for _ in range(height)]
    segments: dict[int, list[tuple[tuple[int, int], tuple[int, int]]]] = {}
    points: dict[str, tuple[int, int]] = {}
    order = sorted({(p.when, p.path) for line in lines for p in line.points})
    if not order:
        return Plot(width, height, TIME, cells, segments, points)
    xs, mode = _x_positions(order, 2 * width)
    dots = [[0] * width for _ in range(height)]
    owner: list[list[str | None]] = [[None] * width for _ in range(height)]

    def dot(x: int, y: int, role: str) -> None:
        col, row = x // 2, y // 4
        dots[row][col] |= _DOTS[x % 2][y % 4]
        owner[row][col] = role

    for line in lines:
        role = f"s{line.colour % PALETTE}"
        pixels = [(xs[p.path], _y(p.rate, 4 * height)) for p in line.points]
        joined = segments.setdefault(line.series, [])
        for a, b in pairwise(pixels):
            joined.append((a, b))
            for x, y in _segment_pixels(a, b):
                dot(x, y, role)
        for x, y in pixels:
            dot(x, y, role)
    for row in range(height):
        for col in range(width):
            if dots[row][col]:
                cells[row][col] = (chr(BRAILLE + dots[row][col]), owner[row][col])
    for line in lines:
        role = f"s{line.colour % PALETTE}"
        for p in line.points:
            col, row = xs[p.path] // 2, _y(p.rate, 4 * height) // 4
            points[p.path] = (col, row)
            cells[row][col] = (RUN, role)
    breaks = sorted({xs[path] // 2 for path in breaks_at if path in xs})
    for col in breaks:
        for row in range(height):
            if cells[row][col][1] is None:
                cells[row][col] = (BREAK, "break")
    env = sorted({xs[path] // 2 for path in env_at if path in xs})
    return Plot(width, height, mode, cells, segments, points, _ticks(order, xs, width), breaks, env)


def _ticks(
    order: list[tuple[datetime, str]], xs: dict[str, int], width: int
) -> list[tuple[int, str]]:
    """Date labels at runs, left to right, where they fit (two spaces apart), each
    distinct date once."""
    fmt = date_format(order)
    ticks: list[tuple[int, str]] = []
    end = -2
    for when, path in order:
        label = when.strftime(fmt)
        col = xs[path] // 2
        start = max(0, min(col - len(label) // 2, width - len(label)))
        if start < end + 2 or (ticks and ticks[-1][1] == label):
            continue
        ticks.append((col, label))
        end = start + len(label)
    return ticks


def tick_row(ticks: Sequence[tuple[int, str]], width: int) -> str:
    """The labels under the axis, each centred on its column where it fits."""
    row = [" "] * width
    for col, label in ticks:
        start = max(0, min(col - len(label) // 2, width - len(label)))
        row[start : start + len(label)] = label
    return "".join(row)[:width]


class TrendChart(Widget):
    """Pass rate over time for the series of one fixture set, with axes and a legend."""

    # Each component class and its tone (tones.py): its style here, and its name for Textual.
    TONES_OF: ClassVar[dict[str, str]] = {
        "trend--muted": "muted",
        "trend--axis": "muted",
        "trend--title": "strong",
        "trend--break": "warn",
        "trend--env": "alert",
        "trend--cursor": "inverse",
        **{f"trend--s{k}": f"series-{k}" for k in range(PALETTE)},
    }
    DEFAULT_CSS = component_css("TrendChart", TONES_OF)

    COMPONENT_CLASSES: ClassVar[set[str]] = set(TONES_OF)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Line] = []
        self.title = ""
        self.placeholder = "reading runs…"
        self.breaks_at: list[str] = []
        self.env_at: list[str] = []
        self.cursor: str | None = None
        self.marked: tuple[str, ...] = ()
        self.plot: Plot | None = None
        self._strips: list[Strip] | None = None

    # -- data ------------------------------------------------------------------------

    def show(
        self,
        lines: list[Line],
        *,
        title: str,
        breaks_at: Sequence[str] = (),
        env_at: Sequence[str] = (),
    ) -> None:
        """Chart these series (`title` is already inert)."""
        self.lines, self.title = lines, title
        self.breaks_at, self.env_at = list(breaks_at), list(env_at)
        self._invalidate()

    def show_empty(self, message: str) -> None:
        self.lines, self.title, self.placeholder = [], "", message
        self.breaks_at, self.env_at = [], []
        self._invalidate()

    def highlight(self, cursor: str | None, marked: Sequence[str] = ()) -> None:
        """The run under the table's cursor and the marked runs (by path)."""
        if cursor != self.cursor or tuple(marked) != self.marked:
            self.cursor, self.marked = cursor, tuple(marked)
            self._invalidate()

    def _invalidate(self) -> None:
        self._strips = None
        self.refresh()

    def on_resize(self) -> None:
        self._invalidate()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips = None

    # -- layout ----------------------------------------------------------------------

    def legend_width(self, width: int) -> int:
        """Columns given to the legend on the right (none on a narrow widget)."""
        return 0 if width < 72 else max(28, min(48, width // 3))

    def text(self) -> str:
        """What the chart shows, as plain text."""
        return "\n".join(strip.text for strip in self._render_all())

    def render_line(self, y: int) -> Strip:
        strips = self._render_all()
        if y < len(strips):
            return strips[y]
        return Strip.blank(self.size.width, self.rich_style)

    def _style(self, name: str) -> Style:
        return tone_style(self, name)

    def _render_all(self) -> list[Strip]:
        if self._strips is None:
            self._strips = self._build()
        return self._strips

    def _build(self) -> list[Strip]:
        width, height = self.size.width, self.size.height
        base = self.rich_style
        if width <= 0 or height <= 0:
            return []
        if not self.lines:
            first = Strip([Segment(" " + self.placeholder, base + self._style("trend--muted"))])
            rest = [Strip.blank(width, base) for _ in range(height - 1)]
            return [first.adjust_cell_length(width, base), *rest]
        legend_w = self.legend_width(width)
        area_w = max(8, width - GUTTER - legend_w - (2 if legend_w else 0) - 1)
        area_h = max(2, height - 3)
        self.plot = p = plot(
            self.lines, area_w, area_h, breaks_at=self.breaks_at, env_at=self.env_at
        )
        rows = [self._title_row(p, width - legend_w - (2 if legend_w else 0), base)]
        rows += self._area_rows(p, base)
        rows += self._axis_rows(p, base)
        rows = rows[:height]
        rows += [Strip.blank(0, base)] * (height - len(rows))
        legend = self._legend(legend_w, height, base) if legend_w else []
        out = []
        for k, row in enumerate(rows):
            row = row.adjust_cell_length(width - legend_w, base)
            if legend_w:
                row = Strip.join([row, legend[k].adjust_cell_length(legend_w, base)])
            out.append(row)
        return out

    def _title_row(self, p: Plot, width: int, base: Style) -> Strip:
        parts = self.title.split(" · ")
        if p.mode == ORDER and len(p.points) > 1:  # said early: it changes how the x axis reads
            parts[1:1] = ["x: run order"]
            parts.append("(started too close together for a time axis)")
        title = whole_parts(parts, width - 1, " · ")
        return Strip([Segment(" " + title, base + self._style("trend--title"))])

    def _area_rows(self, p: Plot, base: Style) -> list[Strip]:
        axis = base + self._style("trend--axis")
        muted = base + self._style("trend--muted")
        labels: dict[int, str] = {}
        for value in Y_LABELS if p.height >= 5 else (1.0, 0.5, 0.0):
            labels.setdefault(_y(value, 4 * p.height) // 4, f"{round(value * 100)}%")
        colours = {f"s{k}": base + self._style(f"trend--s{k}") for k in range(PALETTE)}
        colours["break"] = base + self._style("trend--break")
        cursor_cell = p.points.get(self.cursor) if self.cursor else None
        marked_cells = {p.points[m] for m in self.marked if m in p.points}
        cursor_style = self._style("trend--cursor")
        rows = []
        for r, cells in enumerate(p.cells):
            label = labels.get(r)
            segments = [
                Segment(f"{label:>4} " if label else "     ", muted),
                Segment("┤" if label else "│", axis),
            ]
            for c, (ch, role) in enumerate(cells):
                style = colours.get(role, base) if role else base
                if (c, r) in marked_cells:
                    ch = MARKED
                if (c, r) == cursor_cell:
                    style += cursor_style
                segments.append(Segment(ch, style))
            rows.append(Strip(segments).simplify())
        return rows

    def _axis_rows(self, p: Plot, base: Style) -> list[Strip]:
        axis = base + self._style("trend--axis")
        rule = [(RULE, axis)] * p.width
        for col, _ in p.ticks:
            rule[col] = (TICK, axis)
        for col in p.env:
            rule[col] = (ENV, base + self._style("trend--env"))
        for col in p.breaks:
            rule[col] = (BREAK, base + self._style("trend--break"))
        line = Strip([Segment("     └", axis), *(Segment(ch, st) for ch, st in rule)]).simplify()
        ticks = " " * GUTTER + tick_row(p.ticks, p.width)
        return [line, Strip([Segment(ticks, base + self._style("trend--muted"))])]

    def _legend(self, width: int, height: int, base: Style) -> list[Strip]:
        muted = base + self._style("trend--muted")
        text_w = width - 5
        focus = None
        if self.cursor is not None:
            focus = next(
                (ln.series for ln in self.lines if any(p.path == self.cursor for p in ln.points)),
                None,
            )
        heading = whole_parts(["series  slot", "reported model", "grader"], width, " · ")
        rows = [Strip([Segment(heading, muted)])]
        key: list[Segment] = []
        for mark, style, word in (
            (BREAK, base + self._style("trend--break"), " series break  "),
            (ENV, base + self._style("trend--env"), " env change  "),
            (MARKED, base, " marked"),
        ):
            if sum(len(s.text) for s in key) + len(mark) + len(word.rstrip()) > width:
                break  # a key whole or not at all
            key += [Segment(mark, style), Segment(word, muted)]
        room = height - 2  # the heading and the key
        shown = self.lines if len(self.lines) <= room else self.lines[: max(0, room - 1)]
        for ln in shown:
            style = base + self._style(f"trend--s{ln.colour % PALETTE}")
            label = inert_line(ln.label)
            if len(label) > text_w:
                label = label[: max(0, text_w - 1)] + "…"
            text_style = base + Style(bold=True) if ln.series == focus else base
            rows.append(Strip([Segment("━━ ", style), Segment(label, text_style)]))
        if len(shown) < len(self.lines):
            more = len(self.lines) - len(shown)
            rows.append(Strip([Segment(f"   and {more} more series (see the table)", muted)]))
        rows += [Strip.blank(0, base)] * max(0, height - 1 - len(rows))
        return [*rows[: height - 1], Strip(key)]
