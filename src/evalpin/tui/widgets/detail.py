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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import msgspec
from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from evalpin.core import reasons as codes
from evalpin.core import worddiff
from evalpin.core.case_source import (
    SOURCES,
    CaseSource,
    Located,
    Stamp,
    Unavailable,
    bare_test_name,
)
from evalpin.core.cases import CaseTable
from evalpin.core.errors import InputError
from evalpin.core.notes import MARK, Note
from evalpin.core.records import CaseRecord, Turn
from evalpin.core.runfile import RunFile
from evalpin.core.sanitize import cap_block, inert_line
from evalpin.core.worddiff import DELETE, EQUAL, INSERT, Piece
from evalpin.tui.safe import block, line

KEY_WIDTH = 15
TEXT_LINES = 12
TOOL_LINES = 8
TURN_LINES = 40
TURN_CHARS = 300  # per text, call or result in the transcript
USER_LINES = 20  # of a golden case's user message
PROMPT_LINES = 40  # of a coding item's prompt, from its start
TEST_LINES = 200  # of a coding item's test file, from its start
# While the runs are read, a case of up to this many records (both sides) is read at
# once, not in a worker (see `DetailPane.show`).
INLINE_RECORDS = 16


def _finish(reason: str | None) -> str | None:
    """The endpoint's finish reason, a cut answer said in words."""
    return "length: cut at the token limit" if reason == "length" else reason


def _seed(seed: int | None, label: str = "seed") -> str:
    return f"no {label}" if seed is None else f"{label} {seed}"


@dataclass
class Shown:
    """What the pane shows or was asked to show: a case of a case table (the same
    table object: a reopened run is another table, even with equal contents)."""

    table: CaseTable
    case: int

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shown) and other.table is self.table and other.case == self.case

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Shown(case={self.case})"


@dataclass
class Compared:
    """One block of answers (a test tail, the completion text, the tool calls, the
    conversation) for the seeds whose answers in it are the same: on one side, or left
    against right as a word diff. Worked out with the records, off the UI thread."""

    what: str
    seeds: list[int | None]
    left: str | None  # as shown: inert, capped, tabs expanded (None: no such answer)
    right: str | None
    pieces: list[Piece] | None = None  # a pair with both sides: left against right
    notes: list[str] = field(default_factory=list)  # what the caps cut
    # The whole texts (not capped), for the needles: the grader looked at all of it.
    raw: tuple[str | None, str | None] = (None, None)


@dataclass
class Decoded:
    """A case's records as read from disk (by row index), or why they could not be."""

    seeds: list[tuple[int | None, int | None, int | None]]
    left: dict[int, CaseRecord]
    right: dict[int, CaseRecord]
    error: str | None = None
    # The case's fixture set as looked for on disk (None: the run names none), the
    # fixture hash its records carry, and the other side's where that differs.
    located: Located | None = None
    case_hash: str | None = None
    other_hash: str | None = None
    compared: list[Compared] = field(default_factory=list)


