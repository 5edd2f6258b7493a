"""Terminal helpers shared by the renderers: a plain console, inert Text, JSON out."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from evalpin.core.sanitize import inert_line

EXIT_INPUT = 3


def fail(message: str) -> NoReturn:
    """The one way an input error ends: one inert line on stderr, exit 3."""
    click.echo(f"evalpin: error: {inert_line(message)}", err=True)
    sys.exit(EXIT_INPUT)


def console(stderr: bool = False):  # -> rich.console.Console
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def text(*parts: str | tuple[str, str]):  # -> rich.text.Text
    """Plain Text from (string, style) parts: never markup, whatever the string holds."""
    from rich.text import Text

    return Text.assemble(*parts)


def emit_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=True, allow_nan=False) + "\n")


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write JSON beside its destination and rename, so nothing is left half-written."""
    from evalpin.core.files import write_atomic

    text = json.dumps(payload, indent=2, ensure_ascii=True, allow_nan=False) + "\n"
    write_atomic(path, text, encoding="ascii")


def side(run) -> dict[str, Any]:  # run: RunFile
    """A run as named in JSON output: path, label, whether it finished."""
    return {"path": run.path, "label": run.label(), "complete": run.complete}


def pct(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.3f}"


def seed_text(seed: int | None, label: str = "seed") -> str:
    """The repeat key as the run names it: a seed, inspect's epoch, lm-eval's repeat."""
    return f"no {label}" if seed is None else f"{label} {seed}"


def rate_text(rate) -> str:  # rate: stats.Rate
    return f"{rate.rate:.3f} [{rate.low:.3f}, {rate.high:.3f}]"


def reasons_text(reasons: list[str] | None) -> str:
    if reasons is None:
        return "<reasons missing>"
    return ", ".join(inert_line(r) for r in reasons) or "-"
