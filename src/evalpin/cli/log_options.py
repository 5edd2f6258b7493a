"""`--scorer` and `--metric`: which of another tool's grades decides pass/fail."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def log_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options every command that reads logs shares; they arrive as `options`."""

    def wrapped(*args: Any, scorer: str | None, metric: str | None, **kwargs: Any) -> Any:
        from evalpin.core.formats import ReadOptions  # loaded by the command, not at start

        return command(*args, options=ReadOptions(scorer=scorer, metric=metric), **kwargs)

    wrapped.__name__ = command.__name__
    wrapped.__doc__ = command.__doc__
    wrapped = click.option(
        "--metric",
        metavar="NAME",
        help="lm-eval logs: the metric whose value 1 is a pass (default: the first listed).",
    )(wrapped)
    return click.option(
        "--scorer",
        metavar="NAME",
        help="inspect-ai logs: the scorer that decides pass/fail (default: the first listed).",
    )(wrapped)
