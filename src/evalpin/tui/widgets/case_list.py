"""The case list: a Line-API `ScrollView` that renders only the rows on screen.

A run pair of 100,000 records is ~33,000 cases; measuring and markup-parsing every cell
(as `DataTable` does) takes seconds, so this widget sets its virtual height to the number
of visible cases and builds a `Strip` per row on demand, keeping recent strips in an LRU.
Status colours come from component classes, so the stylesheet (and the theme) decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from evalpin.core.index import Case, CaseIndex
from evalpin.core.sanitize import inert_line

STATUS_WIDTH = 11
_LABEL = {
    "regressed": "REGRESSED",
    "fixed": "fixed",
    "drift": "drift",
    "flaky": "flaky",
    "unchanged": "unchanged",
    "only left": "only left",
    "only right": "only right",
    "differs": "differs",
    "same": "same",
    "pass": "pass",
    "fail": "FAIL",
}
_COMPONENT = {
    "regressed": "case-list--regressed",
    "fixed": "case-list--fixed",
    "drift": "case-list--drift",
    "flaky": "case-list--flaky",
    "unchanged": "case-list--quiet",
    "same": "case-list--quiet",
    "pass": "case-list--fixed",
    "fail": "case-list--regressed",
    "only left": "case-list--only",
    "only right": "case-list--only",
    "differs": "case-list--differs",
}


def seeds_text(passed: int, total: int) -> str:
    return f"{passed}/{total}" if total else "-"


class CaseList(ScrollView, can_focus=True):
    """One row per case id: status, seeds passed left and right, case id."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "up", show=False),
        Binding("down,j", "cursor(1)", "down", show=False),
        Binding("pageup", "page(-1)", "page up", show=False),
        Binding("pagedown", "page(1)", "page down", show=False),
        Binding("home,g", "jump(0)", "first", show=False),
        Binding("end,G", "jump(-1)", "last", show=False),
        Binding("enter", "select", "detail", show=True),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "case-list--cursor",
        "case-list--cursor-blurred",
        "case-list--regressed",
        "case-list--fixed",
        "case-list--drift",
        "case-list--flaky",
        "case-list--quiet",
        "case-list--only",
        "case-list--differs",
        "case-list--seeds",
        "case-list--mismatch",
    }

    cursor: reactive[int] = reactive(0, always_update=False, init=False)
    """Position of the highlighted row in the visible list."""

    @dataclass
    class Highlighted(Message):
        """The cursor moved to another case (`case` indexes `CaseIndex.cases`)."""

        case_list: CaseList
        case: int | None

        @property
        def control(self) -> CaseList:
            return self.case_list

    @dataclass
    class Selected(Message):
        """Enter or a click on a case: the reviewer wants its detail."""

        case_list: CaseList
        case: int

        @property
        def control(self) -> CaseList:
            return self.case_list

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.index: CaseIndex | None = None
        self.rows: Sequence[int] = ()
        self.placeholder = "reading runs…"
        self._cache: LRUCache[tuple, Strip] = LRUCache(1024)
        self._base: Style | None = None  # the widget's own style, computed once

    # -- data ------------------------------------------------------------------------

    def show(self, index: CaseIndex, visible: Sequence[int], cursor: int = 0) -> None:
        """Show `visible` (case numbers of `index`) with the cursor at position `cursor`."""
        self.index = index
        self.rows = visible
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(visible))
        self.set_reactive(CaseList.cursor, -1)
        self.cursor = max(0, min(cursor, len(visible) - 1)) if visible else 0
        if not visible:
            self.post_message(self.Highlighted(self, None))
        self.refresh()

    def show_empty(self) -> None:
        """No cases (yet): the placeholder line."""
        self.index = None
        self.rows = ()
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, 0)
        self.set_reactive(CaseList.cursor, 0)
        self.refresh()

    @property
    def current(self) -> int | None:
        """The highlighted case number, or None when the list is empty."""
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def watch_cursor(self, old: int, new: int) -> None:
        self._scroll_cursor_into_view()
        if 0 <= old < len(self.rows):
            self.refresh_line(old)
        self.refresh_line(new)
        self.post_message(self.Highlighted(self, self.current))

    def _scroll_cursor_into_view(self) -> None:
        height = self.scrollable_content_region.height
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif height and self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    # -- actions ---------------------------------------------------------------------

    def move_to(self, position: int) -> None:
        if self.rows:
            self.cursor = max(0, min(position, len(self.rows) - 1))

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, where: int) -> None:
        self.move_to(len(self.rows) - 1 if where < 0 else 0)

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        position = round(self.scroll_y) + offset.y
        if 0 <= position < len(self.rows):
            self.cursor = position
            self.post_message(self.Selected(self, self.rows[position]))

    # -- rendering -------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._cache.clear()

    def on_focus(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._cache.clear()
        self.refresh()

    def on_resize(self) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.rows))

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        position = round(self.scroll_y) + y
        if self._base is None:
            self._base = self.rich_style
        base = self._base
        if position >= len(self.rows) or self.index is None:
            if y == 0 and not self.rows:
                return Strip([Segment(f" {self.placeholder}", base)]).adjust_cell_length(
                    width, base
                )
            return Strip.blank(width, base)
        case_number = self.rows[position]
        selected = position == self.cursor
        key = (case_number, selected, self.has_focus, width)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._row(self.index.cases[case_number], selected, width)
        return strip

    def _row(self, case: Case, selected: bool, width: int) -> Strip:
        base = self._base or self.rich_style
        component = self.get_component_rich_style
        status_style = component(_COMPONENT.get(case.status, "case-list--quiet"), partial=True)
        seeds_style = component("case-list--seeds", partial=True)
        label = _LABEL.get(case.status, case.status)
        if case.mismatched:
            label = "≠ " + label
        left = seeds_text(case.left_passed, len(case.left))
        segments = [
            Segment(" " + label.ljust(STATUS_WIDTH), base + status_style),
            Segment(f"L {left:>5} ", base + seeds_style),
        ]
        if self.index is not None and self.index.right is not None:
            right = seeds_text(case.right_passed, len(case.right))
            segments.append(Segment(f"R {right:>5} ", base + seeds_style))
        segments.append(Segment(" " + inert_line(case.case_id), base))
        strip = Strip(segments).adjust_cell_length(width, base)
        if selected:
            name = "case-list--cursor" if self.has_focus else "case-list--cursor-blurred"
            cursor = component(name)
            over = Style(bgcolor=cursor.bgcolor, bold=cursor.bold)
            strip = Strip([Segment(text, (style or base) + over) for text, style, _ in strip])
        return strip
