"""`?`: every key of the app, grouped by where it works."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Case list",
        [
            ("↑ ↓  j k", "move the selection (the detail follows)"),
            ("PgUp PgDn", "move a page"),
            ("Home End  g G", "first / last case"),
            ("n  p", "next / previous changed case"),
            ("f", "cycle the filter: all, changed, regressed, fixed, drift, flaky"),
            ("/", "search by case id (Enter keeps it, Esc clears it)"),
            ("Enter  click", "focus the detail of the case"),
        ],
    ),
    (
        "Detail",
        [
            ("↑ ↓  j k  PgUp PgDn", "scroll"),
            ("Esc", "back to the case list"),
        ],
    ),
    (
        "Anywhere",
        [
            ("v", "verdict screen: the publish rule for each run"),
            ("h", "history: the runs folder as series, with a pass-rate chart"),
            ("l", "launch panel: start a pinned run"),
            ("t", "switch between the dark and the light theme"),
            ("?", "this help"),
            ("q", "quit"),
        ],
    ),
    (
        "Verdict screen",
        [
            ("e", "export a publish card beside each publishable run"),
            ("Esc  v", "back to the cases"),
        ],
    ),
    (
        "History screen",
        [
            ("↑ ↓  j k  g G", "move between runs (the chart follows the cursor)"),
            ("Space", "mark a run, two at most (Space again unmarks)"),
            ("Enter  o", "open the marked pair: one series side by side, two: the banner"),
            ("r", "read the folder again"),
            ("Esc  h", "back to the cases"),
        ],
    ),
    (
        "Refusal banner",
        [
            ("b", "browse the pair as a backend delta (red bar; no regression labels)"),
            ("q", "quit"),
        ],
    ),
    (
        "Launch panel",
        [
            ("Tab  Shift+Tab", "move between fields"),
            ("Ctrl+S", "start the run"),
            ("Ctrl+X", "cancel the running run (the file stays resumable)"),
            ("Ctrl+O", "open the finished run against the left run"),
            ("Esc", "close the panel (when no run is going)"),
        ],
    ),
]


def help_table() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True, style="bold", min_width=20)
    table.add_column()
    for k, (section, keys) in enumerate(KEYS):
        if k:
            table.add_row("", "")
        table.add_row(Text(section, style="bold underline"), "")
        for key, what in keys:
            table.add_row(Text(key), Text(what))
    return table


class HelpScreen(ModalScreen[None]):
    """Lists every key; Esc, ? or Enter closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,enter", "close", "close help"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(Text("evalpin review: keys", style="bold"), markup=False)
            yield Static(help_table(), markup=False, id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)
