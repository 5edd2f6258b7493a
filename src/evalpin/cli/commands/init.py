"""`evalpin init [DIR]`: lay out a project for one's own model, never overwriting a file.

The templates ship inside the package (`evalpin/scaffold/`, read with importlib.resources):
a slots file with a replay slot that works offline at once, a live `openai` slot (the
*names* of the environment variables that hold its URL and key, never a value) and a
`command` slot with an example agent; a golden JSONL with two cases; a coding set with
one item (prompt, test, reference and starting files); `runs/`; a `.gitignore`; a
GitHub Actions nightly job. What `init` writes passes `evalpin check` as it stands.

A file already there is kept, byte for byte, and named as kept; each new file is written
beside its destination and linked into place, so a file that appears meanwhile is kept
too, and none is left half-written.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import click

from evalpin.cli.console import fail

# Template names that git or a build tool would read as their own: renamed on the way out.
_RENAMED = {"gitignore": ".gitignore"}
# Replaced in every template by the running evalpin's version (the CI job pins it).
VERSION_TOKEN = "@EVALPIN_VERSION@"
# Folders made even when empty.
FOLDERS = ("runs",)


@dataclass(frozen=True)
class Template:
    """One file of the layout: where it goes (relative, POSIX) and its bytes."""

    path: str
    data: bytes


def templates() -> list[Template]:
    """Every file of the layout, in a fixed order (the slots file first)."""
    from evalpin._version import __version__

    found: list[Template] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.name == "__pycache__" or child.name.endswith((".pyc", ".pyo")):
                continue
            name = _RENAMED.get(child.name, child.name) if not prefix else child.name
            if child.is_dir():
                walk(child, f"{prefix}{name}/")
                continue
            data = child.read_bytes().replace(VERSION_TOKEN.encode(), __version__.encode())
            found.append(Template(prefix + name, data))

    walk(files("evalpin").joinpath("scaffold"), "")
    found.sort(key=lambda t: (t.path != "slots.yaml", t.path.count("/"), t.path))
    return found


@dataclass
class Outcome:
    """What `lay_out` did: files written, files kept (identical to the template or not)."""

    root: Path
    written: list[str]
    kept_same: list[str]
    kept_changed: list[str]
    made: list[str]


def file_mode() -> int:
    """The mode a new file gets here, as `open` would give it: 0o666 less the umask
    (read without changing it where /proc says it; else set back at once)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            umask = next(int(row.split()[1], 8) for row in fh if row.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)
        os.umask(umask)
    return 0o666 & ~umask


def _link_new(dest: Path, data: bytes) -> bool:
    """Create `dest` with `data` unless something is there already (True: written).
    The file gets the mode the umask gives (`mkstemp` makes its files 0600, and the
    link keeps that mode: a CI file or a README nobody else could read)."""
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, dest)  # fails if dest exists: never overwrites
        except FileExistsError:
            return False
        except OSError:
            # A file system without hard links: exclusive create, then the bytes.
            try:
                with open(dest, "xb") as out:
                    out.write(data)
            except FileExistsError:
                return False
        return True
    finally:
        Path(tmp).unlink(missing_ok=True)


def _check_target(root: Path, layout: list[Template]) -> None:
    """Refuse before writing anything: DIR (or a folder the layout needs) is not a
    folder, or cannot be written."""
    if root.exists() and not root.is_dir():
        fail(f"{root}: is a file, not a folder (give a folder to lay the project out in)")
    needed = {str(Path(t.path).parent) for t in layout} | set(FOLDERS)
    for folder in sorted(needed - {"."}):
        where = root / folder
        if where.exists() and not where.is_dir():
            fail(f"{where}: is a file, where the project needs a folder")
    existing = root
    while not existing.exists():
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK):
        fail(f"{existing}: not writable, nothing written")


def lay_out(root: Path) -> Outcome:
    """Write every template missing under `root`; keep every file already there."""
    layout = templates()
    _check_target(root, layout)
    outcome = Outcome(root, [], [], [], [])
    try:
        root.mkdir(parents=True, exist_ok=True)
        for folder in FOLDERS:
            if not (root / folder).is_dir():
                (root / folder).mkdir(parents=True)
                outcome.made.append(folder + "/")
        for template in layout:
            dest = root / template.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            if not os.path.lexists(dest) and _link_new(dest, template.data):
                outcome.written.append(template.path)
                continue
            same = dest.is_file() and _read(dest) == template.data
            (outcome.kept_same if same else outcome.kept_changed).append(template.path)
    except OSError as exc:
        where = exc.filename or root
        fail(f"{where}: cannot write: {exc.strerror or exc}")
    return outcome


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _shown(root: Path) -> str:
    """DIR as the user would type it to get there."""
    try:
        return os.path.relpath(root)
    except ValueError:
        return str(root)


@click.command("init")
@click.argument(
    "directory",
    metavar="[DIR]",
    required=False,
    default=".",
    type=click.Path(path_type=Path),
)
def init_cmd(directory: Path) -> None:
    """Lay out a project for your own model in DIR (default: the current folder).

    \b
    slots.yaml              demo_replay (recorded answers, offline), my_model (an
                            OpenAI-compatible endpoint: its URL and key come from the
                            environment variables it names), my_agent (your program)
    golden/assistant.jsonl  two golden cases for a tool-using assistant
    coding/set.yaml         one coding item: prompt, test, reference, starting code
    replay/                 recorded completions (demo_replay answers with demo.jsonl)
    agents/agent.py         an example agent for my_agent
    runs/                   where run files go
    ci/nightly.yml          a GitHub Actions nightly job (run, diff --baseline)
    .gitignore, README.md

    Never overwrites: a file already there is kept as it is, and named as kept. The
    layout passes `evalpin check`, and `evalpin run --slot demo_replay` works at once.
    Exit 0; 3 when DIR is a file or cannot be written (nothing written).
    """
    from evalpin.core.sanitize import inert_line

    outcome = lay_out(directory)
    shown = _shown(directory)
    click.echo(f"evalpin init: {inert_line(shown)}")
    for folder in outcome.made:
        click.echo(f"  made   {folder}")
    for path in outcome.written:
        click.echo(f"  wrote  {path}")
    for path in outcome.kept_same:
        click.echo(f"  kept   {path} (already there)")
    for path in outcome.kept_changed:
        click.echo(f"  kept   {path} (already there, differs from the template: not changed)")
    kept = len(outcome.kept_same) + len(outcome.kept_changed)
    click.echo(f"{len(outcome.written)} file(s) written, {kept} kept (already there)")
    if not outcome.written and not outcome.made:
        return
    go = "" if shown == "." else f"cd {inert_line(shlex.quote(shown))}\n  "
    click.echo(
        "next:\n  "
        + go
        + "evalpin check golden/assistant.jsonl\n"
        + "  evalpin run --fixtures golden/assistant.jsonl --slot demo_replay\n"
        + "  evalpin review"
    )
