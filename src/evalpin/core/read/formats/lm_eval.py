"""lm-evaluation-harness `--log_samples` output: `samples_<task>_<date>.jsonl` with its
sibling `results_<date>.json` (the results file stands for its run), as lm-eval lays
them out under `--output_path`: `<output_path>/<model>/` (a folder listing looks in
that model subfolder; a folder given as one run must hold one).

A case is `TASK/DOC_ID` (the same in a one-task and a many-task run, so one task's
samples join across them; the doc's own id is kept as `source_id`). lm-eval runs each
document once, so the repeat key is 0 and the random seeds are controls (two runs that
differ only in `--seed` compare). The fixture hash is evalpin's recipe over lm-eval's own
`doc_hash`, `prompt_hash` and `target_hash`; pass is the chosen metric equal to 1, under
the chosen filter (`--metric`, `--filter`: NAME for the tasks that have it, TASK=NAME for
one; else each task's first). A sample without the chosen metric is an error case
(`log_error:unscored`), never a fail.

The instrument is what the results file records as deciding the grade: the model, its
arguments and each task's generation kwargs (the slot settings digest, per task); the
task's version, its `metric_list` entry for the chosen metric, its `filter_list` entry
for the chosen filter and the config parts that score (output type, target, choices,
process_results), with lm-eval's version (the grader version, per task).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.bounded import MAX_DOCUMENT_BYTES, decode_json, read_bounded
from evalpin.core.errors import InputError
from evalpin.core.read.formats.foreign import (
    canonical,
    dataset_hash,
    digests,
    failing_score,
    fixture_hash,
    record_of,
    scrub_args,
    settings_digest,
    short_hash,
    summary_of,
)
from evalpin.core.read.formats.probe import Probe, ReadOptions
from evalpin.core.read.rundata import RunFile, gc_paused, problem
from evalpin.core.reasons import LOG_ERROR, SCORE
from evalpin.core.records import ERROR, SCHEMA, CaseRecord, CaseRow, FixturesInfo, RunHeader

NAME = "lm-eval"
REPEAT = 0
REPEAT_KEY = "repeat"
NO_FILTER = "none"
_OWN_ID_KEYS = ("id", "_id", "idx", "question_id", "task_id")
_SEEDS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
_CONTROLS = (*_SEEDS, "batch_size", "limit", "gen_kwargs", "device")
_HASHES = ("doc_hash", "prompt_hash", "target_hash")
# The parts of a task's config that decide a grade, beside its metric and filter entries
# (the prompt is pinned by the fixture hash, generation by the slot settings).
_GRADE_KEYS = (
    "output_type",
    "doc_to_target",
    "doc_to_choice",
    "process_results",
    "target_delimiter",
    "repeats",
)


_ANY = msgspec.json.Decoder()
_RESULTS = msgspec.json.Decoder(dict[str, Any])


def _date(name: str) -> str:
    return name[name.rfind("_") + 1 :].removesuffix(".jsonl").removesuffix(".json")


def _task(name: str) -> str:
    return name[name.find("_") + 1 : name.rfind("_")]


def _is_samples(path: Path) -> bool:
    return path.name.startswith("samples_") and path.suffix == ".jsonl"


def _is_results(path: Path) -> bool:
    return path.name.startswith("results_") and path.suffix == ".json"


def represented_by(path: Path) -> Path | None:
    """A samples file is one task of the run its results file stands for."""
    return path.with_name(f"results_{_date(path.name)}.json") if _is_samples(path) else None


def is_run_folder(path: Path) -> bool:
    """Whether a subfolder holds lm-eval runs (`<output_path>/<model>/`)."""
    try:
        return any(_is_samples(p) or _is_results(p) for p in path.iterdir())
    except OSError:
        return False


def sniff(probe: Probe) -> bool:
    if probe.is_dir:
        return False  # a folder stands for the run it holds (`formats.one_run`)
    first = probe.first
    if isinstance(first, dict) and "doc_id" in first:
        return "doc_hash" in first or "resps" in first
    # A results document (indented, or written on one line).
    return {"results", "config"} <= probe.keys and "lm_eval_version" in probe.keys


def _inputs(probe: Probe) -> tuple[list[Path], Path | None]:
    """(samples files, results file or None) of the run this path stands for."""
    path = probe.path
    if _is_samples(path):
        date = _date(path.name)
        results = path.with_name(f"results_{date}.json")
        return [path], results if results.is_file() else None
    date, results = _date(path.name), path
    samples = sorted(results.parent.glob(f"samples_*_{date}.jsonl"))
    if not samples:
        raise InputError(
            path, f"no samples_*_{date}.jsonl beside it (run lm-eval with --log_samples)"
        )
    return samples, results


def _read_results(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    data = read_bounded(path, MAX_DOCUMENT_BYTES)
    try:
        return decode_json(_RESULTS.decode, data, path)
    except msgspec.MsgspecError as exc:
        raise InputError(path, f"not a valid lm-eval results file: {exc}") from None


def _read_samples(path: Path) -> list[dict[str, Any]]:
    data = read_bounded(path, MAX_DOCUMENT_BYTES)
    out = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            sample = decode_json(_ANY.decode, line, path, lineno)
        except msgspec.MsgspecError as exc:
            raise InputError(path, problem(exc, line), lineno) from None
        if not isinstance(sample, dict) or not isinstance(sample.get("doc_id"), int | str):
            raise InputError(path, "not an lm-eval sample: no doc_id", lineno)
        out.append(sample)
    return out


def _grade(value: Any) -> tuple[bool, list[str]]:
    """Pass is the metric equal to 1; any other value fails, saying it unless it is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False, [SCORE(canonical(value))]
    if value == 1:
        return True, []
    return False, [] if value == 0 else [SCORE(str(value))]


