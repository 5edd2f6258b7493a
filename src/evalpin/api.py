"""evalpin's Python API: read a run, compare two, apply the publish rule.

The same core the command line uses, without the terminal::

    import evalpin

    night_1 = evalpin.read_run("runs/demo-night-1.jsonl")
    night_2 = evalpin.read_run("runs/demo-night-2.jsonl")
    report = evalpin.compare(night_1, night_2)
    if report.refused:
        print(evalpin.REFUSE_LINE)          # the instruments differ: not a regression
    for move in report.movements:
        print(move.kind, move.case_id, move.seed)
    print(evalpin.verdict(night_2).label)   # "internal", "publishable", ...
    rows = night_2.to_dicts()               # one dict per (case, seed)

Every reader the command line has is here: evalpin's own run files, header-less case
records, a single JSON report, inspect-ai logs (`.eval`, `.json`) and lm-evaluation-harness
samples with their results. An unreadable or invalid file raises `InputError`, naming the
file and, where there is one, the line.

Stability: the names in `__all__` and their documented fields and methods are stable
within a minor version (every 0.3.x release reads, compares and judges alike, and the
dicts of `Run.to_dicts` keep their keys); a minor release may add names, fields and
keys, and says in the changelog what it changes. Everything outside `__all__`, and every
module under `evalpin.core`, `evalpin.run`, `evalpin.cli` and `evalpin.tui`, is internal.

Importing this module loads no Textual, Rich or openai SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.judge.report import PIN_ROWS, REFUSE_LINE, DiffReport, Movement, Side
from evalpin.core.judge.verdict import (
    CONTAMINATED,
    DEFAULT_BAND,
    DEMO_NOTE,
    EXPLORATORY,
    INTERNAL,
    LABELS,
    PUBLISHABLE,
    UNCONTROLLED,
    Check,
    Disclosure,
    Pin,
    Verdict,
)
from evalpin.core.read.formats import ReadOptions
from evalpin.core.read.runfile import RunFile
from evalpin.core.records import DISPUTED, ERROR, CaseRecord, CaseRow, RunHeader, Summary

if TYPE_CHECKING:
    import pandas

__all__ = [
    "CONTAMINATED",
    "DEMO_NOTE",
    "DETAIL_KEYS",
    "DISPUTED",
    "ERROR",
    "EXPLORATORY",
    "INTERNAL",
    "LABELS",
    "PUBLISHABLE",
    "REFUSE_LINE",
    "ROW_KEYS",
    "UNCONTROLLED",
    "CaseRecord",
    "CaseRow",
    "Check",
    "Comparison",
    "DiffReport",
    "Disclosure",
    "InputError",
    "Movement",
    "Pin",
    "ReadOptions",
    "Run",
    "RunHeader",
    "Side",
    "Summary",
    "Verdict",
    "compare",
    "read_run",
    "verdict",
]

Comparison = DiffReport
"""What `compare` returns: the report `evalpin diff` prints (an alias of `DiffReport`)."""

PathArg = str | PathLike[str]

# The keys of `Run.to_dicts()`, in order: the run file's own names ("pass", not "passed").
ROW_KEYS = tuple(f.encode_name for f in msgspec.structs.fields(CaseRow))
# A record's fields beyond the row's (attribute name, key), and the keys
# `Run.to_dicts(detail=True)` has besides ROW_KEYS.
_DETAIL_FIELDS = tuple(
    (f.name, f.encode_name)
    for f in msgspec.structs.fields(CaseRecord)
    if f.encode_name not in ROW_KEYS
)
DETAIL_KEYS = tuple(key for _, key in _DETAIL_FIELDS)


@dataclass(frozen=True, eq=False)
class Run:
    """One run as read, whatever its format: its header, its pins and one row per
    (case, seed).

    Attributes:
        file: The underlying reader's result (`evalpin.core.read.runfile.RunFile`); internal,
            for code that needs what this class does not expose yet.
    """

    file: RunFile

    @property
    def path(self) -> str:
        """The file (or folder) the run was read from, as given."""
        return self.file.path

    @property
    def what(self) -> str:
        """What was read: `evalpin run`, `inspect-ai log (.eval, ...)`, `lm-eval samples`, ..."""
        return self.file.what

    @property
    def label(self) -> str:
        """The one line every command prints about the file: format, case records,
        complete or not, missing pins."""
        return self.file.label()

    @property
    def header(self) -> RunHeader | None:
        """The run header (an evalpin run's first line, or one built from another tool's
        log); None for header-less case records."""
        return self.file.header

    @property
    def summary(self) -> Summary | None:
        """The trailer of a finished evalpin run; None when absent."""
        return self.file.summary

    @property
    def complete(self) -> bool | None:
        """True when the run finished (a trailer, or the log says so), False when it did
        not, None when the format cannot tell."""
        return self.file.complete

    @property
    def seeds(self) -> list[int]:
        """The run's seeds (another tool's repeat indices: inspect's epochs)."""
        return self.file.seeds

    @property
    def repeat_label(self) -> str:
        """What the run calls its repeat key: `seed`, `epoch` or `repeat`."""
        return self.file.repeat_label

    @property
    def missing_pins(self) -> list[str]:
        """Pins the file does not carry (never filled with defaults)."""
        return list(self.file.missing_pins)

    @cached_property
    def pins(self) -> dict[str, str | None]:
        """The instrument as the diff's pins table shows it: `dataset_hash`,
        `envelope_hash`, `grader_version`, `model_slot`, `reported_model`,
        `slot_settings`, `env_digest`, `scorer_commit`, `seeds` (None: missing)."""
        from evalpin.core.judge.report import side_of

        pins = dict(side_of(self.file).pins)
        pins["envelope_hash"] = self.file.envelope_hash
        return {key: pins.get(key) for key in _PIN_ORDER}

    @property
    def rows(self) -> list[CaseRow]:
        """One lean row per (case, seed), in file order: ids, grade, status and pins.
        Reasons, tails and completions are in `records()`."""
        return self.file.rows

    def __len__(self) -> int:
        return len(self.file.rows)

    def __iter__(self) -> Iterator[CaseRow]:
        return iter(self.file.rows)

    def __repr__(self) -> str:
        return f"Run({self.path!r}: {self.label})"

    def records(self, indices: Iterable[int] | None = None) -> list[CaseRecord]:
        """Whole case records (reasons, tool names, tail, text, files, usage, ...),
        decoded from the file.

        Args:
            indices: Row indices to decode (default: every row).

        Returns:
            The records, in the order of `indices` (file order by default).
        """
        wanted = list(range(len(self.file.rows)) if indices is None else indices)
        decoded = self.file.records(wanted)
        return [decoded[i] for i in wanted]

    def to_dicts(self, *, detail: bool = False) -> list[dict[str, Any]]:
        """The rows as plain dicts, one per (case, seed), with the run file's key names.

        Args:
            detail: Also decode each whole record: adds `reasons`, `tool_names`,
                `seconds`, `loops`, `tail`, `text`, `tools`, `files`, `error`,
                `failed_tests`, `usage`, ... (`DETAIL_KEYS`). Slower on big runs.

        Returns:
            A list of dicts with the keys `case_id`, `pass`, `seed`, `fixture_hash`,
            `grader_version`, `model_slot`, `completion_digest`, `reported_model`,
            `slot_settings`, `text_digest`, `status` (`ROW_KEYS`; None where a row lacks
            one; `status` is `ERROR` or `DISPUTED` for a case that was not judged), then
            `DETAIL_KEYS` when `detail` is true (a disputed case's `witness_tail` and
            `witness_failed_tests` among them).
        """
        astuple = msgspec.structs.astuple
        rows = [dict(zip(ROW_KEYS, astuple(row), strict=True)) for row in self.file.rows]
        if detail:
            for out, record in zip(rows, self.records(), strict=True):
                values = msgspec.to_builtins(msgspec.structs.asdict(record))
                for name, key in _DETAIL_FIELDS:
                    out[key] = values[name]
        return rows

    def to_pandas(self, *, detail: bool = False) -> pandas.DataFrame:
        """The rows as a pandas DataFrame (columns as in `to_dicts`).

        pandas is not a dependency of evalpin: install it yourself (`pip install pandas`).

        Args:
            detail: As for `to_dicts`.

        Raises:
            ImportError: pandas is not installed.
        """
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError(
                "Run.to_pandas() needs pandas, which evalpin does not install: "
                "pip install pandas (or use Run.to_dicts())"
            ) from exc
        columns = list(ROW_KEYS) + (list(DETAIL_KEYS) if detail else [])
        return pd.DataFrame(self.to_dicts(detail=detail), columns=columns)


