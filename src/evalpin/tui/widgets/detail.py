"""The detail of one case, left beside right per seed, decoded lazily from the run files.

Only the records of the case on screen are decoded (`RunFile.records`, one seek each),
in a thread worker, so the cursor never waits on the disk; while the runs are still
being read, a case of a few records is read at once instead (see `DetailPane.show`).
Each request takes a new load token; a worker's result that comes back with an older
token (the cursor moved on, the list was reopened, even on the same file) is dropped.
Every string from a record is untrusted: made inert and rendered as plain `Text`; blocks
(test tails, completion text, tool arguments, a tool conversation turn by turn) are
capped in lines and width, with a note of what was cut.

Beside the records, the case itself: what it asked (a golden case's user message and its
tool and text constraints; a coding item's prompt and its test file, failing tests marked),
read from the fixture set the run names and shown only while the case's fixture hash there
is the one its records carry (`core.case_source`; the set is read once, in a worker, and
the case re-laid-out when it comes). Each block of answers (tails, completion text, tool
calls, the conversation) is shown once for the seeds whose answers are the same, and for
a pair as a word diff of left against right (`core.worddiff`), the case's `must_include` /
`must_not` needles highlighted where they occur or said absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from evalpin.core import reasons as codes
from evalpin.core.errors import InputError
from evalpin.core.read.notes import Note
from evalpin.core.review.case_source import (
    SOURCES,
    CaseSource,
    Located,
    Stamp,
    Unavailable,
)
from evalpin.core.review.cases import CaseTable
from evalpin.tui.safe import line
from evalpin.tui.widgets.detail_layout import CaseLayout
from evalpin.tui.widgets.detail_model import (
    INLINE_RECORDS,
    Decoded,
    Shown,
    compare_answers,
    locate,
)
from evalpin.tui.widgets.tones import component_css, restyled, tone_style


class DetailPane(ScrollView, can_focus=True):
    """The selected case: grades, reasons, tools, digests, latency, loops, model, tails
    (a disputed case's two: plain pytest's beside the witness's).

    A Line-API `ScrollView` over pre-laid-out lines: showing another case sets the lines
    and the virtual height, with no layout pass over the screen, and only the lines on
    screen become strips. `show` asks; the records are decoded in a worker (or, for a small
    case of a partial table, at once) and laid out when `Loaded` comes back with the
    current token.
    """

    # The pane itself and the looks only one class has, literal; the rest are tones.
    DEFAULT_CSS = """
    DetailPane {
        padding: 0 1;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
    }
    DetailPane > .detail--reason-infra { color: $text-error; text-style: italic; }
    DetailPane > .detail--reason-unknown { color: $text; text-style: underline; }
    DetailPane > .detail--deleted { color: $text-error; text-style: strike; }
    DetailPane > .detail--inserted { color: $text-success; text-style: underline; }
    """ + component_css(
        "DetailPane",
        {
            "detail--title": "strong",
            "detail--key": "muted",
            "detail--muted": "muted",
            "detail--pass": "pass",
            "detail--fail": "bad",
            "detail--error": "errored",
            "detail--disputed": "disputed",
            "detail--differs": "alert",
            "detail--note": "note",
            "detail--block-title": "marked",
            "detail--reason-tool": "primary",
            "detail--reason-text": "accent",
            "detail--reason-test": "fault",
            "detail--reason-static": "warn",
            "detail--reason-integrity": "bad",
            "detail--reason-witness": "disputed",
            "detail--reason-score": "plain",
            "detail--needle": "inverse",
        },
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "back to list", show=True, tooltip="back to the case list"),
        Binding("j", "scroll_down", "scroll down", show=False, tooltip="scroll down (also ↓ PgDn)"),
        Binding("k", "scroll_up", "scroll up", show=False, tooltip="scroll up (also ↑ PgUp)"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "detail--key",
        "detail--title",
        "detail--pass",
        "detail--fail",
        "detail--error",
        "detail--disputed",
        "detail--differs",
        "detail--muted",
        "detail--note",
        *(f"detail--reason-{kind}" for kind in (*codes.KINDS, codes.UNKNOWN)),
        "detail--block-title",
        "detail--deleted",  # a word diff: only on the left
        "detail--inserted",  # only on the right
        "detail--needle",  # a must_include / must_not needle where it occurs
    }

    @dataclass
    class Back(Message):
        """Escape in the detail: focus returns to the case list."""

        pane: DetailPane

    @dataclass
    class Ready(Message):
        """A case asked for with `show` is laid out: it is on screen with the next frame."""

        pane: DetailPane

    @dataclass
    class Loaded(Message):
        """The worker decoded a case; ignored unless `token` is still the pane's."""

        pane: DetailPane
        token: int
        shown: Shown
        decoded: Decoded

    @dataclass
    class SetRead(Message):
        """A fixture set was read (in a worker): the case shown may now show what it asked."""

        pane: DetailPane
        key: Stamp

    def __init__(self, *, id: str | None = None, cwd: Path | None = None) -> None:
        super().__init__(id=id)
        self.cwd = cwd  # where a run's relative fixture path is looked for first
        self.shown: Shown | None = None
        self.wanted: Shown | None = None
        self.token = 0
        self._pending: int | None = None
        self._decoded: Decoded | None = None
        self.lines: list[Text] = []
        self._strips: list[Strip | None] = []
        self._base: Style | None = None
        self._width = 0
        self._set_pending: Stamp | None = None  # the shown case's fixture set, being read
        self._reading: set[Stamp] = set()  # sets being read by a worker
        self.review_notes: dict[str, Note] = {}  # live review notes by case id
        self.relabel: dict[str, str] = {}  # statuses said otherwise (`case_list.unwritten`)

    @property
    def decoding(self) -> bool:
        """A case was asked for and its records (or its fixture set, read once) have not
        arrived yet."""
        return self._pending is not None or self._set_pending is not None

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width != self._width and self.shown is not None:
            self._lay_out()

    def action_back(self) -> None:
        self.post_message(self.Back(self))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        if self.shown is not None:
            restyled(self, self._restyle)

    def _restyle(self) -> None:
        self._base = None
        if self.shown is not None and self._decoded is not None:
            self._lay_out(keep_scroll=True)

    def clear(self, message: str = "") -> None:
        self.token += 1  # whatever is still being read is no longer wanted
        self._pending = self._set_pending = None
        self.shown = self.wanted = self._decoded = None
        self._set_lines([Text(message, style=self._style("detail--muted"))] if message else [])

    def show(self, table: CaseTable, case_number: int, *, force: bool = False) -> None:
        """Ask for one case. While the table is partial (the runs still being read), a
        case of up to `INLINE_RECORDS` records is read and shown at once: a few seeks
        into pages the loader has just read cost less than handing the work to a thread
        and back while the loader competes for the GIL at every hand-off (measured at
        2 x 1M records: key p95 49 ms through the worker, 21 ms at once). Otherwise the
        case is decoded in a worker, then shown (with no loader about, that overlaps the
        list's repaint: p95 28 ms against 38 ms at once, at 2 x 100k once listed)."""
        wanted = Shown(table, case_number)
        if not force and self.wanted == wanted:
            return
        self.wanted = wanted
        self.token += 1
        case = table.cases[case_number]
        if table.partial and len(case.left) + len(case.right) <= INLINE_RECORDS:
            self._pending = None
            self._put(wanted, self._read(wanted, self.cwd, inline=True))
            return
        self._pending = self.token
        self._decode(self.token, wanted, self.cwd)

    # A fixed description: Textual would otherwise repr the arguments, the whole case
    # table, on every key press.
    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="detail",
        description="decode the case under the cursor",
    )
    def _decode(self, token: int, wanted: Shown, cwd: Path | None) -> None:
        """Read a big case's records off the UI thread."""
        self.post_message(self.Loaded(self, token, wanted, self._read(wanted, cwd)))

    @staticmethod
    def _read(wanted: Shown, cwd: Path | None = None, *, inline: bool = False) -> Decoded:
        """The case's records on both sides (one seek each), or why they cannot be read;
        its fixture set looked for (a few `stat`s: the set is read apart, once; `inline`,
        on the UI thread while the loader runs: where it was last found, no `stat`) and
        its answers compared seed against seed and side against side."""
        table = wanted.table
        seeds = table.seeds(table.cases[wanted.case])
        try:
            left = table.left.records(i for _, i, _ in seeds if i is not None)
            right = {}
            if table.right is not None:
                right = table.right.records(i for _, _, i in seeds if i is not None)
            decoded = Decoded(seeds, left, right)
        except InputError as exc:
            decoded = Decoded(seeds, {}, {}, str(exc))
        except OSError as exc:  # the file went away since it was read
            decoded = Decoded(seeds, {}, {}, f"{table.left.path}: {exc.strerror or exc}")
        if decoded.error is None:
            case_id = table.cases[wanted.case].case_id
            locate(decoded, table, case_id, cwd, fresh=not inline)
            decoded.compared = compare_answers(decoded, table.right is not None)
        return decoded

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        message.stop()
        if message.token != self.token:
            return  # an older request: the pane has moved on
        self._pending = None
        self._put(message.shown, message.decoded)

    def _put(self, shown: Shown, decoded: Decoded) -> None:
        self.shown, self._decoded = shown, decoded
        self._set_pending = None
        located = decoded.located
        if located is not None and located.key is not None and SOURCES.loaded(located) is None:
            self._set_pending = located.key  # shown as being read, laid out again when read
            if located.key not in self._reading:
                self._reading.add(located.key)
                self._read_set(located)
        self._lay_out()
        self.post_message(self.Ready(self))

    @work(
        thread=True,
        exclusive=False,
        exit_on_error=False,
        group="fixture-set",
        description="read the case's fixture set",
    )
    def _read_set(self, located: Located) -> None:
        """Read and hash a fixture set once, off the UI thread (kept by `SOURCES`)."""
        try:
            SOURCES.load(located)
        finally:
            assert located.key is not None
            self.post_message(self.SetRead(self, located.key))

    @on(SetRead)
    def _set_read(self, message: SetRead) -> None:
        message.stop()
        self._reading.discard(message.key)
        if message.key != self._set_pending:
            return  # a set the case on screen does not need (any more)
        self._set_pending = None
        if self.shown is not None and self._decoded is not None:
            self._lay_out(keep_scroll=True)
            self.post_message(self.Ready(self))

    def _lay_out(self, *, keep_scroll: bool = False) -> None:
        assert self.shown is not None and self._decoded is not None
        decoded = self._decoded
        if decoded.error is not None:
            lines = [Text.assemble(("cannot show this case: ", "bold"), line(decoded.error))]
        else:
            lines = self._fitted(decoded)
        self._set_lines(lines, keep_scroll=keep_scroll)

    def _fitted(self, decoded: Decoded) -> list[Text]:
        """The case laid out to the width it will be shown at: beside the scrollbar when
        it is taller than the pane, the whole width when it fits (laid out at one width
        and shown at the other, its lines would be cut, or wrap differently from time to
        time, by whether the scrollbar was showing before)."""
        assert self.shown is not None
        layout = CaseLayout(self._style, self.review_notes, self.relabel)
        region = self.scrollable_content_region
        bar = self.styles.scrollbar_size_vertical
        full = region.width + (bar if self.show_vertical_scrollbar else 0)
        source = self._source(decoded)
        lines = layout.render(self.shown, decoded, source, full - bar)
        if len(lines) <= region.height:  # no scrollbar: the whole width
            lines = layout.render(self.shown, decoded, source, full)
        return lines

    def text(self) -> str:
        """Everything the pane holds, as plain text (what scrolling would show)."""
        return "\n".join(t.plain for t in self.lines)

    def _set_lines(self, lines: list[Text], *, keep_scroll: bool = False) -> None:
        self._width = self.scrollable_content_region.width
        self.lines = lines
        self._strips = [None] * len(lines)
        self.virtual_size = Size(self._width, len(lines))
        if not keep_scroll:
            self.scroll_to(0, 0, animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if self._base is None:
            self._base = self.rich_style
        base = self._base
        n = round(self.scroll_y) + y
        if n >= len(self.lines):
            return Strip.blank(width, base)
        strip = self._strips[n]
        if strip is None or strip.cell_length != width:
            segments = list(self.lines[n].render(self.app.console, end=""))
            strip = Strip(segments).apply_style(base).adjust_cell_length(width, base)
            self._strips[n] = strip
        return strip

    # -- rendering -------------------------------------------------------------------

    def _style(self, name: str):
        return tone_style(self, name)

    def set_review_notes(self, notes: dict[str, Note]) -> None:
        """The review notes by case id (`core/read/notes.py`); the case shown is laid out again."""
        self.review_notes = notes
        if self.shown is not None and self._decoded is not None:
            self._lay_out(keep_scroll=True)

    def set_relabel(self, relabel: dict[str, str]) -> None:
        """Statuses said otherwise (`case_list.unwritten`); the case shown is laid out again."""
        if relabel != self.relabel:
            self.relabel = relabel
            if self.shown is not None and self._decoded is not None:
                self._lay_out(keep_scroll=True)

    def _source(self, decoded: Decoded) -> CaseSource | Unavailable | None:
        """The case from its set (no I/O: the set was read in a worker, or is being
        read), why it is not shown, or None: the run names no fixture set."""
        located = decoded.located
        if located is None:
            return None
        shown = self.shown
        assert shown is not None
        case_id = shown.table.cases[shown.case].case_id
        found = SOURCES.case(located, case_id, decoded.case_hash)
        if found is None and self._set_pending is None:
            return Unavailable(f"case not shown: the fixture set {located.shown} was not read")
        return found