def _strings(value: Any) -> list[str] | None:
    """The strings of a (nested) list of strings, in order; None when it holds others."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            inner = _strings(v)
            if inner is None:
                return None
            out.extend(inner)
        return out
    return None


def _text(resps: Any) -> str | None:
    """What the model said: its responses' text, or their JSON (log-likelihoods)."""
    if resps is None:
        return None
    texts = _strings(resps)
    return "\n".join(texts) if texts is not None else canonical(resps)


def _own_id(doc: Any) -> str | None:
    if isinstance(doc, dict):
        for key in _OWN_ID_KEYS:
            if doc.get(key) is not None:
                return str(doc[key])
    return None


def _started(results: dict[str, Any], date: str) -> str:
    stamp = results.get("date")
    if isinstance(stamp, int | float):
        return datetime.fromtimestamp(stamp, tz=UTC).isoformat()
    try:  # the file name's date: 2026-12-01T03-01-02.123456
        day, _, clock = date.partition("T")
        return datetime.fromisoformat(f"{day}T{clock.replace('-', ':')}").isoformat()
    except ValueError:
        return ""


def _finished(results: dict[str, Any], started: str) -> str:
    try:
        took = float(results.get("total_evaluation_time_seconds"))  # type: ignore[arg-type]
        return (datetime.fromisoformat(started) + timedelta(seconds=took)).isoformat()
    except (TypeError, ValueError):
        return started


def _offered(values: list[Any]) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values if v is not None))


class _Choice:
    """`--metric` or `--filter` applied to a run's tasks: TASK=NAME for one task, NAME
    for every task that has it, else the task's first; a name no task has is an error."""

    def __init__(self, options: ReadOptions, what: str, tasks: list[str], where: Path) -> None:
        self.what = what
        self.plain, self.per_task = options.choices(what)
        self.offers: dict[str, list[str]] = {}
        self.where = where
        unknown = sorted(set(self.per_task) - set(tasks))
        if unknown:
            raise InputError(
                where,
                f"--{what} {unknown[0]}=...: no task {unknown[0]!r} in this run;"
                f" it has: {', '.join(tasks)}",
            )

    def pick(self, task: str, offered: list[str], path: Path) -> str | None:
        self.offers[task] = offered
        want = self.per_task.get(task)
        if want is not None:
            if want not in offered:
                raise InputError(
                    path,
                    f"no {self.what} {want!r} for task {task}; it has: {', '.join(offered)}",
                )
            return want
        found = next((name for name in self.plain if name in offered), None)
        return found if found is not None else (offered[0] if offered else None)

    def check(self) -> None:
        """Every plain name applied to some task, else InputError saying what is there."""
        for name in self.plain:
            if not any(name in offered for offered in self.offers.values()):
                listed = "; ".join(
                    f"{task}: {', '.join(offered) or 'none'}"
                    for task, offered in self.offers.items()
                )
                raise InputError(
                    self.where, f"no task has {self.what} {name!r}; the log offers: {listed}"
                )


def _entry(entries: Any, key: str, name: str | None) -> Any:
    if not isinstance(entries, list):
        return None
    return next((e for e in entries if isinstance(e, dict) and e.get(key) == name), None)