class DetailPane(ScrollView, can_focus=True):
    """The selected case: grades, reasons, tools, digests, latency, loops, model, tails.

    A Line-API `ScrollView` over pre-laid-out lines: showing another case sets the lines
    and the virtual height, with no layout pass over the screen, and only the lines on
    screen become strips. `show` asks; the records are decoded in a worker (or, for a small
    case of a partial table, at once) and laid out when `Loaded` comes back with the
    current token.
    """

    DEFAULT_CSS = """
    DetailPane {
        padding: 0 1;
        overflow-x: hidden;
        scrollbar-size-vertical: 1;
    }
    DetailPane > .detail--title { text-style: bold; }
    DetailPane > .detail--key, DetailPane > .detail--muted { color: $text-muted; }
    DetailPane > .detail--pass { color: $text-success; text-style: bold; }
    DetailPane > .detail--fail { color: $text-error; text-style: bold; }
    DetailPane > .detail--error { color: $text-warning; text-style: bold italic; }
    DetailPane > .detail--differs { color: $text-warning; text-style: bold; }
    DetailPane > .detail--note { color: $text-warning; text-style: italic; }
    DetailPane > .detail--block-title { color: $text-accent; text-style: bold; }
    DetailPane > .detail--reason-tool { color: $text-primary; }
    DetailPane > .detail--reason-text { color: $text-accent; }
    DetailPane > .detail--reason-test { color: $text-error; }
    DetailPane > .detail--reason-static { color: $text-warning; }
    DetailPane > .detail--reason-infra { color: $text-error; text-style: italic; }
    DetailPane > .detail--reason-integrity { color: $text-error; text-style: bold; }
    DetailPane > .detail--reason-score { color: $text; }
    DetailPane > .detail--reason-unknown { color: $text; text-style: underline; }
    DetailPane > .detail--deleted { color: $text-error; text-style: strike; }
    DetailPane > .detail--inserted { color: $text-success; text-style: underline; }
    DetailPane > .detail--needle { text-style: bold reverse; }
    """

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
        self._repeat = "seed"  # what the shown run calls its repeat key (inspect: epoch)
        self._set_pending: Stamp | None = None  # the shown case's fixture set, being read
        self._reading: set[Stamp] = set()  # sets being read by a worker
        self.review_notes: dict[str, Note] = {}  # live review notes by case id

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
            _locate(decoded, table, case_id, cwd, fresh=not inline)
            decoded.compared = _compare(decoded, table.right is not None)
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
            lines = self._render_case(self.shown, decoded)
        self._set_lines(lines, keep_scroll=keep_scroll)

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
        return self.get_component_rich_style(name, partial=True)

    def set_review_notes(self, notes: dict[str, Note]) -> None:
        """The review notes by case id (`core/notes.py`); the case shown is laid out again."""
        self.review_notes = notes
        if self.shown is not None and self._decoded is not None:
            self._lay_out(keep_scroll=True)

    def _review_note(self, case_id: str) -> list[Text]:
        """`✎ ticket: see 1432  (ana, 2026-12-03)`: the case's review note, inert."""
        note = self.review_notes.get(case_id)
        if note is None:
            return []
        by = note.byline()
        return [
            Text.assemble(
                (f"{MARK} ", self._style("detail--block-title")),
                line(note.summary(), width=600),
                (f"  ({inert_line(by)})" if by else "", self._style("detail--muted")),
            )
        ]

    def _render_case(self, shown: Shown, decoded: Decoded) -> list[Text]:
        """The case as pre-laid-out lines of plain `Text` (no Rich tables: measuring and
        rendering tables on every key press is what makes a detail pane slow)."""
        case = shown.table.cases[shown.case]
        seeds, left, right = decoded.seeds, decoded.left, decoded.right
        pair = shown.table.right is not None
        width = max(40, self.scrollable_content_region.width)
        status = case.status.upper() if case.status == "regressed" else case.status
        self._repeat = shown.table.left.repeat_label
        title = Text.assemble(line(case.case_id, self._style("detail--title")))
        own = next((r.source_id for r in (*left.values(), *right.values()) if r.source_id), None)
        if own is not None:
            title.append_text(Text.assemble("  (", line(own), ")"))
        lines: list[Text] = [Text.assemble(title, "   ", (status, "bold"))]
        summary = f"left {case.left_passed}/{len(case.left)} pass"
        if pair:
            summary += f"  ·  right {case.right_passed}/{len(case.right)} pass"
        if case.mismatched:
            summary += "  ·  instrument differs on this case (backend delta)"
        lines.append(Text(summary, style=self._style("detail--muted")))
        lines += self._review_note(case.case_id)
        for seed, li, ri in seeds:
            lrec = left.get(li) if li is not None else None
            rrec = right.get(ri) if ri is not None else None
            lines.append(Text(""))
            lines += self._seed_rows(seed, lrec, rrec, pair, width)
        source = self._source(decoded)
        lines += self._case_lines(decoded, source, width)
        needles = _needles(source, decoded)
        legend = True  # said once, over the first block with a change marked
        for compared in decoded.compared:
            lines += self._compared(compared, pair, needles, width, legend=legend)
            legend = legend and not (compared.pieces and worddiff.changed(compared.pieces))
        if isinstance(source, CaseSource) and source.test_text is not None:
            lines += self._test_file(source, decoded, pair, width)
        return [part for text in lines for part in fold(text, width)]

    def _seed_rows(
        self,
        seed: int | None,
        lrec: CaseRecord | None,
        rrec: CaseRecord | None,
        pair: bool,
        width: int,
    ) -> list[Text]:
        key = self._style("detail--key")
        head = self._style("detail--block-title")
        side = (width - KEY_WIDTH - 2) // 2 if pair else width - KEY_WIDTH - 1
        recs = [lrec, rrec] if pair else [lrec]
        rows: list[Text] = []

        def cell(text: Text) -> Text:
            text = text.copy()
            text.truncate(side, pad=True)
            return text

        def row(name: str, cells: list[Text], style=key) -> None:
            parts = [fold(c, side) for c in cells]
            height = max(len(p) for p in parts)
            for k in range(height):
                label = Text(name if k == 0 else "", style=style)
                label.truncate(KEY_WIDTH, pad=True)
                out = Text.assemble(label, " ")
                for n, p in enumerate(parts):
                    if n:
                        out.append(" ")
                    out.append_text(cell(p[k]) if k < len(p) else Text(" " * side))
                rows.append(out)

        names = [Text("left" if pair else "", style=head)]
        if pair:
            names.append(Text("right", style=head))
        row(_seed(seed, self._repeat), names, head)
        row("grade", [self._grade(r) for r in recs])
        lreasons = set(lrec.reasons or []) if lrec else set()
        rreasons = set(rrec.reasons or []) if rrec else set()
        reasons = [self._reasons(lrec, lreasons - rreasons if pair and rrec else set(), "- ")]
        if pair:
            reasons.append(self._reasons(rrec, rreasons - lreasons if lrec else set(), "+ "))
        row("reasons", reasons)
        row("tools", [self._plain(r, ", ".join(r.tool_names or []) if r else None) for r in recs])
        for name, attr in (("text digest", "text_digest"), ("completion", "completion_digest")):
            values = [getattr(r, attr) if r else None for r in recs]
            differs = pair and None not in values and values[0] != values[1]
            row(name, [self._digest(v, differs) for v in values])
        row("latency", [self._plain(r, _seconds(r.seconds) if r else None) for r in recs])
        row("repair loops", [self._plain(r, r.loops if r else None) for r in recs])
        models = [r.reported_model if r else None for r in recs]
        model_differs = pair and None not in models and models[0] != models[1]
        row("reported model", [self._digest(m, model_differs) for m in models])
        if any(r is not None and r.finish_reason for r in recs):
            row("finish", [self._plain(r, _finish(r.finish_reason) if r else None) for r in recs])
        if any(r is not None and r.error for r in recs):
            row("error", [self._plain(r, r.error if r else None) for r in recs])
        return rows

    def _grade(self, rec: CaseRecord | None) -> Text:
        if rec is None:
            return Text("absent", style=self._style("detail--muted"))
        if rec.errored:  # not judged: neither a pass nor a fail
            return Text("ERROR (not judged)", style=self._style("detail--error"))
        if rec.passed:
            return Text("pass", style=self._style("detail--pass"))
        return Text("FAIL", style=self._style("detail--fail"))

    def _plain(self, rec: CaseRecord | None, value: object) -> Text:
        if rec is None:
            return Text("")
        if value is None or value == "":
            return Text("-", style=self._style("detail--muted"))
        return line(value)

    def _digest(self, value: str | None, differs: bool) -> Text:
        if value is None:
            return Text("-", style=self._style("detail--muted"))
        if differs:
            style = self._style("detail--differs")
            return Text.assemble(("≠ ", style), line(value, style))
        return line(value)

    def _reasons(self, rec: CaseRecord | None, marked: set[str], mark: str) -> Text:
        if rec is None:
            return Text("")
        if rec.reasons is None:
            return Text("<reasons missing>", style=self._style("detail--muted"))
        if not rec.reasons:
            return Text("-", style=self._style("detail--muted"))
        out = Text()
        for k, reason in enumerate(rec.reasons):
            if k:
                out.append("\n")
            kind = codes.kind_of(reason)
            style = self._style(f"detail--reason-{kind}")
            prefix = mark if reason in marked else "  "
            out.append_text(Text.assemble((prefix, "bold"), line(reason, style)))
            if kind == codes.UNKNOWN:
                out.append("  (unknown code)", style=self._style("detail--muted"))
        return out

    # -- the case as its fixture set gives it ---------------------------------------

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

    def _head(self, title: str) -> Text:
        return Text.assemble(
            ("── ", self._style("detail--muted")),
            line(title, self._style("detail--block-title"), width=400),
        )

    def _keyed(self, name: str, value: Text, width: int) -> list[Text]:
        """`name` in the key column, `value` (its lines, each wrapped) beside it."""
        key = Text(name, style=self._style("detail--key"))
        key.truncate(KEY_WIDTH, pad=True)
        parts = [
            part
            for row in value.split("\n", allow_blank=True)
            for part in _wrapped(row, max(8, width - KEY_WIDTH - 1))
        ]
        return [
            Text.assemble(key if k == 0 else " " * KEY_WIDTH, " ", part)
            for k, part in enumerate(parts)
        ]

    def _case_lines(
        self, decoded: Decoded, source: CaseSource | Unavailable | None, width: int
    ) -> list[Text]:
        """What the case asked, or exactly one line saying why it is not shown."""
        located = decoded.located
        if located is None:
            return []
        muted, note = self._style("detail--muted"), self._style("detail--note")
        if source is None:
            reading = f"case: reading the fixture set {located.shown}…"
            return [Text(""), line(reading, muted, width=400)]
        if isinstance(source, Unavailable):
            return [Text(""), line(source.message, note, width=400)]
        out = [Text("")]
        if source.kind == "coding":
            out.append(self._head(f"case · coding item · {source.set_path}"))
            prompt, dropped = _head_lines(source.prompt, PROMPT_LINES)
            out += self._keyed("prompt", line(source.prompt_file or "", muted), width)
            for raw in prompt.split("\n"):
                out += _wrapped(Text(raw), width)
            if dropped or source.cut:
                out.append(Text(_not_shown(dropped, source.cut), style=note))
        else:
            out.append(self._head(f"case · golden · {source.set_path}"))
            user, dropped = _head_lines(source.prompt, USER_LINES)
            out += self._keyed("user", Text(user), width)
            if dropped:
                out.append(Text(_not_shown(dropped, False), style=note))
            for name, values in (
                ("require tools", source.require_tools),
                ("forbid tools", source.forbid_tools),
                ("must include", source.must_include),
                ("must not", source.must_not),
            ):
                value = line(", ".join(values), width=2000) if values else Text("-", style=muted)
                out += self._keyed(name, value, width)
        if decoded.other_hash is not None:
            other = (
                f"the other run's records carry fixture hash {decoded.other_hash} for this"
                f" case: the case above is the one with {decoded.case_hash}"
            )
            out.append(line(other, note, width=400))
        return out

    def _test_file(
        self, source: CaseSource, decoded: Decoded, pair: bool, width: int
    ) -> list[Text]:
        """A coding item's test file, numbered, each failing test's `def` marked (✗) with
        the seeds it failed on."""
        assert source.test_text is not None
        failing = _failing(decoded, pair, self._repeat)
        named = any(
            rec.failed_tests is not None
            for recs in (decoded.left, decoded.right)
            for rec in recs.values()
        )
        title = f"test file · {source.test_file}"
        if failing:
            title += " · ✗ a failing test"
        out = [Text(""), self._head(title)]
        muted, fail, note = (
            self._style("detail--muted"),
            self._style("detail--fail"),
            self._style("detail--note"),
        )
        if not named and any(
            not rec.passed for recs in (decoded.left, decoded.right) for rec in recs.values()
        ):
            out.append(Text("(these records do not name their failing tests)", style=muted))
        at_line = {n: name for name, n in source.tests.items()}
        text, dropped = _head_lines(source.test_text, TEST_LINES)
        rows = text.split("\n")
        digits = len(str(len(rows)))
        gutter = digits + 3
        for n, raw in enumerate(rows, start=1):
            name = at_line.get(n)
            marked = name is not None and name in failing
            body = Text(raw, style=fail if marked else "")
            if marked:
                assert name is not None
                body.append(f"  ← failed: {failing[name]}", style=note)
            for k, part in enumerate(_wrapped(body, max(8, width - gutter))):
                mark = ("✗ " if marked else "  ") + f"{n:>{digits}} " if k == 0 else ""
                out.append(Text.assemble((mark.ljust(gutter), fail if marked else muted), part))
        if dropped or source.cut:
            out.append(Text(_not_shown(dropped, source.cut), style=note))
        lost = sorted(set(failing) - set(source.tests))
        if lost:
            listed = ", ".join(f"{name} ({failing[name]})" for name in lost)
            out.append(
                Text.assemble(("failed, not found in the file: ", fail), line(listed, width=2000))
            )
        return out

    # -- answers, seed against seed and left against right --------------------------

    def _compared(
        self,
        compared: Compared,
        pair: bool,
        needles: list[tuple[str, bool]],
        width: int,
        *,
        legend: bool,
    ) -> list[Text]:
        """One block: a word diff (struck: only left; underlined: only right) or one side,
        the needles highlighted and, under a completion text, found or absent."""
        seeds = worddiff.seeds_label(compared.seeds, self._repeat)
        if compared.pieces is not None:
            diff = worddiff.changed(compared.pieces)
            where = "left → right" if diff else "same on both sides"
            pieces = compared.pieces
        else:
            where = ("left" if compared.left is not None else "right") if pair else ""
            text = compared.left if compared.left is not None else compared.right
            pieces = [Piece(EQUAL, text or "")]
            diff = False
        title = " · ".join(part for part in (compared.what, seeds, where) if part)
        out = [Text(""), self._head(title)]
        note = self._style("detail--note")
        for text in compared.notes:
            out.append(Text(f"({text})", style=note))
        deleted, inserted = self._style("detail--deleted"), self._style("detail--inserted")
        if diff and legend:
            out.append(
                Text.assemble(
                    ("struck: ", self._style("detail--muted")),
                    ("only on the left", deleted),
                    (" · underlined: ", self._style("detail--muted")),
                    ("only on the right", inserted),
                )
            )
        is_text = compared.what == "completion text"
        shown, marks = worddiff.display(pieces, [n for n, _ in needles] if is_text else [])
        body = Text(shown)
        styles = {DELETE: deleted, INSERT: inserted, worddiff.NEEDLE: self._style("detail--needle")}
        for kind, start, stop in marks:
            body.stylize(styles[kind], start, stop)
        for part in body.split("\n", allow_blank=True):
            out += _wrapped(part, width)
        if is_text and needles:
            out += self._needle_rows(compared, pair, needles, width)
        return out

    def _needle_rows(
        self, compared: Compared, pair: bool, needles: list[tuple[str, bool]], width: int
    ) -> list[Text]:
        """Per needle: on both sides, absent on one, absent on both (a must_include
        needle's absence and a must_not needle's presence in the fail style)."""
        fail, plain = self._style("detail--fail"), Style()
        lraw, rraw = compared.raw
        rows: list[Text] = []
        for wanted in (True, False):
            parts: list[Text] = []
            for needle, include in needles:
                if include is not wanted:
                    continue
                here = [
                    (name, worddiff.found(raw, needle))
                    for name, raw in (("left", lraw), ("right", rraw))
                    if raw is not None
                ]
                if not pair:
                    said = "found" if here and here[0][1] else "absent"
                elif len(here) == 2:
                    said = {
                        (True, True): "on both",
                        (True, False): "absent on the right",
                        (False, True): "absent on the left",
                        (False, False): "absent on both",
                    }[(here[0][1], here[1][1])]
                else:
                    name, present = here[0]
                    said = f"{'found' if present else 'absent'} on the {name}"
                presence = [present for _, present in here]
                bad = not all(presence) if include else any(presence)
                if parts:
                    parts.append(Text(" · "))
                said_style = fail if bad else plain
                parts.append(Text.assemble(line(needle, width=400), (f": {said}", said_style)))
            if parts:
                name = "must include" if wanted else "must not"
                rows += self._keyed(name, Text.assemble(*parts), width)
        return rows