# The report's pins, the envelope hash beside the dataset's (a run's pins as data).
_PIN_ORDER = PIN_ROWS
RunLike = Run | RunFile | PathArg


def read_run(
    path: PathArg,
    *,
    scorer: str | None = None,
    metric: str | Sequence[str] = (),
    filter: str | Sequence[str] = (),
    prompt: str | None = None,
    provider: str | None = None,
) -> Run:
    """Read a run of any format evalpin reads (chosen by sniffing the file).

    Args:
        path: An evalpin run file, header-less case records, a JSON report, an inspect-ai
            log (`.eval` or `.json`), lm-eval `samples_*.jsonl` or its output folder,
            promptfoo's output (`-o out.json`, `export`, `-o out.jsonl`).
        scorer: inspect-ai logs: the scorer that decides pass/fail (`NAME` or
            `NAME.KEY`); default the first the log lists.
        metric: lm-eval logs: the metric whose value 1 is a pass (`NAME` or
            `TASK=NAME`, one or several); default each task's first.
        filter: lm-eval logs: the filter whose answers are graded; default each task's
            first.
        prompt: promptfoo output holding several (prompt, provider) runs: the prompt's
            label, template or id (prefix).
        provider: promptfoo output holding several runs: the provider's label or id.

    Returns:
        The run.

    Raises:
        InputError: The file is missing, unreadable or invalid; the message names the
            file and the line.
    """
    from evalpin.core.read.runfile import read_run as read

    options = ReadOptions(scorer, metric, filter, prompt, provider)  # type: ignore[arg-type]
    return Run(read(Path(path), options))


