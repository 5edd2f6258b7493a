"""Two texts as a word-level diff, needles found in it, repeats collapsed, lines wrapped.

Headless and pure (difflib, no UI): the review's detail pane lays the result out.

- `diff_words(left, right)`: pieces `(op, text)` in reading order, `op` one of `equal`,
  `delete` (only on the left), `insert` (only on the right); within a changed stretch the
  deleted words come first, then the inserted ones. Joining the `equal` and `delete`
  pieces gives `left` back exactly, the `equal` and `insert` pieces `right`. Tokens are
  words (with inner apostrophes), single punctuation marks and runs of white space; an
  unchanged bit of white space or punctuation between two changes is folded into them,
  so a rewritten sentence reads as one change, not a comb of one-word changes. Texts too
  long for a word diff in good time are compared line by line first.
- `diff_lines(left, right)`: texts that are line-shaped (a pytest tail, tool calls, a
  conversation turn by turn) compared line by line: lines on both sides kept whole, a
  changed line shown twice, as it was (`-`, its changed words `delete`) and as it is
  (`+`, its changed words `insert`), a line with no counterpart whole. A tail's summary
  line then reads `2 failed, 4 passed` above `1 failed, 5 passed`, not `2 1 failed, 4 5`.
- `needle_spans(pieces, needle)`: where a needle occurs, case-insensitively, on either
  side, as ranges of the joined pieces (`combined(pieces)`); `found(text, needle)`: the
  grader's own test (casefold, substring); `display(pieces, needles)`: the text as shown
  and its marks (deleted, inserted, needle).
- `collapse(items)`: keys whose values are equal, grouped in first-seen order (seeds whose
  answers are the same become one block); `seeds_label`: `seeds 11, 29, 47`.
- `wrap(text, width)`: a line's ranges of at most `width` cells, broken at white space;
  a word longer than the width (a digest, a URL) is cut.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import NamedTuple, TypeVar

EQUAL, DELETE, INSERT = "equal", "delete", "insert"
LEFT, RIGHT = "left", "right"
# Above this many tokens on a side (or this many token pairs), compare lines first and
# word-diff only the changed lines that are small enough: difflib is quadratic at worst.
MAX_TOKENS = 5000
MAX_PAIRS = 6_000_000

# A word or a punctuation mark with the white space after it (a lone run of space only
# at the start): white space is then no token of its own, which would be everywhere and
# make matching quadratic.
_TOKEN = re.compile(r"^\s+|(?:\w+(?:['’]\w+)*|[^\w\s])\s*")


class Piece(NamedTuple):
    """A run of text that is on both sides (`equal`), only left or only right."""

    op: str
    text: str


def tokens(text: str) -> list[str]:
    """Words, single punctuation marks and white-space runs; joined, they are `text`."""
    return _TOKEN.findall(text)


def diff_words(left: str, right: str) -> list[Piece]:
    """`left` against `right`, word by word (see the module's docstring)."""
    if left == right:
        return [Piece(EQUAL, left)] if left else []
    a, b = tokens(left), tokens(right)
    if len(a) > MAX_TOKENS or len(b) > MAX_TOKENS or len(a) * len(b) > MAX_PAIRS:
        return _by_lines(left, right)
    return _tidy(_opcodes(a, b))


BOTH, OLD, NEW = " ", "-", "+"
# A changed line is shown as the words that changed within it when the two versions are
# this much alike (difflib's ratio over their tokens); else as a line gone and a line new.
ALIKE = 0.4


class Line(NamedTuple):
    """One line of a line diff: `tag` is `BOTH`, `OLD` (the left's, its changed words
    `delete` pieces, the rest `equal`) or `NEW` (the right's, changed words `insert`)."""

    tag: str
    pieces: list[Piece]


def diff_lines(left: str, right: str) -> list[Line]:
    """`left` against `right` line by line (see the module's docstring). The `BOTH` and
    `OLD` lines, joined with newlines, give `left` back; `BOTH` and `NEW` give `right`."""
    a, b = left.split("\n"), right.split("\n")
    out: list[Line] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += [Line(BOTH, [Piece(EQUAL, text)]) for text in a[i1:i2]]
        else:
            _replaced(a[i1:i2], b[j1:j2], out)
    return out


# A changed stretch of more line pairs than this pairs its lines in order, not by likeness.
_MOST_PAIRS = 400


def _replaced(old: list[str], new: list[str], out: list[Line]) -> None:
    """A changed stretch: its most alike pair of lines shown word by word, the lines
    before and after it paired the same way, the rest whole (as difflib's `Differ`
    pairs lines, with a ratio over words)."""
    if not old or not new:
        out += [Line(OLD, [Piece(DELETE, text)]) for text in old]
        out += [Line(NEW, [Piece(INSERT, text)]) for text in new]
        return
    if len(old) * len(new) > _MOST_PAIRS:
        pairs = [(_likeness(o, n), k, k) for k, (o, n) in enumerate(zip(old, new, strict=False))]
        best = next((p for p in pairs if p[0] >= ALIKE), None)
    else:
        scored = ((_likeness(o, n), i, j) for i, o in enumerate(old) for j, n in enumerate(new))
        best = max(scored, key=lambda p: (p[0], -p[1], -p[2]))
        best = best if best[0] >= ALIKE else None
    if best is None:
        _replaced(old, [], out)
        _replaced([], new, out)
        return
    _, i, j = best
    _replaced(old[:i], new[:j], out)
    pieces = diff_words(old[i], new[j])
    out.append(Line(OLD, [p for p in pieces if p.op != INSERT]))
    out.append(Line(NEW, [p for p in pieces if p.op != DELETE]))
    _replaced(old[i + 1 :], new[j + 1 :], out)


def _likeness(old: str, new: str) -> float:
    """How alike two lines are, over their words (difflib's ratio; 0 for an empty one)."""
    a, b = tokens(old), tokens(new)
    if not a or not b or len(a) * len(b) > MAX_PAIRS // 4:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < ALIKE or matcher.quick_ratio() < ALIKE:
        return 0.0
    return matcher.ratio()


def lines_changed(lines: Sequence[Line]) -> bool:
    return any(line.tag != BOTH for line in lines)


def _opcodes(a: list[str], b: list[str]) -> list[Piece]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[Piece] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.append(Piece(EQUAL, "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(Piece(DELETE, "".join(a[i1:i2])))
        if j2 > j1:
            out.append(Piece(INSERT, "".join(b[j1:j2])))
    return out


def _by_lines(left: str, right: str) -> list[Piece]:
    """Long texts: lines compared first, changed stretches word-diffed when small."""
    a, b = left.splitlines(keepends=True), right.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[Piece] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old, new = "".join(a[i1:i2]), "".join(b[j1:j2])
        if tag == "equal":
            out.append(Piece(EQUAL, old))
            continue
        ta, tb = tokens(old), tokens(new)
        if ta and tb and len(ta) * len(tb) <= MAX_PAIRS // 4:
            out += _opcodes(ta, tb)
            continue
        if old:
            out.append(Piece(DELETE, old))
        if new:
            out.append(Piece(INSERT, new))
    return _tidy(out)


def _trivial(text: str) -> bool:
    """Unchanged text too slight to split two changes: a little space or punctuation."""
    return len(text) <= 3 and "\n" not in text and not any(ch.isalnum() for ch in text)


def _common_space_tail(old: str, new: str) -> str:
    n = 0
    while n < min(len(old), len(new)) and old[-1 - n] == new[-1 - n] and old[-1 - n].isspace():
        n += 1
    return old[len(old) - n :] if n and n < len(old) and n < len(new) else ""


def _tidy(pieces: list[Piece]) -> list[Piece]:
    """Fold slight unchanged runs between changes into them; then, per changed stretch,
    the deleted text first and the inserted text second, each in one piece."""
    out: list[Piece] = []
    deleted: list[str] = []
    inserted: list[str] = []

    def flush() -> None:
        old, new = "".join(deleted), "".join(inserted)
        deleted.clear()
        inserted.clear()
        # White space that ends both sides of a change is unchanged: it goes to the
        # text after it, so the marks stop at the last changed word.
        tail = _common_space_tail(old, new)
        if tail:
            old, new = old[: -len(tail)], new[: -len(tail)]
        if old:
            out.append(Piece(DELETE, old))
        if new:
            out.append(Piece(INSERT, new))
        if tail:
            out.append(Piece(EQUAL, tail))

    for n, piece in enumerate(pieces):
        if not piece.text:
            continue
        if piece.op == DELETE:
            deleted.append(piece.text)
        elif piece.op == INSERT:
            inserted.append(piece.text)
        elif (
            (deleted or inserted)
            and n + 1 < len(pieces)
            and pieces[n + 1].op != EQUAL
            and _trivial(piece.text)
        ):
            deleted.append(piece.text)
            inserted.append(piece.text)
        else:
            flush()
            if out and out[-1].op == EQUAL:
                out[-1] = Piece(EQUAL, out[-1].text + piece.text)
            else:
                out.append(piece)
    flush()
    return out


def side(pieces: Iterable[Piece], which: str) -> str:
    """One side's text back from the pieces (`left` or `right`)."""
    skip = INSERT if which == LEFT else DELETE
    return "".join(p.text for p in pieces if p.op != skip)


def combined(pieces: Iterable[Piece]) -> str:
    """The pieces joined in reading order, as the diff is shown."""
    return "".join(p.text for p in pieces)


def changed(pieces: Sequence[Piece]) -> bool:
    return any(p.op != EQUAL for p in pieces)


def found(text: str, needle: str) -> bool:
    """The grader's test: `needle` occurs in `text`, compared casefolded."""
    return needle.casefold() in text.casefold()


def needle_spans(pieces: Sequence[Piece], needle: str) -> list[tuple[int, int]]:
    """Ranges of `combined(pieces)` where `needle` occurs (any case) on either side; an
    occurrence that runs across pieces gives one range per piece it covers."""
    if not needle:
        return []
    pattern = re.compile(re.escape(needle), re.IGNORECASE)
    spans: set[tuple[int, int]] = set()
    for which in (LEFT, RIGHT):
        skip = INSERT if which == LEFT else DELETE
        # (start on this side, start in the combined text, length) per piece of the side
        layout: list[tuple[int, int, int]] = []
        at_side = at_all = 0
        for piece in pieces:
            if piece.op != skip:
                layout.append((at_side, at_all, len(piece.text)))
                at_side += len(piece.text)
            at_all += len(piece.text)
        text = side(pieces, which)
        for match in pattern.finditer(text):
            start, end = match.span()
            for s0, c0, n in layout:
                lo, hi = max(start, s0), min(end, s0 + n)
                if lo < hi:
                    spans.add((c0 + lo - s0, c0 + hi - s0))
    return sorted(spans)


NEEDLE = "needle"


def display(
    pieces: Sequence[Piece], needles: Iterable[str] = ()
) -> tuple[str, list[tuple[str, int, int]]]:
    """The diff as shown: its text, and marks `(kind, start, end)` on it, `kind` one of
    `delete`, `insert` and `needle` (where a needle occurs, on either side). A deleted run
    straight before an inserted one, with no space between them, gets one: shown apart
    ("hasn't has not"), not run together ("hasn'thas not")."""
    text: list[str] = []
    marks: list[tuple[str, int, int]] = []
    starts: list[tuple[int, int]] = []  # per piece: (start in `combined`, start shown)
    at = shown = 0
    previous: Piece | None = None
    for piece in pieces:
        if (
            previous is not None
            and previous.op == DELETE
            and piece.op == INSERT
            and not previous.text[-1:].isspace()
            and not piece.text[:1].isspace()
        ):
            text.append(" ")
            shown += 1
        starts.append((at, shown))
        if piece.op != EQUAL:
            marks.append((piece.op, shown, shown + len(piece.text)))
        text.append(piece.text)
        at += len(piece.text)
        shown += len(piece.text)
        previous = piece
    for needle in needles:
        for start, end in needle_spans(pieces, needle):
            k = bisect_right(starts, (start, shown)) - 1  # the piece the span is in
            shift = starts[k][1] - starts[k][0]
            marks.append((NEEDLE, start + shift, end + shift))
    return "".join(text), marks


K = TypeVar("K")
V = TypeVar("V", bound=Hashable)


def collapse(items: Iterable[tuple[K, V]]) -> list[tuple[list[K], V]]:
    """Keys grouped by equal values, groups in the order their value first came."""
    groups: dict[V, list[K]] = {}
    for key, value in items:
        groups.setdefault(value, []).append(key)
    return [(keys, value) for value, keys in groups.items()]


def seeds_label(seeds: Sequence[int | None], label: str = "seed") -> str:
    """`seed 11`, `seeds 11, 29, 47` (`label`: the run's name for its repeat key)."""
    named = [str(s) for s in seeds if s is not None]
    parts = []
    if named:
        parts.append(f"{label}{'s' if len(named) > 1 else ''} {', '.join(named)}")
    if len(named) < len(seeds):
        parts.append(f"no {label}")
    return " and ".join(parts) or f"no {label}"


def _cell(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _cells(text: str) -> int:
    return sum(map(_cell, text)) if not text.isascii() else len(text)


def wrap(text: str, width: int, cell_len: Callable[[str], int] = _cells) -> list[tuple[int, int]]:
    """`text` (one line) as ranges `(start, end)` of at most `width` cells each, broken
    at white space (the space a line is broken at belongs to no line; a line's leading
    indentation is kept); a word wider than the width is cut. An empty text is one
    empty line."""
    width = max(1, width)
    if cell_len(text) <= width:
        return [(0, len(text))]
    out: list[tuple[int, int]] = []
    start: int | None = None  # the line being filled: text[start:end], `used` cells
    end = used = 0

    def emit() -> None:
        assert start is not None
        stop = _rstrip(text, start, end)
        if stop > start:
            out.append((start, stop))

    for match in _WORDS.finditer(text):
        lo, hi = match.span()
        n = cell_len(match.group())
        if lo > 0 and text[lo].isspace():
            if start is None:
                continue  # spaces after a break
            if used + n <= width:
                end, used = hi, used + n
            else:
                emit()
                start = None
            continue
        if start is not None and used + n <= width:
            end, used = hi, used + n
            continue
        if start is not None:
            emit()
        while n > width:  # a word wider than a line: cut it
            cut = _fit(text, lo, hi, width, cell_len)
            out.append((lo, cut))
            lo = cut
            n = cell_len(text[lo:hi])
        start, end, used = lo, hi, n
    if start is not None:
        emit()
    return out or [(0, 0)]


_WORDS = re.compile(r"\s+|\S+")


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


# Where a word too wide for its line is cut, in order of preference: before an `@` (a
# model id and its fingerprint), after a `/` (a path), after one of `-_:.,` (a name), so
# `…@fp_51d` / `7e2` does not happen; a word with none of them (a digest) is cut where
# the line ends.
_BREAKS = (("@", 0), ("/", 1), ("-_:.,", 1))


def _fit(text: str, lo: int, hi: int, width: int, cell_len: Callable[[str], int]) -> int:
    """The end of the longest prefix of text[lo:hi] that fits `width` (at least one
    char), taken back to just after its last break character when it has one past the
    middle of the line."""
    used = 0
    end = hi
    for k in range(lo, hi):
        used += cell_len(text[k])
        if used > width:
            end = max(k, lo + 1)
            break
    if end == hi:
        return hi
    least = lo + max(1, width // 2)  # a break this early would waste half the line
    for chars, after in _BREAKS:
        for k in range(end - after, least - 1, -1):
            if text[k] in chars:
                return k + after
    return end
