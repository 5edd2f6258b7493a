"""The tool/text grader for golden cases.

Reasons come out in a stable order: missing tools, forbidden tools, missing text,
forbidden text; each list in the order the case names them. Text checks are
case-insensitive and look at the completion's text only.
"""

from __future__ import annotations

from evalpin.core.fixtures import GoldenCase
from evalpin.core.reasons import FORBIDDEN_TEXT, FORBIDDEN_TOOL, MISSING_TEXT, MISSING_TOOL
from evalpin.core.records import Completion


def grade_golden(case: GoldenCase, completion: Completion) -> list[str]:
    """Return the reason codes; an empty list is a pass."""
    called = {t.name for t in completion.tools}
    text = completion.text.casefold()
    reasons = [MISSING_TOOL(name) for name in case.require_tools if name not in called]
    reasons += [FORBIDDEN_TOOL(name) for name in case.forbid_tools if name in called]
    reasons += [MISSING_TEXT(n) for n in case.must_include if n.casefold() not in text]
    reasons += [FORBIDDEN_TEXT(n) for n in case.must_not if n.casefold() in text]
    return reasons
