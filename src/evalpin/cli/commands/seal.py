"""`evalpin seal F` writes the lock beside a fixture set; `evalpin seal --check F` checks it.

Exit codes: 0 sealed / matched (or bumped: a note to re-seal); 1 an edit without a
dataset_version bump (each changed case and file named, one line each), no lock under
--check, or a re-seal refused; 3 a bad input (fixture, a file it references, a garbage
lock or another set's lock), one line, nothing written.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from evalpin.cli.console import emit_json
from evalpin.core.sanitize import inert_line

EXIT_OK, EXIT_EDITED = 0, 1


@click.command("seal")
@click.argument("fixtures", nargs=-1, required=True, type=click.Path(dir_okay=True, path_type=Path))
@click.option("--check", is_flag=True, help="Verify the lock instead of writing it.")
@click.option(
    "--force",
    is_flag=True,
    help="Re-seal a set edited under its locked dataset_version (accept the edit).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def seal_cmd(fixtures: tuple[Path, ...], check: bool, force: bool, as_json: bool) -> None:
    """Seal fixture sets: write FIXTURES.lock beside each, naming its whole envelope
    (every file its cases reference, each case's fixture hash).

    With --check, compare each set with its lock: exit 0 when it matches (or its
    dataset_version was bumped since: re-seal), 1 when it was edited without a version
    bump or has no lock.
    """
    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.core.instrument.seal import lock_state

    if check and force:
        raise click.UsageError("--force re-seals; it has no meaning with --check")
    # Every set and every lock is read before anything is written: a bad input anywhere
    # ends the command (exit 3) with no lock touched.
    sets = [load_fixtures(path) for path in fixtures]
    states = [lock_state(fs) for fs in sets]
    code = _check(states, as_json) if check else _seal(sets, states, force, as_json)
    sys.exit(code)


# -- --check ------------------------------------------------------------------------


def _check(states: list, as_json: bool) -> int:
    code = EXIT_OK if all(s.ok for s in states) else EXIT_EDITED
    if as_json:
        emit_json({"exit": code, "sets": [s.to_json() for s in states]})
        return code
    for state in states:
        for line in _check_lines(state):
            click.echo(line)
    return code


def _check_lines(state) -> list[str]:
    from evalpin.core.instrument.seal import BUMPED, EDITED, MATCHED, quote

    where = _shown(state.fixtures)
    if state.status == MATCHED:
        return [
            f"{where}: matched its lock {_shown(state.lock_path)} "
            f"(envelope {state.envelope_hash}, {_counts(state)})"
        ]
    if state.status == BUMPED:
        before, after = _version(state.lock.dataset_version), _version(state.dataset_version)
        return [
            f"{where}: bumped: dataset_version {before} -> {after} since its lock "
            f"({_moved_count(state)}); note: re-seal with {_command(state.fixtures)}"
        ]
    if state.status == EDITED:
        if state.dataset_version is None:
            head = f"{where}: edited since its lock {_shown(state.lock_path)}"
            hint = (
                "this set carries no dataset_version: "
                f"{_command(state.fixtures, '--force')} to accept the edit"
            )
        else:
            head = (
                f"{where}: edited without a dataset_version bump "
                f"(dataset_version {_version(state.dataset_version)} "
                f"in the set and its lock {_shown(state.lock_path)})"
            )
            hint = (
                f"bump dataset_version and run {_command(state.fixtures)}, "
                f"or {_command(state.fixtures, '--force')} to accept the edit as the same version"
            )
        lines = [head]
        for label, names in (
            ("changed file", state.files_changed),
            ("added file", state.files_added),
            ("removed file", state.files_removed),
            ("changed case", state.cases_changed),
            ("added case", state.cases_added),
            ("removed case", state.cases_removed),
        ):
            lines += [f"  {label} {quote(name)}" for name in names]
        lines.append(f"  {hint}")
        return lines
    return [f"{where}: no lock: run {_command(state.fixtures)}"]


# -- sealing ------------------------------------------------------------------------


def _seal(sets: list, states: list, force: bool, as_json: bool) -> int:
    from evalpin.core.instrument.seal import EDITED

    refused = [s for s in states if s.status == EDITED and not force]
    if refused:  # nothing is written, not even the sets that could be sealed
        if as_json:
            sets = [{**s.to_json(), "action": _refusal(s, refused)} for s in states]
            emit_json({"exit": EXIT_EDITED, "sets": sets})
        else:
            for state in refused:
                for line in _refuse_lines(state):
                    click.echo(line)
        return EXIT_EDITED
    done = [(state, _write(fs, state)) for fs, state in zip(sets, states, strict=True)]
    if as_json:
        sets = [{**s.to_json(), "action": action} for s, action in done]
        emit_json({"exit": EXIT_OK, "sets": sets})
        return EXIT_OK
    for state, action in done:
        click.echo(f"{action} {_shown(state.fixtures)} -> {_shown(state.lock_path)}")
        click.echo(f"  envelope {state.envelope_hash}, {_counts(state)}")
    return EXIT_OK


def _refusal(state, refused: list) -> str:
    return "refused" if state in refused else "not written"


def _refuse_lines(state) -> list[str]:
    lines = _check_lines(state)
    return [
        f"evalpin seal: refused: {lines[0]}",
        *lines[1:-1],
        f"  not re-sealed: {lines[-1].strip()}",
    ]


def _write(fs, state) -> str:
    """Write the lock for the set `fs` (compared as `state`); what was done, in words."""
    from evalpin.core.instrument.seal import (
        BUMPED,
        EDITED,
        MATCHED,
        UNSEALED,
        render_lock,
        write_lock,
    )

    if state.status == MATCHED and _same_bytes(state.lock_path, render_lock(fs)):
        return "unchanged"
    try:
        write_lock(fs)
    except OSError as exc:
        from evalpin.core.errors import InputError

        raise InputError(state.lock_path, f"cannot write lock: {exc.strerror or exc}") from None
    if state.status == UNSEALED:
        return "sealed"
    if state.status == BUMPED:
        before, after = _version(state.lock.dataset_version), _version(state.dataset_version)
        return f"re-sealed (dataset_version {before} -> {after})"
    if state.status == EDITED:
        return f"re-sealed with --force (edit accepted as {_version(state.dataset_version)})"
    return "re-sealed"


def _same_bytes(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


# -- wording ------------------------------------------------------------------------


def _shown(path: Path) -> str:
    return inert_line(str(path))


def _command(fixtures: Path, *flags: str) -> str:
    return inert_line(shlex.join(["evalpin", "seal", *flags, str(fixtures)]))


def _version(version: str | None) -> str:
    from evalpin.core.instrument.seal import quote

    return "none" if version is None else quote(version)


def _counts(state) -> str:
    return f"{_n(state.files, 'file')}, {_n(state.cases, 'case')}"


def _moved_count(state) -> str:
    files = len(state.files_changed) + len(state.files_added) + len(state.files_removed)
    cases = len(state.cases_changed) + len(state.cases_added) + len(state.cases_removed)
    return f"{_n(files, 'file')} and {_n(cases, 'case')} moved"


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
