"""The pins header: what instrument produced each run, side by side, differences marked.

Painted from the run headers as soon as they are known (before the cases are indexed),
then completed with completeness, reported models and each run's verdict badge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from evalpin.core.judge.verdict import Verdict
from evalpin.core.read.runfile import RunFile
from evalpin.core.records import RunHeader
from evalpin.core.tiers import tier_of
from evalpin.tui.safe import line, path_line
from evalpin.tui.widgets.tones import component_css, restyled, tone_style, verdict_tone
from evalpin.tui.wrap import Wrapped

PENDING = "…"


def short(value: object, n: int = 16) -> str | None:
    if value is None or value == "":
        return None
    text = str(value)
    return text if len(text) <= n else text[:n] + "…"


@dataclass
class Side:
    """What the header shows about one run (None: not known, or missing from the run)."""

    path: str
    header: RunHeader | None = None
    run: RunFile | None = None
    verdict: Verdict | None = None
    reported: str | None = None
    writer: str | None = None  # `being written by pid N since T`, while that process lives

    def fields(self) -> list[tuple[str, str | None, str | None]]:
        """(name, value, note) per row: the values are what the two sides compare
        (`≠`); a note says something of this side alone (a set's lock state) and never
        marks the row: one envelope hash, sealed on one side only, is the same hash."""
        h = self.header
        slot = None
        dataset = None
        envelope = None
        lock = None
        tier = None
        if h is not None:
            tier = tier_of(h.slot)
            provider = h.slot.get("provider") if isinstance(h.slot, dict) else None
            slot = (h.model_slot or "<missing>") + (f" ({provider})" if provider else "")
            if h.replay_of:  # completions from an earlier run, graded again
                slot += f" · replay of run {h.replay_of.get('run_id') or '<unknown>'}"
            fx = h.fixtures
            dataset = " ".join(p for p in (fx.dataset_id, fx.dataset_version) if p) or fx.path
            dataset += f"  {short(fx.dataset_hash, 12) or '<no hash>'}"
            envelope = short(fx.envelope_hash, 12) if fx.envelope_hash else "<not recorded>"
            if fx.lock in ("edited", "bumped", "unsealed"):
                lock = f"(lock: {fx.lock})"
        seeds = None
        repeats = f"{self.run.repeat_label}s" if self.run is not None else "seeds"
        if h is not None and h.seeds:
            seeds = ",".join(map(str, h.seeds)) + f" (n={len(h.seeds)})"
        elif self.run is not None and self.run.seeds:
            seeds = ",".join(map(str, self.run.seeds)) + f" (n={len(self.run.seeds)})"
        return [
            ("slot", slot, None),
            ("backend tier", tier, None),
            ("reported model", self.reported, None),
            ("dataset", dataset, None),
            ("envelope", envelope if h is not None else None, lock),
            ("grader", h.grader_version if h else None, None),
            (repeats, seeds, None),
            ("env digest", short(h.env_digest) if h else None, None),
            ("scorer commit", short(h.scorer_commit, 12) if h else None, None),
        ]

    def state(self) -> tuple[str, str]:
        run = self.run
        if run is None:
            return "reading…", "pins--muted"
        text = f"{len(run.rows):,} records, "
        if run.what != "evalpin run":  # another tool's log: say which (rows mark what it lacks)
            text = f"{run.what}, {text}"
        if run.complete is False and self.writer:
            return text + self.writer, "pins--live"
        if run.complete is False:
            return text + "INCOMPLETE", "pins--bad"
        if run.torn:
            return text + "torn last line", "pins--bad"
        return text + ("complete" if run.complete else "completeness unknown"), "pins--muted"


def badge_class(label: str) -> str:
    return f"pins--{verdict_tone(label)}"


class PinsHeader(Static):
    """Each run's pins and verdict badge; values that differ between the runs are marked."""

    # Each component class and its tone (tones.py): its style here, and its name for Textual.
    TONES_OF: ClassVar[dict[str, str]] = {
        "pins--key": "muted",
        "pins--muted": "muted",
        "pins--side": "strong",
        "pins--differs": "alert",
        "pins--note": "warn",  # of one side alone (a set's lock state): no difference
        "pins--live": "alert",  # a run being written (followed as it grows)
        "pins--missing": "fault",
        "pins--good": "good-badge",
        "pins--warn": "warn-badge",
        "pins--bad": "bad-badge",
    }
    DEFAULT_CSS = component_css("PinsHeader", TONES_OF)

    COMPONENT_CLASSES: ClassVar[set[str]] = set(TONES_OF)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(markup=False, id=id)
        self.sides: list[Side] = []
        self.folded = False

    def set_sides(self, sides: list[Side]) -> None:
        self.sides = sides
        self._paint()

    def fold(self, folded: bool) -> None:
        """One line (`folded`) or the whole table. Whoever folds decides when it may: the
        review screen never folds a pair whose instruments differ."""
        if folded != self.folded:
            self.folded = folded
            self.set_class(folded, "-folded")
            self._paint()

    def on_resize(self) -> None:
        self._paint(layout=False)  # a file's folder is cut to the columns' width

    def _paint(self, layout: bool = True) -> None:
        if not self.sides:
            return
        self.update(self._folded() if self.folded else self._table(), layout=layout)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self.sides:
            restyled(self, lambda: self._paint(layout=False))

    def _style(self, name: str):
        return tone_style(self, name)

    def _table(self) -> Table:
        table = Table.grid(padding=(0, 2), expand=True)
        table.add_column(no_wrap=True, width=14)
        for _ in self.sides:
            table.add_column(ratio=1)
        key_style = self._style("pins--key")
        names = ("left", "right") if len(self.sides) == 2 else ("run",)
        heads = [Text("", style=key_style)]
        # A run's file on one line: its folder cut from the start, its name whole.
        room = (self.content_region.width or 160) - 14 - 2 * len(self.sides)
        column = max(16, room // len(self.sides))
        for name, side in zip(names, self.sides, strict=True):
            head = Text(name + "  ", self._style("pins--side"))
            heads.append(head.append_text(path_line(side.path, width=column - len(head) - 2)))
        table.add_row(*heads)
        states = [Text("state", style=key_style)]
        for side in self.sides:
            state, style = side.state()
            cell = line(state, self._style(style), width=200)  # names a log's scorer
            if side.verdict is not None:
                label = side.verdict.label
                cell.append("   verdict ")
                cell.append(f" {label} ", style=self._style(badge_class(label)))
            elif side.run is not None:
                cell.append(f"   verdict {PENDING}")
            states.append(Wrapped(cell))
        table.add_row(*states)
        per_side = [side.fields() for side in self.sides]
        for k, (name, _, _) in enumerate(per_side[0]):
            values = [fields[k][1] for fields in per_side]
            differs = len(values) == 2 and values[0] != values[1]
            cells = [Text(name, style=key_style)]
            for fields in per_side:
                value, note = fields[k][1], fields[k][2]
                if value is None:
                    shown = PENDING if name == "reported model" else "<missing>"
                    cell = Text(shown, style=self._style("pins--missing"))
                elif differs:
                    style = self._style("pins--differs")
                    cell = Text.assemble(("≠ ", style), line(value, style))
                else:
                    cell = line(value)
                if note:
                    cell.append(" ")
                    cell.append_text(line(note, self._style("pins--note")))
                cells.append(Wrapped(cell))
            table.add_row(*cells)
        return table

    def _folded(self) -> Text:
        """The pins in one line: what differs first (`≠ name left → right`), anything
        wrong with a file, then the instrument's short form and each run's verdict."""
        key, differs = self._style("pins--key"), self._style("pins--differs")
        out = Text.assemble(("pins ", key))
        if not self.sides:
            return out
        per_side = [side.fields() for side in self.sides]
        for k, (name, _, _) in enumerate(per_side[0]):
            values = [fields[k][1] for fields in per_side]
            if len(values) == 2 and values[0] != values[1]:
                out.append_text(Text.assemble(("≠ ", differs), (name + " ", differs)))
                out.append_text(line(values[0] or "<missing>", differs))
                out.append(" → ", style=differs)
                out.append_text(line(values[1] or "<missing>", differs))
                out.append("  ")
        for side in self.sides:
            state, style = side.state()
            if style in ("pins--bad", "pins--live"):
                out.append_text(Text.assemble((state, self._style(style)), "  "))
        forms = [_short_form(side.header) for side in self.sides if side.header is not None]
        if forms:  # the parts every side shares (what differs is named above)
            shared = [part for part in forms[0] if all(part in form for form in forms)]
            out.append_text(line(" · ".join(shared)))
        labels = [side.verdict.label for side in self.sides if side.verdict is not None]
        for k, label in enumerate(labels if len(set(labels)) > 1 else labels[:1]):
            out.append(" → " if k else "  ")
            out.append(f" {label} ", style=self._style(badge_class(label)))
        return out


def _short_form(head: RunHeader) -> list[str]:
    """The instrument in a few words: slot, fixture set and hash, grader, seed count."""
    fx = head.fixtures
    parts = [
        head.model_slot or "<no slot>",
        f"{fx.dataset_id or 'fixtures'} {(fx.dataset_hash or '<no hash>')[:8]}",
        f"grader {(head.grader_version or '<missing>')[:8]}",
    ]
    if head.seeds:
        parts.append(f"n={len(head.seeds)}")
    return parts
