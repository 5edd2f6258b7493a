"""Terminal text for `evalpin check`: one block per item with something to say."""

from __future__ import annotations

from evalpin.cli.console import console, text
from evalpin.core.sanitize import inert_line


def print_check(report, strict: bool) -> None:  # report: set_check.CheckReport
    out = console()
    for item in report.items:
        if not item.problems and not item.notes:
            out.print(text(("ok    ", "green"), inert_line(item.id)))
            continue
        mark = ("FAIL  ", "bold red") if item.problems or strict else ("note  ", "yellow")
        out.print(text(mark, inert_line(item.id)))
        for problem in item.problems:
            out.print(text("      ", (inert_line(problem), "red")))
        for note in item.notes:
            out.print(text("      ", (inert_line(note), "red" if strict else "yellow")))
    n = report.problems(strict)
    what = "item(s)" if report.kind == "coding" else "case(s)"
    summary = f"{len(report.items)} {what} checked, {n} problem(s)"
    out.print(text((summary, "bold red" if n else "bold green"), f"  {inert_line(report.path)}"))
