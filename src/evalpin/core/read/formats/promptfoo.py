"""promptfoo's results: `promptfoo eval -o out.json` (and `promptfoo export eval ID`, the
same document), and its JSONL output (`-o out.jsonl`: one result a line, no config).

A file holds one run per (prompt, provider): `--prompt` and `--provider` (a label or an
id) choose one where it holds several, and a choice that is missing or matches none is
an error listing what the file holds (`SeveralRuns`, which history uses to read each).

A case is its test: the test's description where the description names one test, else
`vars:` and a hash of its vars (`test:` and a hash of vars and assertions where tests
share vars); never the test's position, which shifts when a test is added and counts
repeats. The repeat key is the occurrence of the same test (`--repeat N`: 0 to N-1).
Pass is promptfoo's `success`; a result that errored (`failureReason` 2, or an error in
the response) is an error case, `log_error:error` with promptfoo's message, never a fail.
A failed result's reasons are its failing assertions, `assert:TYPE`.

The instrument: the fixture hash is evalpin's recipe over the rendered prompt, the vars
and the assertion list; the grader version is over the test's assertions, threshold and
(for a model-graded assertion) its grading options and provider, with promptfoo's
version; the slot is the provider's id and base URL, its settings digest over the
provider's whole entry, secrets removed. promptfoo records no served model
(`reported_model` is missing, and the run says so), and a `cached: true` answer came
from its cache, not from the backend the run names (counted; the run is at most
`internal`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import msgspec

from evalpin.core.bounded import decode_json
from evalpin.core.errors import InputError
from evalpin.core.read.formats.foreign import (
    dataset_hash,
    digests,
    error_text,
    fixture_hash,
    record_of,
    scrub_url,
    settings_digest,
    short_hash,
    summary_of,
)
from evalpin.core.read.formats.probe import Probe, ReadOptions
from evalpin.core.read.formats.promptfoo_doc import (
    DOC,
    NAMED,
    RESULT,
    Doc,
    Pair,
    Response,
    Results,
    TestCase,
    case_ids,
    choose,
    expanded,
    failing_types,
    identity,
    runs_of,
    test_of,
    text_of,
    vars_text,
)
from evalpin.core.read.rundata import RunFile, ToolScore, gc_paused, problem
from evalpin.core.reasons import ASSERT, LOG_ERROR
from evalpin.core.records import ERROR, SCHEMA, CaseRecord, CaseRow, FixturesInfo, RunHeader

NAME = "promptfoo"
JSONL = "promptfoo-jsonl"
KIND = "promptfoo"
REPEAT_KEY = "repeat"
TAIL_CHARS = 800
ERRORED = 2  # promptfoo's ResultFailureReason.ERROR
# Config keys that hold a provider's endpoint.
_URL_KEYS = ("apiBaseUrl", "apiBaseURL", "baseUrl", "baseURL", "base_url", "apiHost", "url")
# Providers that answer on this machine (no endpoint to pin): promptfoo's echo, a
# script or a program.
LOCAL = re.compile(
    r"^(echo$|exec:|python:|golang:|ruby:|file://|sequence|script:)|\.(py|js|mjs|ts)$"
)
# Sampling settings in a provider's config, recorded as the run's controls.
_CONTROL_KEYS = ("temperature", "max_tokens", "max_completion_tokens", "top_p", "seed")
# Assertion types graded by a model (the test's grading provider decides them).
_MODEL_GRADED = re.compile(
    r"^(not-)?(llm-rubric|g-eval|model-graded-.*|factuality|answer-relevance|context-.*"
    r"|select-best|similar.*|classifier|moderation|search-rubric|pi|conversation-relevance)$"
)
# Names that may hold a credential (as foreign.py's), but not token counts.
_SECRET = re.compile(r"key|token|secret|passw|auth|cred|bearer|cookie|session", re.I)
_COUNT = re.compile(r"tokens$|tokens?_?(limit|count)", re.I)


def sniff(probe: Probe) -> bool:
    if probe.is_dir:
        return False
    return {"evalId", "results", "config"} <= probe.keys


def sniff_jsonl(probe: Probe) -> bool:
    first = probe.first
    return (
        not probe.is_dir
        and isinstance(first, dict)
        and {"promptIdx", "testCase", "success"} <= first.keys()
    )


def read(probe: Probe, options: ReadOptions) -> RunFile:
    try:
        doc = decode_json(DOC.decode, probe.data, probe.path)
    except msgspec.MsgspecError as exc:
        raise InputError(probe.path, f"not a valid promptfoo output: {exc}") from None
    return _build(probe, doc, options, shape=NAME, what="promptfoo output")


def read_jsonl(probe: Probe, options: ReadOptions) -> RunFile:
    results = []
    for lineno, line in enumerate(probe.data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            results.append(decode_json(RESULT.decode, line, probe.path, lineno))
        except msgspec.MsgspecError as exc:
            raise InputError(probe.path, problem(exc, line), lineno) from None
    doc = Doc(Results(results=results))
    return _build(probe, doc, options, shape=JSONL, what="promptfoo results (JSONL)")


# -- the instrument ----------------------------------------------------------------


def _secret(name: Any) -> bool:
    name = str(name)
    return bool(_SECRET.search(name)) and not _COUNT.search(name)


def scrub(value: Any) -> Any:
    """A provider's entry or options without anything credential-like: keys named like
    one dropped (not token counts such as max_tokens), URLs without user info or query,
    promptfoo's own `[REDACTED]` placeholders dropped."""
    if isinstance(value, dict):
        return {
            str(k): scrub(v)
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
            if not _secret(k) and v != "[REDACTED]"
        }
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str) and "://" in value:
        return scrub_url(value)
    return value