def _wrapped(text: Text, width: int) -> list[Text]:
    """One line of `text` as lines of at most `width` cells, broken between words (a
    word wider than the line, like a digest, is cut); its styles kept."""
    plain = text.plain
    if cell_len(plain) <= width:
        return [text]
    return [text[start:end] for start, end in worddiff.wrap(plain, width, cell_len)]


def _head_lines(value: str, most: int) -> tuple[str, int]:
    """An untrusted multi-line text made inert, its first `most` lines (a prompt reads
    from its start), tabs expanded; and how many lines were left out."""
    lines = cap_block(value.rstrip("\n"), 10**9, 2000)[0].expandtabs(4).split("\n")
    return "\n".join(lines[:most]), max(0, len(lines) - most)


def _not_shown(dropped: int, cut: bool) -> str:
    if not dropped:
        return "(the rest of the file not shown)" if cut else ""
    return f"({dropped} more line{'s' if dropped != 1 else ''} not shown)"


def _locate(
    decoded: Decoded, table: CaseTable, case_id: str, cwd: Path | None, *, fresh: bool = True
) -> None:
    """Look for the case's fixture set: the one the left run names (the right run's
    where only it holds the case), with the fixture hash its records carry."""
    sides: list[tuple[RunFile | None, dict[int, CaseRecord]]] = [
        (table.left, decoded.left),
        (table.right, decoded.right),
    ]
    hashes = [
        next((r.fixture_hash for r in recs.values() if r.fixture_hash), None) for _, recs in sides
    ]
    for k, (run, recs) in enumerate(sides):
        if run is None or not recs:
            continue
        header = run.header
        fixtures = header.fixtures if header else None
        decoded.located = SOURCES.locate(fixtures, run.path, cwd, case_id, fresh=fresh)
        decoded.case_hash = hashes[k]
        other = hashes[1 - k]
        if other is not None and hashes[k] is not None and other != hashes[k]:
            decoded.other_hash = other
        return


