"""What a coding item says of the benchmark harness it stands in for: how its candidate
file is made (`candidate:`), the modules its tests need (`requires:`), and the harness's
own time limit (`harness_timeout_s:`). `evalpin import` writes them; a hand-written set
may too. All three are part of the item, so of its fixture hash.

- `candidate:` `files` (the default: the files the answer names), `completion` (the
  answer's code alone), `prompt+completion` (the prompt file's text, then that code:
  HumanEval's harness runs `prompt + completion`, so the prompt's helpers and imports are
  the candidate's) or `starting+completion` (the starting file's text, then that code:
  BigCodeBench's calibrated harness runs `code_prompt + pass + solution`, so the stub's
  imports and constants are the candidate's). All but `files` write one expected file.
- `requires:` top-level module names the tests import or the task is about (BigCodeBench's
  `libs`): `evalpin check` names every item whose modules the grading interpreter lacks,
  before a run spends a night failing them.
- `harness_timeout_s:` the harness's own limit for one answer (HumanEval's and MBPP's
  3 s, BigCodeBench's 240 s): a case whose tests took longer passes under evalpin's
  `timeout_s` but not under the harness, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalpin.core.errors import InputError

CANDIDATE_FILES = "files"
CANDIDATE_COMPLETION = "completion"
CANDIDATE_PROMPT_COMPLETION = "prompt+completion"
CANDIDATE_STARTING_COMPLETION = "starting+completion"
CANDIDATES = (
    CANDIDATE_FILES,
    CANDIDATE_COMPLETION,
    CANDIDATE_PROMPT_COMPLETION,
    CANDIDATE_STARTING_COMPLETION,
)
HARNESS_KEYS = frozenset({"candidate", "requires", "harness_timeout_s"})


@dataclass(frozen=True)
class HarnessKeys:
    candidate: str = CANDIDATE_FILES
    requires: tuple[str, ...] = ()
    harness_timeout_s: float | None = None


def harness_keys(
    path: Path, item: dict[str, Any], where: str, at, expected: list[str], starting: dict
) -> HarnessKeys:
    """The item's harness keys, or InputError naming the key and its line (`at(key)`)."""
    candidate = item.get("candidate", CANDIDATE_FILES)
    if candidate not in CANDIDATES:
        msg = f"{where} 'candidate' must be one of {', '.join(CANDIDATES)}, got {candidate!r}"
        raise InputError(path, msg, at("candidate"))
    if candidate != CANDIDATE_FILES and len(expected) != 1:
        msg = f"{where} 'candidate: {candidate}' writes one file: expected_files must name one"
        raise InputError(path, msg, at("candidate"))
    if candidate == CANDIDATE_STARTING_COMPLETION and expected[0] not in starting:
        msg = f"{where} 'candidate: {candidate}' needs starting_files for {expected[0]!r}"
        raise InputError(path, msg, at("candidate"))
    requires = item.get("requires", [])
    if not isinstance(requires, list) or not all(
        isinstance(m, str) and m.isidentifier() for m in requires
    ):
        msg = f"{where} 'requires' must be a list of top-level module names"
        raise InputError(path, msg, at("requires"))
    limit = item.get("harness_timeout_s")
    if limit is not None and (
        isinstance(limit, bool)
        or not isinstance(limit, int | float)
        or not math.isfinite(limit)
        or limit <= 0
    ):
        msg = f"{where} 'harness_timeout_s' must be a positive number"
        raise InputError(path, msg, at("harness_timeout_s"))
    return HarnessKeys(candidate, tuple(requires), None if limit is None else float(limit))