def _provider_entry(config: dict[str, Any], pair: Pair) -> dict[str, Any] | None:
    """The config's entry for the pair's provider (by label, else by id); None where the
    file does not list it (the JSONL output, a providers file)."""
    listed = config.get("providers")
    if isinstance(listed, str | dict):
        listed = [listed]
    if not isinstance(listed, list):
        return None
    entries: list[dict[str, Any]] = []
    for item in listed:
        if isinstance(item, str):
            entries.append({"id": item})
        elif isinstance(item, dict) and "id" not in item and len(item) == 1:
            [(pid, opts)] = item.items()  # the `- openai:chat:x: {config: ..}` form
            entries.append({"id": pid, **(opts if isinstance(opts, dict) else {})})
        elif isinstance(item, dict):
            entries.append(item)
    for want, key in ((pair.provider_label, "label"), (pair.provider_id, "id")):
        if want is None:
            continue
        found = [e for e in entries if e.get(key) == want]
        if len(found) == 1 or (found and key == "id" and not pair.provider_label):
            return found[0]
    return None


def _base_url(entry: dict[str, Any] | None) -> str | None:
    config = entry.get("config") if entry else None
    if not isinstance(config, dict):
        return None
    for key in _URL_KEYS:
        if isinstance(config.get(key), str) and config[key]:
            return scrub_url(config[key])
    return None


def _grader(test: TestCase, version: str | None) -> str:
    """The grader version of one test: its assertions and threshold, its grading
    options where an assertion is model-graded, and promptfoo's version."""
    asserts = test.assertions if isinstance(test.assertions, list) else []
    graded = any(
        isinstance(a, dict) and _MODEL_GRADED.match(str(a.get("type", ""))) for a in asserts
    )
    return short_hash(
        {
            "assert": scrub(test.assertions),
            "threshold": test.threshold,
            "grading": scrub(test.options) if graded else None,
            "promptfoo": version,
        }
    )


# -- the run -----------------------------------------------------------------------


