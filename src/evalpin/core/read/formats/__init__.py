"""One table of readers, chosen by sniffing the file.

Each format is a module here with a `sniff(probe)` and a `read(probe, options)` that turns
a file into the same `RunFile` (header, lean rows, full records) evalpin's own reader
gives, so nothing downstream asks which format a file was. Adding a format is one module
and one row of `FORMATS`. Readers use the standard library and msgspec only: never the
other tool. What a reader is given (`Probe`, `ReadOptions`) is in `probe.py`, and what
it gives (`RunFile`) in `core/read/rundata.py`, so no reader imports this table.

A folder stands for the one run it holds (`one_run`: an inspect log folder, an lm-eval
`--output_path` folder with its model subfolder); a folder of several runs is refused
naming them. Listing a folder's runs (`runs_in`, `log_files`: history, baselines) looks
one level into a subfolder a tool lays its runs out in.

Sniffing a file looks at, in order of cost: the first bytes (zip magic), the first
non-blank line decoded as JSON (JSONL keys), and only for a file whose first line is not
a JSON object, the top-level keys of the whole JSON document.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from evalpin.core.bounded import TOO_DEEP
from evalpin.core.errors import InputError
from evalpin.core.files import open_input
from evalpin.core.read.formats.probe import ZIP_MAGIC, Probe, ReadOptions, SeveralRuns
from evalpin.core.read.notes import NOTES_NAME
from evalpin.core.read.rundata import SHAPE_EVALPIN, RunFile, Scan, problem
from evalpin.core.records import CaseRow, RunHeader

__all__ = [
    "FORMATS",
    "GONE",
    "GREW",
    "LOG_SUFFIXES",
    "SAME",
    "ZIP_MAGIC",
    "Format",
    "Probe",
    "ReadOptions",
    "RunStream",
    "SeveralRuns",
    "formats",
    "log_files",
    "one_run",
    "read_log",
    "runs_in",
    "sniff",
]

_ANY = msgspec.json.Decoder()


@dataclass(frozen=True)
class Format:
    """One row of the table: a name, how to recognise a file, how to read it."""

    name: str
    sniff: Callable[[Probe], bool]
    read: Callable[[Probe, ReadOptions], RunFile]
    # Files this format reads through another file of the same folder (lm-eval samples
    # beside their results): a folder listing shows only the representative.
    represented_by: Callable[[Path], Path | None] = lambda path: None
    # JSONL formats read chunk by chunk (the review's progressive loader): the scan.
    scan: Callable[[Probe], Scan] | None = None
    # A subfolder the tool lays its runs out in (lm-eval's `<output_path>/<model>/`): a
    # folder listing looks inside it.
    run_folder: Callable[[Path], bool] = lambda path: False
    # A file the tool writes beside its runs that is not one (inspect's eval-set
    # manifests): a folder listing leaves it out, and reading it as a run says so.
    manifest: Callable[[Path], bool] = lambda path: False


def _table() -> tuple[Format, ...]:
    from evalpin.core.read.formats import (
        case_records,
        evalpin_run,
        inspect_log,
        lm_eval,
        promptfoo,
        report,
    )

    return (
        Format(
            inspect_log.EVAL,
            inspect_log.sniff_eval,
            inspect_log.read_eval,
            manifest=inspect_log.is_manifest,
        ),
        Format(
            lm_eval.NAME,
            lm_eval.sniff,
            lm_eval.read,
            lm_eval.represented_by,
            run_folder=lm_eval.is_run_folder,
        ),
        Format(promptfoo.JSONL, promptfoo.sniff_jsonl, promptfoo.read_jsonl),
        Format(evalpin_run.NAME, evalpin_run.sniff, evalpin_run.read, scan=evalpin_run.scan),
        Format(case_records.NAME, case_records.sniff, case_records.read, scan=case_records.scan),
        Format(inspect_log.JSON, inspect_log.sniff_json, inspect_log.read_json),
        Format(promptfoo.NAME, promptfoo.sniff, promptfoo.read),
        Format(report.NAME, report.sniff, report.read),
    )


# What `RunStream.follow` found.
GREW, SAME, GONE = "grew", "same", "gone"

FORMATS: tuple[Format, ...] = ()
# Suffixes a folder listing considers (history, the review's newest-run pick).
LOG_SUFFIXES = (".jsonl", ".json", ".eval")


def formats() -> tuple[Format, ...]:
    """The table, built on first use: only the formats a file asks for load."""
    global FORMATS
    if not FORMATS:
        FORMATS = _table()
    return FORMATS


# How many of a folder's runs an error names before "and N more".
_NAMED = 8


def sniff(path: str | Path) -> tuple[Format, Probe]:
    """The format of a file, or InputError saying why it is none of them. A folder
    stands for the one run it holds (an inspect log folder, an lm-eval output folder);
    one holding several is InputError naming them."""
    probe = Probe(path)
    if probe.is_dir:
        probe = Probe(one_run(probe.path))
    for fmt in formats():
        if fmt.sniff(probe):
            return fmt, probe
    if not probe.is_dir and any(f.manifest(probe.path) for f in formats()):
        raise InputError(
            path, "an inspect-ai eval-set manifest, not a run: name one of the logs beside it"
        )
    raise InputError(path, _unknown(probe), 1)


def _unknown(probe: Probe) -> str:
    first = probe.first
    if first is None:
        try:
            _ANY.decode(probe.data)
        except msgspec.DecodeError:
            line = probe.first_line
            try:
                _ANY.decode(line)
            except msgspec.DecodeError as exc:
                return problem(exc, line)
        except RecursionError:
            return TOO_DEEP
        return "not a run file: a JSON document that is neither a report nor an inspect-ai log"
    if not isinstance(first, dict):
        return "not a run file: line is not a JSON object"
    return "not a run file: expected a run header, a case record or a report with rows"


def read_log(path: str | Path, options: ReadOptions | None = None) -> RunFile:
    """Read a run or another tool's log into rows and pins, or raise InputError."""
    fmt, probe = sniff(path)
    return _read(fmt, probe, options or ReadOptions())


