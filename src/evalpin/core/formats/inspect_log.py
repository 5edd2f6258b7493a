"""inspect-ai logs: the `.eval` zip and the `.json` document.

A case is a sample id; the repeat key (the seed column) is the epoch; the generation
seed and temperature are controls. Pass/fail comes from one scorer (the first the log
lists, or `--scorer NAME`). The fixture hash is evalpin's recipe over the sample's
`input`, `target`, `choices` and `metadata`. A zip is read defensively: member names
that leave the archive, members larger than a cap, a truncated archive or bytes that are
not UTF-8 JSON are refused with one line, before anything is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.formats import ZIP_MAGIC, Probe, ReadOptions
from evalpin.core.formats.foreign import (
    canonical,
    dataset_hash,
    digests,
    fixture_hash,
    scrub_url,
    short_hash,
)
from evalpin.core.formats.ziplog import LogZip
from evalpin.core.reasons import NO_COMPLETION, SCORE
from evalpin.core.records import SCHEMA, CaseRecord, CaseRow, FixturesInfo, RunHeader, ToolCall
from evalpin.core.runfile import RunFile, gc_paused

EVAL = "inspect-eval"
JSON = "inspect-json"
KIND = "inspect-ai"
TAIL_CHARS = 800
MISSING_SCORE = "missing"  # the chosen scorer gave this sample no score
PASS_VALUES = frozenset({"C", "1", "1.0", "true", "True"})
FAIL_VALUES = frozenset({"I", "0", "0.0", "false", "False"})


class _Score(msgspec.Struct):
    value: Any = None
    answer: Any = None
    explanation: Any = None


class _Call(msgspec.Struct):
    function: str
    arguments: Any = None


class _Message(msgspec.Struct):
    role: str = ""
    content: Any = None
    tool_calls: list[_Call] | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _Output(msgspec.Struct):
    model: str | None = None
    choices: list[_Choice] = []
    completion: str | None = None
    error: Any = None


class _Sample(msgspec.Struct):
    id: int | str
    epoch: int = 1
    input: Any = None
    target: Any = None
    choices: Any = None
    metadata: Any = None
    messages: list[_Message] = []
    output: _Output | None = None
    scores: dict[str, _Score] | None = None
    error: Any = None
    total_time: float | None = None


class _Revision(msgspec.Struct):
    commit: str | None = None
    dirty: bool | None = None


class _Dataset(msgspec.Struct):
    name: str | None = None
    location: str | None = None


class _Config(msgspec.Struct):
    epochs: int | None = None


class _Spec(msgspec.Struct):
    model: str | None = None
    run_id: str = ""
    created: str = ""
    task: str | None = None
    task_version: Any = None
    dataset: _Dataset = msgspec.field(default_factory=_Dataset)
    model_base_url: str | None = None
    model_generate_config: dict[str, Any] = {}
    config: _Config = msgspec.field(default_factory=_Config)
    revision: _Revision | None = None
    packages: dict[str, str] = {}
    scorers: list[dict[str, Any]] | None = None


class _EvalScore(msgspec.Struct):
    name: str


class _Results(msgspec.Struct):
    scores: list[_EvalScore] = []


class _Plan(msgspec.Struct):
    config: dict[str, Any] = {}


class _Header(msgspec.Struct):
    eval: _Spec
    plan: _Plan | None = None
    status: str = ""
    results: _Results | None = None
    error: Any = None


class _JsonLog(msgspec.Struct):
    eval: _Spec
    plan: _Plan | None = None
    version: int | None = None
    status: str = ""
    results: _Results | None = None
    error: Any = None
    samples: list[_Sample] | None = None


_HEADER = msgspec.json.Decoder(_Header)
_SAMPLE = msgspec.json.Decoder(_Sample)
_JSON_LOG = msgspec.json.Decoder(_JsonLog)


def sniff_eval(probe: Probe) -> bool:
    return not probe.is_dir and probe.head == ZIP_MAGIC


def sniff_json(probe: Probe) -> bool:
    return {"eval", "version"} <= probe.keys


@dataclass
class _Log:
    header: _Header
    samples: list[_Sample]
    journal_only: bool = False


def read_eval(probe: Probe, options: ReadOptions) -> RunFile:
    return _build(probe, _unzip(probe), options, what="inspect-ai log (.eval", shape=EVAL)


def read_json(probe: Probe, options: ReadOptions) -> RunFile:
    try:
        log = _JSON_LOG.decode(probe.data)
    except msgspec.MsgspecError as exc:
        raise InputError(probe.path, f"not a valid inspect-ai log: {exc}") from None
    header = _Header(log.eval, log.plan, log.status, log.results, log.error)
    return _build(
        probe, _Log(header, log.samples or []), options, what="inspect-ai log (.json", shape=JSON
    )


def _unzip(probe: Probe) -> _Log:
    path = probe.path
    with LogZip(path) as zf:
        names = zf.names()
        journal_only = "header.json" not in zf.infos
        head_name = "_journal/start.json" if journal_only else "header.json"
        if head_name not in zf.infos:
            raise InputError(path, "not an inspect-ai log: no header.json or _journal/start.json")
        header = _decode(path, head_name, zf.read(head_name), _HEADER)
        with gc_paused():
            samples = [
                _decode(path, name, zf.read(name), _SAMPLE)
                for name in names
                if name.startswith("samples/") and name.endswith(".json")
            ]
    return _Log(header, samples, journal_only)


def _decode(path: Any, member: str, data: bytes, decoder: msgspec.json.Decoder) -> Any:
    try:
        return decoder.decode(data)
    except msgspec.MsgspecError as exc:
        raise InputError(path, f"zip member {member!r}: {exc}") from None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _completion_text(output: _Output | None) -> str | None:
    if output is None:
        return None
    if output.completion:
        return output.completion
    if output.choices:
        return _text_of(output.choices[0].message.content)
    return None


def _error_text(error: Any) -> str | None:
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message else None
    return str(error) if error else None


def grade(value: Any) -> tuple[bool, list[str]]:
    """C, 1, 1.0, true pass; I, 0, false fail; anything else fails, saying the value."""
    shown = canonical(value) if not isinstance(value, str) else value
    if isinstance(value, bool):
        shown = "true" if value else "false"
    if shown in PASS_VALUES:
        return True, []
    if shown in FAIL_VALUES:
        return False, []
    return False, [SCORE(shown)]


def _scorer_names(log: _Log) -> list[str]:
    spec = log.header.eval
    names = [str(s.get("name")) for s in spec.scorers or [] if s.get("name")]
    if not names and log.header.results is not None:
        names = [s.name for s in log.header.results.scores]
    if not names:
        for sample in log.samples:
            if sample.scores:
                return list(sample.scores)
    return names


def _pick_scorer(probe: Probe, log: _Log, options: ReadOptions) -> str | None:
    names = _scorer_names(log)
    if options.scorer is None:
        return names[0] if names else None
    if names and options.scorer not in names:
        raise InputError(
            probe.path, f"no scorer {options.scorer!r}; the log has: {', '.join(names)}"
        )
    return options.scorer


def _id_order(value: int | str) -> tuple[int, int | str]:
    return (0, value) if isinstance(value, int) else (1, value)


def _build(probe: Probe, log: _Log, options: ReadOptions, *, what: str, shape: str) -> RunFile:
    spec = log.header.eval
    scorer = _pick_scorer(probe, log, options)
    grader = None
    if spec.scorers is not None or spec.packages.get("inspect_ai"):
        grader = short_hash(
            {
                "scorers": spec.scorers,
                "scorer": scorer,
                "inspect_ai": spec.packages.get("inspect_ai"),
            }
        )
    slot = spec.model
    if slot and spec.model_base_url:
        slot += f" @ {scrub_url(spec.model_base_url)}"

    rows: list[CaseRow] = []
    details: list[CaseRecord] = []
    cases: dict[str, str] = {}
    samples = sorted(log.samples, key=lambda s: (_id_order(s.id), s.epoch))
    with gc_paused():
        for s in samples:
            case_id = str(s.id)
            fx = cases.get(case_id)
            if fx is None:
                fx = cases[case_id] = fixture_hash(
                    {
                        "input": s.input,
                        "target": s.target,
                        "choices": s.choices,
                        "metadata": s.metadata,
                    }
                )
            calls = [
                ToolCall(c.function, c.arguments)
                for m in s.messages
                if m.role == "assistant" and m.tool_calls
                for c in m.tool_calls
            ]
            text = _completion_text(s.output)
            score = (s.scores or {}).get(scorer) if scorer else None
            if score is None:
                passed, reasons = False, [SCORE(MISSING_SCORE)]
            else:
                passed, reasons = grade(score.value)
            tdig = cdig = None
            if text is not None:
                tdig, cdig = digests(text, calls)
            elif not reasons:
                reasons.append(NO_COMPLETION())
            reported = (s.output.model or None) if s.output else None
            # The sample's error where it failed, else the scorer's explanation where it
            # says more than the completion text.
            tail = _error_text(s.error) or (score.explanation if score is not None else None)
            if not isinstance(tail, str) or tail == text:
                tail = None
            rows.append(
                CaseRow(
                    case_id, passed, s.epoch, fx, grader, slot, cdig, reported, text_digest=tdig
                )
            )
            details.append(
                CaseRecord(
                    case_id,
                    passed,
                    seed=s.epoch,
                    fixture_hash=fx,
                    grader_version=grader,
                    model_slot=slot,
                    reasons=reasons,
                    tool_names=[c.name for c in calls],
                    text_digest=tdig,
                    completion_digest=cdig,
                    seconds=s.total_time,
                    reported_model=reported,
                    tail=tail[-TAIL_CHARS:] if tail else None,
                    text=text,
                    tools=calls or None,
                )
            )

    # Generation settings: the plan's (as passed to eval) under the model's own.
    plan = log.header.plan.config if log.header.plan else {}
    generate = {**plan, **spec.model_generate_config}
    controls = {k: v for k, v in sorted(generate.items()) if v is not None}
    if spec.config.epochs is not None:
        controls["epochs"] = spec.config.epochs
    commit = spec.revision.commit if spec.revision else None
    if commit and spec.revision and spec.revision.dirty:
        commit += "-dirty"
    packages = dict(sorted(spec.packages.items()))
    env = {"packages": packages} if packages else {}
    header = RunHeader(
        schema=SCHEMA,
        run_id=spec.run_id,
        started_at=spec.created,
        fixtures=FixturesInfo(
            path=spec.dataset.location or spec.task or str(probe.path),
            kind=KIND,
            dataset_id=spec.dataset.name or spec.task,
            dataset_version=None if spec.task_version is None else str(spec.task_version),
            dataset_hash=dataset_hash(cases),
        ),
        grader_version=grader,
        model_slot=slot,
        slot={"provider": "inspect-ai", "model": spec.model} if spec.model else {},
        seeds=sorted({r.seed for r in rows if r.seed is not None}),
        controls=controls,
        env_digest=short_hash(env, 16) if packages else None,
        env=env,
        scorer_commit=commit,
    )
    status = log.header.status
    if log.journal_only:
        complete, why = False, "no header.json: the run stopped before writing its results"
    else:
        complete, why = status == "success", f"status {status or 'not recorded'}"
    return RunFile(
        str(probe.path),
        shape,
        header,
        rows,
        details=details,
        what=f"{what}, scorer {scorer})" if scorer else f"{what})",
        complete=complete,
        incomplete_why=why,
        repeat_label="epoch",
    )
