"""Untrusted text made inert for the report files: Markdown, XML and HTML.

Case ids, reasons, tails and pins come from fixture files, models and test runs. In a
CI page they could inject links, images, HTML, @mentions that notify people, or reorder
what a reader sees with bidi overrides. Each function first makes control, escape and
bidi characters visible (core/sanitize.py), then escapes for its target.
"""

from __future__ import annotations

import html
import re

from evalpin.core.sanitize import inert, inert_line

# The ASCII punctuation that opens inline syntax anywhere in a line (emphasis, code,
# links and images, HTML, tables, strikethrough, GitHub math). A backslash before ASCII
# punctuation is always a literal in CommonMark. Line-start syntax (lists, headings,
# quotes) cannot arise: every value is written after this module's own text.
_MD_PUNCT = re.compile(r"([\\`*_{}\[\]()#!|~$])")
_WORD_JOINER = "\u2060"
# GFM autolinks bare www. and scheme:// text, and GitHub links @user and #123: a word
# joiner after the trigger breaks each without changing what a reader sees.
_AUTOLINK = re.compile(r"(@|www(?=\.)|:(?=//)|#)", re.IGNORECASE)


def unpaired_safe(text: str) -> str:
    """Lone surrogates (valid in JSON escapes, invalid in UTF-8) made visible."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def md(text: str) -> str:
    """One line of untrusted text as literal Markdown (GFM), safe in a table cell."""
    line = inert_line(unpaired_safe(text))
    line = _MD_PUNCT.sub(r"\\\1", line)
    line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _AUTOLINK.sub(lambda m: m.group(1) + _WORD_JOINER, line)


# Not allowed anywhere in XML 1.0, even escaped (controls are handled by sanitize).
_NOT_XML = {0xFFFE: "\\ufffe", 0xFFFF: "\\uffff"}


def xml_line(text: str) -> str:
    """One line for an XML attribute or element (the serializer escapes <, &, quotes)."""
    return inert_line(unpaired_safe(text)).translate(_NOT_XML)


def xml_block(text: str) -> str:
    """A block (a test tail) for an XML element: newlines and tabs kept."""
    return inert(unpaired_safe(text)).translate(_NOT_XML)


def h(text: str) -> str:
    """One line of untrusted text for HTML text or a quoted attribute."""
    return html.escape(inert_line(unpaired_safe(text)), quote=True)


def h_block(text: str) -> str:
    """A block (a test tail) for HTML inside <pre>: newlines and tabs kept."""
    return html.escape(inert(unpaired_safe(text)), quote=True)