def _build(probe: Probe, doc: Doc, options: ReadOptions, *, shape: str, what: str) -> RunFile:
    pairs = runs_of(doc)
    if not pairs:
        raise InputError(probe.path, "promptfoo output with no results")
    pair = choose(probe, pairs, options)
    version = doc.metadata.get("promptfooVersion")
    ids = case_ids(doc)
    entry = _provider_entry(doc.config, pair)
    url = _base_url(entry)
    slot = (pair.provider_id or None) and (
        f"{pair.provider_id} @ {url}" if url else pair.provider_id
    )
    settings = None
    if entry is not None:
        settings = scrub({k: v for k, v in entry.items() if k != "label"})
    digest = settings_digest(settings) if settings is not None else None

    rows: list[CaseRow] = []
    details: list[CaseRecord] = []
    cases: dict[str, str] = {}
    seen: Counter[str] = Counter()
    cached = 0
    results = sorted(pair.results, key=lambda r: -1 if r.test_idx is None else r.test_idx)
    with gc_paused():
        for r in results:
            test = test_of(r)
            case_id = ids[identity(test)]
            repeat = seen[case_id]
            seen[case_id] += 1
            prompt = r.prompt.raw if r.prompt is not None else None
            fx = cases.setdefault(
                case_id,
                fixture_hash({"prompt": prompt, "vars": test.vars, "assert": test.assertions}),
            )
            grader = _grader(test, version)
            response = r.response or Response()
            text = text_of(response.output)
            status = error = None
            if r.failure_reason == ERRORED or (r.failure_reason is None and response.error):
                passed, reasons, status = False, [LOG_ERROR("error")], ERROR
                error = error_text(text_of(r.error) or text_of(response.error) or "errored")
            else:
                grading = r.grading_result
                passed = bool(r.success if r.success is not None else grading and grading.passed)
                reasons = []
                if not passed and grading is not None:
                    failing = failing_types(grading.component_results)
                    # none failed one by one: the test's weighted score missed its threshold
                    reasons = [ASSERT(t) for t in dict.fromkeys(failing)] or [ASSERT("threshold")]
            tdig = cdig = None
            if text is not None and status is None:
                tdig, cdig = digests(text, [])
            tail = None
            if not passed and status is None and r.grading_result is not None:
                tail = text_of(r.grading_result.reason)
            is_cached = bool(response.cached) and status is None
            cached += is_cached
            row = CaseRow(
                case_id, passed, repeat, fx, grader, slot, cdig, None, digest, tdig, status
            )
            rows.append(row)
            details.append(
                record_of(
                    row,
                    reasons=reasons,
                    tool_names=[],
                    seconds=None if r.latency_ms is None else r.latency_ms / 1000,
                    tail=tail[-TAIL_CHARS:] if tail else None,
                    text=text,
                    error=error,
                    source_id=None if case_id == test.description else vars_text(test),
                    cached=True if is_cached else None,
                )
            )

    # The run's grader version: what every test shares (promptfoo's version and the
    # config's defaultTest); each test's own assertions are in its rows' grader version
    # and fixture hash, so a run of part of the tests keeps the run's.
    default = doc.config.get("defaultTest")
    shared = (
        {k: default.get(k) for k in ("assert", "options", "threshold")}
        if isinstance(default, dict)
        else None
    )
    run_grader = short_hash({"promptfoo": version, "defaultTest": scrub(shared)})
    config = entry.get("config") if entry and isinstance(entry.get("config"), dict) else {}
    controls = {k: config[k] for k in _CONTROL_KEYS if config.get(k) is not None}
    runtime = doc.runtime_options or {}
    for key in ("repeat", "cache"):
        if runtime.get(key) is not None:
            controls[key] = runtime[key]
    env = {
        k: doc.metadata[k]
        for k in ("promptfooVersion", "nodeVersion", "platform", "arch")
        if doc.metadata.get(k)
    }
    started = doc.metadata.get("evaluationCreatedAt") or doc.results.timestamp or ""
    slot_info: dict[str, Any] = {}
    if pair.provider_id:
        slot_info = {"provider": "promptfoo", "id": pair.provider_id}
        if pair.provider_label:
            slot_info["label"] = pair.provider_label
        if url:
            slot_info["base_url"] = url
        if settings is not None:
            slot_info["entry"] = settings
            slot_info["settings_digest"] = digest
    description = doc.config.get("description")
    header = RunHeader(
        schema=SCHEMA,
        run_id=doc.eval_id or "",
        started_at=str(started),
        fixtures=FixturesInfo(
            path=str(probe.path),
            kind=KIND,
            # One track per prompt: a config's prompts are alternatives, not nights.
            dataset_id=f"{description} [{_short(pair.prompt_label)}]"
            if isinstance(description, str) and description
            else _short(pair.prompt_label),
            dataset_hash=dataset_hash(cases),
        ),
        grader_version=run_grader,
        model_slot=slot,
        slot=slot_info,
        seeds=sorted({r.seed for r in rows if r.seed is not None}),
        controls=controls,
        env_digest=short_hash(env, 16) if version else None,
        env=env,
        repeat_key=REPEAT_KEY,
    )
    notes = _notes(pair, entry, url, cached, len(rows), shape)
    subset = _subset(doc, len(cases))
    named = f"prompt {_short(pair.prompt_label)}, provider {pair.provider}"
    return RunFile(
        str(probe.path),
        shape,
        header,
        rows,
        summary=summary_of(rows, str(started)),
        details=details,
        what=f"{what} ({named})",
        complete=True,
        repeat_label=REPEAT_KEY,
        notes=notes,
        tool_score=_own_counts(pair, rows, notes),
        cached=cached,
        subset=subset,
    )


