"""Finding runs: what `evalpin review` opens with no file, and reading headers cheaply.

- `started_at` is the one reader of a run header's start time (the history and the
  default pair both use it). Its rule: times are UTC. A time with an offset is converted
  to UTC; one without an offset (evalpin writes `...Z`, other tools may not) is taken
  as UTC, never as the reader's local time, so two machines date a run alike.
- `peek_header` reads a run header from the first line alone; `header_mismatch` tells,
  from two headers, that a pair is refused before its cases are read.
- `default_pair` and `pair_to_review` pick the pair (`review_pair`: from the command's
  arguments, a folder standing for its newest pair); `bundled_demo` is the fallback.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.records import RunHeader

_HEADER = msgspec.json.Decoder(RunHeader)
PEEK_LIMIT = 1 << 20  # bytes of blank lines read before giving up on a header


def started_at(text: str | None) -> datetime | None:
    """A header's `started_at` as an aware UTC datetime (no offset: taken as UTC), or
    None when absent or not ISO 8601."""
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def peek_header(path: str | Path) -> RunHeader | None:
    """The run header on a file's first non-blank line, or None (not read as an error:
    `read_run` is what validates a file)."""
    try:
        with open(path, "rb") as fh:
            for line in fh:
                if line.strip():
                    return _HEADER.decode(line)
                if fh.tell() > PEEK_LIMIT:
                    return None
    except (OSError, msgspec.MsgspecError, RecursionError):
        return None
    return None


# The pins a run names once for all its cases, in the order a refusal lists them.
RUN_PINS = ("fixture_set", "grader_version", "model_slot", "slot_settings")
# evalpin's own fixture kinds: a set of one is named by its dataset id too. Another
# tool's log names its set per case (lm-eval joins one task across many-task runs).
_OWN_SETS = ("golden", "coding")


def header_pins(header: RunHeader | None) -> dict[str, str | None]:
    """The run-level pins a header names (None where it names none): the fixture set
    (its kind, and for evalpin's own sets its dataset id), the grader version, the
    slot label and the slot's settings digest."""
    if header is None:
        return dict.fromkeys(RUN_PINS)
    fx = header.fixtures
    fixture_set = fx.kind or None
    if fixture_set in _OWN_SETS and fx.dataset_id:
        fixture_set = f"{fx.kind} set {fx.dataset_id}"
    return {
        "fixture_set": fixture_set,
        "grader_version": header.grader_version or None,
        "model_slot": header.model_slot or None,
        "slot_settings": header.slot.get("settings_digest") or None,
    }


def pins_mismatch(
    left: dict[str, str | None], right: dict[str, str | None]
) -> list[tuple[str, str, str]] | None:
    """(pin, left, right) for each run-level pin both name and that differs; None when
    none does. Where a side names none, the runs' cases decide (the join)."""
    found = [
        (key, lv, rv)
        for key in RUN_PINS
        if (lv := left.get(key)) and (rv := right.get(key)) and lv != rv
    ]
    return found or None


def header_mismatch(
    left: RunHeader | None, right: RunHeader | None
) -> list[tuple[str, str, str]] | None:
    """Pins that the run headers alone prove differ (`pins_mismatch` of `header_pins`):
    two runs on other fixture sets, graders or slots are refused whatever cases they
    hold, so the review shows its refusal before the cases are read; None when the
    headers cannot tell (the join decides then)."""
    if left is None or right is None:
        return None
    return pins_mismatch(header_pins(left), header_pins(right))


def _when(path: Path, header: RunHeader | None) -> float:
    when = started_at(header.started_at) if header is not None else None
    return when.timestamp() if when is not None else path.stat().st_mtime


def _fixture_set(header: RunHeader | None) -> str | None:
    if header is None:
        return None
    return header.fixtures.dataset_hash or None


def bundled_demo() -> Path | None:
    """The demo runs shipped with evalpin: inside an installed wheel, or the `runs/`
    folder of a source checkout; None when neither is there."""
    package = Path(__file__).resolve().parents[2]  # src/evalpin, or evalpin in a wheel
    for folder in (package / "demo_runs", package.parent.parent / "runs"):
        if folder.is_dir() and any(folder.glob("*.jsonl")):
            return folder
    return None


def review_pair(
    left: Path | None, right: Path | None, runs_dir: Path = Path("runs")
) -> tuple[Path, Path | None, str | None]:
    """What `evalpin review [LEFT [RIGHT]]` (and `serve`) opens: no argument, the default
    pair of `runs_dir` (`pair_to_review`); one folder alone, that folder's newest pair
    (`default_pair`: a folder that is one run, such as an inspect log folder, gives that
    run); anything else as given. The note says what was chosen, when it was chosen."""
    if left is None:
        return pair_to_review(runs_dir)
    if right is None and left.is_dir():
        earlier, newest = default_pair(left)
        if newest is None:
            return earlier, None, None
        return earlier, newest, f"{left}: opening its newest pair, {earlier.name} and {newest.name}"
    return left, right, None


def pair_to_review(runs_dir: Path) -> tuple[Path, Path | None, str | None]:
    """`evalpin review` with no file: the default pair in `runs_dir`, else in the bundled
    demo (with a note saying so); InputError when neither has a run."""
    try:
        return (*default_pair(runs_dir), None)
    except InputError:
        demo = bundled_demo()
        if demo is None:
            raise
    return (*default_pair(demo), f"no runs in {runs_dir}: opening the bundled demo ({demo})")


def default_pair(runs_dir: str | Path = "runs") -> tuple[Path, Path | None]:
    """What `evalpin review` opens with no file: (earlier, newest) run on the newest run's
    fixture set, or (newest, None) when it has no earlier run. Newest by the header's
    `started_at`, else the file's modification time."""
    folder = Path(runs_dir)
    if not folder.is_dir():
        raise InputError(folder, "no runs folder here: pass LEFT [RIGHT], or make a run")
    found = []
    from evalpin.core.read.formats import runs_in  # the runs as the tools lay them out

    for path in runs_in(folder):
        header = peek_header(path) if path.suffix in (".jsonl", ".json") else None
        found.append((_when(path, header), path.name, path, _fixture_set(header)))
    if not found:
        raise InputError(
            folder, "no runs (*.jsonl, *.json, *.eval): pass LEFT [RIGHT], or make a run"
        )
    found.sort()
    _, _, newest, fixtures = found[-1]
    if fixtures is not None:
        for _, _, path, other in reversed(found[:-1]):
            if other == fixtures:
                return path, newest
    return newest, None
