"""`?`: every key of the app, grouped by where it works, read from the bindings.

Nothing here is written by hand but the section titles: each section lists the
`BINDINGS` of the widgets and screens it names, with the binding's tooltip (or, where it
has none, its description). A new binding shows up here by itself; the docs' key
table is checked against the same bindings by a test.
"""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

# How a key is written on screen: Textual's key names, as a keyboard labels them.
KEY_NAMES = {
    "up": "↑",
    "down": "↓",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "home": "Home",
    "end": "End",
    "escape": "Esc",
    "enter": "Enter",
    "space": "Space",
    "tab": "Tab",
    "shift+tab": "Shift+Tab",
    "question_mark": "?",
    "slash": "/",
}


def key_label(keys: str) -> str:
    """`up,k` -> `↑ k`; `ctrl+s` -> `Ctrl+S`."""
    out = []
    for key in keys.split(","):
        key = key.strip()
        if key in KEY_NAMES:
            out.append(KEY_NAMES[key])
        elif key.startswith("ctrl+"):
            out.append("Ctrl+" + key[5:].upper())
        else:
            out.append(key)
    return " ".join(out)


def as_bindings(bindings: list[BindingType]) -> list[Binding]:
    """`BINDINGS` entries as `Binding`s (Textual also accepts `(key, action, description)`)."""
    return [b if isinstance(b, Binding) else Binding(*b) for b in bindings]


def sections(app_bindings: list[BindingType]) -> list[tuple[str, list[Binding]]]:
    """Where each key works, and the bindings that define it there (`app_bindings`:
    the app's own, `EvalpinApp.BINDINGS`, which work on the review screen)."""
    from evalpin.tui.screens.banner import BannerScreen
    from evalpin.tui.screens.causes import CausesScreen
    from evalpin.tui.screens.history import HistoryScreen
    from evalpin.tui.screens.launch import LaunchScreen
    from evalpin.tui.screens.note import NoteScreen
    from evalpin.tui.screens.review import ReviewScreen
    from evalpin.tui.screens.verdict import VerdictScreen
    from evalpin.tui.widgets.case_list import CaseList
    from evalpin.tui.widgets.detail import DetailPane
    from evalpin.tui.widgets.history_table import HistoryTable
    from evalpin.tui.widgets.status import SearchBox

    return [
        ("Case list", as_bindings(CaseList.BINDINGS)),
        ("Search box", as_bindings(SearchBox.BINDINGS)),
        ("Detail", as_bindings(DetailPane.BINDINGS)),
        ("Review screen", as_bindings(ReviewScreen.BINDINGS + app_bindings)),
        ("Verdict screen", as_bindings(VerdictScreen.BINDINGS)),
        ("History screen", as_bindings(HistoryTable.BINDINGS + HistoryScreen.BINDINGS)),
        ("Causes", as_bindings(CausesScreen.BINDINGS)),
        ("Review note", as_bindings(NoteScreen.BINDINGS)),
        ("Refusal banner", as_bindings(BannerScreen.BINDINGS)),
        ("Launch panel", as_bindings(LaunchScreen.BINDINGS)),
        ("This help", as_bindings(HelpScreen.BINDINGS)),
    ]


def help_table(keys: list[tuple[str, list[Binding]]]) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold", min_width=20)
    table.add_column()
    for k, (section, bindings) in enumerate(keys):
        if k:
            table.add_row("", "")
        table.add_row(Text(section, style="bold underline"), "")
        for binding in bindings:
            table.add_row(
                Text(key_label(binding.key)), Text(binding.tooltip or binding.description)
            )
    return table


class HelpScreen(ModalScreen[None]):
    """Lists every key; Esc, ? or Enter closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,enter", "close", "close help"),
    ]

    def __init__(self, keys: list[tuple[str, list[Binding]]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(Text("evalpin review: keys", style="bold"), markup=False)
            yield Static(help_table(self.keys), markup=False, id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)
