"""What a coding item's candidate file is, by the item's `candidate:` convention.

- `files` (the default): the files the answer names (`coding.files_from_completion`).
- `completion`: the answer's code is the one expected file. A public benchmark's harness
  takes a base model's completion as it comes, so an answer without a fenced block is
  the code itself; one with blocks gives the block named for the file, else its first.
- `prompt+completion`: the prompt file's text, then that code (HumanEval's harness runs
  `prompt + completion`: the imports and helpers the prompt defines are the candidate's,
  and a chat model that restates the whole function redefines the prompt's stub).
- `starting+completion`: the starting file's text, then that code (BigCodeBench's
  calibrated harness runs `code_prompt + pass + solution`: the stub's imports and
  constants are the candidate's even where the answer leaves them out).

`answer_files` is what the answer gave (what `run_item` receives, what a reference or
starting file holds, what `evalpin export` writes as the completion); `written_files` is
what the work folder gets. Part of the grader version, like every module here.
"""

from __future__ import annotations

from evalpin.core.instrument.fixtures import (
    CANDIDATE_FILES,
    CANDIDATE_PROMPT_COMPLETION,
    CANDIDATE_STARTING_COMPLETION,
    CodingItem,
)
from evalpin.core.instrument.graders.coding import fenced_blocks, files_from_completion
from evalpin.core.records import Completion


def completion_code(completion: Completion, expected: str) -> str:
    """The code an answer gives for the one file `expected` (see the module docstring)."""
    if completion.files:
        if expected in completion.files:
            return completion.files[expected]
        return next(iter(completion.files.values()))
    blocks = fenced_blocks(completion.text)
    if not blocks:
        return completion.text
    named = [body for name, body in blocks if name == expected]
    return named[-1] if named else blocks[0][1]


def answer_files(completion: Completion, item: CodingItem) -> dict[str, str]:
    """The files an answer gives for `item`, by its `candidate:` convention."""
    if item.candidate == CANDIDATE_FILES:
        return files_from_completion(completion, item.expected_files)
    name = item.expected_files[0]
    return {name: completion_code(completion, name)}


def written_files(item: CodingItem, files: dict[str, str]) -> dict[str, str]:
    """The files the work folder gets from the answer's: under `prompt+completion` the
    prompt file's text, under `starting+completion` the starting file's, before the
    expected file's code (exactly concatenated, as the benchmark's harness does);
    otherwise the answer's files as they are."""
    name = item.expected_files[0]
    if item.candidate == CANDIDATE_PROMPT_COMPLETION:
        head = item.prompt_file
    elif item.candidate == CANDIDATE_STARTING_COMPLETION:
        head = item.starting_files[name]
    else:
        return files
    if name not in files:
        return files  # missing_file says so
    return {**files, name: head.read_text(encoding="utf-8") + files[name]}
