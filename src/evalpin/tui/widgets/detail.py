"""The detail of one case, left beside right per seed, decoded lazily from the run files.

Only the records of the case on screen are decoded (`RunFile.records`, one seek each),
in a thread worker, so the cursor never waits on the disk; while the runs are still
being read, a case of a few records is read at once instead (see `DetailPane.show`).
Each request takes a new load token; a worker's result that comes back with an older
token (the cursor moved on, the list was reopened, even on the same file) is dropped.
Every string from a record is untrusted: made inert and rendered as plain `Text`; blocks
(test tails, completion text, tool arguments, a tool conversation turn by turn) are
capped in lines and width, with a note of what was cut.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec
from rich.cells import chop_cells
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
from evalpin.core.cases import CaseTable
from evalpin.core.errors import InputError
from evalpin.core.records import CaseRecord, Turn
from evalpin.core.sanitize import inert_line
from evalpin.tui.safe import block, line

KEY_WIDTH = 15
TEXT_LINES = 12
TOOL_LINES = 8
TURN_LINES = 40
TURN_CHARS = 300  # per text, call or result in the transcript
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
class Decoded:
    """A case's records as read from disk (by row index), or why they could not be."""

    seeds: list[tuple[int | None, int | None, int | None]]
    left: dict[int, CaseRecord]
    right: dict[int, CaseRecord]
    error: str | None = None


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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
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

    @property
    def decoding(self) -> bool:
        """A case was asked for and its records have not arrived yet."""
        return self._pending is not None

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
        self._pending = None
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
            self._put(wanted, self._read(wanted))
            return
        self._pending = self.token
        self._decode(self.token, wanted)

    # A fixed description: Textual would otherwise repr the arguments, the whole case
    # table, on every key press.
    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="detail",
        description="decode the case under the cursor",
    )
    def _decode(self, token: int, wanted: Shown) -> None:
        """Read a big case's records off the UI thread."""
        self.post_message(self.Loaded(self, token, wanted, self._read(wanted)))

    @staticmethod
    def _read(wanted: Shown) -> Decoded:
        """The case's records on both sides (one seek each), or why they cannot be read."""
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
        self._lay_out()
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
        blocks: list[Text] = []
        for seed, li, ri in seeds:
            lrec = left.get(li) if li is not None else None
            rrec = right.get(ri) if ri is not None else None
            lines.append(Text(""))
            lines += self._seed_rows(seed, lrec, rrec, pair, width)
            for name, rec in (("left", lrec), ("right", rrec)) if pair else (("run", lrec),):
                if rec is not None:
                    blocks += self._blocks(seed, name, rec, width)
        lines += blocks
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

    def _blocks(self, seed: int | None, side: str, rec: CaseRecord, width: int) -> list[Text]:
        out: list[Text] = []
        where = f"{_seed(seed, self._repeat)} · {side}"
        if rec.tail:
            out += self._block(f"test output tail · {where}", rec.tail, width)
        if rec.text:
            out += self._block(f"completion text · {where}", rec.text, width, TEXT_LINES)
        if rec.tools:
            calls = "\n".join(
                f"{call.name}({json.dumps(call.args, ensure_ascii=False, sort_keys=True)})"
                for call in rec.tools
            )
            out += self._block(f"tool calls · {where}", calls, width, TOOL_LINES)
        if rec.turns:
            title = f"tool conversation, {len(rec.turns)} turns · {where}"
            out += self._block(title, _transcript(rec.turns), width, TURN_LINES)
        return out

    def _block(
        self, title: str, value: str, width: int, max_lines: int | None = None
    ) -> list[Text]:
        """A capped block, its lines folded to the pane's width (nothing hidden past the
        cap, and the cap says what it cut)."""
        shown, note = block(value) if max_lines is None else block(value, max_lines=max_lines)
        head = Text.assemble(
            ("── ", self._style("detail--muted")), (title, self._style("detail--block-title"))
        )
        out = [Text(""), head]
        if note:
            out.append(Text(f"({note})", style=self._style("detail--note")))
        for raw in shown.plain.expandtabs(4).split("\n"):
            out += [Text(part) for part in chop_cells(raw, width)] or [Text("")]
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