# What each block of answers shows from a record, and how many lines of it.
def _calls(rec: CaseRecord) -> str | None:
    if not rec.tools:
        return None
    return "\n".join(f"{call.name}({_json(call.args)})" for call in rec.tools)


def _turns(rec: CaseRecord) -> str | None:
    return _transcript(rec.turns) if rec.turns else None


_ANSWERS: tuple[tuple[str, Any, int | None], ...] = (
    ("test output tail", lambda rec: rec.tail or None, None),
    ("completion text", lambda rec: rec.text or None, TEXT_LINES),
    ("tool calls", _calls, TOOL_LINES),
    ("tool conversation", _turns, TURN_LINES),
)


def _capped(value: str, most: int | None) -> tuple[str, str | None]:
    shown, note = block(value) if most is None else block(value, max_lines=most)
    return shown.plain.expandtabs(4), note


def _compare(decoded: Decoded, pair: bool) -> list[Compared]:
    """Each kind of answer, the seeds grouped where it is the same (on one side, or as a
    pair), a pair's sides diffed word by word."""
    out: list[Compared] = []
    for what, get, most in _ANSWERS:
        values = []
        for seed, li, ri in decoded.seeds:
            lrec = decoded.left.get(li) if li is not None else None
            rrec = decoded.right.get(ri) if ri is not None else None
            lval = get(lrec) if lrec is not None else None
            rval = get(rrec) if rrec is not None else None
            if lval is not None or rval is not None:
                values.append((seed, (lval, rval)))
        for seeds, (lval, rval) in worddiff.collapse(values):
            left = right = None
            notes = []
            if lval is not None:
                left, note = _capped(lval, most)
                if note:
                    notes.append(f"left: {note}" if pair else note)
            if rval is not None:
                right, note = _capped(rval, most)
                if note:
                    notes.append(f"right: {note}")
            label = what
            if what == "tool conversation":
                counts = [v.count("\nturn ") + 1 for v in (lval, rval) if v is not None]
                label = f"{what}, {' → '.join(map(str, counts))} turns"
            pieces = None
            if pair and left is not None and right is not None:
                pieces = worddiff.diff_words(left, right)
            out.append(Compared(label, seeds, left, right, pieces, notes, (lval, rval)))
    return out


