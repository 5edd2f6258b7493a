"""The case list: one line per case, drawn only when on screen (see `CursorView`).

A run pair of 100,000 records is ~33,000 cases; measuring and markup-parsing every cell
(as `DataTable` does) takes seconds, so each row is built as a `Strip` on demand. Status
colours come from component classes, so the stylesheet (and the theme) decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from evalpin.core.read.notes import MARK
from evalpin.core.review.cases import Case, CaseTable
from evalpin.core.sanitize import inert_line
from evalpin.tui.widgets.cursor_view import CursorView
from evalpin.tui.widgets.tones import component_css, tone_style

STATUS_WIDTH = 11
SHORT_WIDTH = 4
# The status where the width is too short for the label and the whole case id.
_SHORT = {
    "regressed": "REG",
    "fixed": "fix",
    "drift": "drft",
    "flaky": "flky",
    "unchanged": "·",
    "only left": "L",
    "only right": "R",
    "differs": "≠",
    "same": "·",
    "changed": "chg",
    "pending": "…",
    "pass": "pass",
    "fail": "FAIL",
    "error": "ERR",
    "errored": "ERR",
    "disputed": "DSP",
    "recovered": "rec",
}
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
    "changed": "changed",
    "pending": "pending",
    "error": "ERROR",
    "errored": "ERRORED",
    "disputed": "DISPUTED",
    "recovered": "recovered",
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
    "changed": "case-list--drift",
    "pending": "case-list--only",
    "error": "case-list--error",
    "errored": "case-list--error",
    "disputed": "case-list--disputed",
    "recovered": "case-list--drift",
}


UNWRITTEN = "not yet written"


def unwritten(left_writing: bool, right_writing: bool) -> dict[str, str]:
    """What a case on one side only is while the other side's writer still holds its
    file: not a case that side lacks, a case it has not written yet (a night followed
    as it runs said `only left 25`, `9`, `0`)."""
    said = {}
    if right_writing:
        said["only left"] = UNWRITTEN
    if left_writing:
        said["only right"] = UNWRITTEN
    return said


def seeds_text(passed: int, total: int) -> str:
    return f"{passed}/{total}" if total else "-"


class CaseList(CursorView):
    """One row per case id: status, seeds passed left and right, case id."""

    DEFAULT_CSS = component_css(
        "CaseList",
        {
            "case-list--cursor": "cursor",
            "case-list--cursor-blurred": "cursor-blurred",
            "case-list--regressed": "bad",
            "case-list--fixed": "good",
            "case-list--drift": "warn",
            "case-list--flaky": "accent",
            "case-list--quiet": "muted",
            "case-list--seeds": "muted",
            "case-list--only": "primary",
            "case-list--differs": "alert",
            "case-list--mismatch": "fault",
            "case-list--error": "errored",
            "case-list--disputed": "disputed",
        },
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        *CursorView.BINDINGS,
        Binding(
            "enter",
            "select",
            "detail",
            show=True,
            tooltip="focus the detail of the case (or click)",
        ),
    ]
    CURSOR_CLASSES = ("case-list--cursor", "case-list--cursor-blurred")
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *CURSOR_CLASSES,
        "case-list--regressed",
        "case-list--fixed",
        "case-list--drift",
        "case-list--flaky",
        "case-list--quiet",
        "case-list--only",
        "case-list--differs",
        "case-list--seeds",
        "case-list--mismatch",
        "case-list--error",
        "case-list--disputed",
    }

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
        self.table: CaseTable | None = None
        self.rows: Sequence[int] = ()
        # Case ids with a review note: marked in the status column (one set lookup a line).
        self.noted: frozenset[str] | set[str] = frozenset()
        # Whether a case measured with another instrument is marked `≠` (only where that
        # tells it apart: `CaseTable.mismatch_marks`).
        self.marks_mismatch = False
        # Statuses said otherwise while a run is being written (`unwritten`).
        self.relabel: dict[str, str] = {}

    def set_relabel(self, relabel: dict[str, str]) -> None:
        """Say some statuses otherwise (`unwritten`), until told again."""
        if relabel != self.relabel:
            self.relabel = relabel
            self.redraw()

    # -- data ------------------------------------------------------------------------

    def show(self, table: CaseTable, visible: Sequence[int], cursor: int = 0) -> None:
        """Show `visible` (case numbers of `table`) with the cursor at position `cursor`."""
        self.table = table
        self.rows = visible
        self.marks_mismatch = table.mismatch_marks()
        self.reset(range(len(visible)), cursor)

    def grow(self, visible: Sequence[int]) -> None:
        """The same table, grown (a partial table while the runs are read)."""
        self.rows = visible  # (the marks are worked out again when a table is shown)
        self.grow_stops(range(len(visible)))

    def set_noted(self, case_ids: frozenset[str] | set[str]) -> None:
        """The case ids with a review note (`core/read/notes.py`), marked with `MARK`."""
        if case_ids != self.noted:
            self.noted = case_ids
            self.redraw()

    def show_empty(self) -> None:
        """No cases (yet): the placeholder line."""
        self.table = None
        self.rows = ()
        self.reset((), None)

    @property
    def current(self) -> int | None:
        """The highlighted case number, or None when the list is empty."""
        line = self.cursor_line
        return None if line is None else self.rows[line]

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current))

    def clicked(self, stop: int) -> None:
        self.post_message(self.Selected(self, self.rows[stop]))

    # -- rendering -------------------------------------------------------------------

    def line_count(self) -> int:
        return len(self.rows) if self.table is not None else 0

    def line_key(self, line: int) -> tuple:
        """The case and what its line shows of it, which changes while a partial table
        grows (a second side's seeds arrive, the status moves)."""
        number = self.rows[line]
        if self.table is None:
            return (number,)
        c = self.table.cases[number]
        return (
            number,
            c.status,
            tuple(self.relabel.items()),
            c.mismatched,
            c.left_passed,
            len(c.left),
            c.right_passed,
            len(c.right),
        )

    def draw_line(self, line: int, width: int) -> Strip:
        """Status, seeds passed, case id; where the width is short the seed columns go
        first, then the status shrinks to its short form, and the id is cut only last."""
        assert self.table is not None
        case: Case = self.table.cases[self.rows[line]]
        base = self.base_style
        status_style = tone_style(self, _COMPONENT.get(case.status, "case-list--quiet"))
        seeds_style = tone_style(self, "case-list--seeds")
        case_id = " " + inert_line(case.case_id)
        label = self.relabel.get(case.status) or _LABEL.get(case.status, case.status)
        short = "…" if case.status in self.relabel else _SHORT.get(case.status, label[:SHORT_WIDTH])
        if case.mismatched and self.marks_mismatch:
            label, short = "≠ " + label, "≠" + short
        seeds = [f"L {seeds_text(case.left_passed, len(case.left)):>5} "]
        if self.table.right is not None:
            seeds.append(f"R {seeds_text(case.right_passed, len(case.right)):>5} ")
        lead = MARK if case.case_id in self.noted else " "  # a review note on it
        widest = max(map(len, self.relabel.values()), default=0)
        status = lead + label.ljust(max(STATUS_WIDTH, widest + 1))
        room = width - cell_len(case_id)
        if cell_len(status) + sum(map(cell_len, seeds)) > room:
            seeds = []
            if cell_len(status) > room:
                status = lead + short.ljust(SHORT_WIDTH)
        segments = [Segment(status, base + status_style)]
        segments += [Segment(text, base + seeds_style) for text in seeds]
        segments.append(Segment(case_id, base))
        strip = Strip(segments)
        if strip.cell_length > width:
            strip = strip.crop(0, width - 1)
            strip = Strip([*strip, Segment("…", base)])
        return strip.adjust_cell_length(width, base)
