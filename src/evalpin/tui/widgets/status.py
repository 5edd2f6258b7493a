"""The status line above the case list (counts per status, filter, search, loading
progress) and the search box that `/` opens below it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input, Static

from evalpin.tui.safe import line
from evalpin.tui.widgets.tones import component_css, restyled, tone_style

_STATUS_CLASS = {
    "regressed": "status--bad",
    "fail": "status--bad",
    "fixed": "status--good",
    "pass": "status--good",
    "drift": "status--warn",
    "flaky": "status--warn",
    "differs": "status--delta",
    "changed": "status--warn",
    "only left": "status--only",
    "only right": "status--only",
    "pending": "status--only",
    "errored": "status--warn",
    "error": "status--warn",
    "disputed": "status--warn",
    "recovered": "status--good",
}
BAR_WIDTH = 16


# Statuses shown only when some case has them: most runs have no error or disputed case.
_RARE = frozenset({"errored", "recovered", "error", "disputed"})


class StatusLine(Static):
    """`regressed 12 · fixed 3 · …   filter: changed   search: abc` or loading progress;
    while the list is partial, led by `PARTIAL`, a progress bar and what is being done."""

    # Each component class and its tone (tones.py): its style here, and its name for Textual.
    TONES_OF: ClassVar[dict[str, str]] = {
        "status--bad": "bad",
        "status--good": "good",
        "status--warn": "warn",
        "status--delta": "alert",
        "status--only": "primary",
        "status--muted": "muted",
        "status--key": "strong",
    }
    DEFAULT_CSS = component_css("StatusLine", TONES_OF)

    COMPONENT_CLASSES: ClassVar[set[str]] = set(TONES_OF)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(markup=False, id=id)
        self.counts: dict[str, int] = {}
        self.filter = "all"
        self.search = ""
        self.cause = ""
        self.shown = 0
        self.progress: str | None = "reading runs…"
        self.phase = "reading runs…"
        self.partial: float | None = None  # fraction read, while the list is partial
        self.following = False  # a run is read on as it is written
        self.relabel: dict[str, str] = {}  # statuses said otherwise (`case_list.unwritten`)
        self._lines = 1

    def _style(self, name: str):
        return tone_style(self, name)

    def set_progress(self, phase: str, done: int = 0, total: int = 0) -> None:
        self.progress = self.phase = phase + (f" {100 * done // total}%" if total else "")
        self._redraw()

    def set_counts(
        self,
        counts: dict[str, int],
        filter_name: str,
        search: str,
        shown: int,
        *,
        partial: float | None = None,
        cause: str = "",
    ) -> None:
        """The counts of the list shown; `partial`: how much of the runs is read, when
        the list is still growing; `cause`: the cause the list is narrowed to."""
        self.progress = None
        self.cause = cause
        self.counts, self.filter, self.search, self.shown = counts, filter_name, search, shown
        self.partial = partial
        self._redraw()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        restyled(self, self._redraw)

    def _redraw(self, relayout: bool = False) -> None:
        if not self.is_mounted:
            return
        if self.progress is not None:
            self.update(Text(self.progress, style=self._style("status--muted")), layout=False)
            return
        width = self.content_region.width
        text = self._counts(short=False)
        if text.cell_len > width > 0:
            text = self._counts(short=True)  # a narrow terminal: no zero counts, no defaults
        # Laid out again only when the line count may change (it wraps, never cuts).
        lines = -(-text.cell_len // width) if width > 0 else 1
        self.update(text, layout=relayout or lines != self._lines)
        self._lines = lines

    def _counts(self, *, short: bool) -> Text:
        muted = self._style("status--muted")
        gap = "  " if short else "   "
        text = Text()
        if self.following and self.partial is None:
            text.append("FOLLOWING", style=self._style("status--warn") + self._style("status--key"))
            text.append(gap)
        if self.partial is not None:
            text.append("PARTIAL ", style=self._style("status--warn") + self._style("status--key"))
            filled = round(self.partial * BAR_WIDTH)
            text.append("━" * filled, style=self._style("status--key"))
            text.append("━" * (BAR_WIDTH - filled), style=muted)
            text.append(f" {100 * self.partial:.0f}% ", style=self._style("status--key"))
            if not short:
                text.append(self.phase, style=muted)
            text.append(gap)
        counts = [(s, n) for s, n in self.counts.items() if n or not (short or s in _RARE)]
        for k, (status, n) in enumerate(counts):
            if k:
                text.append(" · ", style=muted)
            style = self._style(_STATUS_CLASS[status]) if n and status in _STATUS_CLASS else ""
            text.append(f"{self.relabel.get(status, status)} ", style=style or muted)
            text.append(str(n), style=style)
        if not short or self.filter != "all":
            text.append(gap + "filter ", style=muted)
            text.append(self.filter, style=self._style("status--key"))
        if self.cause:
            text.append(gap + "cause ", style=muted)
            text.append_text(line(self.cause, self._style("status--key"), width=40))
        if self.search:
            text.append(gap + "search ", style=muted)
            text.append_text(line(self.search, self._style("status--key"), width=40))
        text.append(f"{gap}{self.shown:,} shown", style=muted)
        return text

    def on_mount(self) -> None:
        self._redraw()

    def on_resize(self) -> None:
        self._redraw(relayout=True)  # its height was fitted to the text at the old width


class SearchBox(Input):
    """Case-id search: filters as you type; Enter keeps it, Escape clears it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "cancel",
            "clear search",
            show=True,
            tooltip="clear the search (Enter keeps it)",
        )
    ]

    @dataclass
    class Cancelled(Message):
        """Escape: clear the search and go back to the list."""

        search_box: SearchBox

        @property
        def control(self) -> SearchBox:
            return self.search_box

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled(self))
