"""The review screen: pins on top, the case list beside the detail, counts and filters.

Loading happens in one thread worker that reads both files, joins them, builds the
case table and applies the publish rule, posting what it learns as it learns it (see
`tui.messages`), so the pins paint at once, the refusal banner comes as soon as the join
is known, and the list fills when the case table is ready.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from evalpin.core.cases import ALL, CaseTable, build_case_table, step
from evalpin.core.compare import Diff, compare
from evalpin.core.discovery import header_mismatch, peek_header
from evalpin.core.errors import InputError
from evalpin.core.runfile import RunFile, read_run
from evalpin.core.verdict import Verdict, judge
from evalpin.tui.messages import (
    CasesReady,
    DiffReady,
    LoadFailed,
    LoadProgress,
    RunsRead,
    VerdictsReady,
)
from evalpin.tui.screens.banner import BannerScreen
from evalpin.tui.widgets.case_list import CaseList
from evalpin.tui.widgets.detail import DetailPane
from evalpin.tui.widgets.pins import PinsHeader, Side
from evalpin.tui.widgets.status import SearchBox, StatusLine

if TYPE_CHECKING:
    from evalpin.tui.app import EvalpinApp

RunSource = str | Path | RunFile
PROGRESS_INTERVAL = 0.05
FREEZE_FROM = 20_000
LAUNCH_OFF_TEXT = "launch panel off: served on a non-loopback host (runs start only on 127.0.0.1)"
NARROW_BELOW = 120  # columns: below this the list and the detail stack
SHORT_BELOW = 30  # rows: below this (or when narrow) agreeing pins fold to one line
DELTA_TEXT = (
    " BACKEND DELTA — the two runs were measured with different instruments (triple "
    "mismatch). Nothing here is a regression or a fix: cases only 'differ'. "
)


def freeze_heap(records: int) -> None:
    """Move what loading built (rows, the case table) out of the cyclic GC's sight.

    Hundreds of thousands of long-lived objects make every full collection walk them all,
    which shows as a 100 ms stall on a key press now and then; `gc.freeze` spares them.
    Only for big runs: frozen objects are never collected, a cost small runs need not pay.
    """
    if records >= FREEZE_FROM:
        gc.freeze()


def source_path(source: RunSource) -> str:
    return source.path if isinstance(source, RunFile) else str(source)


def reported_models(run: RunFile) -> str:
    models = sorted({r.reported_model for r in run.rows if r.reported_model is not None})
    if not models:
        return "<none reported>"
    return ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")


class ReviewScreen(Screen[None]):
    """Two runs side by side (or one alone): pins, case list, detail."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # First, so that even a footer cut short by a narrow terminal shows where all are.
        Binding("question_mark", "help", "help", key_display="?", tooltip="every key (this help)"),
        Binding("n", "step(1)", "next changed", tooltip="next changed case"),
        Binding("p", "step(-1)", "prev changed", tooltip="previous changed case"),
        Binding(
            "f",
            "cycle_filter",
            "filter",
            tooltip="cycle the filter: all, changed, regressed, fixed, drift, flaky",
        ),
        Binding(
            "slash",
            "search",
            "search",
            key_display="/",
            tooltip="search by case id (Enter keeps it, Esc clears it)",
        ),
        Binding("v", "verdict", "verdict", tooltip="verdict screen: the publish rule for each run"),
        Binding(
            "h",
            "history",
            "history",
            tooltip="history: the runs folder as series, with a pass-rate chart",
        ),
        Binding("l", "launch", "launch", tooltip="launch panel: start a pinned run"),
        Binding(
            "t",
            "toggle_theme",
            "theme",
            show=False,
            tooltip="switch between the dark and the light theme",
        ),
        Binding(
            "i",
            "toggle_pins",
            "pins",
            tooltip="show all the pins, or fold them to one line (the differing pins, marked ≠)",
        ),
    ]

    filter: reactive[str] = reactive(ALL, init=False)
    """The status filter the list shows (`f` cycles through the mode's filters)."""

    search: reactive[str] = reactive("", init=False)
    """Case-id substring the list is narrowed to (`/`)."""

    delta: reactive[bool] = reactive(False, init=False)
    """True once the reviewer chose to browse a refused pair as a backend delta."""

    pins_open: reactive[bool | None] = reactive(None, init=False)
    """The reviewer's choice with `i`: pins open (True) or folded to one line (False).
    None until then: folded in a narrow or short terminal when the instruments agree."""

    def __init__(self, left: RunSource, right: RunSource | None = None) -> None:
        super().__init__()
        self.left_source, self.right_source = left, right
        self.left: RunFile | None = None
        self.right: RunFile | None = None
        self.diff: Diff | None = None
        self.cases: CaseTable | None = None
        self.verdicts: tuple[Verdict, Verdict | None] | None = None
        self.banner_pending = False
        self.banner: BannerScreen | None = None
        self.rows: list[int] = []
        self.changed: list[int] = []
        self.generation = 0  # of the current load (see `open_runs`)
        self._sides: list[Side] = []

    @property
    def app(self) -> EvalpinApp:  # type: ignore[override]
        """The app, typed: this screen runs only inside `EvalpinApp`."""
        return cast("EvalpinApp", super().app)

    # -- layout ----------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(Text(DELTA_TEXT), id="delta-bar", markup=False)
        if not getattr(self.app, "launch", True):
            yield Static(Text(LAUNCH_OFF_TEXT), id="launch-off", markup=False)
        yield PinsHeader(id="pins")
        yield StatusLine(id="status")
        with Horizontal(id="main"):
            with Vertical(id="list-column"):
                yield CaseList(id="cases")
                yield SearchBox(placeholder="case id contains…", id="search")
            yield DetailPane(id="detail")
        yield Footer()

    @property
    def case_list(self) -> CaseList:
        return self.query_one(CaseList)

    @property
    def detail(self) -> DetailPane:
        return self.query_one(DetailPane)

    @property
    def status_line(self) -> StatusLine:
        return self.query_one(StatusLine)

    def on_resize(self) -> None:
        self._fit()

    def on_screen_resume(self) -> None:
        self._fit()  # the terminal may have been resized while another screen was on top

    def _fit(self) -> None:
        """The layout for the terminal's size: below `NARROW_BELOW` columns the list and
        the detail stack (see evalpin.tcss, `-narrow`); then, or below `SHORT_BELOW` rows,
        agreeing pins fold."""
        width, height = self.app.size
        narrow = width < NARROW_BELOW
        self.set_class(narrow, "-narrow")
        self.set_class(height < SHORT_BELOW, "-short")
        self.query_one(Footer).compact = narrow
        self._fold_pins()

    def _instruments_agree(self) -> bool:
        """One run, or a pair that is not refused (as far as is known yet)."""
        if len(self._sides) < 2:
            return True
        if self.diff is not None:
            return not self.diff.refused
        return header_mismatch(self._sides[0].header, self._sides[1].header) is None

    def _fold_pins(self) -> None:
        if self.pins_open is None:
            small = self.has_class("-narrow") or self.has_class("-short")
            folded = small and self._instruments_agree()
        else:
            folded = not self.pins_open
        self.query_one(PinsHeader).fold(folded)

    def watch_pins_open(self) -> None:
        self._fold_pins()

    def on_mount(self) -> None:
        self._fit()
        self.query_one(SearchBox).cursor_blink = self.app.cursor_blink
        self.case_list.focus()
        self.watch(self.case_list, "cursor", self._cursor_moved, init=False)
        self.open_runs(self.left_source, self.right_source)

    # -- loading ---------------------------------------------------------------------

    def open_runs(self, left: RunSource, right: RunSource | None) -> None:
        """(Re)open a pair or a single run; the loader runs in a thread worker. A new
        generation: what an earlier loader still posts is dropped, even for the same file."""
        self.generation += 1
        self.left_source, self.right_source = left, right
        self.left = self.right = None
        self.diff = self.cases = self.verdicts = None
        self.banner_pending = False
        self.banner: BannerScreen | None = None
        self.delta = False
        self.set_reactive(ReviewScreen.filter, ALL)
        self.set_reactive(ReviewScreen.search, "")
        self.case_list.placeholder = "reading runs…"
        self.case_list.show_empty()
        self.detail.clear()
        self.status_line.set_progress("reading runs…")
        self._sides = [Side(source_path(left), header=self._peek(left))]
        if right is not None:
            self._sides.append(Side(source_path(right), header=self._peek(right)))
        self.query_one(PinsHeader).set_sides(self._sides)
        self._fold_pins()
        if right is not None:
            known = header_mismatch(self._sides[0].header, self._sides[1].header)
            if known:
                self._show_banner(BannerScreen(headers=known))
        # Start reading once the pins are on screen: a reader holding the GIL would
        # otherwise slow the first paint (another tool's log has no header to peek).
        self.call_after_refresh(self.load, left, right, self.generation)

    def reached(self, milestone: str) -> bool:
        """Whether loading got to `milestone`: `read` (both files), `diff` (the join),
        `banner` (the refusal on screen), `listed` (the cases in the list) or `verdicts`.
        For tests and scripts that wait on a state instead of a clock."""
        if milestone == "banner":
            return self.banner is not None and self.app.screen is self.banner
        states = {
            "read": self.left is not None,
            "diff": self.diff is not None,
            "listed": self.cases is not None and self.case_list.table is self.cases,
            "verdicts": self.verdicts is not None,
        }
        return states[milestone]

    @staticmethod
    def _peek(source: RunSource):
        return source.header if isinstance(source, RunFile) else peek_header(source)

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="load",
        description="read, join, index and judge the runs",
    )
    def load(self, left: RunSource, right: RunSource | None, generation: int) -> None:
        """Read, join, index and judge; every step posted as a message."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        post = self.post_message
        last = [0.0]

        def progress(phase: str):
            def report(done: int, total: int) -> None:
                now = time.perf_counter()
                if now - last[0] >= PROGRESS_INTERVAL or done == total:
                    last[0] = now
                    post(LoadProgress(generation, phase, done, total))

            return report

        try:
            post(LoadProgress(generation, "reading left run…"))
            lrun = left if isinstance(left, RunFile) else read_run(left)
            rrun = None
            if right is not None:
                post(LoadProgress(generation, "reading right run…"))
                rrun = right if isinstance(right, RunFile) else read_run(right)
        except InputError as exc:
            post(LoadFailed(generation, str(exc)))
            return
        if worker.is_cancelled:
            return
        post(RunsRead(generation, lrun, rrun))
        diff = None
        if rrun is not None:
            post(LoadProgress(generation, "comparing…"))
            diff = compare(lrun, rrun)
            post(DiffReady(generation, diff, diff.key_mismatches() if diff.refused else []))
        if worker.is_cancelled:
            return
        cases = build_case_table(lrun, rrun, diff, progress=progress("indexing cases…"))
        freeze_heap(len(lrun.rows) + (len(rrun.rows) if rrun else 0))
        post(CasesReady(generation, cases))
        if worker.is_cancelled:
            return
        lv = judge(lrun)
        rv = judge(rrun) if rrun is not None else None
        post(VerdictsReady(generation, lv, rv))

    def _current(
        self, message: LoadProgress | LoadFailed | RunsRead | DiffReady | CasesReady | VerdictsReady
    ) -> bool:
        """A message from a loader whose pair was since replaced (or reopened) is ignored."""
        return message.generation == self.generation

    @on(LoadProgress)
    def _progress(self, message: LoadProgress) -> None:
        if self.cases is None and self._current(message):
            self.status_line.set_progress(message.phase, message.done, message.total)

    @on(LoadFailed)
    def _failed(self, message: LoadFailed) -> None:
        if not self._current(message):
            return
        self.status_line.set_progress("cannot open: " + message.error)
        self.case_list.placeholder = "nothing to show: a run file could not be read"
        self.case_list.show_empty()
        self.notify(message.error, title="cannot open run", severity="error", markup=False)

    @on(RunsRead)
    def _runs_read(self, message: RunsRead) -> None:
        if not self._current(message):
            return
        self.left, self.right = message.left, message.right
        runs = [message.left] + ([message.right] if message.right is not None else [])
        for side, run in zip(self._sides, runs, strict=True):
            side.run = run
            side.header = run.header
            side.reported = reported_models(run)
        self.query_one(PinsHeader).set_sides(self._sides)

    @on(DiffReady)
    def _diff_ready(self, message: DiffReady) -> None:
        if not self._current(message):
            return
        self.diff = message.diff
        self._fold_pins()
        if message.diff.refused:
            if self.banner is not None:
                self.banner.complete(message.diff, message.mismatches)
            elif not self.delta:
                self._show_banner(BannerScreen(message.diff, message.mismatches))
        elif self.banner is not None:
            # The headers said "different instrument" but no case is common to both.
            self.banner.dismiss("compare")
            self.notify("no case in common: nothing to refuse or compare", timeout=4)

    def _show_banner(self, banner: BannerScreen) -> None:
        self.banner_pending = True
        self.banner = banner
        self.case_list.placeholder = "comparison refused: see the banner"
        self.case_list.show_empty()
        self.app.push_screen(banner, self._banner_choice)

    def _banner_choice(self, choice: str | None) -> None:
        self.banner = None
        if choice not in ("delta", "compare"):
            self.app.exit()
            return
        self.banner_pending = False
        self.delta = choice == "delta"
        self.case_list.placeholder = "indexing cases…"
        if self.cases is not None:
            self.case_list.placeholder = "no case matches"
            self._fill()

    def watch_delta(self, delta: bool) -> None:
        self.set_class(delta, "-delta")

    @on(CasesReady)
    def _cases_ready(self, message: CasesReady) -> None:
        if not self._current(message):
            return
        self.cases = message.cases
        if not self.banner_pending:  # behind the banner, the list keeps saying why
            self.case_list.placeholder = "no case matches"
            self._fill()

    def _fill(self) -> None:
        """Show the case table: all cases, the cursor on the first regression."""
        assert self.cases is not None
        self.rows = self.cases.visible(ALL)
        self.changed = self.cases.changed_positions(self.rows)
        start = self.cases.first_position(self.rows)
        self.case_list.show(self.cases, self.rows, start)
        self._cursor_moved()
        self._update_status()

    @on(VerdictsReady)
    def _verdicts_ready(self, message: VerdictsReady) -> None:
        if not self._current(message) or self.left is None or self.cases is None:
            return
        self.verdicts = (message.left, message.right)
        self._sides[0].verdict = message.left
        if message.right is not None and len(self._sides) > 1:
            self._sides[1].verdict = message.right
        self.query_one(PinsHeader).set_sides(self._sides)

    # -- list and detail -------------------------------------------------------------

    def _update_status(self) -> None:
        if self.cases is not None:
            self.status_line.set_counts(
                self.cases.counts(), self.filter, self.search, len(self.rows)
            )

    def _apply(self) -> None:
        if self.cases is None or self.banner_pending:
            return
        keep = self.case_list.current
        self.rows = self.cases.visible(self.filter, self.search)
        self.changed = self.cases.changed_positions(self.rows)
        position = 0
        if keep is not None:
            try:
                position = self.rows.index(keep)
            except ValueError:
                position = 0
        self.case_list.show(self.cases, self.rows, position)
        self._cursor_moved()
        self._update_status()

    def watch_filter(self) -> None:
        self._apply()

    def watch_search(self) -> None:
        self._apply()

    def _cursor_moved(self) -> None:
        """The detail follows the list's cursor, in the same frame as the list (a watcher
        runs where the cursor changes; a message would be handled a frame later)."""
        current = self.case_list.current
        if current is None or self.cases is None or self.banner_pending:
            self.detail.clear("no case matches" if self.cases is not None else "")
        else:
            self.detail.show(self.cases, current)

    @on(CaseList.Selected)
    def _selected(self, message: CaseList.Selected) -> None:
        self.detail.focus()

    @on(DetailPane.Back)
    def _back(self) -> None:
        self.case_list.focus()

    # -- actions ---------------------------------------------------------------------

    def action_step(self, direction: int) -> None:
        if not self.rows:
            return
        target = step(self.changed, self.case_list.cursor, direction > 0)
        if target is None:
            which = "next" if direction > 0 else "previous"
            self.notify(f"no {which} changed case under this filter", timeout=2)
            return
        self.case_list.move_to(target)
        self.case_list.focus()

    def action_cycle_filter(self) -> None:
        if self.cases is None or self.banner_pending:
            return
        filters = self.cases.filters
        self.filter = filters[(filters.index(self.filter) + 1) % len(filters)]

    def action_search(self) -> None:
        if self.cases is None or self.banner_pending:
            return
        box = self.query_one(SearchBox)
        box.add_class("-open")
        box.focus()

    @on(SearchBox.Changed)
    def _search_changed(self, message: SearchBox.Changed) -> None:
        self.search = message.value

    @on(SearchBox.Submitted)
    def _search_submitted(self) -> None:
        self.case_list.focus()

    @on(SearchBox.Cancelled)
    def _search_cancelled(self) -> None:
        box = self.query_one(SearchBox)
        box.value = ""
        box.remove_class("-open")
        self.search = ""
        self.case_list.focus()

    def action_verdict(self) -> None:
        if self.verdicts is None or self.left is None:
            self.notify("the verdicts are still being computed", timeout=2)
            return
        from evalpin.tui.screens.verdict import VerdictScreen

        self.app.push_screen(VerdictScreen(self.left, self.right, *self.verdicts, self.diff))

    def history_folder(self) -> Path:
        """Where `h` reads: the left run's folder, else the project's runs/ folder."""
        folder = Path(source_path(self.left_source)).parent
        if folder.is_dir():
            return folder
        return self.app.cwd / "runs"

    def action_history(self) -> None:
        from evalpin.tui.screens.history import HistoryScreen

        shown = self.right_source if self.right_source is not None else self.left_source
        screen = HistoryScreen(self.history_folder(), current=source_path(shown))
        self.app.push_screen(screen, self._history_chosen)

    def _history_chosen(self, pair: tuple[str, str] | None) -> None:
        """Two runs chosen in the history: opened as `evalpin review LEFT RIGHT` would."""
        if pair is not None:
            self.open_runs(*pair)

    def action_launch(self) -> None:
        if not getattr(self.app, "launch", True):
            self.notify(LAUNCH_OFF_TEXT, severity="warning", markup=False)
            return
        from evalpin.tui.screens.launch import LaunchScreen

        like = self.left.header if self.left is not None else None
        self.app.push_screen(LaunchScreen(like=like), self._launched)

    def _launched(self, new_run: str | None) -> None:
        if new_run:
            left = self.left if self.left is not None else self.left_source
            self.open_runs(left, new_run)

    def action_toggle_theme(self) -> None:
        self.app.theme = "textual-light" if self.app.current_theme.dark else "textual-dark"

    def action_toggle_pins(self) -> None:
        self.pins_open = self.query_one(PinsHeader).folded

    def action_help(self) -> None:
        from evalpin.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())
