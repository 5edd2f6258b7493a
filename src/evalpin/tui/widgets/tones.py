"""The tones of the reusable widgets' component classes, each declared once.

Each widget styles its own component classes in its DEFAULT_CSS, so it still looks right
mounted outside evalpin's app, with none of evalpin.tcss (tests/test_tui_widget_css.py
checks that). Written out per widget, those rules were the same few shapes over and over,
free to drift apart. Here a tone is one set of declarations ("bad": the error colour, bold)
and `component_css` writes a widget's rules from its classes' tones, so a "bad" looks the
same in every widget. The rules keep the `Widget > .class` form (and so the specificity) of
the rules written out before. A look only one class has stays literal in its widget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from rich.style import Style
from textual.dom import DOMNode
from textual.theme import BUILTIN_THEMES, Theme
from textual.widget import Widget

from evalpin.core.judge.verdict import CONTAMINATED, PUBLISHABLE, UNCONTROLLED

SERIES = ("#4c9be8", "#e8883a", "#3fae5a", "#b96ad9", "#2eb3b3", "#d9577a", "#b3a02e", "#8c7ae6")
"""The series colours of the history chart and table, fixed (not theme colours)."""
SERIES_LIGHT = (
    "#3872ab",
    "#9b5b26",
    "#29723b",
    "#724186",
    "#1d7272",
    "#9a3d56",
    "#7f7120",
    "#7264bc",
)
"""The same hues, darker, for a light theme: mid tones read on a dark background only."""

# How readable a tone must be against what it is drawn on (WCAG 2 contrast ratio;
# tests/test_tui_contrast.py holds every component class of every theme `t` offers to it):
TEXT_FLOOR = 4.5
"""Text, in 24-bit colour: WCAG AA for body text."""
TEXT_FLOOR_256 = 3.0
"""Text in a 256-colour terminal (colours rounded to its palette, six levels a channel):
no mid-dark orange of the palette reaches 4.5 on a light grey without turning red."""
GRAPHIC_FLOOR = 3.0
"""The series colours (chart lines and their keys): WCAG's non-text contrast."""

DARK_THEME = "textual-dark"
LIGHT_THEME = "evalpin-light"
"""The themes `t` switches between. evalpin's light theme is Textual's with darker
warning, success and accent text: Textual's own reads at 2.8:1 on its panels."""
LIGHT_TEXT = {
    "text-warning": "#7a4f14",
    "text-success": "#28633a",
    "text-accent": "#7a4f14",
    # Textual's footer keys (its accent, #0178d4) read at 2.3:1 on the footer in a
    # 256-colour terminal; its placeholders and disabled text (`auto 38%`) at 2.6:1.
    "footer-key-foreground": "#004578",
    "text-disabled": "auto 60%",
}

TONES: dict[str, str] = {
    "strong": "text-style: bold;",  # keys, headings, titles
    "inverse": "text-style: bold reverse;",  # a needle, the chart's cursor
    "plain": "color: $text;",
    "muted": "color: $text-muted;",
    "primary": "color: $text-primary;",  # on one side only
    "accent": "color: $text-accent;",
    "marked": "color: $text-accent; text-style: bold;",
    "good": "color: $text-success;",
    "pass": "color: $text-success; text-style: bold;",
    "warn": "color: $text-warning;",
    "alert": "color: $text-warning; text-style: bold;",  # differs, a break
    "note": "color: $text-warning; text-style: italic;",
    "errored": "color: $text-warning; text-style: bold italic;",
    "disputed": "color: $text-accent; text-style: bold italic;",  # the witness disagreed
    "fault": "color: $text-error;",  # missing, mismatched
    "bad": "color: $text-error; text-style: bold;",
    "good-badge": "color: $text-success; text-style: bold reverse;",  # verdict badges
    "warn-badge": "color: $text-warning; text-style: bold reverse;",
    "bad-badge": "color: $text-error; text-style: bold reverse;",
    # A cursor line, focused and blurred: its text is painted in the cursor's own colour
    # (`CursorView`), since no tone reads on every background a cursor could have.
    "cursor": "background: $primary 45%; color: $text; text-style: bold;",
    "cursor-blurred": "background: $primary 20%; color: $text; text-style: bold;",
    **{f"series-{k}": f"color: {colour};" for k, colour in enumerate(SERIES)},
}
# Tones whose colour is fixed, not a theme's: their look in a light theme.
TONES_LIGHT: dict[str, str] = {
    f"series-{k}": f"color: {colour};" for k, colour in enumerate(SERIES_LIGHT)
}


def light_theme() -> Theme:
    """evalpin's light theme (`LIGHT_THEME`)."""
    base = BUILTIN_THEMES["textual-light"]
    return dataclasses.replace(base, name=LIGHT_THEME, variables={**base.variables, **LIGHT_TEXT})


def component_css(widget: str, tones: Mapping[str, str]) -> str:
    """CSS for `widget`'s component classes from class -> tone name, one rule per tone.

    >>> print(component_css("PinsHeader", {"pins--key": "muted", "pins--muted": "muted"}), end="")
    PinsHeader > .pins--key,
    PinsHeader > .pins--muted { color: $text-muted; }
    """
    classes: dict[str, list[str]] = {}
    for name, tone in tones.items():
        if tone not in TONES:
            raise KeyError(f"{widget} > .{name}: no tone {tone!r}")
        classes.setdefault(tone, []).append(name)
    return "".join(
        ",\n".join(f"{widget} > .{name}" for name in names) + f" {{ {TONES[tone]} }}\n"
        for tone, names in classes.items()
    ) + "".join(
        ",\n".join(f"{widget}:light > .{name}" for name in names) + f" {{ {TONES_LIGHT[tone]} }}\n"
        for tone, names in classes.items()
        if tone in TONES_LIGHT
    )


def verdict_tone(label: str) -> str:
    """`good`, `warn` or `bad`: how a verdict label reads wherever it is shown."""
    if label == PUBLISHABLE:
        return "good"
    if label in (UNCONTROLLED, CONTAMINATED):
        return "bad"
    return "warn"


def tone_style(node: DOMNode, name: str) -> Style:
    """The style to paint a component class with: its own declarations (partial, so it
    lays over whatever background it is drawn on), its colour resolved against the
    background it is shown on. A theme colour such as `$text-muted` is `auto 60%`: taken
    partial, with no background to contrast with, it comes out white, white on the light
    theme's grey (the pins' labels, a case's seed counts)."""
    partial = node.get_component_rich_style(name, partial=True)  # type: ignore[attr-defined]
    full = node.get_component_rich_style(name)  # type: ignore[attr-defined]
    if full.color is None or partial.color == full.color:
        return partial
    return partial + Style(color=full.color)


def restyled(widget: Widget, repaint: Callable[[], object]) -> None:
    """Paint again with the new styles once a style update (a theme switch) is through.
    A widget is told of its own update before its component classes get theirs: painted
    at once, it keeps the old theme's tones (the light theme's pins in the dark theme's
    pale yellow). So the repaint waits for the next refresh, and forgets the styles read
    meanwhile."""

    def again() -> None:
        widget._rich_style_cache.clear()  # read before the component classes were updated
        repaint()

    widget.call_after_refresh(again)
