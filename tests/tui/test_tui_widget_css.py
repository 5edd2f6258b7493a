"""The reusable widgets carry their own look (DEFAULT_CSS): mounted in a bare App, with
none of evalpin's stylesheet, every component class of each still has its style."""

from __future__ import annotations

import pytest
from rich.style import Style
from textual.app import App, ComposeResult
from textual.widget import Widget

from evalpin.tui.widgets.case_list import CaseList
from evalpin.tui.widgets.detail import DetailPane
from evalpin.tui.widgets.history_table import HistoryTable
from evalpin.tui.widgets.pins import PinsHeader
from evalpin.tui.widgets.status import StatusLine
from evalpin.tui.widgets.trend import TrendChart

WIDGETS = [CaseList, DetailPane, HistoryTable, PinsHeader, StatusLine, TrendChart]


class Bare(App[None]):
    """No CSS_PATH: only the widgets' own DEFAULT_CSS applies."""

    def __init__(self, widget: type[Widget]) -> None:
        super().__init__()
        self.widget_type = widget

    def compose(self) -> ComposeResult:
        yield self.widget_type()


@pytest.mark.parametrize("widget", WIDGETS, ids=lambda w: w.__name__)
async def test_component_classes_are_styled_outside_the_app(widget: type[Widget]) -> None:
    app = Bare(widget)
    async with app.run_test(size=(80, 20)):
        mounted = app.query_one(widget)
        unstyled = [
            name
            for name in sorted(widget.COMPONENT_CLASSES)
            if mounted.get_component_rich_style(name, partial=True) == Style()
        ]
        assert not unstyled, f"{widget.__name__}: no style outside the app for {unstyled}"


async def test_the_case_list_keeps_its_colours_outside_the_app() -> None:
    app = Bare(CaseList)
    async with app.run_test(size=(80, 20)):
        cases = app.query_one(CaseList)
        regressed = cases.get_component_rich_style("case-list--regressed", partial=True)
        fixed = cases.get_component_rich_style("case-list--fixed", partial=True)
        assert regressed.bold and regressed.color is not None and fixed.color is not None
        assert regressed.color != fixed.color


def test_component_css_says_each_tone_once_and_refuses_an_unknown_one() -> None:
    import doctest

    from evalpin.tui.widgets import tones

    assert doctest.testmod(tones).failed == 0
    css = tones.component_css("W", {"w--a": "bad", "w--b": "bad", "w--c": "muted"})
    assert css.count("$text-error") == 1 and "W > .w--a,\nW > .w--b {" in css
    with pytest.raises(KeyError, match="no tone 'nope'"):
        tones.component_css("W", {"w--a": "nope"})


@pytest.mark.parametrize(
    ("label", "tone"),
    [("publishable", "good"), ("internal", "warn"), ("uncontrolled", "bad")],
)
def test_a_verdict_label_reads_the_same_in_pins_and_history(label: str, tone: str) -> None:
    from evalpin.tui.widgets.history_table import label_class
    from evalpin.tui.widgets.pins import badge_class

    assert badge_class(label) == f"pins--{tone}" and label_class(label) == f"history--{tone}"
