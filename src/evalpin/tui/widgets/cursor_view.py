"""A Line-API list with a cursor, shared by the case list and the history table.

Only visible lines are rendered, each cached as a `Strip` (an LRU keyed by what the line
shows), so 100,000 rows paint as fast as 40. The cursor stops on some lines only (`stops`:
every case, or the runs between the history's headings); moving up also brings the lines
above a stop into view, so a heading stays with the first row under it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Hashable, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class CursorView(ScrollView, can_focus=True):
    """Subclasses give `line_count`, `line_key` and `draw_line`; this class does the rest."""

    DEFAULT_CSS = """
    CursorView {
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "up", show=False, tooltip="move the selection up"),
        Binding("down,j", "cursor(1)", "down", show=False, tooltip="move the selection down"),
        Binding("pageup", "page(-1)", "page up", show=False, tooltip="a page up"),
        Binding("pagedown", "page(1)", "page down", show=False, tooltip="a page down"),
        Binding("home,g", "jump(0)", "first", show=False, tooltip="the first line"),
        Binding("end,G", "jump(-1)", "last", show=False, tooltip="the last line"),
    ]
    CURSOR_CLASSES: ClassVar[tuple[str, str]] = ("", "")
    """Component classes of the cursor line, focused and blurred."""
    CACHE_SIZE: ClassVar[int] = 1024

    cursor: reactive[int] = reactive(0, always_update=False, init=False)
    """Which stop the cursor is on (an index into `stops`)."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.stops: Sequence[int] = ()
        self.placeholder = "reading runs…"
        self._cache: LRUCache[tuple, Strip] = LRUCache(self.CACHE_SIZE)
        self._base: Style | None = None  # the widget's own style, computed once

    # -- what a subclass says --------------------------------------------------------

    def line_count(self) -> int:
        raise NotImplementedError

    def line_key(self, line: int) -> Hashable:
        """What line `line` shows: its strip is cached under this key."""
        raise NotImplementedError

    def draw_line(self, line: int, width: int) -> Strip:
        """Line `line`, `width` cells wide, without the cursor."""
        raise NotImplementedError

    def clicked(self, stop: int) -> None:
        """Called after a click put the cursor on `stop`."""

    # -- data ------------------------------------------------------------------------

    def reset(self, stops: Sequence[int], cursor: int | None) -> None:
        """New lines: forget the cache, resize, and put the cursor on `cursor` (None:
        leave it, without the change handlers)."""
        self.stops = stops
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, self.line_count())
        if cursor is None or not stops:
            self.set_reactive(CursorView.cursor, 0)
        else:
            self.set_reactive(CursorView.cursor, -1)  # so the watcher runs even on 0
            self.cursor = max(0, min(cursor, len(stops) - 1))
        self.refresh()

    def grow_stops(self, stops: Sequence[int]) -> None:
        """More lines at the end (a list still being read): the cursor and the scroll
        stay where they are, and so do the cached lines (a line's key says what it shows,
        so one whose case moved on is drawn again)."""
        self.stops = stops
        self.virtual_size = Size(self.scrollable_content_region.width, self.line_count())
        self.refresh()

    def redraw(self) -> None:
        """The same lines drawn differently (e.g. a mark): forget the cache."""
        self._cache.clear()
        self.refresh()

    @property
    def cursor_line(self) -> int | None:
        return self.stops[self.cursor] if 0 <= self.cursor < len(self.stops) else None

    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_into_view(old)
        # Lines just shown are not laid out yet: a scroll now stops at the old end (the
        # history opened with its cursor on a run below the rows on screen).
        self.call_after_refresh(self._scroll_into_view, old)
        for stop in (old, new):
            if 0 <= stop < len(self.stops):
                self.refresh_line(self.stops[stop])

    def _scroll_into_view(self, old: int) -> None:
        line = self.cursor_line
        if line is None:
            return
        height = self.scrollable_content_region.height
        top = round(self.scroll_y)
        first = self.stops[self.cursor - 1] + 1 if self.cursor > 0 else 0
        if line < top or (self.cursor < old and first < top):
            self.scroll_to(y=max(0, min(first, line)), animate=False)
        elif height and line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False)

    # -- actions ---------------------------------------------------------------------

    def move_to(self, stop: int) -> None:
        if self.stops:
            self.cursor = max(0, min(stop, len(self.stops) - 1))

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        """A screenful of lines, to the stop nearest there (at least one stop)."""
        line = self.cursor_line
        if line is None:
            return
        target = line + direction * max(1, self.scrollable_content_region.height - 1)
        k = bisect_left(self.stops, target)
        near = min(
            (c for c in (k - 1, k) if 0 <= c < len(self.stops)),
            key=lambda c: abs(self.stops[c] - target),
        )
        self.move_to(near if near != self.cursor else self.cursor + direction)

    def action_jump(self, where: int) -> None:
        self.move_to(len(self.stops) - 1 if where < 0 else 0)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        line = round(self.scroll_y) + offset.y
        k = bisect_left(self.stops, line)
        if k < len(self.stops) and self.stops[k] == line:
            self.cursor = k
            self.clicked(k)

    # -- rendering -------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._cache.clear()

    def on_focus(self) -> None:
        self.redraw()

    def on_blur(self) -> None:
        self.redraw()

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, self.line_count())

    @property
    def base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.base_style
        line = round(self.scroll_y) + y
        count = self.line_count()
        if line >= count:
            if y == 0 and not count:
                return Strip([Segment(f" {self.placeholder}", base)]).adjust_cell_length(
                    width, base
                )
            return Strip.blank(width, base)
        selected = line == self.cursor_line
        key = (self.line_key(line), selected, self.has_focus, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self.draw_line(line, width)
            if selected:
                strip = self._with_cursor(strip)
            self._cache[key] = strip
        return strip

    def _with_cursor(self, strip: Strip) -> Strip:
        """The line under the cursor, all in the cursor's colours: a tone chosen to read
        on the widget's background (a status, a series colour) need not read on the
        cursor's (the light theme's warning on its cursor: 1.7:1)."""
        focused, blurred = self.CURSOR_CLASSES
        cursor = self.get_component_rich_style(focused if self.has_focus else blurred)
        over = Style(color=cursor.color, bgcolor=cursor.bgcolor, bold=cursor.bold)
        base = self.base_style
        return Strip([Segment(text, (style or base) + over) for text, style, _ in strip])
