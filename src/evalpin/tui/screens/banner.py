"""The blocking banner: a comparison across different instruments is refused.

Shown before any case. Only two explicit choices leave it: `b` (or its button) browses
the pair as a backend delta, `q` (or its button) quits. Every other key, and a click
anywhere else, does nothing; the buttons cannot take focus, so Enter or Space cannot
press one by accident.

It can open from the run headers alone (another fixture set, grader version, slot label
or slot settings: refused whatever cases the runs share), or from the first mismatched
pair met while the files are still being read, and is completed with per-case counts
when the join is known.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from evalpin.core.judge.compare import Diff, KeyMismatch, probes_differ
from evalpin.core.sanitize import inert_line
from evalpin.tui.safe import line

REFUSE_LINE = "REFUSE_DIFF: triple mismatch, not a prompt regression"
_KEY_NAMES = {
    "fixture_set": "fixture set",
    "fixture_hash": "fixture hash",
    "grader_version": "grader version",
    "model_slot": "model slot",
    "reported_model": "reported model",
    "slot_settings": "slot settings",
}


def refusal_text(
    diff: Diff | None,
    mismatches: list[KeyMismatch] | None,
    headers: list[tuple[str, str, str]] | None = None,
    first: tuple[str, int | None] | None = None,
    notes: list[str] | None = None,
) -> Text:
    """Each mismatched key: left value vs right value, and on how many cases. Before the
    join: the pins the headers (or, with `first`, the first mismatched pair read) show."""
    text = Text()
    text.append(REFUSE_LINE + "\n\n", style="bold")
    if diff is None or mismatches is None:
        if first is None:
            text.append("The run headers already show a different instrument:\n")
            where = "  differs on every case (counting…)\n"
        else:
            text.append("A case read so far was measured with a different instrument:\n")
            text.append("  ")
            text.append_text(line(first[0], width=60))
            text.append(f" (seed {first[1]})\n")
            where = "  differs (still reading: counting…)\n"
        for key, lv, rv in headers or []:
            text.append(f"\n  {_KEY_NAMES.get(key, key)}", style="bold")
            text.append(where)
            text.append("    left  ")
            text.append_text(line(lv, width=48))
            text.append("\n    right ")
            text.append_text(line(rv, width=48))
            text.append("\n")
    else:
        if diff.mismatched:
            text.append(
                f"{len(diff.mismatched):,} of {diff.compared:,} common (case,"
                f" {diff.left.repeat_label}) pairs were "
                "measured with a different instrument:\n"
            )
        else:  # the runs' own pins: other fixture sets, graders or slots
            text.append(
                "The runs' own pins differ: no case of one can be compared with a case of"
                " the other.\n"
            )
        slot_differs = any(m.key == "model_slot" for m in mismatches)
        for m in mismatches:
            text.append(f"\n  {_KEY_NAMES.get(m.key, m.key)}", style="bold")
            text.append(f"  differs {m.extent}\n")
            for lv, rv, n in m.pairs[:3]:
                text.append("    left  ")
                text.append_text(line(lv, width=48))
                text.append("\n    right ")
                text.append_text(line(rv, width=48))
                text.append("\n" if m.whole_run else f"   ({n:,} pair{'s' if n != 1 else ''})\n")
            if len(m.pairs) > 3:
                text.append(f"    and {len(m.pairs) - 3} more distinct pairs\n")
            if probes_differ(m):
                text.append(
                    "    backend changed under its label: probes differ (same reported"
                    " name, other answers to the calibration probes)\n",
                    style="italic",
                )
            elif m.key == "reported_model" and not slot_differs:
                text.append(
                    "    same slot label, different reported model: the alias was re-pointed\n",
                    style="italic",
                )
            if m.key == "slot_settings" and not slot_differs:
                text.append(
                    "    same slot label, different slot settings (model, sampling or agent"
                    " code): the slot was re-pointed\n",
                    style="italic",
                )
        if diff.mismatched:
            case_id, seed = diff.mismatched[0].key
            word = diff.left.repeat_label
            text.append(f"\n  first: {inert_line(case_id)} ({word} {seed})\n")
    for note in notes or []:  # the fixture files that moved; an edit without a version bump
        text.append("\n  ")
        text.append_text(line(note, width=2000))  # whole: it wraps, never cut mid-word
        text.append("\n", style="bold")
    text.append("\nA change between these runs is a backend delta, not a prompt regression or fix.")
    return text


class BannerScreen(ModalScreen[str]):
    """Refuses the comparison; dismisses only with "delta" (b) or "quit" (q)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "b",
            "browse",
            "browse as backend delta",
            tooltip="browse the pair as a backend delta (red bar; no regression labels)",
        ),
        Binding("q", "quit_review", "quit", tooltip="quit"),
    ]

    def __init__(
        self,
        diff: Diff | None = None,
        mismatches: list[KeyMismatch] | None = None,
        *,
        headers: list[tuple[str, str, str]] | None = None,
        first: tuple[str, int | None] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.diff = diff
        self.mismatches = mismatches
        self.headers = headers
        self.first = first
        self.notes = notes
        self._ready = False

    def compose(self) -> ComposeResult:
        with Vertical(id="banner"):
            yield Static(Text("Comparison refused"), id="banner-title", markup=False)
            with VerticalScroll(id="banner-scroll"):  # a short terminal scrolls the text only
                yield Static(
                    refusal_text(self.diff, self.mismatches, self.headers, self.first, self.notes),
                    id="banner-body",
                    markup=False,
                )
            with Horizontal(id="banner-choices"):
                browse = Button("b  browse as backend delta", id="banner-browse", variant="error")
                quit_ = Button("q  quit", id="banner-quit")
                for button in (browse, quit_):
                    button.can_focus = False
                yield browse
                yield quit_

    def on_mount(self) -> None:
        self._ready = True
        self._redraw()

    def complete(self, diff: Diff, mismatches: list[KeyMismatch]) -> None:
        """The join is known: show the per-case counts."""
        self.diff, self.mismatches = diff, mismatches
        if self._ready:
            self._redraw()

    def _redraw(self) -> None:
        body = refusal_text(self.diff, self.mismatches, self.headers, self.first, self.notes)
        self.query_one("#banner-body", Static).update(body)

    def action_browse(self) -> None:
        self.dismiss("delta")

    def action_quit_review(self) -> None:
        self.dismiss("quit")

    @on(Button.Pressed, "#banner-browse")
    def _browse(self) -> None:
        self.dismiss("delta")

    @on(Button.Pressed, "#banner-quit")
    def _quit(self) -> None:
        self.dismiss("quit")