def _read(fmt: Format, probe: Probe, options: ReadOptions) -> RunFile:
    """A format's read, with a net under it: each reader bounds its own parse
    (core/bounded.py), and a `RecursionError` one still lets out is the same one line."""
    try:
        return fmt.read(probe, options)
    except RecursionError:
        raise InputError(probe.path, TOO_DEEP) from None


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError as exc:
        raise InputError(folder, f"cannot list: {exc.strerror or exc}") from None


def runs_in(folder: str | Path) -> list[Path]:
    """The runs a folder holds, each once, sorted (see `log_files`)."""
    folder = Path(folder)
    return log_files(folder, _entries(folder))


def one_run(folder: Path) -> Path:
    """The file of the one run a folder holds, or InputError: none, or several (named,
    so the user can pick one)."""
    runs = runs_in(folder)
    if len(runs) == 1:
        return runs[0]
    if not runs:
        raise InputError(folder, "is a directory, not a file, and holds no run")
    shown = ", ".join(str(p) for p in runs[:_NAMED])
    if len(runs) > _NAMED:
        shown += f" and {len(runs) - _NAMED} more"
    raise InputError(folder, f"is a directory holding {len(runs)} runs; name one of: {shown}")


def log_files(folder: Path, entries: list[Path], *, nested: bool = False) -> list[Path]:
    """Of a folder's entries, the logs to read: known suffixes, not hidden, each run
    once (a file another file represents is left out), and the runs inside a subfolder
    a tool lays its runs out in (lm-eval's model subfolder; one level down)."""
    names = {p.name for p in entries}
    out = []
    for p in entries:
        if p.name.startswith(".") or p.name == NOTES_NAME:  # review notes: no run
            continue
        if not nested and p.is_dir():
            if any(f.run_folder(p) for f in formats()):
                try:
                    inner = sorted(p.iterdir())
                except OSError:
                    continue  # unreadable subfolder: not a run of this folder
                out.extend(log_files(p, inner, nested=True))
            continue
        if p.suffix not in LOG_SUFFIXES or not p.is_file():
            continue
        if any(f.manifest(p) for f in formats()):
            continue  # inspect's logs.json, eval-set.json: beside the runs, not one
        if any((rep := f.represented_by(p)) is not None and rep.name in names for f in formats()):
            continue
        out.append(p)
    return out


