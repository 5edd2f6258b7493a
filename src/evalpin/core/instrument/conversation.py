"""Tool conversations: canned tool results, and a transcript turned into a completion.

A golden case may carry `tool_results`: tool name -> the JSON result the tool returns,
or a list of results returned in call order (the last one repeats; a result that is
itself a list is written as a one-item list around it). A tool without a canned result
answers `{"error": "no result for TOOL"}`, and a call whose arguments are not JSON gets
an error result too: a model's mistake is graded, never a crash.

Every slot that holds a conversation (the openai loop, a command slot's program, a
replay line) ends with the same shape: `turns`, each an assistant reply and the calls it
made. `settle` derives what is graded from it: the last reply's text and every call, in
order. A conversation whose last reply still calls tools ran out of turns (the golden
grader marks it `tool_loop_exhausted`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import msgspec

from evalpin.core.records import Completion, ToolCall

# Model requests in one tool conversation unless the run says otherwise (`--max-turns`).
DEFAULT_MAX_TURNS = 4


def no_result(name: str) -> dict[str, str]:
    """What a tool called without a canned result answers."""
    return {"error": f"no result for {name}"}


def bad_arguments(name: str) -> dict[str, str]:
    """What a tool answers when the model's arguments are not a JSON document."""
    return {"error": f"arguments for {name} are not valid JSON"}


class CannedResults:
    """The canned results of one conversation; counts calls per tool for list results."""

    def __init__(self, tool_results: Mapping[str, Any]) -> None:
        self._results = tool_results
        self._calls: Counter[str] = Counter()

    def answer(self, name: str) -> Any:
        """The result of the next call to `name`."""
        n = self._calls[name]
        self._calls[name] += 1
        if name not in self._results:
            return no_result(name)
        canned = self._results[name]
        if isinstance(canned, list):
            return canned[min(n, len(canned) - 1)]
        return canned


def settle(completion: Completion) -> Completion:
    """The completion with `text` and `tools` derived from its `turns`, when it has any.

    Raises ValueError when a completion gives turns and also a `text` or `tools` that
    disagree with them (a recording or a program that contradicts itself).
    """
    if not completion.turns:
        return completion
    text = completion.turns[-1].text
    tools = [ToolCall(c.name, c.args) for turn in completion.turns for c in turn.calls]
    if completion.text and completion.text != text:
        raise ValueError("'text' differs from the last turn's text")
    if completion.tools and list(completion.tools) != tools:
        raise ValueError("'tools' differs from the calls made in 'turns'")
    return msgspec.structs.replace(completion, text=text, tools=tools, turns=list(completion.turns))


def recorded(answer: Any) -> Completion:
    """A recorded answer (a replay line, a command's stdout: `text`, `tools`, `files`,
    `model`, `turns`) as a settled completion; no text is empty text. ValueError as
    `settle`."""
    return settle(
        Completion(
            text=answer.text or "",
            tools=answer.tools,
            files=answer.files,
            model=answer.model,
            turns=answer.turns,
        )
    )
