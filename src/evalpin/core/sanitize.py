"""Untrusted text made inert before it reaches a terminal.

Case ids, reason details, tool names, completion text and test tails come from fixture
files, models and test runs. Terminals interpret control bytes (CSI, OSC clipboard and
title writes, carriage returns that overprint) and bidi overrides reorder what is shown,
so every such character becomes a visible escape. Callers must still render the result
as plain text, never as Rich or Textual markup.
"""

from __future__ import annotations

_TAB, _NEWLINE = 0x09, 0x0A
# C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates and marks, and the
# Unicode line/paragraph separators (which break a line where a reader expects none).
_DANGEROUS = [
    *range(0x00, 0x20),
    0x7F,
    *range(0x80, 0xA0),
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0x200E,
    0x200F,
    0x061C,
    0x2028,
    0x2029,
]


def _escape(codepoint: int) -> str:
    return f"\\x{codepoint:02x}" if codepoint < 0x100 else f"\\u{codepoint:04x}"


_BLOCK_TABLE = {cp: _escape(cp) for cp in _DANGEROUS if cp not in (_TAB, _NEWLINE)}
_LINE_TABLE = {cp: _escape(cp) for cp in _DANGEROUS}


def inert(text: str) -> str:
    """Return `text` with every control, escape and bidi character made visible.

    Newlines and tabs survive, so multi-line blocks (test tails, completions) keep their
    shape; everything else that a terminal would act on becomes e.g. `\\x1b`.
    """
    return text.translate(_BLOCK_TABLE)


def inert_line(text: str) -> str:
    """Like `inert`, but for single-line fields (ids, tool names, reason details)."""
    return text.translate(_LINE_TABLE)


def cap_block(text: str, max_lines: int, max_width: int) -> tuple[str, int, int]:
    """Make a block inert and cut it to `max_lines` lines of `max_width` characters.

    Returns the shown text, how many lines were dropped (from the start: a test tail's
    end is what matters) and how many characters were cut from over-long lines.
    """
    lines = inert(text).split("\n")
    dropped = max(0, len(lines) - max_lines)
    if dropped:
        lines = lines[dropped:]
    cut = 0
    shown = []
    for line in lines:
        if len(line) > max_width:
            cut += len(line) - max_width
            line = line[:max_width]
        shown.append(line)
    return "\n".join(shown), dropped, cut