def _needles(source: CaseSource | Unavailable | None, decoded: Decoded) -> list[tuple[str, bool]]:
    """The case's text needles (True: must include, False: must not): from the case when
    it is shown, and those the records' reasons name (`missing_text:`, `forbidden_text:`)."""
    out: dict[tuple[str, bool], None] = {}
    if isinstance(source, CaseSource):
        out |= dict.fromkeys((n, True) for n in source.must_include if n)
        out |= dict.fromkeys((n, False) for n in source.must_not if n)
    for recs in (decoded.left, decoded.right):
        for rec in recs.values():
            for reason in rec.reasons or []:
                code, _, detail = reason.partition(":")
                if detail and code in ("missing_text", "forbidden_text"):
                    out.setdefault((detail, code == "missing_text"), None)
    return list(out)


def _failing(decoded: Decoded, pair: bool, repeat: str = "seed") -> dict[str, str]:
    """Each failing test (its name as a test file's functions are keyed) -> where it
    failed: `left seeds 11, 29 · right seed 47`, or for one run `seeds 11, 29`."""
    where: dict[str, dict[str, list[int | None]]] = {}
    for side, recs in (("left", decoded.left), ("right", decoded.right)):
        for rec in recs.values():
            for name in rec.failed_tests or []:
                seeds = where.setdefault(bare_test_name(name), {}).setdefault(side, [])
                if rec.seed not in seeds:
                    seeds.append(rec.seed)
    out = {}
    for name, sides in where.items():
        parts = []
        for side, seeds in sides.items():
            ordered = sorted(seeds, key=lambda s: (s is not None, s or 0))
            label = worddiff.seeds_label(ordered, repeat)
            parts.append(f"{side} {label}" if pair else label)
        out[name] = " · ".join(parts)
    return out


