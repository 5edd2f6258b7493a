"""App-wide messages: what the loading workers report, in the order they learn it.

Posted from thread workers (`post_message` is thread-safe): the run loader's are handled
on the review screen (progress is coalesced by the sender, at most one message every
50 ms), the history reader's on the history screen. Each carries the `generation` of the
load that sent it: a screen that reopened since (even the same file) drops older ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from evalpin.core.judge.causes import Cause
from evalpin.core.judge.compare import Diff, KeyMismatch
from evalpin.core.judge.series import History
from evalpin.core.judge.verdict import Verdict
from evalpin.core.read.runfile import RunFile
from evalpin.core.review.cases import CaseTable


@dataclass
class LoaderMessage(Message):
    """What every run loader's message carries: the generation of the load that sent it."""

    generation: int


@dataclass
class LoadProgress(LoaderMessage):
    """A phase of loading (`reading left`, `comparing`, `indexing`...) and how far."""

    phase: str
    done: int = 0
    total: int = 0


@dataclass
class RunsRead(LoaderMessage):
    """Both files read: headers, completeness and rows are known."""

    left: RunFile
    right: RunFile | None


@dataclass
class DiffReady(LoaderMessage):
    """The pair joined; `diff.refused` means the banner must come before any case.
    `mismatches` is `diff.key_mismatches()`, computed in the worker (it walks every
    mismatched case)."""

    diff: Diff
    mismatches: list[KeyMismatch]


@dataclass
class CasesGrew(LoaderMessage):
    """More of the runs read: `cases` is the partial table (the same object each time,
    growing behind the message), `fraction` how much of the files is read."""

    cases: CaseTable
    fraction: float


@dataclass
class MismatchFound(LoaderMessage):
    """A common (case, seed) read so far was measured with another instrument: the
    comparison is refused before the files are done. `pins` is each differing pin as
    (key, left value, right value); `key` the (case id, seed)."""

    pins: list[tuple[str, str, str]]
    key: tuple[str, int | None]


@dataclass
class CasesReady(LoaderMessage):
    """Every case listed and navigable. `followed`: the table of a run that grew while
    followed (the cursor stays on its case, the filter and search as they are)."""

    cases: CaseTable
    followed: bool = False


@dataclass
class CausesReady(LoaderMessage):
    """What moved, by cause (a pair only): found while the verdicts are judged."""

    causes: list[Cause]


@dataclass
class VerdictsReady(LoaderMessage):
    """The publish rule applied to each run."""

    left: Verdict
    right: Verdict | None


@dataclass
class Followed(LoaderMessage):
    """A run without its trailer is followed as it is written: per side, who writes it
    (`being written by pid N since T`, None: no live writer), and whether the loader
    still follows (False once every trailer landed)."""

    writers: list[str | None]
    following: bool


@dataclass
class RunReplaced(LoaderMessage):
    """A followed file was replaced or cut short (`--resume` rewrites it): read anew."""


@dataclass
class LoadFailed(LoaderMessage):
    """A file could not be read (already one line: `path:line: what is wrong`)."""

    error: str


@dataclass
class HistoryRead(Message):
    """The runs folder read into series and breaks. `generation` tells a reload's answer
    from an earlier one still on its way."""

    history: History
    generation: int


@dataclass
class HistoryFailed(Message):
    """The runs folder could not be listed (one line naming it)."""

    error: str
    generation: int
