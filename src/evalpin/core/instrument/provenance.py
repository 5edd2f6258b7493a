"""A coding set's provenance (`source:`, written by `evalpin import`): the file it was
made from, that file's sha256 (a folder's tree digest), its format and the importer
(name and version) that made the set. A closed mapping, like the rest of the format."""

from __future__ import annotations

from typing import Any

from evalpin.core.bounded import YamlDoc
from evalpin.core.schema import Problems

SOURCE_KEYS = frozenset({"file", "sha256", "format", "importer"})


def source_of(value: Any, parsed: YamlDoc, problems: Problems) -> dict[str, str] | None:
    """The set's `source:` mapping (closed: SOURCE_KEYS and `x-` keys), or None."""
    if value is None:
        return None
    line = parsed.line("source")
    ours = {k: v for k, v in value.items() if k in SOURCE_KEYS} if isinstance(value, dict) else {}
    if not isinstance(value, dict) or not all(isinstance(v, str) and v for v in ours.values()):
        problems.add("'source' must map file, sha256, format and importer to strings", line)
        return None
    lines = {str(k): parsed.line("source", k) for k in value}
    problems.keys(value, SOURCE_KEYS, line, "source: ", lines)
    sha = ours.get("sha256")
    if sha is not None and (len(sha) != 64 or sha.strip("0123456789abcdef")):
        problems.add("'source.sha256' must be 64 lowercase hex digits", lines["sha256"])
    return ours
