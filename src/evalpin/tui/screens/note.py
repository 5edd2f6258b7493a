"""`m`: a reviewer's note on the selected case (see `core/read/notes.py` for the file).

A small modal: the quick kinds (acknowledged, known flaky) save at once with Enter; a
ticket or a line of text is typed in the box below (choosing either puts the cursor
there; Enter in the box saves); where the case has a note, it can be cleared. Esc
cancels and nothing is written. The screen only says what was chosen: the review screen
writes the note (in a worker) and shows it; the messages its workers post are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from evalpin.core.read.notes import (
    ACKNOWLEDGED,
    CLEARED,
    FLAKY,
    MARK,
    MAX_TEXT,
    NEEDS_TEXT,
    TEXT,
    TICKET,
    Note,
    NoteBook,
)
from evalpin.tui.safe import line

# (kind, what the option says), in the order shown.
CHOICES = (
    (ACKNOWLEDGED, "acknowledged"),
    (FLAKY, "known flaky"),
    (TICKET, "ticket…  (type its id or a line below)"),
    (TEXT, "a line of text…  (type it below)"),
)
HINT = Text("Enter saves · Tab moves between the kinds and the box · Esc cancels", "dim")
PLACEHOLDER = {
    TICKET: "ticket id or line, e.g. accepted: new tone, see ticket 1432 (Enter saves)",
    TEXT: "a line of text (Enter saves)",
}


@dataclass
class NotesRead(Message):
    """The notes file was read (in a worker) and matched to the runs: `noted` is the live
    note of each case they hold, by case id."""

    generation: int
    book: NoteBook
    noted: dict[str, Note]


@dataclass
class NoteWritten(Message):
    """A note was appended (in a worker), or could not be (`error`)."""

    generation: int
    note: Note
    error: str | None = None


@dataclass(frozen=True)
class NoteChoice:
    """What the reviewer chose: a kind and its text (maybe empty for the quick kinds)."""

    kind: str
    text: str = ""


class NoteScreen(ModalScreen[NoteChoice | None]):
    """The note on one case; dismisses with a `NoteChoice`, or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "cancel", tooltip="close without writing a note"),
    ]

    def __init__(self, case_id: str, current: Note | None = None) -> None:
        super().__init__()
        self.case_id = case_id
        self.current = current
        self.kind = TEXT  # what the box's text is saved as

    def compose(self) -> ComposeResult:
        title = Text.assemble(("Note on ", "bold"), line(self.case_id, "bold"))
        if self.current is not None:
            by = self.current.byline()
            now = Text.assemble(
                (f"{MARK} now: ", "dim"),
                line(self.current.summary()),
                (f"  ({by})" if by else "", "dim"),
            )
        else:
            now = Text("no note yet; the note follows this case until its fixture changes", "dim")
        options = [Option(label, id=kind) for kind, label in CHOICES]
        if self.current is not None:
            options.append(Option(Text("clear the note", style="italic"), id=CLEARED))
        with Vertical(id="note"):
            yield Static(title, markup=False)
            yield Static(now, markup=False, id="note-now")
            yield OptionList(*options, id="note-kinds")
            yield Input(
                placeholder=PLACEHOLDER[TEXT],
                max_length=MAX_TEXT,
                id="note-text",
                select_on_focus=False,
            )
            yield Static(HINT, markup=False, id="note-hint")

    def on_mount(self) -> None:
        box = self.query_one(Input)
        box.cursor_blink = getattr(self.app, "cursor_blink", True)
        if self.current is not None and self.current.kind in NEEDS_TEXT:
            box.value = self.current.text
            self._typing(self.current.kind, focus=False)
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def _typing(self, kind: str, *, focus: bool = True) -> None:
        self.kind = kind
        box = self.query_one(Input)
        box.placeholder = PLACEHOLDER[kind]
        if focus:
            box.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        kind = message.option.id or TEXT
        if kind in NEEDS_TEXT:
            text = self.query_one(Input).value.strip()
            if text and kind == self.kind:  # typed already: saved as it is
                self.dismiss(NoteChoice(kind, text))
            else:
                self._typing(kind)
            return
        text = "" if kind == CLEARED else self.query_one(Input).value.strip()
        self.dismiss(NoteChoice(kind, text))

    @on(Input.Submitted, "#note-text")
    def _submitted(self, message: Input.Submitted) -> None:
        message.stop()
        text = message.value.strip()
        if not text:
            self.notify("type the note first (Esc cancels)", timeout=2)
            return
        self.dismiss(NoteChoice(self.kind, text))

    def action_close(self) -> None:
        self.dismiss(None)
