"""A report read back as its reader would: Markdown rendered as GitHub renders it, and an
HTML page's tags with their attributes (what a page would do, not how it looks)."""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt


def md_html(text: str) -> str:
    """Markdown as GitHub-flavoured CommonMark renders it (tables, raw HTML allowed)."""
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(text)


class Tags(HTMLParser):
    """Every start tag with its attributes, to check what a page would do."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def tags_of(html: str) -> Tags:
    parser = Tags()
    parser.feed(html)
    return parser
