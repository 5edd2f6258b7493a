"""`c`: what moved, by cause. Choosing one narrows the case list to its cases.

The list is the report's causes (core/judge/causes.py): each reason code, tool call and failing
test that appeared or went between the two runs, with its cases and (case, seed) pairs.
The screen only shows them and says which was chosen; the review screen filters.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from evalpin.core.judge.causes import APPEARED, TOOL, Cause
from evalpin.tui.safe import line
from evalpin.tui.widgets.tones import tone_style

CLEAR = -1  # the first option: every case again


def cause_text(cause: Cause, repeat_label: str, tones: dict[str, Style], width: int = 48) -> Text:
    """`+ missing_text:sorry   1 case (3 seeds)`: the label inert and padded to `width`
    (so the counts line up), in the theme's tones (`CausesScreen.COMPONENT_CLASSES`)."""
    tone = "" if cause.kind == TOOL else "appeared" if cause.sign == APPEARED else "went"
    text = line(cause.label, tones.get(tone, ""), width=width)
    text.pad_right(width - text.cell_len)
    text.append(cause.describe(repeat_label)[len(cause.label) :], style=tones["count"])
    return text


class CausesScreen(ModalScreen[int | None]):
    """The causes of a pair; dismisses with the chosen one's index, CLEAR for every case,
    or None (Esc) to leave the filter as it was."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,c", "close", "close", tooltip="close, keeping the list as it was"),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "causes--appeared",  # a reason code that appeared: worse
        "causes--went",  # one that went: better
        "causes--count",  # how many cases and seeds
    }

    def __init__(self, causes: list[Cause], repeat_label: str, chosen: Cause | None) -> None:
        super().__init__()
        self.causes = causes
        self.repeat_label = repeat_label
        self.chosen = chosen

    def compose(self) -> ComposeResult:
        with Vertical(id="causes"):
            yield Static(markup=False, id="causes-title")
            yield OptionList(id="cause-list")

    def on_mount(self) -> None:
        """The list, painted in the theme's tones (read once the styles are applied)."""
        tones = {
            name.removeprefix("causes--"): tone_style(self, name) for name in self.COMPONENT_CLASSES
        }
        self.query_one("#causes-title", Static).update(
            Text.assemble(
                ("What moved, by cause", "bold"),
                (f"   {len(self.causes)} · Enter narrows the list to its cases", tones["count"]),
            )
        )
        width = min(48, max((len(c.label) for c in self.causes), default=0))
        options = self.query_one(OptionList)
        options.add_options(
            [
                Option(Text("every case (no cause filter)", style="italic"), id="clear"),
                *(
                    Option(cause_text(c, self.repeat_label, tones, width), id=f"cause-{i}")
                    for i, c in enumerate(self.causes)
                ),
            ]
        )
        if self.chosen in self.causes:
            options.highlighted = self.causes.index(self.chosen) + 1
        else:
            options.highlighted = 1 if self.causes else 0
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        index = message.option_index - 1
        self.dismiss(CLEAR if index < 0 else index)

    def action_close(self) -> None:
        self.dismiss(None)
