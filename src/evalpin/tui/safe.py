"""Untrusted strings made into renderables: sanitized here, at the point of rendering.

Case ids, reasons, tool names and arguments, completion text and test tails come from
fixture files, models and test runs. They are made inert (`core.sanitize`) and put into
`rich.text.Text` as plain strings, never parsed as markup, so `[@click=app.quit]` stays
text and `\\x1b]52;...` shows as `\\x1b]52;...` instead of reaching the terminal.
"""

from __future__ import annotations

from rich.style import StyleType
from rich.text import Text

from evalpin.core.sanitize import cap_block, inert_line

BLOCK_LINES = 40
BLOCK_WIDTH = 1000  # per line, before folding: prose paragraphs are single long lines
FIELD_WIDTH = 200


def line(value: object, style: StyleType = "", *, width: int = FIELD_WIDTH) -> Text:
    """One untrusted value on one line, inert, cut to `width` characters (with an ellipsis)."""
    text = inert_line("" if value is None else str(value))
    if len(text) > width:
        text = text[: width - 1] + "…"
    return Text(text, style=style, no_wrap=False)


def path_line(value: object, style: StyleType = "", *, width: int = 56) -> Text:
    """A file path, inert; when too long its start is cut, so the file name stays."""
    text = inert_line(str(value))
    if len(text) > width:
        text = "…" + text[-(width - 1) :]
    return Text(text, style=style, no_wrap=True)


def block(
    value: str, *, max_lines: int = BLOCK_LINES, max_width: int = BLOCK_WIDTH
) -> tuple[Text, str | None]:
    """A multi-line untrusted block, inert and capped; and a note of what was cut, if any."""
    shown, dropped, cut = cap_block(value, max_lines, max_width)
    parts = []
    if dropped:
        parts.append(f"{dropped} line{'s' if dropped != 1 else ''} cut above")
    if cut:
        parts.append(f"{cut} characters cut from long lines")
    return Text(shown, no_wrap=True, overflow="crop"), ("; ".join(parts) or None)
