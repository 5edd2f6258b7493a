"""Terminal display of a run's progress events: a Rich bar, JSON lines, or plain lines."""

from __future__ import annotations

import sys

from evalpin.cli.console import console, text
from evalpin.core.sanitize import inert_line
from evalpin.run import events


class RunDisplay:
    """Shows runner events: a Rich bar on a terminal, JSON lines, or plain lines."""

    def __init__(self, mode: str) -> None:
        self.err = console(stderr=True)
        if mode == "auto":
            mode = "bar" if self.err.is_terminal else "none"
        self.mode = mode
        self.bar = None
        self.task = None
        self.status = ""
        self.pace = ""

    def emit(self, event: events.Event) -> None:
        if self.mode == "json":
            sys.stdout.write(events.encode(event) + "\n")
            sys.stdout.flush()
        if isinstance(event, events.WarningEvent):
            self._note(("warning: ", "bold yellow"), inert_line(event.message))
        elif isinstance(event, events.StartEvent) and self.mode == "bar":
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("[bold]run[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=self.err,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(
                "run", total=event.total, completed=event.total - event.todo, status=""
            )
        elif isinstance(event, events.CaseEvent) and self.bar is not None:
            self.status = f"[green]{event.passed} pass[/] [red]{event.failed} fail[/]"
            if event.errors:
                self.status += f" [yellow]{event.errors} error[/]"
            if event.disputed:
                self.status += f" [magenta]{event.disputed} disputed[/]"
            self.bar.update(self.task, completed=event.done, status=self.status + self.pace)
        elif isinstance(event, events.PaceEvent) and self.bar is not None:
            self.pace = f" [dim]{event.shown}[/]"
            self.bar.update(self.task, status=self.status + self.pace)
        elif isinstance(event, events.FinalEvent):
            self.close()
            self._final(event)

    def _note(self, *parts: str | tuple[str, str]) -> None:
        if self.mode != "json":
            (self.bar.console if self.bar else self.err).print(text(*parts))

    def _final(self, event: events.FinalEvent) -> None:
        if self.mode == "json":
            return
        out = inert_line(event.out)
        if isinstance(event, events.DoneEvent):
            self.err.print(
                text(
                    ("wrote ", "green"),
                    out,
                    f": {event.passed}/{event.records - event.errors - event.disputed} passed in"
                    f" {event.seconds:.1f} s",
                    *done_extras(event),
                )
            )
            if event.errors:
                self.err.print(
                    text(
                        (f"{event.errors} error case(s) ", "bold yellow"),
                        "could not be judged (counted apart, not as fails); re-ask them: ",
                        (f"evalpin run --resume --retry-errors --out {out}", "bold"),
                    )
                )
            if event.disputed:
                self.err.print(
                    text(
                        (f"{event.disputed} disputed case(s) ", "bold magenta"),
                        "passed plain pytest but not the witness (counted apart, not as "
                        "fails; the verdict names them)",
                    )
                )
            self.err.print(text(("next: ", "dim"), f"evalpin verdict {out}"))
        elif isinstance(event, events.InterruptedEvent):
            self.err.print(
                text(
                    ("interrupted ", "bold yellow"),
                    f"after {event.done} of {event.total} cases; the file is whole.",
                )
            )
            self.err.print(text("resume with: ", (f"evalpin run --resume --out {out}", "bold")))
        else:
            self.err.print(text(("run failed: ", "bold red"), inert_line(event.message)))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def done_extras(event: events.DoneEvent) -> list[str]:
    """The end line's tokens and rate-limit waits, where there were any."""
    extras = []
    if event.usage is not None:
        extras.append(f"; {event.usage.describe()}")
    if event.rate_limited:
        waited = event.waited or 0.0
        extras.append(
            f"; {event.rate_limited} rate-limited answers, {waited:.1f} s waiting,"
            f" concurrency lowered to {event.lowest_limit}"
        )
    return extras
