"""The review app (`make_app`, the name the command line, tests and scripts use)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from evalpin.tui.loader import RunSource
from evalpin.tui.screens.review import ReviewScreen
from evalpin.tui.widgets.tones import light_theme


class EvalpinApp(App[None]):
    """`evalpin review`: two runs side by side (`left` earlier, `right` newer), or one alone.

    Sources are paths (read in a worker) or `RunFile`s already read (the command line
    reads them first, so a bad file exits 3 before any screen). `cwd` is the project
    folder (default: the current folder, fixed when the app is made, so a later `chdir`
    does not move it); tests and scripts pass `cursor_blink=False` and a `theme` for
    stable screens. `launch=False` turns the launch panel off (`evalpin serve` on a
    non-loopback host: a page anyone on the network can open must not start runs).
    `notes`: the review notes file (default: beside the right-hand run).

    Screens reach the settings below through a typed `app` property (see `ReviewScreen`),
    never by `getattr`: a renamed setting is then a type error, not a silent default.
    """

    CSS_PATH = "evalpin.tcss"
    TITLE = "evalpin review"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "quit")]

    cwd: Path
    """The project folder: where the launch panel finds `fixtures/` and `slots.yaml` and
    starts runs, and whose `runs/` the history reads when the left run has no folder."""

    cursor_blink: bool
    """Whether text inputs blink (off in tests and screenshots, for stable screens)."""

    notes: Path | None
    """The review notes file (`--notes`); None: `$EVALPIN_NOTES`, else `notes.jsonl`
    in the folder of the right-hand run (or of the only one). See `core/read/notes.py`."""

    def __init__(
        self,
        left: RunSource,
        right: RunSource | None = None,
        *,
        cwd: Path | None = None,
        cursor_blink: bool = True,
        theme: str | None = None,
        launch: bool = True,
        notes: Path | None = None,
    ) -> None:
        super().__init__()
        self.notes = notes
        self.left, self.right = left, right
        self.cwd = (cwd if cwd is not None else Path.cwd()).resolve()
        self.launch = launch
        self.cursor_blink = cursor_blink
        self.register_theme(light_theme())
        if theme:
            self.theme = theme

    def get_default_screen(self) -> Screen:
        return ReviewScreen(self.left, self.right)

    @property
    def review(self) -> ReviewScreen:
        """The review screen (the bottom of the stack)."""
        screen = self.screen_stack[0]
        assert isinstance(screen, ReviewScreen)
        return screen

    def show_help(self) -> None:
        """`?` on any screen: every key, read from the bindings (`screens/help.py`)."""
        from evalpin.tui.screens.help import HelpScreen, sections

        self.push_screen(HelpScreen(sections(self.BINDINGS)))


make_app = EvalpinApp
