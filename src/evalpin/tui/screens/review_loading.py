"""The review screen's side of loading: what it does with each message the loader
(`tui.loader`) posts, from the first partial screen of cases to the verdicts.

A mixin of `ReviewScreen`, one concern of it: the partial list growing behind
`preview` (never while the reviewer steps through it), the refusal banner (pushed as
soon as a mismatched pair is read, completed once the join is), the complete table in
place of the partial one, the causes and the verdicts. A message of a replaced load (an
older generation) is dropped. Handlers go by Textual's naming (`on_cases_grew`), since
`@on` is only collected on widgets.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import work

from evalpin.core.read.runfile import RunFile
from evalpin.core.review.cases import ALL, CaseTable
from evalpin.core.review.judge_apart import JudgeApart
from evalpin.tui import messages
from evalpin.tui.loader import GROW_INTERVAL, Loader, RunSource, source_path
from evalpin.tui.screens.banner import BannerScreen
from evalpin.tui.widgets.case_list import unwritten
from evalpin.tui.widgets.pins import PinsHeader

if TYPE_CHECKING:
    from evalpin.tui.screens.review import ReviewScreen

# While the reviewer steps through a partial list it does not grow: it grows once they
# have paused this long.
BROWSING_PAUSE = 0.4


def reported_models(run: RunFile) -> str:
    models = sorted(m for m in run.pin_values["reported_model"] if m is not None)
    if not models:
        return "<none reported>"
    return ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")


class ReviewLoading:
    """The review screen's handlers of its loader's messages."""

    @work(
        thread=True,
        exclusive=True,
        exit_on_error=False,
        group="load",
        description="read, index, join and judge the runs",
    )
    def load(
        self: ReviewScreen, left: RunSource, right: RunSource | None, generation: int, refused: bool
    ) -> None:
        """Read, index, join, classify and judge the pair (`tui.loader`); every step
        posted as a message."""
        from textual.worker import get_current_worker

        loader = Loader(
            self.post_message, generation, get_current_worker(), self._answered, self._judging
        )
        loader.run(left, right, refused)

    def _judging(self: ReviewScreen, apart: JudgeApart | None) -> None:
        self._apart = apart

    def _current(
        self: ReviewScreen,
        message: messages.LoaderMessage,
    ) -> bool:
        """A message from a loader whose pair was since replaced (or reopened) is ignored."""
        return message.generation == self.generation

    def on_load_progress(self: ReviewScreen, message: messages.LoadProgress) -> None:
        if self.cases is None and self._current(message):
            self.status_line.set_progress(message.phase, message.done, message.total)
            if self.preview is not None and not self.banner_pending:
                self._update_status()

    def on_cases_grew(self: ReviewScreen, message: messages.CasesGrew) -> None:
        """More of the runs read. The partial table grows in place behind `preview`; a
        message comes at most every half `GROW_INTERVAL` (each one wakes this thread), and
        a ticker shows the growth every `GROW_INTERVAL`, so the last of it shows even when
        reading pauses. The cursor stays where it is."""
        if not self._current(message) or self.cases is not None:
            return
        self.fraction = message.fraction
        first = self.preview is None
        self.preview = message.cases
        if first:
            self._stop_growing()
            self._grow_timer = self.set_interval(GROW_INTERVAL, self._grow)
            self._grow()

    def _stop_growing(self: ReviewScreen) -> None:
        if self._grow_timer is not None:
            self._grow_timer.stop()
            self._grow_timer = None

    def _grow(self: ReviewScreen) -> None:
        """Show what the partial table holds now, if it moved on since last shown."""
        if self.cases is not None or self.preview is None:
            self._stop_growing()  # the complete table is in
            return
        if self.banner_pending:
            return  # the banner says why nothing shows
        if time.perf_counter() < self._moved_at + BROWSING_PAUSE or not self._answered.is_set():
            # The reviewer is stepping through the list: it grows when they pause, so a
            # growth's frame never holds back the answer to their next key.
            return
        grown = (len(self.preview.cases), self.fraction, self.preview.mode)
        if grown == self._grown:
            return
        self._grown = grown
        self.case_list.placeholder = "no case matches"
        self._apply(grow=self.case_list.table is self.preview)

    def _envelope_notes(self: ReviewScreen) -> list[str]:
        from evalpin.core.judge.envelope import notes

        if len(self._sides) < 2:
            return []
        return notes(self._sides[0].header, self._sides[1].header)

    def on_mismatch_found(self: ReviewScreen, message: messages.MismatchFound) -> None:
        """A mismatched pair among what is read: refuse at once, before the files end."""
        if not self._current(message) or self.banner is not None or self.delta:
            return
        if self.diff is None:
            self._show_banner(
                BannerScreen(headers=message.pins, first=message.key, notes=self._envelope_notes())
            )

    def on_load_failed(self: ReviewScreen, message: messages.LoadFailed) -> None:
        if not self._current(message):
            return
        self._stop_growing()
        self.status_line.set_progress("cannot open: " + message.error)
        self.case_list.placeholder = "nothing to show: a run file could not be read"
        self.case_list.show_empty()
        self.notify(message.error, title="cannot open run", severity="error", markup=False)

    def on_runs_read(self: ReviewScreen, message: messages.RunsRead) -> None:
        if not self._current(message):
            return
        self.left, self.right = message.left, message.right
        runs = [message.left] + ([message.right] if message.right is not None else [])
        for side, run in zip(self._sides, runs, strict=True):
            side.run = run
            side.header = run.header
            side.reported = reported_models(run)
        self.query_one(PinsHeader).set_sides(self._sides)
        self.read_notes_for(runs, message.generation)

    def on_diff_ready(self: ReviewScreen, message: messages.DiffReady) -> None:
        if not self._current(message):
            return
        self.diff = message.diff
        self._fold_pins()
        if message.diff.refused:
            if self.banner is not None:
                self.banner.complete(message.diff, message.mismatches)
            elif not self.delta:
                self._show_banner(
                    BannerScreen(message.diff, message.mismatches, notes=self._envelope_notes())
                )
        elif self.banner is not None:
            # The headers said "different instrument" but no case is common to both, or
            # the mismatch read early was a record a later repeat replaced.
            early = self.banner.first is not None
            self.banner.dismiss("compare")
            self.notify(
                "the whole join has no mismatched case (the last record of a repeated case"
                " wins): compared"
                if early
                else "no case in common: nothing to refuse or compare",
                timeout=4,
            )

    def _show_banner(self: ReviewScreen, banner: BannerScreen) -> None:
        self.banner_pending = True
        self.banner = banner
        self.case_list.placeholder = "comparison refused: see the banner"
        self.case_list.show_empty()
        self.app.push_screen(banner, self._banner_choice)

    def _banner_choice(self: ReviewScreen, choice: str | None) -> None:
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
        elif self.preview is not None:
            self.case_list.placeholder = "no case matches"
            self._apply()

    def on_cases_ready(self: ReviewScreen, message: messages.CasesReady) -> None:
        if not self._current(message):
            return
        if message.followed and self.cases is not None:
            self._grown_by_following(message.cases)
            return
        self.cases = message.cases
        if self.banner_pending:  # behind the banner, the list keeps saying why
            self.status_line.set_progress(f"every case indexed: {len(message.cases):,}")
        else:
            self.case_list.placeholder = "no case matches"
            self._fill()

    def _fill(self: ReviewScreen) -> None:
        """Show the complete table. The cursor goes to the first regression, unless the
        reviewer already moved, filtered or searched in the partial list: then it stays
        on their case (a case keeps its number from the partial table to this one)."""
        assert self.cases is not None
        browsed = self.case_list.table is self.preview is not None and (
            self.case_list.cursor or self.filter != ALL or self.search
        )
        if self.filter not in self.cases.filters:
            self.set_reactive(type(self).filter, ALL)
        if browsed:
            self._apply()
            return
        self.rows = self._visible(self.cases)
        self.changed = self.cases.changed_positions(self.rows)
        start = self.cases.first_position(self.rows)
        self.case_list.show(self.cases, self.rows, start)
        self._cursor_moved()
        self._update_status()

    def _grown_by_following(self: ReviewScreen, cases: CaseTable) -> None:
        """A followed run grew: its new table in place of the old one, the cursor on the
        same case (found by id: a new table numbers its cases anew), the filter, search
        and cause as they are."""
        shown = self.case_list.table
        current = self.case_list.current
        keep = shown.cases[current].case_id if shown is not None and current is not None else None
        self.cases = cases
        if self.banner_pending:
            return  # the banner is up (the grown pair may just have been refused)
        if self.filter not in cases.filters:
            self.set_reactive(type(self).filter, ALL)
        self.rows = self._visible(cases)
        self.changed = cases.changed_positions(self.rows)
        at = 0
        if keep is not None:
            where = {c.case_id: k for k, c in enumerate(cases.cases)}
            at = self._position(where.get(keep))
        self.case_list.placeholder = "no case matches"
        self.case_list.show(cases, self.rows, at)
        self._cursor_moved()
        self._update_status()

    def on_followed(self: ReviewScreen, message: messages.Followed) -> None:
        """Who writes the runs followed, and whether they are still followed."""
        if not self._current(message):
            return
        for side, writer in zip(self._sides, message.writers, strict=False):
            side.writer = writer
        self.query_one(PinsHeader).set_sides(self._sides)
        self.following = message.following
        self.status_line.following = message.following
        writing = [side.writer is not None for side in self._sides]
        relabel = unwritten(*writing) if len(writing) == 2 else {}
        self.status_line.relabel = relabel
        self.case_list.set_relabel(relabel)
        self.detail.set_relabel(relabel)
        self._update_status()

    def on_run_replaced(self: ReviewScreen, message: messages.RunReplaced) -> None:
        """A followed file was rewritten (a resumed run): read the pair anew."""
        if self._current(message):
            self.notify("a run file was rewritten (resumed?): reading it again", timeout=3)
            self.open_runs(source_path(self.left_source), self._right_path())

    def _right_path(self: ReviewScreen) -> str | None:
        return source_path(self.right_source) if self.right_source is not None else None

    def on_causes_ready(self: ReviewScreen, message: messages.CausesReady) -> None:
        if self._current(message):
            self.causes = message.causes

    def on_verdicts_ready(self: ReviewScreen, message: messages.VerdictsReady) -> None:
        if not self._current(message) or self.left is None or self.cases is None:
            return
        self.verdicts = (message.left, message.right)
        self._sides[0].verdict = message.left
        if message.right is not None and len(self._sides) > 1:
            self._sides[1].verdict = message.right
        self.query_one(PinsHeader).set_sides(self._sides)
