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

from collections.abc import Mapping

from evalpin.core.judge.verdict import CONTAMINATED, PUBLISHABLE, UNCONTROLLED

SERIES = ("#4c9be8", "#e8883a", "#3fae5a", "#b96ad9", "#2eb3b3", "#d9577a", "#b3a02e", "#8c7ae6")
"""The series colours of the history chart and table, fixed (not theme colours)."""

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
    "cursor": "background: $primary 45%; text-style: bold;",  # a cursor line, focused
    "cursor-blurred": "background: $primary 20%; text-style: bold;",
    **{f"series-{k}": f"color: {colour};" for k, colour in enumerate(SERIES)},
}


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
    )


def verdict_tone(label: str) -> str:
    """`good`, `warn` or `bad`: how a verdict label reads wherever it is shown."""
    if label == PUBLISHABLE:
        return "good"
    if label in (UNCONTROLLED, CONTAMINATED):
        return "bad"
    return "warn"
