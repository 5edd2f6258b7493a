"""The tool/text grader for golden cases.

Reasons come out in a stable order: missing tools, forbidden tools, missing text,
forbidden text; each list in the order the case names them; then `tool_loop_exhausted`.
Text checks are case-insensitive and look at the completion's text only: for a tool
conversation, the last reply's text, and every call it made, in order, is a tool call.
A conversation whose last reply still calls tools ran out of turns before the model
answered: it is graded on what it has, and marked `tool_loop_exhausted`.
"""

from __future__ import annotations

from evalpin.core.instrument.fixtures import GoldenCase
from evalpin.core.reasons import (
    FORBIDDEN_TEXT,
    FORBIDDEN_TOOL,
    MISSING_TEXT,
    MISSING_TOOL,
    TOOL_LOOP_EXHAUSTED,
)
from evalpin.core.records import Completion


def grade_golden(case: GoldenCase, completion: Completion) -> list[str]:
    """Return the reason codes; an empty list is a pass."""
    called = {t.name for t in completion.tools}
    text = completion.text.casefold()
    reasons = [MISSING_TOOL(name) for name in case.require_tools if name not in called]
    reasons += [FORBIDDEN_TOOL(name) for name in case.forbid_tools if name in called]
    reasons += [MISSING_TEXT(n) for n in case.must_include if n.casefold() not in text]
    reasons += [FORBIDDEN_TEXT(n) for n in case.must_not if n.casefold() in text]
    if completion.turns and completion.turns[-1].calls:
        reasons.append(TOOL_LOOP_EXHAUSTED())
    return reasons
