"""Two kinds of numeric or path option that recur across the commands, one helper each.

- `bounded`: a number with a click default, shown in the help, and a closed range
  (`--port`, `--band`, `--drop`, ...): `[default: 8000; 1<=x<=65535]`.
- `resolved_later`: no click default (the value arrives as None) because the command
  resolves it later, from the environment, a file or the run; the default the user
  gets is written into the help by hand: `Completion token cap.  [default: 2048]`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def bounded(
    flag: str,
    *names: str,
    default: int | float,
    low: int | float,
    high: int | float,
    help: str | None = None,
    low_open: bool = False,
) -> Callable[[F], F]:
    """`flag` (and `names`, e.g. the parameter's name) taking a number from `low` to
    `high`, `default` when not given and shown as such. An int default makes it a
    `click.IntRange`, a float one a `click.FloatRange`; `low_open` excludes `low`
    itself (`0<x<=1`)."""
    kind = click.FloatRange if isinstance(default, float) else click.IntRange
    return click.option(
        flag,
        *names,
        default=default,
        show_default=True,
        type=kind(low, high, min_open=low_open),
        help=help,
    )


def resolved_later(
    flag: str,
    *names: str,
    type: click.ParamType,
    help: str,
    shown: str | int,
) -> Callable[[F], F]:
    """`flag` (and `names`) of `type` with no click default: the command gets None when
    it is not given and resolves the value itself. `help` ends with what that comes to,
    `shown`, in click's own style (`help  [default: shown]`)."""
    return click.option(flag, *names, type=type, help=f"{help}  [default: {shown}]")
