"""Typed records of a run file (`evalpin.run/1`) and of a completion.

A run file is JSONL: a `run` header, one `case` line per (case, seed), and a `summary`
trailer when the run finished. The structs here are the contract; the reader lives in
`rundata.py` (with `runfile.read_run` choosing among the formats), the writer in
`runfile.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

SCHEMA = "evalpin.run/1"
ERROR = "error"  # a case's status when it could not be judged
# A coding case's status when plain pytest passed it and the witness (process isolation)
# did not: neither a pass nor a fail, counted apart like an error.
DISPUTED = "disputed"
TAIL_CHARS = 800


class ToolCall(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One tool call made by a model: its name and raw arguments."""

    name: str
    args: Any = None


class TurnCall(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """A tool call inside a conversation: its arguments as the model wrote them (a raw
    string when they were not JSON) and the result it was given (unset when the
    conversation ended before the result was sent back)."""

    name: str
    args: Any = None
    result: Any | msgspec.UnsetType = msgspec.UNSET


class Turn(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """One assistant reply in a tool conversation, with the calls it made."""

    text: str = ""
    calls: list[TurnCall] = []


class Usage(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Tokens an endpoint reported spending (its `usage`), summed over a case's requests."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )

    def describe(self) -> str:
        """`12,345 tokens (12,000 prompt, 345 completion)`, as every display shows it."""
        return (
            f"{self.total_tokens:,} tokens ({self.prompt_tokens:,} prompt,"
            f" {self.completion_tokens:,} completion)"
        )


class Completion(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a slot returned for one request (also the replay and command line shape).

    `turns` is the whole tool conversation when there was one; `text` is then its last
    reply's text and `tools` every call it made, in order (core/instrument/conversation.py).
    `usage` is what the endpoint reported for it (None: not reported, or not spent by
    this run, as for a replay); it is not part of the completion digest.
    """

    text: str = ""
    tools: list[ToolCall] = []
    files: dict[str, str] = {}
    model: str | None = None
    turns: list[Turn] = []
    usage: Usage | None = None
    # Why the endpoint stopped its last reply ("stop", "length": cut at max_tokens,
    # "tool_calls"); not part of the completion digest.
    finish_reason: str | None = None


class Seal(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """The seal a run ran against and where it was published before the run started
    (issue 51: the hash published before the metric).

    `envelope_hash` is the lock's (None: no lock beside the set); `lock` the lock's path
    in its repository. By default a seal is published by committing its lock to the
    fixtures' git repository (`by: "git"`): `commit` is the first commit whose lock
    names that hash and `committed_at` its commit time (UTC). `why` says why no
    publication was found when the run started (not in git, lock not committed, ...)."""

    envelope_hash: str | None = None
    lock: str | None = None
    by: str | None = None
    commit: str | None = None
    committed_at: str | None = None
    why: str | None = None


class FixturesInfo(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """Which sealed envelope a run used."""

    path: str
    kind: str
    dataset_id: str | None = None
    dataset_version: str | None = None
    dataset_hash: str | None = None
    network: str | None = None
    holdout_policy: str | None = None
    # The envelope: the fixture file and every file its cases reference (path relative
    # to the set's folder -> sha256, first 16 hex digits), and its hash (the one to
    # publish); `lock`: matched, edited, bumped or unsealed against the set's lock.
    envelope_hash: str | None = None
    files: dict[str, str] = {}
    lock: str | None = None
    # Where the set came from, as its `source:` says (`evalpin import` writes it): the
    # file, its sha256, its format and the importer with its version.
    source: dict[str, str] | None = None


class RunHeader(
    msgspec.Struct, tag="run", tag_field="record", omit_defaults=True, forbid_unknown_fields=True
):
    """First line of an evalpin run file: everything needed to replay and judge it."""

    schema: str
    run_id: str
    started_at: str
    fixtures: FixturesInfo
    grader_version: str | None = None
    model_slot: str | None = None
    slot: dict[str, Any] = {}
    seeds: list[int] = []
    controls: dict[str, Any] = {}
    env_digest: str | None = None
    env: dict[str, Any] = {}
    scorer_commit: str | None = None
    control_sources: dict[str, str] = {}
    warnings: list[str] = []
    # Coding items whose candidate ran inside the pytest process (`isolation: in-process`):
    # graded with tamper checks, never publishable.
    graded_in_process: list[str] = []
    # How the run was executed (jobs, concurrency, executor: local or a Dask cluster with its
    # workers' env digests): never part of the env digest or the
    # triple, so changing them never breaks comparability.
    execution: dict[str, Any] = {}
    # When the completions were replayed from an earlier run file: that run's run_id,
    # its slot label and the path as given.
    replay_of: dict[str, Any] | None = None
    # What the log's tool calls the repeat index that joins with `seed` (inspect-ai:
    # "epoch", lm-eval: "repeat"); None: evalpin's own "seed".
    repeat_key: str | None = None
    # The slot's calibration probes before the first case (run/probes.py): digests of
    # their prompts and answers, whether they repeated, whether a fingerprint came back.
    probes: dict[str, Any] | None = None
    # The seal the run ran against and where it was published before the run started.
    seal: Seal | None = None


class CaseKey(msgspec.Struct):
    """What every case line starts with, in this order: which case and seed, its pass,
    and the instrument it was measured with. `CaseRow` and `CaseRecord` both begin so."""

    case_id: str
    passed: bool = msgspec.field(name="pass")
    seed: int | None = None
    fixture_hash: str | None = None
    grader_version: str | None = None
    model_slot: str | None = None
    if TYPE_CHECKING:
        status: str | None  # each subclass's last field

    @property
    def errored(self) -> bool:
        return self.status == ERROR

    @property
    def disputed(self) -> bool:
        return self.status == DISPUTED


class CaseRow(CaseKey, gc=False):
    """The part of a case record that joining, listing and verdicts need.

    Only scalars, so decoding is cheap and the rows are invisible to the cyclic GC: this
    is what keeps `diff` on big files fast. Reasons, tails and text stay on disk and are
    decoded from the line's byte offset when shown (`CaseRecord`). Untagged, so the same
    struct reads evalpin lines and header-less case records from other tools.
    """

    completion_digest: str | None = None
    reported_model: str | None = None
    slot_settings: str | None = None
    text_digest: str | None = None
    # "error": the case could not be judged (no completion came, the sandbox or another
    # tool's sample errored); "disputed": plain pytest passed it and the witness did not.
    # Neither a pass nor a fail; absent for a judged case.
    status: str | None = None
    # Another tool's failing grade in its own words (the `score:VALUE` reason, such as
    # inspect's partial `P` or lm-eval's 0.5; None for its plain fail, `I` or 0): a
    # move between two failing values is a move (issue 51). Read from the tool's log,
    # never written to a run file.
    score: str | None = None


class CaseRecord(CaseKey, tag="case", tag_field="record", omit_defaults=True):
    """A whole case line, decoded lazily when one case is shown."""

    reasons: list[str] | None = None
    tool_names: list[str] | None = None
    text_digest: str | None = None
    completion_digest: str | None = None
    seconds: float | None = None
    loops: int | None = None
    reported_model: str | None = None
    slot_settings: str | None = None
    tail: str | None = None
    text: str | None = None
    tools: list[ToolCall] | None = None
    turns: list[Turn] | None = None
    files: dict[str, str] | None = None
    error: str | None = None
    # The case's own name in another tool's log, where it differs from `case_id`
    # (an lm-eval doc's `id` beside its `doc_id`).
    source_id: str | None = None
    usage: Usage | None = None
    status: str | None = None  # as on CaseRow
    # Why the model stopped (the endpoint's `finish_reason`, of the last reply):
    # "length" marks a completion cut at the token limit.
    finish_reason: str | None = None
    # A coding case's failing tests, as pytest names them (`test_x`, `TestA::test_y`):
    # the ones that failed, errored or were skipped, and expected ones that never ran.
    failed_tests: list[str] | None = None
    # Another tool answered from its cache (promptfoo's `cached: true`): recorded earlier,
    # not by the backend the run names.
    cached: bool | None = None
    # A disputed case's witness (the same tests under process isolation): the end of its
    # output and the tests it did not pass, beside the plain run's `tail`.
    witness_tail: str | None = None
    witness_failed_tests: list[str] | None = None


class Marks(msgspec.Struct, gc=False):
    """What a case line says moved it: its reasons, the tools it called, the tests that
    failed. Decoded alone, for every moved case of a pair (the cause view), without the
    line's text, tail and conversation."""

    reasons: list[str] | None = None
    tool_names: list[str] | None = None
    failed_tests: list[str] | None = None


class Summary(
    msgspec.Struct,
    tag="summary",
    tag_field="record",
    omit_defaults=True,
    forbid_unknown_fields=True,
):
    """Trailer written when a run finished; its absence marks the file incomplete."""

    finished_at: str
    records: int
    passed: int
    errors: int = 0  # cases with status "error": neither passed nor failed
    disputed: int = 0  # cases with status "disputed": neither passed nor failed
    seconds: float | None = None
    pass_rate_by_seed: dict[str, float] = {}
    resumed: int = 0
    usage: Usage | None = None  # summed over the case records that carry one
    probes_end: str | None = None  # the probes' answers after the last case (digest)
    # CRC-32 (zlib's) of every byte before this line, as evalpin's writer wrote them: a
    # reader that finds them unchanged skips checking each case line for a key written
    # twice (the writer writes none); otherwise each line is checked (issue 51).
    crc32: int | None = None


class ReportRow(msgspec.Struct):
    """One row of a single-JSON report."""

    id: str
    passed: bool
    seed: int | None = None
    seconds: float | None = None
    tail: str | None = None


class Report(msgspec.Struct):
    """A single JSON report (another common shape): pins at the top, rows below."""

    rows: list[ReportRow]
    dataset_id: str | None = None
    dataset_version: str | None = None
    dataset_hash: str | None = None
    seeds: list[int] | None = None
    summary: Any = None


class Message(msgspec.Struct, frozen=True):
    """One chat message sent to a slot."""

    role: str
    content: str


class CompletionRequest(msgspec.Struct, frozen=True):
    """What a slot is asked (also the `command` provider's stdin shape)."""

    case_id: str
    seed: int
    messages: list[Message]
    tools: list[Any] = []
    temperature: float | None = None
    max_tokens: int | None = None
    # The case's canned tool results (tool name -> result, or a list in call order) and
    # the turn cap, so a slot (or a command slot's program) can hold the conversation.
    tool_results: dict[str, Any] = {}
    max_turns: int | None = None