def read(probe: Probe, options: ReadOptions) -> RunFile:
    sample_files, results_path = _inputs(probe)
    results = _read_results(results_path)
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    versions = results.get("versions") if isinstance(results.get("versions"), dict) else {}
    configs = results.get("configs") if isinstance(results.get("configs"), dict) else {}
    version = results.get("lm_eval_version")
    tasks = [_task(p.name) for p in sample_files]
    metrics_of = _Choice(options, "metric", tasks, probe.path)
    filters_of = _Choice(options, "filter", tasks, probe.path)

    rows: list[CaseRow] = []
    details: list[CaseRecord] = []
    cases: dict[str, str] = {}
    graders: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    used: list[str] = []
    model = config.get("model")
    slot = None
    args: Any = None
    if model:
        args = scrub_args(config.get("model_args") or "")
        slot = (
            f"{model}({canonical(args) if isinstance(args, dict) else args})"
            if args
            else str(model)
        )
    with gc_paused():
        for path, task in zip(sample_files, tasks, strict=True):
            samples = _read_samples(path)
            if not samples:
                continue
            flt = filters_of.pick(task, _offered([s.get("filter") for s in samples]), path)
            mine = [s for s in samples if s.get("filter") == flt] if flt is not None else samples
            metric = metrics_of.pick(
                task, _offered([m for s in mine for m in s.get("metrics") or []]), path
            )
            used.append(
                f"{task}: {metric}" + (f", filter {flt}" if flt not in (None, NO_FILTER) else "")
                if len(tasks) > 1
                else f"{metric}" + (f", filter {flt}" if flt not in (None, NO_FILTER) else "")
            )
            cfg = configs.get(task) if isinstance(configs.get(task), dict) else {}
            grader = None
            if results and task in versions and version:
                grader = graders[task] = short_hash(
                    {
                        "task": task,
                        "version": versions[task],
                        "metric": metric,
                        "filter": flt,
                        "metric_entry": _entry(cfg.get("metric_list"), "metric", metric),
                        "filter_entry": _entry(cfg.get("filter_list"), "name", flt),
                        "config": {k: cfg[k] for k in _GRADE_KEYS if k in cfg},
                        "lm_eval_version": version,
                    }
                )
            digest = None
            if model:
                settings[task] = {
                    "model": model,
                    "model_args": args or None,
                    "gen_kwargs": config.get("gen_kwargs") or None,
                    "generation_kwargs": cfg.get("generation_kwargs"),
                }
                digest = settings_digest(settings[task])
            for s in mine:
                case_id = f"{task}/{s['doc_id']}"
                hashes = {k: s.get(k) for k in _HASHES}
                fx = None
                if None not in hashes.values():
                    fx = cases[case_id] = fixture_hash(hashes)
                status = error = None
                if metric is None or s.get(metric) is None:
                    passed, reasons, status = False, [LOG_ERROR("unscored")], ERROR
                    error = f"the sample has no {metric or 'metric'} value"
                else:
                    passed, reasons = _grade(s.get(metric))
                text = _text(s.get("resps"))
                filtered = _text(s.get("filtered_resps"))
                tail = None
                if filtered is not None and (flt not in (None, NO_FILTER) or filtered != text):
                    tail = f"filtered ({flt or NO_FILTER}): {filtered}"
                tdig = cdig = None
                if text is not None:
                    tdig, cdig = digests(text, [])
                row = CaseRow(
                    case_id, passed, REPEAT, fx, grader, slot, cdig, None, digest, tdig, status,
                    failing_score(passed, reasons),
                )  # fmt: skip
                rows.append(row)
                details.append(
                    record_of(
                        row,
                        reasons=reasons,
                        tool_names=[],
                        tail=tail,
                        text=text,
                        error=error,
                        source_id=_own_id(s.get("doc")),
                    )
                )
    metrics_of.check()
    filters_of.check()

    controls = {k: config[k] for k in _CONTROLS if config.get(k) is not None}
    nshot = results.get("n-shot")
    if isinstance(nshot, dict) and nshot:
        controls["num_fewshot"] = nshot
    temps = {
        t: c["generation_kwargs"]["temperature"]
        for t, c in configs.items()
        if t in tasks
        and isinstance(c, dict)
        and isinstance(c.get("generation_kwargs"), dict)
        and "temperature" in c["generation_kwargs"]
    }
    if len(set(map(canonical, temps.values()))) == 1:
        controls["temperature"] = next(iter(temps.values()))
    env = {k: results[k] for k in ("lm_eval_version", "transformers_version") if results.get(k)}
    date = _date(sample_files[0].name)
    digests_by_task = {t: settings_digest(v) for t, v in settings.items()}
    run_digest = (
        None
        if not settings
        else next(iter(digests_by_task.values()))
        if len(set(digests_by_task.values())) == 1
        else short_hash(digests_by_task, 16)
    )
    slot_info: dict[str, Any] = {}
    if model:
        slot_info = {"provider": "lm-eval", "model": model}
        if args:
            slot_info["model_args"] = args
        if config.get("gen_kwargs"):
            slot_info["gen_kwargs"] = config["gen_kwargs"]
        gen = {t: v["generation_kwargs"] for t, v in settings.items() if v["generation_kwargs"]}
        if gen:
            slot_info["generation_kwargs"] = gen
        slot_info["settings_digest"] = run_digest
    started = _started(results, date)
    header = RunHeader(
        schema=SCHEMA,
        run_id=date,
        started_at=started,
        fixtures=FixturesInfo(
            path=",".join(tasks),
            kind=NAME,
            dataset_id=",".join(tasks),
            dataset_version=",".join(str(versions[t]) for t in tasks if t in versions) or None,
            dataset_hash=dataset_hash(cases)
            if len(cases) == len({r.case_id for r in rows})
            else None,
        ),
        grader_version=_only(graders, tasks),
        model_slot=slot,
        slot=slot_info,
        seeds=[REPEAT] if rows else [],
        controls=controls,
        env_digest=short_hash(env, 16) if env else None,
        env=env,
        scorer_commit=results.get("git_hash") or None,
        repeat_key=REPEAT_KEY,
    )
    complete = results_path is not None
    return RunFile(
        str(probe.path),
        NAME,
        header,
        rows,
        summary=summary_of(rows, _finished(results, started)) if complete else None,
        details=details,
        what=f"lm-eval samples ({'; '.join(used)})",
        complete=complete,
        incomplete_why=f"no results_{date}.json beside the samples",
        repeat_label=REPEAT_KEY,
        prompt_parts=prompt_parts(results, tasks),
        subset=subset(results, config, tasks),
    )