def _transcript(turns: list[Turn]) -> str:
    """Each reply, then each call it made (→) and the result it was given (←)."""
    out = []
    for n, turn in enumerate(turns, start=1):
        out.append(f"turn {n}: {_short(turn.text) if turn.text else '(no text)'}")
        for call in turn.calls:
            out.append(f"  → {_short(f'{call.name}({_json(call.args)})')}")
            if call.result is msgspec.UNSET:
                out.append("  ← (not sent: out of turns)")
            else:
                out.append(f"  ← {_short(_json(call.result))}")
    return "\n".join(out)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _short(value: str) -> str:
    """One inert line of at most TURN_CHARS characters."""
    text = inert_line(value)
    return text if len(text) <= TURN_CHARS else text[: TURN_CHARS - 1] + "…"


def fold(text: Text, width: int) -> list[Text]:
    """`text` as lines of at most `width` cells: its own lines, each wrapped at spaces
    (and a word longer than the width, like a digest, folded), so a reason code, a model
    name or a case id is never cut off at the pane's edge."""
    out: list[Text] = []
    for part in text.split("\n", allow_blank=True) if "\n" in text.plain else [text]:
        if part.cell_len <= width:
            out.append(part)
            continue
        for piece in part.wrap(_MEASURE, max(1, width), overflow="fold", no_wrap=False):
            piece.rstrip()
            out.append(piece)
    return out


_MEASURE = Console(width=1000, color_system=None, legacy_windows=False)


def _seconds(value: float | None) -> str | None:
    return None if value is None else f"{value:.2f} s"
