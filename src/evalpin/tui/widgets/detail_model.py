"""What the review's detail shows of a case, worked out off the widget: the records as
decoded, the blocks of answers compared seed against seed and left against right, the
needles found, the failing tests, and the caps on every block.

Pure functions and plain records (Rich `Text` for wrapping, no Textual): the detail pane
(`tui.widgets.detail`) computes these in its worker and lays them out on the UI thread.
Every string from a record is untrusted: made inert and capped here or where it is laid out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from rich.text import Text

from evalpin.core.read.runfile import RunFile
from evalpin.core.records import CaseRecord, Turn
from evalpin.core.review import worddiff
from evalpin.core.review.case_source import (
    SOURCES,
    CaseSource,
    Located,
    Unavailable,
    bare_test_name,
)
from evalpin.core.review.cases import CaseTable
from evalpin.core.review.worddiff import Line, Piece
from evalpin.core.sanitize import cap_block, inert_line
from evalpin.tui.safe import block
from evalpin.tui.wrap import wrapped

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


def finish_text(reason: str | None) -> str | None:
    """The endpoint's finish reason, a cut answer said in words."""
    return "length: cut at the token limit" if reason == "length" else reason


def seed_label(seed: int | None, label: str = "seed") -> str:
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
    against right as a word diff (`pieces`) or a line diff (`lines`). Worked out with
    the records, off the UI thread."""

    what: str
    seeds: list[int | None]
    left: str | None  # as shown: inert, capped, tabs expanded (None: no such answer)
    right: str | None
    pieces: list[Piece] | None = None  # a pair with both sides: left against right
    notes: list[str] = field(default_factory=list)  # what the caps cut
    # The whole texts (not capped), for the needles: the grader looked at all of it.
    raw: tuple[str | None, str | None] = (None, None)
    lines: list[Line] | None = None  # a pair, line by line: a line-shaped answer

    @property
    def changed(self) -> bool:
        """Whether the two sides differ here (a diff is shown)."""
        if self.lines is not None:
            return worddiff.lines_changed(self.lines)
        return self.pieces is not None and worddiff.changed(self.pieces)


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


def head_lines(value: str, most: int) -> tuple[str, int]:
    """An untrusted multi-line text made inert, its first `most` lines (a prompt reads
    from its start), tabs expanded; and how many lines were left out."""
    lines = cap_block(value.rstrip("\n"), 10**9, 2000)[0].expandtabs(4).split("\n")
    return "\n".join(lines[:most]), max(0, len(lines) - most)


def not_shown(dropped: int, cut: bool) -> str:
    if not dropped:
        return "(the rest of the file not shown)" if cut else ""
    return f"({dropped} more line{'s' if dropped != 1 else ''} not shown)"


def locate(
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


# What each block of answers shows from a record, and how many lines of it; and the
# blocks that are line-shaped (diffed line by line: a pytest tail, one call a line, a
# conversation turn by turn), unlike prose (diffed word by word).
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


LINE_SHAPED = frozenset({"test output tail", "tool calls", "tool conversation"})


def _capped(value: str, most: int | None) -> tuple[str, str | None]:
    shown, note = block(value) if most is None else block(value, max_lines=most)
    return shown.plain.expandtabs(4), note


def compare_answers(decoded: Decoded, pair: bool) -> list[Compared]:
    """Each kind of answer, the seeds grouped where it is the same (on one side, or as a
    pair), a pair's sides diffed word by word (prose) or line by line (`LINE_SHAPED`)."""
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
            pieces = lines = None
            if pair and left is not None and right is not None:
                if what in LINE_SHAPED:
                    lines = worddiff.diff_lines(left, right)
                else:
                    pieces = worddiff.diff_words(left, right)
            out.append(
                Compared(label, seeds, left, right, pieces, notes, (lval, rval), lines=lines)
            )
    return out


def needles_of(source: CaseSource | Unavailable | None, decoded: Decoded) -> list[tuple[str, bool]]:
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


def failing_tests(decoded: Decoded, pair: bool, repeat: str = "seed") -> dict[str, str]:
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
    (and a word longer than the width folded, at an `@`, `/` or `-` where it has one), so
    a reason code, a model name or a case id is never cut off at the pane's edge."""
    out: list[Text] = []
    for part in text.split("\n", allow_blank=True) if "\n" in text.plain else [text]:
        out += wrapped(part, max(1, width))
    return out


def seconds_text(value: float | None) -> str | None:
    return None if value is None else f"{value:.2f} s"
