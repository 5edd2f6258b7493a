"""inspect-ai logs: the `.eval` zip and the `.json` document.

A case is a sample id; the repeat key (the seed column) is the epoch; the generation
seed is a control. Pass/fail comes from one scorer (the first the log lists, or
`--scorer NAME`, or `--scorer NAME.KEY` for one value of a dict-valued score). The
fixture hash is evalpin's recipe over the sample's `input`, `target`, `choices` and
`metadata`.

The instrument is what the log records as deciding the grade: the model, its arguments
and its generation config (temperature, top_p, max_tokens...: the slot settings digest),
and the chosen scorer's own entry in the log (name, options, metrics) with inspect's
version (the grader version); another scorer added beside it moves neither. A sample that
errored, was cancelled or has no score for the chosen scorer is an error case (status
"error", `log_error:KIND`, the tool's message kept), never a pass or a fail, and reports
no model. A zip is read defensively: member names
that leave the archive, members larger than a cap, a truncated archive or bytes that are
not UTF-8 JSON are refused with one line, before anything is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.bounded import TOO_DEEP, decode_json, json_too_deep, keys_once
from evalpin.core.errors import InputError
from evalpin.core.read.formats import inspect_instrument as instrument
from evalpin.core.read.formats import inspect_plan
from evalpin.core.read.formats.foreign import (
    canonical,
    dataset_hash,
    digests,
    error_text,
    failing_score,
    fixture_hash,
    record_of,
    scrub_args,
    scrub_url,
    settings_digest,
    short_hash,
    summary_of,
)
from evalpin.core.read.formats.probe import ZIP_MAGIC, Probe, ReadOptions
from evalpin.core.read.formats.ziplog import LogZip
from evalpin.core.read.rundata import RunFile, gc_paused
from evalpin.core.reasons import LOG_ERROR, SCORE
from evalpin.core.records import (
    ERROR,
    SCHEMA,
    CaseRecord,
    CaseRow,
    FixturesInfo,
    RunHeader,
    ToolCall,
)

EVAL = "inspect-eval"
JSON = "inspect-json"
KIND = "inspect-ai"
TAIL_CHARS = 800
REPEAT_KEY = "epoch"
PASS_VALUES = frozenset({"C", "1", "1.0", "true", "True"})
FAIL_VALUES = frozenset({"I", "0", "0.0", "false", "False"})
# How inspect records a backend cancellation as a sample's error (its repr).
_CANCELLED = ("CancelledError(", "Cancelled(")


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


class _Limit(msgspec.Struct):
    type: str | None = None


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
    limit: _Limit | None = None
    sandbox: Any = None
    files: Any = None
    setup: Any = None


class _Revision(msgspec.Struct):
    commit: str | None = None
    dirty: bool | None = None


class _Dataset(msgspec.Struct):
    name: str | None = None
    location: str | None = None


class _Config(msgspec.Struct):
    epochs: int | None = None
    epochs_reducer: list[str] | None = None
    limit: Any = None
    sample_id: Any = None


class _Spec(msgspec.Struct):
    model: str | None = None
    solver: str | None = None
    solver_args: dict[str, Any] | None = None
    run_id: str = ""
    created: str = ""
    task: str | None = None
    task_version: Any = None
    dataset: _Dataset = msgspec.field(default_factory=_Dataset)
    model_base_url: str | None = None
    model_generate_config: dict[str, Any] = {}
    model_args: dict[str, Any] = {}
    model_roles: dict[str, Any] | None = None
    task_args: dict[str, Any] | None = None
    sandbox: Any = None
    config: dict[str, Any] = {}
    revision: _Revision | None = None
    packages: dict[str, str] = {}
    scorers: list[dict[str, Any]] | None = None


class _EvalScore(msgspec.Struct):
    name: str
    scorer: str | None = None
    reducer: str | None = None
    params: dict[str, Any] = {}
    metrics: dict[str, Any] = {}


class _Stats(msgspec.Struct):
    completed_at: str | None = None


class _Results(msgspec.Struct):
    scores: list[_EvalScore] = []


class _Step(msgspec.Struct):
    solver: str = ""
    params: Any = None


class _Plan(msgspec.Struct):
    config: dict[str, Any] = {}
    steps: list[_Step] = []
    finish: _Step | None = None


class _Header(msgspec.Struct):
    eval: _Spec
    plan: _Plan | None = None
    status: str = ""
    results: _Results | None = None
    error: Any = None
    stats: _Stats | None = None


class _JsonLog(msgspec.Struct):
    eval: _Spec
    plan: _Plan | None = None
    version: int | None = None
    status: str = ""
    results: _Results | None = None
    error: Any = None
    stats: _Stats | None = None
    samples: list[_Sample] | None = None


_HEADER = msgspec.json.Decoder(_Header)
_SAMPLE = msgspec.json.Decoder(_Sample)
_JSON_LOG = msgspec.json.Decoder(_JsonLog)


# The manifests inspect's `eval_set` writes beside its logs: a listing and the set's
# tasks, not runs. A folder listing leaves them out; named as a run, they are refused
# saying so.
MANIFESTS = frozenset({"logs.json", "eval-set.json"})


def is_manifest(path: Path) -> bool:
    return path.name in MANIFESTS


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
        log = decode_json(_JSON_LOG.decode, probe.data, probe.path)
    except msgspec.MsgspecError as exc:
        raise InputError(probe.path, f"not a valid inspect-ai log: {exc}") from None
    header = _Header(log.eval, log.plan, log.status, log.results, log.error, log.stats)
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
    if json_too_deep(data):
        raise InputError(path, f"zip member {member!r}: {TOO_DEEP}")
    try:
        value = decoder.decode(data)
        keys_once(data, path)
    except msgspec.MsgspecError as exc:
        raise InputError(path, f"zip member {member!r}: {exc}") from None
    except InputError as exc:
        raise InputError(path, f"zip member {member!r}: {exc.message}") from None
    except RecursionError:  # pragma: no cover - refused above
        raise InputError(path, f"zip member {member!r}: {TOO_DEEP}") from None
    return value


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
        names = list(dict.fromkeys(s.scorer or s.name for s in log.header.results.scores))
    if not names:
        for sample in log.samples:
            if sample.scores:
                return list(sample.scores)
    return names


def _keys_of(log: _Log, scorer: str) -> list[str]:
    """The keys of a dict-valued scorer's score (inspect's results list one score per
    key), or [] for a scorer whose score is one value."""
    if log.header.results is not None:
        keys = [
            s.name for s in log.header.results.scores if s.scorer == scorer and s.name != scorer
        ]
        if keys:
            return keys
    for sample in log.samples:
        score = (sample.scores or {}).get(scorer)
        if score is not None and isinstance(score.value, dict):
            return [str(k) for k in score.value]
    return []


def _offered(log: _Log, names: list[str]) -> str:
    """What `--scorer` may name: each scorer, a dict-valued one as NAME.KEY."""
    out = []
    for name in names:
        keys = _keys_of(log, name)
        out.extend(f"{name}.{k}" for k in keys) if keys else out.append(name)
    return ", ".join(out)


def _pick_scorer(probe: Probe, log: _Log, options: ReadOptions) -> tuple[str | None, str | None]:
    """(scorer, key of its dict-valued score or None): `--scorer NAME` or `NAME.KEY`,
    else the first scorer the log lists (and its first key)."""
    names = _scorer_names(log)
    want = options.scorer
    if want is None:
        if not names:
            return None, None
        keys = _keys_of(log, names[0])
        return names[0], keys[0] if keys else None
    if not names:
        return want, None  # a log that lists no scorer: every sample is unscored
    scorer, key = want, None
    if want not in names:
        base, dot, rest = want.rpartition(".")
        if not dot or base not in names:
            raise InputError(
                probe.path, f"no scorer {want!r}; the log offers: {_offered(log, names)}"
            )
        scorer, key = base, rest
    keys = _keys_of(log, scorer)
    if key is None and keys:
        raise InputError(
            probe.path,
            f"scorer {scorer!r} gives a dict of scores; name one of: "
            + ", ".join(f"{scorer}.{k}" for k in keys),
        )
    if key is not None and key not in keys:
        raise InputError(probe.path, f"no scorer {want!r}; the log offers: {_offered(log, names)}")
    return scorer, key


def _failure(sample: _Sample, score: _Score | None, key: str | None) -> tuple[str, Any] | None:
    """(kind, value) for a sample that could not be judged: it errored, was cancelled,
    or has no value for the chosen score; None for a judged one (value: its score)."""
    message = _error_text(sample.error)
    if sample.error is not None:
        kind = "cancelled" if message and message.startswith(_CANCELLED) else "error"
        return kind, None
    if score is None and sample.limit is not None and sample.limit.type == "operator":
        return "cancelled", None
    value = None if score is None else score.value
    if key is not None:
        value = value.get(key) if isinstance(value, dict) else None
    if value is None:
        return "unscored", None
    return None


def _score_value(score: _Score, key: str | None) -> Any:
    value = score.value
    return value.get(key) if key is not None and isinstance(value, dict) else value


def _id_order(value: int | str) -> tuple[int, int | str]:
    return (0, value) if isinstance(value, int) else (1, value)


def _build(probe: Probe, log: _Log, options: ReadOptions, *, what: str, shape: str) -> RunFile:
    spec = log.header.eval
    try:
        config = msgspec.convert(spec.config, _Config)
    except msgspec.ValidationError as exc:
        raise InputError(probe.path, f"not a valid inspect-ai log: eval.config: {exc}") from None
    scorer, key = _pick_scorer(probe, log, options)
    label = f"{scorer}.{key}" if key is not None else scorer
    version = spec.packages.get("inspect_ai")
    results = log.header.results.scores if log.header.results else []
    definition = (
        instrument.scorer_definition(spec.scorers, results, scorer, key) if scorer else None
    )
    grader = None
    if scorer is not None and (definition is not None or version):
        extra = instrument.grader_extra(spec.model_roles, spec.task_args, spec.config)
        grader = short_hash(
            {"scorer": scorer, "key": key, "definition": definition, "inspect_ai": version} | extra
        )
    bounds = instrument.run_bounds(spec.config, spec.sandbox)
    slot = spec.model
    if slot and spec.model_base_url:
        slot += f" @ {scrub_url(spec.model_base_url)}"

    # Generation settings: the plan's (as passed to eval) under the model's own.
    plan = log.header.plan.config if log.header.plan else {}
    generate = {**plan, **spec.model_generate_config}
    settings: dict[str, Any] = {}
    if spec.model:
        settings = {"model": spec.model}
        if spec.model_base_url:
            settings["base_url"] = scrub_url(spec.model_base_url)
        if spec.model_args:
            settings["model_args"] = scrub_args(spec.model_args)
        settings["generate"] = instrument.generate_settings(generate)
        settings.update(bounds)
    digest = settings_digest(settings) if settings else None

    plan_of = log.header.plan or _Plan()
    steps = [(step.solver, step.params) for step in plan_of.steps]
    finish = (plan_of.finish.solver, plan_of.finish.params) if plan_of.finish else None
    solvers = inspect_plan.chain(steps, finish, spec.solver, spec.solver_args)

    rows: list[CaseRow] = []
    details: list[CaseRecord] = []
    cases: dict[str, str] = {}
    samples = sorted(log.samples, key=lambda s: (_id_order(s.id), s.epoch))
    with gc_paused():
        for s in samples:
            case_id = str(s.id)
            fx = cases.get(case_id)
            if fx is None:
                asked = {
                    "input": s.input,
                    "target": s.target,
                    "choices": s.choices,
                    "metadata": s.metadata,
                }
                if solvers is not None:  # the steps decide what the model is asked
                    asked["solver"] = solvers
                for part in ("sandbox", "files", "setup"):  # where and with what it works
                    if getattr(s, part) is not None:
                        asked[part] = getattr(s, part)
                fx = cases[case_id] = fixture_hash(asked)
            calls = [
                ToolCall(c.function, c.arguments)
                for m in s.messages
                if m.role == "assistant" and m.tool_calls
                for c in m.tool_calls
            ]
            text = _completion_text(s.output)
            score = (s.scores or {}).get(scorer) if scorer else None
            failed = _failure(s, score, key)
            status = error = None
            if failed is not None:
                # Not judged: neither a pass nor a fail, and no model to report (an
                # errored sample's output names the provider's model, not what answered).
                passed, reasons, status = False, [LOG_ERROR(failed[0])], ERROR
                error = error_text(_error_text(s.error)) or (
                    f"the log has no {label} score for this sample"
                    if failed[0] == "unscored"
                    else None
                )
                reported = None
            else:
                assert score is not None
                passed, reasons = grade(_score_value(score, key))
                reported = (s.output.model or None) if s.output and text is not None else None
            tdig = cdig = None
            if text is not None:
                tdig, cdig = digests(text, calls)
            # The scorer's explanation where it says more than the completion text.
            tail = score.explanation if score is not None else None
            if not isinstance(tail, str) or tail == text:
                tail = None
            row = CaseRow(
                case_id, passed, s.epoch, fx, grader, slot, cdig, reported, digest, tdig, status,
                failing_score(passed, reasons),
            )  # fmt: skip
            rows.append(row)
            details.append(
                record_of(
                    row,
                    reasons=reasons,
                    tool_names=[c.name for c in calls],
                    seconds=s.total_time,
                    tail=tail[-TAIL_CHARS:] if tail else None,
                    text=text,
                    tools=calls or None,
                    error=error,
                )
            )

    controls = {k: v for k, v in sorted(generate.items()) if v is not None}
    if config.epochs is not None:
        controls["epochs"] = config.epochs
    if config.epochs_reducer:
        controls["epochs_reducer"] = config.epochs_reducer
    controls.update(bounds.get("limits", {}))
    subset = inspect_plan.subset(config.limit, config.sample_id)
    for name, value in (("limit", config.limit), ("sample_id", config.sample_id)):
        if value is not None:
            controls[name] = value
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
        slot={"provider": "inspect-ai", **settings, "settings_digest": digest} if settings else {},
        seeds=sorted({r.seed for r in rows if r.seed is not None}),
        controls=controls,
        env_digest=short_hash(env, 16) if packages else None,
        env=env,
        scorer_commit=commit,
        repeat_key=REPEAT_KEY,
    )
    status = log.header.status
    if log.journal_only:
        complete, why = False, "no header.json: the run stopped before writing its results"
    else:
        complete, why = status == "success", f"status {status or 'not recorded'}"
    finished = (log.header.stats.completed_at if log.header.stats else None) or spec.created
    return RunFile(
        str(probe.path),
        shape,
        header,
        rows,
        summary=summary_of(rows, finished) if complete else None,
        details=details,
        what=f"{what}, scorer {label})" if label else f"{what})",
        complete=complete,
        incomplete_why=why,
        repeat_label=REPEAT_KEY,
        tool_score=inspect_plan.tool_score(
            scorer,
            key,
            log.header.results.scores if log.header.results else [],
            config.epochs,
            config.epochs_reducer,
        ),
        prompt_parts=inspect_plan.parts(steps, finish, spec.solver, spec.solver_args),
        subset=subset,
    )