class RunStream:
    """A run read a block at a time: `rows` and `header` grow as `step()` advances (JSONL
    formats, chunk by chunk), or arrive in one step (formats read whole), so the review
    can show the prefix it knows while the rest is read. `run` is set at the end.

    A JSONL file is read as it was when the stream was made: up to `stop`, its size then
    (or the byte count given), so a run still being written is read as first seen, and
    another process reading the same bytes reads the same run (`core.judge_apart`).
    """

    def __init__(
        self,
        path: str | Path,
        options: ReadOptions | None = None,
        *,
        run: RunFile | None = None,
        stop: int | None = None,
    ) -> None:
        self.path = str(path)
        self.run = run
        self.options = options or ReadOptions()
        self.stop: int | None = None
        self._scan: Scan | None = None
        self._steps: Iterator[int] | None = None
        self._identity: tuple[int, int] | None = None  # the file read: (device, inode)
        if run is None:
            self._fmt, self._probe = sniff(path)
            if self._fmt.scan is not None:
                self._scan = self._fmt.scan(self._probe)
                held = self._probe.path.stat()
                self.stop = stop if stop is not None else held.st_size
                self._identity = (held.st_dev, held.st_ino)

    @classmethod
    def of(cls, run: RunFile) -> RunStream:
        """A run already read whole, as a finished stream."""
        return cls(run.path, run=run)

    @property
    def rows(self) -> list[CaseRow]:
        if self.run is not None:
            return self.run.rows
        return self._scan.rows if self._scan is not None else []

    @property
    def header(self) -> RunHeader | None:
        if self.run is not None:
            return self.run.header
        return self._scan.header if self._scan is not None else None

    @property
    def fraction(self) -> float:
        """How much of the file is read, 0 to 1."""
        if self.run is not None:
            return 1.0
        if self._scan is None or not self._scan.total:
            return 0.0
        return self._scan.done / self._scan.total

    def partial(self) -> RunFile:
        """The run as read so far (sharing the growing rows and line index), for showing
        the known prefix. Call after a first `step()`: a format read whole has no prefix."""
        if self.run is not None:
            return self.run
        if self._scan is None:
            raise RuntimeError("partial() before the first step of a run read whole")
        return self._scan.result()

    def _blocks(self) -> Iterator[int]:
        """Advance a block at a time, yielding the number of rows known; InputError where
        the file goes wrong (a bad line deep in a file is met only when reached)."""
        if self.run is not None:
            yield len(self.run.rows)
            return
        if self._scan is None:
            self.run = _read(self._fmt, self._probe, self.options)
            yield len(self.run.rows)
            return
        with open_input(self._probe.path) as fh:
            yield from self._scan.blocks(fh, 0, self.stop)
        self.run = self._scan.result()

    def step(self) -> bool:
        """Read one more block; False once the whole run is read (`run` is then set)."""
        if self._steps is None:
            self._steps = self._blocks()
        return next(self._steps, None) is not None

    @property
    def followable(self) -> bool:
        """Whether the run may still grow: an evalpin run read block by block, with no
        summary trailer yet (one being written, or one a killed run left to resume)."""
        scan = self._scan
        return (
            scan is not None
            and scan.finished
            and scan.shape == SHAPE_EVALPIN
            and scan.summary is None
            and self._identity is not None
        )

    def follow(self) -> str:
        """Read the whole lines appended since the last read, from the byte where it
        stopped (the rows and the line index grow; nothing read before is read again): a
        line still being written is left for the next call. `GREW` (then `run` is the run
        as it is now), `SAME`, or `GONE`: the file was replaced or cut short (`--resume`
        rewrites or trims it), so what was read no longer stands: read it anew."""
        scan = self._scan
        assert scan is not None and self._identity is not None
        try:
            with open_input(self._probe.path) as fh:
                now = os.fstat(fh.fileno())
                if (now.st_dev, now.st_ino) != self._identity or now.st_size < scan.end:
                    return GONE
                if now.st_size == scan.end:
                    return SAME
                fh.seek(scan.end)
                data = fh.read(now.st_size - scan.end)
                whole = data.rfind(b"\n") + 1
                if not whole:
                    return SAME  # a line on its way: read once its newline is written
                rows = len(scan.rows)
                summary = scan.summary
                scan.torn = False  # a torn tail read before is read again, whole now
                for _ in scan.blocks(fh, scan.end, scan.end + whole):
                    pass
        except OSError:  # the file went away: a bad line deep in it stays an InputError
            return GONE
        if len(scan.rows) == rows and scan.summary is summary:
            return SAME
        self.stop = scan.end
        self.run = scan.result()
        return GREW
