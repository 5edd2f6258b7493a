"""The review screen: pins on top, the case list beside the detail, counts and filters.

Loading happens in one thread worker that reads both files a block at a time, keeping
the two prefixes level, and indexes the cases as it goes (`core.case_index`); it posts
what it learns as it learns it (see `tui.messages`). So the pins paint at once, the
first screen of cases follows the first blocks (marked partial, with a progress bar, and
never labelled regressed or fixed: a mismatch further on would refuse the comparison),
the refusal banner comes with the first mismatched pair found, and the complete table,
classified from the join of the whole runs, replaces the partial one in place.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static

from evalpin.core.judge.causes import Cause
from evalpin.core.judge.compare import Diff
from evalpin.core.judge.verdict import Verdict
from evalpin.core.read.discovery import header_mismatch, peek_header
from evalpin.core.read.formats import RunStream
from evalpin.core.read.runfile import RunFile
from evalpin.core.review.cases import ALL, COMPARE, FILTERS, SINGLE, CaseTable, step
from evalpin.core.review.judge_apart import JudgeApart
from evalpin.tui.loader import RunSource, source_path
from evalpin.tui.screens.banner import BannerScreen
from evalpin.tui.screens.causes import CLEAR, CausesScreen
from evalpin.tui.screens.review_loading import ReviewLoading
from evalpin.tui.screens.review_notes import ReviewNotes
from evalpin.tui.widgets.case_list import CaseList
from evalpin.tui.widgets.detail import DetailPane
from evalpin.tui.widgets.keys_line import KeysLine
from evalpin.tui.widgets.pins import PinsHeader, Side
from evalpin.tui.widgets.status import SearchBox, StatusLine
from evalpin.tui.widgets.tones import DARK_THEME, LIGHT_THEME

if TYPE_CHECKING:
    from evalpin.tui.app import EvalpinApp

LAUNCH_OFF_TEXT = "launch panel off: served on a non-loopback host (runs start only on 127.0.0.1)"
NARROW_BELOW = 120  # columns: below this the list and the detail stack
# The footer's keys in this order, the rest after them (see `ReviewScreen.active_bindings`).
FOOTER_FIRST = ("question_mark", "q", "n", "p", "v", "i", "f", "slash", "c", "m", "h", "l", "t")
NARROW_WORDS = {"step(1)": "next", "step(-1)": "prev"}  # a narrow footer's shorter words
SHORT_BELOW = 30  # rows: below this (or when narrow) agreeing pins fold to one line
DELTA_TEXT = (
    " BACKEND DELTA — the two runs were measured with different instruments (triple "
    "mismatch). Nothing here is a regression or a fix: cases only 'differ'. "
)


# What `f` cycles through, said from the table it cycles.
FILTER_TIP = (
    f"cycle the filter: {', '.join(FILTERS[COMPARE])} (one run: {', '.join(FILTERS[SINGLE])})"
)


class ReviewScreen(ReviewLoading, ReviewNotes, Screen[None]):
    """Two runs side by side (or one alone): pins, case list, detail."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # First, so that even a footer cut short by a narrow terminal shows where all are.
        Binding("question_mark", "help", "help", key_display="?", tooltip="every key (this help)"),
        Binding("n", "step(1)", "next changed", tooltip="next changed case"),
        Binding("p", "step(-1)", "prev changed", tooltip="previous changed case"),
        Binding("f", "cycle_filter", "filter", tooltip=FILTER_TIP),
        Binding(
            "slash",
            "search",
            "search",
            key_display="/",
            tooltip="search by case id (Enter keeps it, Esc clears it)",
        ),
        Binding(
            "c",
            "causes",
            "causes",
            tooltip="what moved, by cause: pick a reason, tool or failing test to list its cases",
        ),
        Binding(
            "m",
            "note",
            "note",
            tooltip="a review note on the case: acknowledged, known flaky, a ticket or a line"
            " (kept in notes.jsonl beside the runs; never changes a grade)",
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
            "t", "toggle_theme", "theme", tooltip="switch between the dark and the light theme"
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

    cause: reactive[Cause | None] = reactive(None, init=False)
    """The cause the list is narrowed to (`c`), on top of the filter and search."""

    pins_open: reactive[bool | None] = reactive(None, init=False)
    """The reviewer's choice with `i`: pins open (True) or folded to one line (False).
    None until then: folded in a narrow or short terminal when the instruments agree."""

    def __init__(self, left: RunSource, right: RunSource | None = None) -> None:
        super().__init__()
        self.left_source, self.right_source = left, right
        self.left: RunFile | None = None
        self.right: RunFile | None = None
        self.diff: Diff | None = None
        self.cases: CaseTable | None = None  # the complete table
        self.preview: CaseTable | None = None  # the partial one, while reading
        self.verdicts: tuple[Verdict, Verdict | None] | None = None
        self.causes: list[Cause] | None = None  # of a pair, once found (`c`)
        self.banner_pending = False
        self.banner: BannerScreen | None = None
        self.rows: list[int] = []
        self.changed: list[int] = []
        self.generation = 0  # of the current load (see `open_runs`)
        self.fraction = 0.0  # of the runs read, while partial
        self._grow_timer: Timer | None = None  # shows a partial table's growth
        self._grown: tuple[int, float, str] | None = None  # what the last growth showed
        self._sides: list[Side] = []
        self._apart: JudgeApart | None = None  # the child judging big runs, while loading
        # Set while the reviewer's last move is answered on screen: the loader yields to
        # the screen until then (see `tui.loader.YIELD_AT_MOST`).
        self._answered = threading.Event()
        self._answered.set()
        self._moved_at = 0.0  # when the cursor last moved (see review_loading.BROWSING_PAUSE)
        self.noted, self._written = {}, []  # review notes (`m`, see ReviewNotes)
        self.following = False  # a run without its trailer is read on as it is written

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
            yield DetailPane(id="detail", cwd=self.app.cwd)
        yield KeysLine(id="keys-line")
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
        words_change = narrow != self.has_class("-narrow")
        self.set_class(narrow, "-narrow")
        self.set_class(height < SHORT_BELOW, "-short")
        self.query_one(Footer).display = not narrow  # the keys line wraps instead
        self.query_one(KeysLine).display = narrow
        self._fold_pins()
        if words_change:  # the footer's words depend on the width (a refresh restyles it)
            self.refresh_bindings()

    def _fold_pins(self) -> None:
        """Folded in a narrow or short terminal until the reviewer says otherwise (`i`):
        ten rows of pins would leave a few case rows and no detail. A refused pair folds
        too: its folded line leads with what differs (`≠ slot a → b`), and the delta bar
        and the banner say the rest."""
        if self.pins_open is None:
            folded = self.has_class("-narrow") or self.has_class("-short")
        else:
            folded = not self.pins_open
        self.query_one(PinsHeader).fold(folded)

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The keys as the footer shows them: those that matter first (`FOOTER_FIRST`),
        so a footer cut short by a narrow terminal still shows quit, help, the steps,
        the verdict and the pins; in a narrow terminal in fewer words. Display only: which
        key does what is the bindings' own business."""
        found = super().active_bindings
        rank = {key: k for k, key in enumerate(FOOTER_FIRST)}
        ordered = dict(sorted(found.items(), key=lambda item: rank.get(item[0], len(rank))))
        if self.has_class("-narrow"):
            for key, active in ordered.items():
                short = NARROW_WORDS.get(active.binding.action)
                if short is not None:
                    binding = dataclasses.replace(active.binding, description=short)
                    ordered[key] = active._replace(binding=binding)
        return ordered

    def watch_pins_open(self) -> None:
        self._fold_pins()

    def on_unmount(self) -> None:
        if self._apart is not None:
            self._apart.stop()  # a verdict nobody will see: the child must not outlive us

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
        self.diff = self.cases = self.preview = self.verdicts = self.causes = None
        self.set_reactive(ReviewScreen.cause, None)
        self._stop_growing()
        self._grown = None
        self.banner_pending = False
        self.banner: BannerScreen | None = None
        self.delta = False
        self.following = self.status_line.following = False
        self.set_reactive(ReviewScreen.filter, ALL)
        self.set_reactive(ReviewScreen.search, "")
        self.case_list.placeholder = "reading runs…"
        self.case_list.show_empty()
        self.detail.clear()
        self.status_line.set_progress("reading runs…")
        self.reset_notes(source_path(right if right is not None else left))
        self._sides = [Side(source_path(left), header=self._peek(left))]
        if right is not None:
            self._sides.append(Side(source_path(right), header=self._peek(right)))
        self.query_one(PinsHeader).set_sides(self._sides)
        self._fold_pins()
        known = None
        if right is not None:
            known = header_mismatch(self._sides[0].header, self._sides[1].header)
        if known:
            self._show_banner(BannerScreen(headers=known, notes=self._envelope_notes()))
            # Not after a refresh: that callback would wait on the banner's next repaint,
            # which may never come before `b` dismisses it (the list then never filled).
            self.load(left, right, self.generation, True)
        else:
            # Start reading once the pins are on screen: a reader holding the GIL would
            # otherwise slow the first paint (another tool's log has no header to peek).
            self.call_after_refresh(self.load, left, right, self.generation, False)

    def reached(self, milestone: str) -> bool:
        """Whether loading got to `milestone`: `shown` (the first cases in the list, maybe
        a partial list), `read` (both files), `diff` (the join), `banner` (the refusal on
        screen), `listed` (every case in the list, the complete table), `causes` (a pair's),
        `verdicts`, or `following` (a run without its trailer, read on as it is written).
        For tests and scripts that wait on a state instead of a clock."""
        if milestone == "banner":
            return self.banner is not None and self.app.screen is self.banner
        if milestone == "shown":
            return self.is_mounted and self.case_list.line_count() > 0
        if milestone == "listed":
            return self.cases is not None and self.case_list.table is self.cases
        states = {
            "read": self.left is not None,
            "diff": self.diff is not None,
            "verdicts": self.verdicts is not None,
            "causes": self.causes is not None,
            "notes": self.book is not None,
            "following": self.following,
        }
        return states[milestone]

    @staticmethod
    def _peek(source: RunSource):
        if isinstance(source, RunFile | RunStream):
            return source.header
        return peek_header(source)

    @property
    def table(self) -> CaseTable | None:
        """What the list shows: the complete table, else the partial one."""
        return self.cases if self.cases is not None else self.preview

    def watch_delta(self: ReviewScreen, delta: bool) -> None:
        self.set_class(delta, "-delta")

    # -- list and detail -------------------------------------------------------------

    def _update_status(self) -> None:
        table = self.table
        if table is None:
            return
        partial = self.fraction if table.partial else None
        cause = self.cause.label if self.cause is not None else ""
        self.status_line.set_counts(
            table.counts(), self.filter, self.search, len(self.rows), partial=partial, cause=cause
        )

    def _apply(self, *, grow: bool = False) -> None:
        """Show the table under the filter and search; `grow`: the partial table grew
        under the same filter, so the cursor and the scroll stay as they are."""
        table = self.table
        if table is None or self.banner_pending:
            return
        keep = self.case_list.current
        self.rows = self._visible(table)
        self.changed = table.changed_positions(self.rows)
        if grow and self.case_list.table is table:
            self.case_list.grow(self.rows)
            if keep is not None and self.case_list.current != keep:
                self._select(keep)
            self._update_status()
            return
        self.case_list.show(table, self.rows, self._position(keep))
        self._cursor_moved()
        self._update_status()

    def _visible(self, table: CaseTable) -> Sequence[int]:
        """The table's cases under the filter and search, and the cause when one is chosen."""
        rows = table.visible(self.filter, self.search)
        cause = self.cause
        if cause is None or table.partial:
            return rows
        wanted = frozenset(cause.cases)
        cases = table.cases
        return [i for i in rows if cases[i].case_id in wanted]

    def _position(self, case: int | None) -> int:
        """Where `case` is in the list shown, else the top."""
        if case is None:
            return 0
        try:
            return self.rows.index(case)
        except ValueError:
            return 0

    def _select(self, case: int) -> None:
        self.case_list.move_to(self._position(case))

    def watch_filter(self) -> None:
        self._apply()

    def watch_search(self) -> None:
        self._apply()

    def watch_cause(self) -> None:
        self._apply()

    def _cursor_moved(self) -> None:
        """The detail follows the list's cursor, in the same frame as the list (a watcher
        runs where the cursor changes; a message would be handled a frame later)."""
        current = self.case_list.current
        table = self.case_list.table
        self._answered.clear()  # until the frame that shows it (the loader yields)
        self._moved_at = time.perf_counter()
        if current is None or table is None or self.banner_pending:
            self.detail.clear("no case matches" if self.table is not None else "")
        else:
            self.detail.show(table, current)
        if not self.detail.decoding:
            self.call_after_refresh(self._answered.set)

    @on(DetailPane.Ready)
    def _detail_ready(self) -> None:
        self.call_after_refresh(self._answered.set)

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
        if self.table is None or self.banner_pending:
            return
        filters = self.table.filters
        self.filter = filters[(filters.index(self.filter) + 1) % len(filters)]

    def action_search(self) -> None:
        if self.table is None or self.banner_pending:
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

    def action_causes(self) -> None:
        if self.right_source is None:
            self.notify("causes compare two runs: open a pair", timeout=3)
        elif self.delta or self.banner_pending:
            self.notify("a refused pair has no causes: its differences are the instrument's")
        elif self.causes is None:
            self.notify("the causes are still being read", timeout=2)
        elif not self.causes:
            self.notify("nothing moved for a reason, tool or test: no causes", timeout=3)
        else:
            label = self.table.left.repeat_label if self.table is not None else "seed"
            self.app.push_screen(CausesScreen(self.causes, label, self.cause), self._cause_chosen)

    def _cause_chosen(self, index: int | None) -> None:
        if index is None or self.causes is None:
            return
        self.cause = None if index == CLEAR else self.causes[index]
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
        self.app.theme = LIGHT_THEME if self.app.current_theme.dark else DARK_THEME

    def action_toggle_pins(self) -> None:
        self.pins_open = self.query_one(PinsHeader).folded

    def action_help(self) -> None:
        self.app.show_help()
