"""The review screen's notes (`m`): read the notes file once the runs are read, write a
reviewer's note, and show the live notes in the list and the detail.

A mixin of `ReviewScreen` (one concern of the screen, kept apart so the screen stays a
screen); the file itself is `core/read/notes.py`'s. Reading and writing happen in thread
workers: a notes file on a slow disk never holds a key press back. Its message handlers
go by Textual's naming (`on_notes_read`), since `@on` is only collected on widgets.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from evalpin.core.read.notes import (
    CLEARED,
    Note,
    NoteBook,
    append_note,
    make_note,
    notes_path,
    read_notes,
)
from evalpin.core.read.runfile import RunFile
from evalpin.tui.screens.note import NoteChoice, NoteScreen, NotesRead, NoteWritten

if TYPE_CHECKING:
    from evalpin.tui.screens.review import ReviewScreen


class ReviewNotes:
    """Review notes on the cases a review screen shows."""

    notes_file: Path | None = None  # where notes are read and written
    book: NoteBook | None = None  # the file as read (None until then)
    noted: dict[str, Note]  # the live note of each case shown, by case id
    _written: list[Note]  # written here since the file was read

    def reset_notes(self: ReviewScreen, run_path: str) -> None:
        """A new pair is opening: its notes file, nothing read or shown yet."""
        self.notes_file = notes_path(run_path, self.app.notes)
        self.book, self.noted, self._written = None, {}, []
        self.case_list.set_noted(frozenset())
        self.detail.set_review_notes({})

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="notes",
        description="read the review notes",
    )
    def read_notes_for(self: ReviewScreen, runs: list[RunFile], generation: int) -> None:
        """Read the notes file and match it to the runs' cases (the newer run's fixture
        hash first), off the UI thread."""
        book = read_notes(self.notes_file)
        noted = book.for_rows(*(run.rows for run in reversed(runs)))
        self.post_message(NotesRead(generation, book, noted))

    def on_notes_read(self: ReviewScreen, message: NotesRead) -> None:
        if message.generation != self.generation:
            return
        book, noted = message.book, message.noted
        for note in self._written:  # written here while the file was being read
            if note not in book.notes:
                book.add(note)
                _note_on(noted, note)
        self.book, self.noted = book, noted
        self._show_notes()
        warning = book.skipped_text()
        if warning:
            self.log.warning(warning)
            self.notify(warning, title="review notes", severity="warning", markup=False)

    def _show_notes(self: ReviewScreen) -> None:
        self.case_list.set_noted(frozenset(self.noted))
        self.detail.set_review_notes(self.noted)

    def action_note(self: ReviewScreen) -> None:
        table, current = self.case_list.table, self.case_list.current
        if table is None or current is None or self.banner_pending or self.notes_file is None:
            self.notify("no case selected to note", timeout=2)
            return
        case = table.cases[current]
        if table.right is not None and case.right:
            fixture_hash = table.right.rows[case.right[0]].fixture_hash
        else:
            fixture_hash = table.left.rows[case.left[0]].fixture_hash if case.left else None
        screen = NoteScreen(case.case_id, self.noted.get(case.case_id))
        generation = self.generation
        self.app.push_screen(
            screen,
            lambda choice: self._note_chosen(case.case_id, fixture_hash, generation, choice),
        )

    def _note_chosen(
        self: ReviewScreen,
        case_id: str,
        fixture_hash: str | None,
        generation: int,
        choice: NoteChoice | None,
    ) -> None:
        if choice is None or generation != self.generation or self.notes_file is None:
            return
        try:
            note = make_note(case_id, fixture_hash, choice.kind, choice.text)
        except ValueError as exc:
            self.notify(str(exc), severity="warning", markup=False)
            return
        self._append_note(self.notes_file, note, generation)

    @work(
        thread=True,
        exclusive=False,
        exit_on_error=False,
        group="note-write",
        description="append a review note",
    )
    def _append_note(self: ReviewScreen, path: Path, note: Note, generation: int) -> None:
        """One line appended under the file's lock (core/read/notes.py), off the UI thread."""
        try:
            append_note(path, note)
        except OSError as exc:
            self.post_message(NoteWritten(generation, note, f"{path}: {exc.strerror or exc}"))
            return
        self.post_message(NoteWritten(generation, note))

    def on_note_written(self: ReviewScreen, message: NoteWritten) -> None:
        if message.error is not None:
            self.notify(message.error, title="note not written", severity="error", markup=False)
            return
        if message.generation != self.generation:
            return
        note = message.note
        self._written.append(note)
        if self.book is not None:
            self.book.add(note)
        _note_on(self.noted, note)
        self._show_notes()
        what = "note cleared" if note.kind == CLEARED else "note saved"
        self.notify(f"{what} in {self.notes_file}", timeout=3, markup=False)


def _note_on(noted: dict[str, Note], note: Note) -> None:
    if note.kind == CLEARED:
        noted.pop(note.case_id, None)
    else:
        noted[note.case_id] = note
