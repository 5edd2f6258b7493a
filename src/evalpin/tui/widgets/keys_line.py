"""The footer of a narrow terminal: every key the screen shows, wrapped by whole keys.

Textual's footer is one row; at 80 columns the review's thirteen keys need about a
hundred, so the row ended mid-label (`h` with no word) and the last keys were not on
screen. This line wraps onto a second row instead, never between a key and its word.
It reads the same keys the footer would (`Screen.active_bindings`, so the screen's own
order and words hold) and repaints when they change.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.screen import Screen
from textual.widget import Widget

from evalpin.tui.widgets.tones import component_css

GAP = "  "


class KeysLine(Widget):
    """Every shown key of the screen, `key word` pairs wrapped whole."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"keys-line--key", "keys-line--word"}
    DEFAULT_CSS = """
    KeysLine {
        height: auto;
        max-height: 3;
        padding: 0 1;
        background: $footer-background;
        color: $footer-description-foreground;
    }
    KeysLine > .keys-line--key {
        color: $footer-key-foreground;
        text-style: bold;
    }
    """ + component_css("KeysLine", {"keys-line--word": "plain"})

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)

    def _changed(self, screen: Screen) -> None:
        self.refresh(layout=True)

    def keys(self) -> list[tuple[str, str]]:
        """(key as shown, word) for every key the screen's footer would show."""
        return [
            (self.app.get_key_display(binding), binding.description)
            for _, binding, _, _ in self.screen.active_bindings.values()
            if binding.show
        ]

    def lines(self, width: int) -> list[list[tuple[str, str]]]:
        """The keys wrapped into lines of at most `width` cells, whole."""
        lines: list[list[tuple[str, str]]] = [[]]
        used = 0
        for key, word in self.keys():
            size = len(key) + 1 + len(word)
            if lines[-1] and used + len(GAP) + size > width:
                lines.append([])
                used = 0
            used += (len(GAP) if lines[-1] else 0) + size
            lines[-1].append((key, word))
        return lines

    def render(self) -> Text:
        key_style = self.get_component_rich_style("keys-line--key", partial=True)
        text = Text(no_wrap=True, overflow="crop")
        for n, line in enumerate(self.lines(max(1, self.content_region.width or 80))):
            if n:
                text.append("\n")
            for k, (key, word) in enumerate(line):
                text.append(GAP if k else "")
                text.append(key, key_style)
                text.append(" " + word)
        return text

    def get_content_height(self, container, viewport, width: int) -> int:
        return len(self.lines(max(1, width)))