def _file(run: RunLike) -> RunFile:
    if isinstance(run, Run):
        return run.file
    if isinstance(run, RunFile):
        return run
    if isinstance(run, str | PathLike):
        return read_run(run).file
    raise TypeError(f"expected a Run or a path, not {type(run).__name__}")


def compare(left: RunLike, right: RunLike) -> DiffReport:
    """Join two runs on (case_id, seed), or refuse: what `evalpin diff LEFT RIGHT` does.

    Args:
        left: The earlier run (a `Run`, or a path to read).
        right: The later run.

    Returns:
        The whole report (`Comparison`): `refused` (True when the triples differ: an
        instrument change, not a prompt regression; `mismatches` says which pins),
        `movements` (every pass flip and digest change, with reasons and digests),
        `counts`, `only_left` / `only_right`, `stats` (the paired statistics; None on
        refusal), `causes`, and `to_json()`, the `diff --json` payload.

    Raises:
        InputError: A path that is no readable run.
    """
    from evalpin.core.judge.report import build_report

    return build_report(_file(left), _file(right), detail=None)


@overload
def verdict(
    run: RunLike, *, disclosed: Disclosure | PathArg | None = ..., band: float = ...
) -> Verdict: ...
@overload
def verdict(
    run: list[RunLike] | tuple[RunLike, ...],
    *,
    disclosed: Disclosure | PathArg | None = ...,
    band: float = ...,
) -> list[Verdict]: ...
def verdict(
    run: RunLike | list[RunLike] | tuple[RunLike, ...],
    *,
    disclosed: Disclosure | PathArg | None = None,
    band: float = DEFAULT_BAND,
) -> Verdict | list[Verdict]:
    """Apply the publish rule: what `evalpin verdict RUN` does.

    Args:
        run: A run (a `Run`, or a path to read), or a list of them.
        disclosed: Case ids and prompts known to be disclosed (a `Disclosure`, or a
            file of them, one a line, `#` comments): a holdout case among them makes
            the run `contaminated`.
        band: Spread across seeds above which the run is flagged unstable.

    Returns:
        A `Verdict` (a list of them for a list of runs): `label` (one of `LABELS`;
        `PUBLISHABLE` only when every pin holds), `reasons`, `checklist`, `pass_rate`
        (over `judged` cases), `pass_rate_by_seed`, `errors` and `disputed` (the cases
        counted apart; `disputed_cases` names them), `spread`, `unstable`, `flaky_cases`,
        and `to_json()`, the `verdict --json` payload.

    Raises:
        InputError: A path that is no readable run, or an unreadable disclosure list.
    """
    from evalpin.core.judge.verdict import judge

    if disclosed is not None and not isinstance(disclosed, Disclosure):
        disclosed = Disclosure.load(disclosed)
    if isinstance(run, list | tuple):
        return [judge(_file(r), disclosed=disclosed, band=band) for r in run]
    return judge(_file(run), disclosed=disclosed, band=band)
