"""lm-evaluation-harness `--log_samples` output: `samples_<task>_<date>.jsonl` with its
sibling `results_<date>.json`, or the folder holding them (the newest run is read).

A case is the `doc_id`; lm-eval runs each document once, so the repeat key is 0 and the
random seeds are controls (two runs that differ only in `--seed` compare). The fixture
hash is evalpin's recipe over lm-eval's own `doc_hash`, `prompt_hash` and `target_hash`;
pass is the chosen metric equal to 1.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from evalpin.core.errors import InputError
from evalpin.core.formats import Probe, ReadOptions
from evalpin.core.formats.foreign import (
    canonical,
    dataset_hash,
    digests,
    fixture_hash,
    scrub_args,
    short_hash,
)
from evalpin.core.reasons import SCORE
from evalpin.core.records import SCHEMA, CaseRecord, CaseRow, FixturesInfo, RunHeader
from evalpin.core.runfile import RunFile, gc_paused, problem

NAME = "lm-eval"
REPEAT = 0
_OWN_ID_KEYS = ("id", "_id", "idx", "question_id", "task_id")
_SEEDS = ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")
_CONTROLS = (*_SEEDS, "batch_size", "limit", "gen_kwargs", "device")
_HASHES = ("doc_hash", "prompt_hash", "target_hash")


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


def _listing(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError as exc:
        raise InputError(folder, f"cannot list: {exc.strerror or exc}") from None


def represented_by(path: Path) -> Path | None:
    """A samples file is one task of the run its results file stands for."""
    return path.with_name(f"results_{_date(path.name)}.json") if _is_samples(path) else None


def sniff(probe: Probe) -> bool:
    if probe.is_dir:
        return any(_is_samples(p) or _is_results(p) for p in _listing(probe.path))
    first = probe.first
    if isinstance(first, dict):
        return "doc_id" in first and ("doc_hash" in first or "resps" in first)
    return {"results", "config"} <= probe.keys and "lm_eval_version" in probe.keys


def _inputs(probe: Probe) -> tuple[list[Path], Path | None]:
    """(samples files, results file or None) of the run this path stands for."""
    path = probe.path
    if probe.is_dir:
        entries = sorted(p for p in _listing(path) if _is_samples(p) or _is_results(p))
        dates = sorted({_date(p.name) for p in entries})
        if not dates:
            raise InputError(path, "no lm-eval samples_*.jsonl or results_*.json here")
        date = dates[-1]
        results = path / f"results_{date}.json"
    elif _is_samples(path):
        date = _date(path.name)
        results = path.with_name(f"results_{date}.json")
        return [path], results if results.is_file() else None
    else:
        date, results = _date(path.name), path
    folder = results.parent
    samples = sorted(folder.glob(f"samples_*_{date}.jsonl"))
    if not samples:
        raise InputError(
            path, f"no samples_*_{date}.jsonl beside it (run lm-eval with --log_samples)"
        )
    return samples, results if results.is_file() else None


def _read_results(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        return _RESULTS.decode(path.read_bytes())
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    except msgspec.MsgspecError as exc:
        raise InputError(path, f"not a valid lm-eval results file: {exc}") from None


def _read_samples(path: Path) -> list[dict[str, Any]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    out = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            sample = _ANY.decode(line)
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


def _text(resps: Any) -> str | None:
    if resps is None:
        return None
    if isinstance(resps, list) and all(isinstance(r, str) for r in resps):
        return "\n".join(resps)
    return canonical(resps)


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


def read(probe: Probe, options: ReadOptions) -> RunFile:
    sample_files, results_path = _inputs(probe)
    results = _read_results(results_path)
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    versions = results.get("versions") if isinstance(results.get("versions"), dict) else {}
    version = results.get("lm_eval_version")
    many = len(sample_files) > 1

    rows: list[CaseRow] = []
    details: list[CaseRecord] = []
    cases: dict[str, str] = {}
    graders: dict[str, Any] = {}
    metrics_used: set[str] = set()
    model = config.get("model")
    slot = None
    if model:
        args = scrub_args(config.get("model_args") or "")
        slot = (
            f"{model}({canonical(args) if isinstance(args, dict) else args})"
            if args
            else str(model)
        )
    with gc_paused():
        for path in sample_files:
            task = _task(path.name)
            samples = _read_samples(path)
            if not samples:
                continue
            metrics = [str(m) for m in samples[0].get("metrics") or []]
            metric = options.metric or (metrics[0] if metrics else None)
            if metric is None or (options.metric and metric not in metrics):
                raise InputError(
                    path, f"no metric {metric!r}; the samples have: {', '.join(metrics)}"
                )
            flt = samples[0].get("filter")
            metrics_used.add(f"{metric}, filter {flt}" if flt not in (None, "none") else metric)
            grader = None
            if results and task in versions and version:
                grader = graders[task] = short_hash(
                    {
                        "task": task,
                        "version": versions[task],
                        "metric": metric,
                        "filter": flt,
                        "lm_eval_version": version,
                    }
                )
            for s in samples:
                if s.get("filter") != flt:
                    continue  # one filter's grades; the others are other rubrics
                case_id = f"{task}/{s['doc_id']}" if many else str(s["doc_id"])
                hashes = {k: s.get(k) for k in _HASHES}
                fx = None
                if None not in hashes.values():
                    fx = cases[case_id] = fixture_hash(hashes)
                passed, reasons = _grade(s.get(metric))
                text = _text(s.get("filtered_resps"))
                tdig = cdig = None
                if text is not None:
                    tdig, cdig = digests(text, [])
                rows.append(
                    CaseRow(case_id, passed, REPEAT, fx, grader, slot, cdig, None, text_digest=tdig)
                )
                details.append(
                    CaseRecord(
                        case_id,
                        passed,
                        seed=REPEAT,
                        fixture_hash=fx,
                        grader_version=grader,
                        model_slot=slot,
                        reasons=reasons,
                        tool_names=[],
                        text_digest=tdig,
                        completion_digest=cdig,
                        text=text,
                        source_id=_own_id(s.get("doc")),
                    )
                )

    controls = {k: config[k] for k in _CONTROLS if config.get(k) is not None}
    nshot = results.get("n-shot")
    if isinstance(nshot, dict) and nshot:
        controls["num_fewshot"] = nshot
    configs = results.get("configs") if isinstance(results.get("configs"), dict) else {}
    temps = {
        t: c["generation_kwargs"]["temperature"]
        for t, c in configs.items()
        if isinstance(c, dict)
        and isinstance(c.get("generation_kwargs"), dict)
        and "temperature" in c["generation_kwargs"]
    }
    if len(set(map(canonical, temps.values()))) == 1:
        controls["temperature"] = next(iter(temps.values()))
    env = {k: results[k] for k in ("lm_eval_version", "transformers_version") if results.get(k)}
    tasks = [_task(p.name) for p in sample_files]
    date = _date(sample_files[0].name)
    header = RunHeader(
        schema=SCHEMA,
        run_id=date,
        started_at=_started(results, date),
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
        slot={"provider": "lm-eval", "model": model} if model else {},
        seeds=[REPEAT] if rows else [],
        controls=controls,
        env_digest=short_hash(env, 16) if env else None,
        env=env,
        scorer_commit=results.get("git_hash") or None,
    )
    return RunFile(
        str(probe.path),
        NAME,
        header,
        rows,
        details=details,
        what=f"lm-eval samples ({', '.join(sorted(metrics_used))})",
        complete=results_path is not None,
        incomplete_why=f"no results_{date}.json beside the samples",
        repeat_label="repeat",
    )


def _only(graders: dict[str, Any], tasks: list[str]) -> str | None:
    """One grader version for the run: the task's, or a hash over every task's."""
    if len(graders) != len(tasks):
        return None
    return graders[tasks[0]] if len(tasks) == 1 else short_hash(graders)
