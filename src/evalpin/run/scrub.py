"""The second line behind the sandbox: secret values never reach a run file.

Whatever model code managed to read or print, the values of the grader's own
secret-looking environment variables (and the slot's named key and URL variables) are
replaced in every free-text field of a case record before it is written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

import msgspec

from evalpin.core.records import CaseRecord, ToolCall

SECRETISH = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
MIN_SECRET = 8  # shorter values would cut common words out of honest text
REDACTED = "[redacted]"


def secret_values(names: Iterable[str] = ()) -> list[str]:
    """Values to cut: the named variables and every variable whose name looks like a
    secret, when long enough not to be a common word; longest first."""
    wanted = set(names) | {k for k in os.environ if SECRETISH.search(k)}
    values = {os.environ[n] for n in wanted if len(os.environ.get(n, "")) >= MIN_SECRET}
    return sorted(values, key=len, reverse=True)


def redact(text: str, values: list[str]) -> str:
    for value in values:
        text = text.replace(value, REDACTED)
    return text


def scrub_record(record: CaseRecord, values: list[str]) -> CaseRecord:
    """The record with every secret value cut from its tails, completion text, files,
    tool arguments and error. Digests were computed before, from what the model sent."""
    if not values:
        return record

    def clean(value):
        if isinstance(value, str):
            return redact(value, values)
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        return value

    return msgspec.structs.replace(
        record,
        tail=clean(record.tail),
        witness_tail=clean(record.witness_tail),
        text=clean(record.text),
        files=clean(record.files),
        error=clean(record.error),
        reasons=clean(record.reasons),
        tools=[ToolCall(clean(t.name), clean(t.args)) for t in record.tools]
        if record.tools
        else record.tools,
    )