def _per_task(value: Any, tasks: list[str]) -> Any:
    """A per-task map of the run's tasks; the one value for a one-task run."""
    if not isinstance(value, dict):
        return value
    mine = {t: value[t] for t in tasks if t in value}
    return next(iter(mine.values())) if len(mine) == 1 else mine or None


def prompt_parts(results: dict[str, Any], tasks: list[str]) -> dict[str, Any]:
    """What lm-eval records of how it built each prompt beside the documents: the
    few-shot count, the chat template (its sha256, cut), the system instruction, and
    few-shot examples as turns. Each moves `prompt_hash`, so the fixture hash; named
    here, a refusal says which. Keys a results file lacks (older lm-eval) stay out."""
    parts: dict[str, Any] = {}
    if "n-shot" in results:
        parts["num_fewshot"] = _per_task(results["n-shot"], tasks)
    if "chat_template_sha" in results:
        sha = results["chat_template_sha"]
        parts["chat_template"] = sha[:12] if isinstance(sha, str) else sha
    if "system_instruction" in results:
        parts["system_instruction"] = results["system_instruction"]
    if "fewshot_as_multiturn" in results:
        parts["fewshot_as_multiturn"] = results["fewshot_as_multiturn"]
    return parts


def subset(results: dict[str, Any], config: dict[str, Any], tasks: list[str]) -> str | None:
    """`--limit` or `--samples`: the tasks whose effective sample count is below their
    original one, as lm-eval's `n-samples` records it."""
    counts = results.get("n-samples")
    if not isinstance(counts, dict):
        return None
    short = [
        f"{t}: {c['effective']} of {c['original']} documents"
        for t in tasks
        if isinstance(c := counts.get(t), dict)
        and isinstance(c.get("effective"), int)
        and isinstance(c.get("original"), int)
        and c["effective"] < c["original"]
    ]
    if not short:
        return None
    limit = config.get("limit")
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)  # lm-eval records `--limit 2` as 2.0
    how = f"limit {limit}" if limit is not None else "chosen samples (--samples)"
    return f"{how} ({'; '.join(short)})"


def _only(graders: dict[str, Any], tasks: list[str]) -> str | None:
    """One grader version for the run: the task's, or a hash over every task's."""
    if len(graders) != len(tasks):
        return None
    return graders[tasks[0]] if len(tasks) == 1 else short_hash(graders)
