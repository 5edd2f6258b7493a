"""Pins for other tools' logs, computed with evalpin's own recipes so that they mean
what evalpin's pins mean (and a missing input gives a missing pin, never a default)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from evalpin.core.records import CaseRecord, CaseRow, Completion, Summary, ToolCall

# What `json.dumps(..., ensure_ascii=True)` uses for a string.
_encode = json.encoder.encode_basestring_ascii

# Argument names that may hold a credential: dropped from a model slot, never recorded.
_SECRET = re.compile(r"key|token|secret|passw|auth|cred|bearer|cookie|session", re.I)


def canonical(obj: Any) -> str:
    """evalpin's fixture-hash serialisation (the common recipe other tools use)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def fixture_hash(case: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(case).encode()).hexdigest()[:16]


def dataset_hash(cases: dict[str, str]) -> str | None:
    """sha256 over every case's id and fixture hash: any case edited, added or dropped
    moves it. None for a log with no cases."""
    if not cases:
        return None
    return hashlib.sha256(canonical(sorted(cases.items())).encode()).hexdigest()


def record_of(row: CaseRow, **detail: Any) -> CaseRecord:
    """A foreign sample's full record: its lean row's fields, and what only the detail
    view reads (`detail`: reasons, tool names, tail, text...)."""
    return CaseRecord(
        row.case_id,
        row.passed,
        seed=row.seed,
        fixture_hash=row.fixture_hash,
        grader_version=row.grader_version,
        model_slot=row.model_slot,
        text_digest=row.text_digest,
        completion_digest=row.completion_digest,
        reported_model=row.reported_model,
        slot_settings=row.slot_settings,
        status=row.status,
        **detail,
    )


def short_hash(obj: Any, n: int = 12) -> str:
    return hashlib.sha256(canonical(obj).encode()).hexdigest()[:n]


def digests(text: str, tools: list[ToolCall]) -> tuple[str, str]:
    """(text digest, completion digest), exactly as evalpin's runner computes them.

    A completion without tool calls or files (most samples) serialises to a fixed frame
    around the text: built directly, it skips a `json.dumps` of a dict per sample."""
    text_digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]  # as pins.text_digest
    if tools:
        from evalpin.core.instrument.pins import completion_digest  # imports subprocess: only here

        return text_digest, completion_digest(Completion(text=text, tools=tools))
    payload = '{"files":{},"text":' + _encode(text) + ',"tools":[]}'
    return text_digest, hashlib.sha256(payload.encode()).hexdigest()[:12]


def scrub_url(url: str) -> str:
    """A base URL without user info, query or fragment (where keys hide)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def scrub_args(args: Any) -> Any:
    """Model arguments without anything key-like: a `k=v,k=v` string or a mapping; keys
    whose name looks like a credential are dropped, URLs lose user info and query."""
    if isinstance(args, dict):
        return {k: scrub_args(v) for k, v in sorted(args.items()) if not _SECRET.search(str(k))}
    if isinstance(args, list):
        return [scrub_args(v) for v in args]
    if isinstance(args, str):
        if "://" in args and "=" not in args.split("://", 1)[0]:
            return scrub_url(args)
        kept = []
        for part in args.split(","):
            name, eq, value = part.partition("=")
            if part and not _SECRET.search(name):
                kept.append(f"{name}{eq}{scrub_url(value)}" if "://" in value else part)
        return ",".join(kept)
    return args


ERROR_CHARS = 2000  # of another tool's error message, kept on the case record


def error_text(message: str | None) -> str | None:
    """A tool's error message as a record keeps it: its last `ERROR_CHARS` characters
    (where a traceback says what went wrong)."""
    if not message:
        return None
    return message if len(message) <= ERROR_CHARS else "..." + message[-(ERROR_CHARS - 3) :]


def settings_digest(settings: dict[str, Any]) -> str:
    """The slot settings digest of a foreign log: evalpin's own length, over the
    generation settings the tool recorded (model, its arguments, sampling)."""
    return short_hash(settings, 16)


def summary_of(rows: list[CaseRow], finished_at: str) -> Summary:
    """The trailer a finished foreign log stands for: errors counted apart, each repeat's
    pass rate over its judged cases (as the tool's own accuracy counts them)."""
    judged: dict[int | None, list[bool]] = {}
    errors = 0
    for r in rows:
        if r.errored:
            errors += 1
        else:
            judged.setdefault(r.seed, []).append(r.passed)
    rates = {
        str(seed): round(sum(v) / len(v), 6)
        for seed, v in sorted(judged.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0))
        if v
    }
    return Summary(
        finished_at=finished_at,
        records=len(rows),
        passed=sum(r.passed and not r.errored for r in rows),
        errors=errors,
        pass_rate_by_seed=rates,
    )


def failing_score(passed: bool, reasons: list[str]) -> str | None:
    """A failing grade in the tool's own words (its `score:VALUE` reason), for the row:
    a move between two failing values is a move. None for a pass or a plain fail."""
    if passed:
        return None
    return next((r for r in reasons if r.startswith("score:")), None)
