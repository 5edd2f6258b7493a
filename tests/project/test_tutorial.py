"""docs/tutorial.md, run as written: every `$ ` command of its console blocks, in order,
in an empty folder, each ending with the exit code the page gives it (`# exits N`, else 0)
and printing the lines shown under it (`…` stands for anything).

A block preceded by `<!-- not run: REASON -->` is skipped (a live endpoint, the TUI).
`evalpin` and `python3` are shims for this interpreter, so the page is checked against
the code under test; git gets an identity and no user or system configuration.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every command of the tutorial, run (tests/lanes.py)

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"
HEADING = "# Tutorial: your own model in ten minutes"
_SKIP = re.compile(r"^<!--\s*not run:\s*(?P<why>.+?)\s*-->$")
_EXIT = re.compile(r"#\s*exits\s+(?P<code>\d+)\s*$")


@dataclass
class Command:
    line: int
    text: str
    expect_exit: int = 0
    expect_lines: list[str] = field(default_factory=list)
    skipped: str | None = None  # why, for a command of a block marked not run


def commands(markdown: str) -> list[Command]:
    """Every `$ ` command of the page's console blocks, with what it must print."""
    found: list[Command] = []
    skip: str | None = None
    in_block = False
    for number, raw in enumerate(markdown.splitlines(), start=1):
        line = raw.rstrip()
        if not in_block:
            marker = _SKIP.match(line.strip())
            if marker:
                skip = marker["why"]
            elif line.strip() == "```console":
                in_block = True
            elif line.strip():
                assert skip is None, f"tutorial.md:{number}: 'not run' marker not before a block"
            continue
        if line.strip() == "```":
            in_block, skip = False, None
        elif line.startswith("$ "):
            text = line[2:].strip()
            wanted = _EXIT.search(text)
            found.append(Command(number, text, int(wanted["code"]) if wanted else 0, skipped=skip))
        elif line.strip():
            assert found, f"tutorial.md:{number}: output before any command"
            found[-1].expect_lines.append(line.strip())
    assert not in_block, "tutorial.md: a console block is not closed"
    return found


def _shows(expected: str, output: str) -> bool:
    pattern = ".*".join(re.escape(part.strip()) for part in expected.split("…"))
    return any(re.search(pattern, line) for line in output.splitlines())


def _shims(folder: Path) -> Path:
    """`evalpin` and `python3` for this interpreter, first on PATH."""
    folder.mkdir()
    for name, run in (("evalpin", "-m evalpin"), ("python3", "")):
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {run} "$@"\n')
        shim.chmod(0o755)
    return folder


def _env(shims: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVAL_", "GIT_"))}
    env.update(
        PATH=f"{shims}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Tutorial",
        GIT_AUTHOR_EMAIL="tutorial@example.invalid",
        GIT_COMMITTER_NAME="Tutorial",
        GIT_COMMITTER_EMAIL="tutorial@example.invalid",
    )
    return env


def test_the_page_keeps_its_heading_and_marks_what_it_cannot_run() -> None:
    text = TUTORIAL.read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADING
    found = commands(text)
    skipped = [c for c in found if c.skipped]
    assert any(c.text == "evalpin review" for c in skipped), "review needs a terminal"
    assert any("--slot my_model" in c.text for c in skipped), "a live endpoint is not run"
    assert len(found) - len(skipped) >= 15
    assert {c.expect_exit for c in found} >= {0, 1, 2}


def test_every_command_of_the_tutorial_runs_as_it_says(tmp_path: Path) -> None:
    shims = _shims(tmp_path / "bin")
    home = tmp_path / "home"
    home.mkdir()
    cwd = tmp_path / "work"
    cwd.mkdir()
    env = _env(shims, home)
    ran = 0
    for command in commands(TUTORIAL.read_text(encoding="utf-8")):
        if command.skipped:
            continue
        where = f"tutorial.md:{command.line}: $ {command.text}"
        words = shlex.split(command.text, comments=True)
        if words[0] == "cd":
            cwd = (cwd / words[1]).resolve()
            assert cwd.is_dir(), where
            continue
        done = subprocess.run(
            ["bash", "-c", command.text],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        output = done.stdout + done.stderr
        assert done.returncode == command.expect_exit, f"{where}: exit {done.returncode}\n{output}"
        for expected in command.expect_lines:
            assert _shows(expected, output), f"{where}: does not print {expected!r}\n{output}"
        ran += 1
    assert ran >= 15


@pytest.mark.parametrize(
    ("page", "error"),
    [
        ("<!-- not run: x -->\ntext\n```console\n$ a\n```\n", "not before a block"),
        ("```console\n$ a\n", "not closed"),
        ("```console\noutput\n```\n", "output before any command"),
    ],
)
def test_the_parser_refuses_a_page_it_would_misread(page: str, error: str) -> None:
    with pytest.raises(AssertionError, match=error):
        commands(page)


def test_the_parser_reads_exits_outputs_and_skips() -> None:
    page = (
        "<!-- not run: needs a live endpoint -->\n\n```console\n$ live\n```\n"
        "```console\n$ a  # exits 2\nshown … here\n$ b\n```\n"
    )
    live, a, b = commands(page)
    assert live.skipped == "needs a live endpoint"
    assert (a.expect_exit, a.expect_lines, a.skipped) == (2, ["shown … here"], None)
    assert (b.expect_exit, b.expect_lines) == (0, [])
    assert _shows("shown … here", "x shown it is here y")
    assert not _shows("shown … here", "here shown")
