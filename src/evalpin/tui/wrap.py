"""Text broken into lines the way the review breaks it everywhere: between words, and a
word wider than its line (a path, a model id) at an `@`, `/` or `-` where it has one
(`core/review/worddiff.wrap`), never at Rich's `fold`, which splits `…@fp_51d` / `7e2`.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from evalpin.core.review import worddiff


def wrapped(text: Text, width: int) -> list[Text]:
    """One line of `text` as lines of at most `width` cells, its styles kept."""
    plain = text.plain
    if cell_len(plain) <= width:
        return [text]
    return [text[start:end] for start, end in worddiff.wrap(plain, width, cell_len)]


class Wrapped:
    """A one-line `Text` that wraps as `wrapped` does to whatever width it is given (a
    table cell, a pane)."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Text("\n").join(wrapped(self.text, max(1, options.max_width)))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(8, self.text.cell_len), self.text.cell_len)


# A line that starts a block of its own in Markdown-ish prose: a heading, a list item, a
# quote, a table row, indented code; a fence opens or closes verbatim lines.
_OWN_LINE = re.compile(r"\s*(?:#|[-*+]\s|\d+[.)]\s|>|\|)|\s{4}|\t")
_FENCE = re.compile(r"\s*(?:```|~~~)")


def reflowed(text: str) -> list[str]:
    """A prompt file's lines with its hard-wrapped paragraphs joined: a file wrapped at
    88 columns and shown in 80 would break every line again, leaving one word on a row
    of its own. A line joins the one before when both are prose (not blank, not a
    heading or a list item's marker, not inside a code fence, the one before not ending
    in a hard break); a list item's continuation joins its item."""
    out: list[str] = []
    fenced = joinable = False
    for raw in text.split("\n"):
        if _FENCE.match(raw):
            fenced = not fenced
            out.append(raw)
            joinable = False
            continue
        if fenced or not raw.strip():
            out.append(raw)
            joinable = False
            continue
        if joinable and not _OWN_LINE.match(raw):
            out[-1] = out[-1].rstrip() + " " + raw.strip()
        else:
            out.append(raw)
        joinable = not raw.startswith("#") and not raw.endswith(("  ", "\\"))
    return out
