"""Every command's `--help` keeps each word of its options' help whole (issue 53, point
10): click folds a word longer than its column (`LABEL=rep` / `lay:PATH`), so no help
text may hold one, at 80 columns or 160."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from evalpin.cli import cli


def commands() -> list[tuple[str, click.Command]]:
    group = cli
    assert isinstance(group, click.Group)
    return sorted(group.commands.items())


@pytest.mark.parametrize("width", [80, 160])
def test_no_help_word_is_folded(width: int) -> None:
    folded = []
    for name, command in commands():
        shown = CliRunner().invoke(cli, [name, "--help"], terminal_width=width).output
        words = set(shown.split())
        for param in command.params:
            for word in (getattr(param, "help", None) or "").split():
                if word not in words:
                    folded.append(f"{name} {param.name}: {word!r}")
    assert not folded, "\n".join(folded)