def _short(label: str | None) -> str:
    label = (label or "<unnamed prompt>").replace("\n", " ")
    return label if len(label) <= NAMED else label[: NAMED - 3] + "..."


def _notes(
    pair: Pair, entry: dict[str, Any] | None, url: str | None, cached: int, n: int, shape: str
) -> list[str]:
    notes = [
        "reported_model missing: promptfoo records no model name as served, so a server "
        "swapped under one provider id shows only through the base URL in its config"
    ]
    if entry is None:
        notes.append(
            "provider config not in the file"
            f" ({'JSONL output' if shape == JSONL else 'not listed'}): the slot is the"
            " provider id alone, its settings not checked"
        )
    elif url is None and not LOCAL.match(pair.provider_id or ""):
        notes.append(
            "no base URL in the provider config: promptfoo took it from the environment or"
            " its default, so another server under this provider id cannot be seen"
        )
    if cached:
        notes.append(
            f"{cached} of {n} results were answered from promptfoo's cache (cached: true):"
            " recorded by an earlier run, not a measurement of this run's backend"
        )
    return notes


def _subset(doc: Doc, found: int) -> str | None:
    """A run of fewer tests than its config lists (`--filter-failing`, `--filter-first-n`,
    a pattern): the config's tests are in the file."""
    tests = doc.config.get("tests")
    if not isinstance(tests, list) or doc.config.get("scenarios"):
        return None
    listed = sum(expanded(t) for t in tests if isinstance(t, dict))
    if 0 < found < listed:
        return (
            f"{found} of the config's {listed} tests (a promptfoo filter such as --filter-failing)"
        )
    return None


def _own_counts(pair: Pair, rows: list[CaseRow], notes: list[str]) -> ToolScore | None:
    """promptfoo's own counts for this (prompt, provider), beside evalpin's: its pass
    rate counts errors in the denominator. Where the counts differ from the rows read, a
    note says so."""
    metrics = pair.entry.metrics if pair.entry is not None else None
    if not metrics:
        return None
    try:
        passed, failed, errors = (
            int(metrics[k]) for k in ("testPassCount", "testFailCount", "testErrorCount")
        )
    except (KeyError, TypeError, ValueError):
        return None
    mine = (
        sum(r.passed and not r.errored for r in rows),
        sum(not r.passed and not r.errored for r in rows),
        sum(r.errored for r in rows),
    )
    if mine != (passed, failed, errors):
        notes.append(
            f"promptfoo's own counts ({passed} passed, {failed} failed, {errors} errors) differ"
            f" from the results read ({mine[0]}, {mine[1]}, {mine[2]})"
        )
    total = passed + failed + errors
    return ToolScore(
        "promptfoo pass rate",
        passed / total if total else None,
        f"promptfoo: {passed} passed, {failed} failed, {errors} errors; its rate counts"
        " errors in the denominator, evalpin's is over judged results only",
    )
