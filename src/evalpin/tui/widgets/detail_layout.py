"""One case of the review's detail laid out as lines of plain `Text`: the per-seed
rows, the case itself (from its fixture set), the blocks of answers as word diffs with
their needles, the test file with the failing tests marked, the review note.

Apart from the widget (`tui.widgets.detail`), which reads the records and the set in
workers and scrolls the lines; this holds no state between cases. Styles come from the
widget's component classes, so both themes hold. Every string from a run, a fixture or
a note is untrusted: made inert (`tui.safe.line`, `block`) and never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text

from evalpin.core import reasons as codes
from evalpin.core.read.notes import MARK, Note
from evalpin.core.records import CaseRecord
from evalpin.core.review import worddiff
from evalpin.core.review.case_source import CaseSource, Unavailable
from evalpin.core.review.worddiff import DELETE, EQUAL, INSERT, Piece
from evalpin.core.sanitize import inert_line
from evalpin.tui.safe import block, line
from evalpin.tui.widgets.detail_model import (
    KEY_WIDTH,
    PROMPT_LINES,
    TEST_LINES,
    USER_LINES,
    Compared,
    Decoded,
    Shown,
    failing_tests,
    finish_text,
    fold,
    head_lines,
    needles_of,
    not_shown,
    seconds_text,
    seed_label,
)
from evalpin.tui.wrap import reflowed, wrapped


class CaseLayout:
    """Lays out cases with the widget's styles (`style`: a component class's rich style)
    and the live review notes by case id."""

    def __init__(
        self,
        style: Callable[[str], Style],
        review_notes: dict[str, Note],
        relabel: dict[str, str] | None = None,
    ) -> None:
        self._style = style
        self.review_notes = review_notes
        self.relabel = relabel or {}  # statuses said otherwise (`case_list.unwritten`)
        self._repeat = "seed"  # what the shown run calls its repeat key (inspect: epoch)

    def _review_note(self, case_id: str) -> list[Text]:
        """`✎ ticket: see 1432  (ana, 2026-12-03)`: the case's review note, inert."""
        note = self.review_notes.get(case_id)
        if note is None:
            return []
        by = note.byline()
        return [
            Text.assemble(
                (f"{MARK} ", self._style("detail--block-title")),
                line(note.summary(), width=600),
                (f"  ({inert_line(by)})" if by else "", self._style("detail--muted")),
            )
        ]

    def render(
        self, shown: Shown, decoded: Decoded, source: CaseSource | Unavailable | None, width: int
    ) -> list[Text]:
        """The case as pre-laid-out lines of plain `Text` (no Rich tables: measuring and
        rendering tables on every key press is what makes a detail pane slow)."""
        case = shown.table.cases[shown.case]
        seeds, left, right = decoded.seeds, decoded.left, decoded.right
        pair = shown.table.right is not None
        width = max(40, width)
        status = case.status.upper() if case.status == "regressed" else case.status
        status = self.relabel.get(case.status, status)
        self._repeat = shown.table.left.repeat_label
        title = Text.assemble(line(case.case_id, self._style("detail--title")))
        own = next((r.source_id for r in (*left.values(), *right.values()) if r.source_id), None)
        if own is not None:
            title.append_text(Text.assemble("  (", line(own), ")"))
        lines: list[Text] = [Text.assemble(title, "   ", (status, "bold"))]
        summary = f"left {case.left_passed}/{len(case.left)} pass"
        if pair:
            summary += f"  ·  right {case.right_passed}/{len(case.right)} pass"
        if case.mismatched:
            summary += "  ·  instrument differs on this case (backend delta)"
        lines.append(Text(summary, style=self._style("detail--muted")))
        lines += self._review_note(case.case_id)
        for seed, li, ri in seeds:
            lrec = left.get(li) if li is not None else None
            rrec = right.get(ri) if ri is not None else None
            lines.append(Text(""))
            lines += self._seed_rows(seed, lrec, rrec, pair, width)
        for seed, li, ri in seeds:
            for name, rec in (("left", left.get(li)), ("right", right.get(ri))):
                if rec is not None and rec.disputed:
                    lines += self._both_tails(rec, seed, name if pair else "", width)
        lines += self._case_lines(decoded, source, width)
        needles = needles_of(source, decoded)
        legend = True  # said once, over the first block with a change marked
        for compared in decoded.compared:
            lines += self._compared(compared, pair, needles, width, legend=legend)
            legend = legend and not compared.changed
        if isinstance(source, CaseSource) and source.test_text is not None:
            lines += self._test_file(source, decoded, pair, width)
        return [part for text in lines for part in fold(text, width)]

    def _seed_rows(
        self,
        seed: int | None,
        lrec: CaseRecord | None,
        rrec: CaseRecord | None,
        pair: bool,
        width: int,
    ) -> list[Text]:
        key = self._style("detail--key")
        head = self._style("detail--block-title")
        side = (width - KEY_WIDTH - 2) // 2 if pair else width - KEY_WIDTH - 1
        recs = [lrec, rrec] if pair else [lrec]
        rows: list[Text] = []

        def cell(text: Text) -> Text:
            text = text.copy()
            text.truncate(side, pad=True)
            return text

        def row(name: str, cells: list[Text], style=key) -> None:
            # One cell short of the column: two spaces at least between left and right.
            parts = [fold(c, side - 1 if pair else side) for c in cells]
            height = max(len(p) for p in parts)
            for k in range(height):
                label = Text(name if k == 0 else "", style=style)
                label.truncate(KEY_WIDTH, pad=True)
                out = Text.assemble(label, " ")
                for n, p in enumerate(parts):
                    if n:
                        out.append(" ")
                    out.append_text(cell(p[k]) if k < len(p) else Text(" " * side))
                rows.append(out)

        names = [Text("left" if pair else "", style=head)]
        if pair:
            names.append(Text("right", style=head))
        row(seed_label(seed, self._repeat), names, head)
        row("grade", [self._grade(r) for r in recs])
        lreasons = set(lrec.reasons or []) if lrec else set()
        rreasons = set(rrec.reasons or []) if rrec else set()
        reasons = [self._reasons(lrec, lreasons - rreasons if pair and rrec else set(), "- ")]
        if pair:
            reasons.append(self._reasons(rrec, rreasons - lreasons if lrec else set(), "+ "))
        row("reasons", reasons)
        row("tools", [self._plain(r, ", ".join(r.tool_names or []) if r else None) for r in recs])
        for name, attr in (("text digest", "text_digest"), ("completion", "completion_digest")):
            values = [getattr(r, attr) if r else None for r in recs]
            differs = pair and None not in values and values[0] != values[1]
            row(name, [self._digest(v, differs) for v in values])
        row("latency", [self._plain(r, seconds_text(r.seconds) if r else None) for r in recs])
        row("repair loops", [self._plain(r, r.loops if r else None) for r in recs])
        models = [r.reported_model if r else None for r in recs]
        model_differs = pair and None not in models and models[0] != models[1]
        row("reported model", [self._digest(m, model_differs) for m in models])
        if any(r is not None and r.finish_reason for r in recs):
            row(
                "finish",
                [self._plain(r, finish_text(r.finish_reason) if r else None) for r in recs],
            )
        if any(r is not None and r.cached for r in recs):
            row(
                "answer",
                [self._plain(r, "from the tool's cache" if r and r.cached else None) for r in recs],
            )
        if any(r is not None and r.error for r in recs):
            row("error", [self._plain(r, r.error if r else None) for r in recs])
        if any(r is not None and r.witness_failed_tests for r in recs):
            failed = [", ".join(r.witness_failed_tests or []) if r else None for r in recs]
            row("witness failed", [self._plain(r, f) for r, f in zip(recs, failed, strict=True)])
        return rows

    def _both_tails(self, rec: CaseRecord, seed: int | None, side: str, width: int) -> list[Text]:
        """A disputed case's two tails side by side: plain pytest's (which passed) and
        the witness's (which did not), each inert and wrapped to its half."""
        where = " · ".join(p for p in (seed_label(seed, self._repeat), side) if p)
        out = [Text(""), self._head(f"plain pytest beside the witness · {where}")]
        half = max(8, (width - 3) // 2)
        columns = []
        for title, tail in (("plain pytest", rec.tail), ("witness", rec.witness_tail)):
            shown = block(tail)[0].plain.expandtabs(4) if tail else ""
            col = [Text(title, style=self._style("detail--key"))]
            if not shown:
                col.append(Text("-", style=self._style("detail--muted")))
            for raw in shown.split("\n") if shown else ():
                col += wrapped(Text(raw), half)
            columns.append(col)
        left, right = columns
        for k in range(max(len(left), len(right))):
            cell = left[k].copy() if k < len(left) else Text("")
            cell.truncate(half, pad=True)
            out.append(Text.assemble(cell, " │ ", right[k] if k < len(right) else Text("")))
        return out

    def _grade(self, rec: CaseRecord | None) -> Text:
        if rec is None:
            return Text("absent", style=self._style("detail--muted"))
        if rec.errored:  # not judged: neither a pass nor a fail
            return Text("ERROR (not judged)", style=self._style("detail--error"))
        if rec.disputed:  # plain pytest passed, the witness did not: not judged either
            return Text("DISPUTED (not judged)", style=self._style("detail--disputed"))
        if rec.passed:
            return Text("pass", style=self._style("detail--pass"))
        return Text("FAIL", style=self._style("detail--fail"))

    def _plain(self, rec: CaseRecord | None, value: object) -> Text:
        if rec is None:
            return Text("")
        if value is None or value == "":
            return Text("-", style=self._style("detail--muted"))
        return line(value)

    def _digest(self, value: str | None, differs: bool) -> Text:
        if value is None:
            return Text("-", style=self._style("detail--muted"))
        if differs:
            style = self._style("detail--differs")
            return Text.assemble(("≠ ", style), line(value, style))
        return line(value)

    def _reasons(self, rec: CaseRecord | None, marked: set[str], mark: str) -> Text:
        if rec is None:
            return Text("")
        if rec.reasons is None:
            return Text("<reasons missing>", style=self._style("detail--muted"))
        if not rec.reasons:
            return Text("-", style=self._style("detail--muted"))
        out = Text()
        for k, reason in enumerate(rec.reasons):
            if k:
                out.append("\n")
            kind = codes.kind_of(reason)
            style = self._style(f"detail--reason-{kind}")
            prefix = mark if reason in marked else "  "
            out.append_text(Text.assemble((prefix, "bold"), line(reason, style)))
            if kind == codes.UNKNOWN:
                out.append("  (unknown code)", style=self._style("detail--muted"))
        return out

    # -- the case as its fixture set gives it ---------------------------------------

    def _head(self, title: str) -> Text:
        return Text.assemble(
            ("── ", self._style("detail--muted")),
            line(title, self._style("detail--block-title"), width=400),
        )

    def _keyed(self, name: str, value: Text, width: int) -> list[Text]:
        """`name` in the key column, `value` (its lines, each wrapped) beside it."""
        key = Text(name, style=self._style("detail--key"))
        key.truncate(KEY_WIDTH, pad=True)
        parts = [
            part
            for row in value.split("\n", allow_blank=True)
            for part in wrapped(row, max(8, width - KEY_WIDTH - 1))
        ]
        return [
            Text.assemble(key if k == 0 else " " * KEY_WIDTH, " ", part)
            for k, part in enumerate(parts)
        ]

    def _case_lines(
        self, decoded: Decoded, source: CaseSource | Unavailable | None, width: int
    ) -> list[Text]:
        """What the case asked, or exactly one line saying why it is not shown."""
        located = decoded.located
        if located is None:
            return []
        muted, note = self._style("detail--muted"), self._style("detail--note")
        if source is None:
            reading = f"case: reading the fixture set {located.shown}…"
            return [Text(""), line(reading, muted, width=400)]
        if isinstance(source, Unavailable):
            return [Text(""), line(source.message, note, width=400)]
        out = [Text("")]
        if source.kind == "coding":
            out.append(self._head(f"case · coding item · {source.set_path}"))
            prompt, dropped = head_lines(source.prompt, PROMPT_LINES)
            out += self._keyed("prompt", line(source.prompt_file or "", muted), width)
            for raw in reflowed(prompt):
                out += wrapped(Text(raw), width)
            if dropped or source.cut:
                out.append(Text(not_shown(dropped, source.cut), style=note))
        else:
            out.append(self._head(f"case · golden · {source.set_path}"))
            user, dropped = head_lines(source.prompt, USER_LINES)
            out += self._keyed("user", Text(user), width)
            if dropped:
                out.append(Text(not_shown(dropped, False), style=note))
            for name, values in (
                ("require tools", source.require_tools),
                ("forbid tools", source.forbid_tools),
                ("must include", source.must_include),
                ("must not", source.must_not),
            ):
                value = line(", ".join(values), width=2000) if values else Text("-", style=muted)
                out += self._keyed(name, value, width)
        if decoded.other_hash is not None:
            other = (
                f"the other run's records carry fixture hash {decoded.other_hash} for this"
                f" case: the case above is the one with {decoded.case_hash}"
            )
            out.append(line(other, note, width=400))
        return out

    def _test_file(
        self, source: CaseSource, decoded: Decoded, pair: bool, width: int
    ) -> list[Text]:
        """A coding item's test file, numbered, each failing test's `def` marked (✗) with
        the seeds it failed on."""
        assert source.test_text is not None
        failing = failing_tests(decoded, pair, self._repeat)
        named = any(
            rec.failed_tests is not None
            for recs in (decoded.left, decoded.right)
            for rec in recs.values()
        )
        title = f"test file · {source.test_file}"
        if failing:
            title += " · ✗ a failing test"
        out = [Text(""), self._head(title)]
        muted, fail, note = (
            self._style("detail--muted"),
            self._style("detail--fail"),
            self._style("detail--note"),
        )
        if not named and any(
            not rec.passed for recs in (decoded.left, decoded.right) for rec in recs.values()
        ):
            out.append(Text("(these records do not name their failing tests)", style=muted))
        at_line = {n: name for name, n in source.tests.items()}
        text, dropped = head_lines(source.test_text, TEST_LINES)
        rows = text.split("\n")
        digits = len(str(len(rows)))
        gutter = digits + 3
        for n, raw in enumerate(rows, start=1):
            name = at_line.get(n)
            marked = name is not None and name in failing
            body = Text(raw, style=fail if marked else "")
            if marked:
                assert name is not None
                body.append(f"  ← failed: {failing[name]}", style=note)
            for k, part in enumerate(wrapped(body, max(8, width - gutter))):
                mark = ("✗ " if marked else "  ") + f"{n:>{digits}} " if k == 0 else ""
                out.append(Text.assemble((mark.ljust(gutter), fail if marked else muted), part))
        if dropped or source.cut:
            out.append(Text(not_shown(dropped, source.cut), style=note))
        lost = sorted(set(failing) - set(source.tests))
        if lost:
            listed = ", ".join(f"{name} ({failing[name]})" for name in lost)
            out.append(
                Text.assemble(("failed, not found in the file: ", fail), line(listed, width=2000))
            )
        return out

    # -- answers, seed against seed and left against right --------------------------

    def _compared(
        self,
        compared: Compared,
        pair: bool,
        needles: list[tuple[str, bool]],
        width: int,
        *,
        legend: bool,
    ) -> list[Text]:
        """One block: a word diff (struck: only left; underlined: only right) or one side,
        the needles highlighted and, under a completion text, found or absent."""
        seeds = worddiff.seeds_label(compared.seeds, self._repeat)
        if compared.lines is not None or compared.pieces is not None:
            diff = compared.changed
            where = "left → right" if diff else "same on both sides"
            pieces = compared.pieces or [Piece(EQUAL, compared.left or "")]
        else:
            where = ("left" if compared.left is not None else "right") if pair else ""
            text = compared.left if compared.left is not None else compared.right
            pieces = [Piece(EQUAL, text or "")]
            diff = False
        title = " · ".join(part for part in (compared.what, seeds, where) if part)
        out = [Text(""), self._head(title)]
        note = self._style("detail--note")
        for text in compared.notes:
            out.append(Text(f"({text})", style=note))
        deleted, inserted = self._style("detail--deleted"), self._style("detail--inserted")
        muted = self._style("detail--muted")
        if diff and legend:
            out.append(
                Text.assemble(
                    ("struck: ", muted),
                    ("only on the left", deleted),
                    (" · underlined: ", muted),
                    ("only on the right", inserted),
                    (" · by line: - the left's, + the right's" if compared.lines else "", muted),
                )
            )
        if compared.lines is not None and diff:
            styles = {DELETE: deleted, INSERT: inserted}
            for diffed in compared.lines:
                row = Text()
                for piece in diffed.pieces:
                    row.append(piece.text, styles.get(piece.op, ""))
                # Each row of a wrapped line keeps its mark: a row with none reads as a
                # line both sides share.
                for part in wrapped(row, max(8, width - 2)):
                    out.append(Text.assemble((f"{diffed.tag} ", muted), part))
            return out
        is_text = compared.what == "completion text"
        shown, marks = worddiff.display(pieces, [n for n, _ in needles] if is_text else [])
        body = Text(shown)
        styles = {DELETE: deleted, INSERT: inserted, worddiff.NEEDLE: self._style("detail--needle")}
        for kind, start, stop in marks:
            body.stylize(styles[kind], start, stop)
        for part in body.split("\n", allow_blank=True):
            out += wrapped(part, width)
        if is_text and needles:
            out += self._needle_rows(compared, pair, needles, width)
        return out

    def _needle_rows(
        self, compared: Compared, pair: bool, needles: list[tuple[str, bool]], width: int
    ) -> list[Text]:
        """Per needle: on both sides, absent on one, absent on both (a must_include
        needle's absence and a must_not needle's presence in the fail style)."""
        fail, plain = self._style("detail--fail"), Style()
        lraw, rraw = compared.raw
        rows: list[Text] = []
        for wanted in (True, False):
            parts: list[Text] = []
            for needle, include in needles:
                if include is not wanted:
                    continue
                here = [
                    (name, worddiff.found(raw, needle))
                    for name, raw in (("left", lraw), ("right", rraw))
                    if raw is not None
                ]
                if not pair:
                    said = "found" if here and here[0][1] else "absent"
                elif len(here) == 2:
                    said = {
                        (True, True): "on both",
                        (True, False): "absent on the right",
                        (False, True): "absent on the left",
                        (False, False): "absent on both",
                    }[(here[0][1], here[1][1])]
                else:
                    name, present = here[0]
                    said = f"{'found' if present else 'absent'} on the {name}"
                presence = [present for _, present in here]
                bad = not all(presence) if include else any(presence)
                if parts:
                    parts.append(Text(" · "))
                said_style = fail if bad else plain
                parts.append(Text.assemble(line(needle, width=400), (f": {said}", said_style)))
            if parts:
                name = "must include" if wanted else "must not"
                rows += self._keyed(name, Text.assemble(*parts), width)
        return rows
