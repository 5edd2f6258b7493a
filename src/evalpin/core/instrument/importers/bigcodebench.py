"""The BigCodeBench family: tasks whose tests are a `unittest` module run in one namespace
with the solution, and which name the libraries they need.

BigCodeBench (`task_id`, `instruct_prompt`, `complete_prompt`, `code_prompt`,
`canonical_solution`, `test`, `entry_point`, `libs`): the prompt is `instruct_prompt`
(BigCodeBench-Instruct, for chat models); the candidate is the answer's code after the
stub its harness calibrates with (`candidate: starting+completion`, the starting file
`code_prompt` + `"\n    pass\n"`, exactly as `bigcodebench.evaluate` builds
`code_prompt + "\n    pass\n" + solution`); the reference is `complete_prompt` +
`"\n"` + `canonical_solution`, as its ground-truth check runs it. Its runner puts
`sys`, `os` and `os.environ` in the namespace first, and the tests may use them unimported.

DataFrameBench (`task_id`, `prompt` with the `{library_import}` and
`{library_instruction}` placeholders, `test_code`, `ground_truth` per library,
`prompt_parts`, `entry_point`, `libs`): the prompt is filled for the chosen library as
the package's `fill_condition` fills it (a plain string replace; `free`: the free-choice
comment and sentence); the candidate is the answer's code (`candidate: completion`),
run after `import matplotlib; matplotlib.use("Agg")` as its harness script does; the
reference is the ground truth for the library (pandas's under free choice), the starting
code the stub, filled.

Both record `libs` (with the library chosen, and matplotlib for DataFrameBench's own
script) as `requires:` and the harness's own time limit as `harness_timeout_s:`
(BigCodeBench: 240 s, plus the 1 s its runner adds; DataFrameBench: 30 s).
"""

from __future__ import annotations

import ast
from pathlib import Path

from evalpin.core.instrument.fixtures import CANDIDATE_COMPLETION, CANDIDATE_STARTING_COMPLETION
from evalpin.core.instrument.importers.records import Problem, read_problems
from evalpin.core.instrument.importers.testcode import PRESET, unittest_test
from evalpin.core.instrument.importers.writer import Item

CANDIDATE_FILE = "solution.py"
CANDIDATE_MODULE = "solution"
BIGCODEBENCH_TIMEOUT_S = 241.0  # bigcodebench.eval: max(TIMEOUT_LIMIT=240, ...) + 1
DATAFRAMEBENCH_TIMEOUT_S = 30.0  # dataframebench.sandbox.DEFAULT_TIMEOUT_SECONDS
CALIBRATION = "\n    pass\n"  # bigcodebench.evaluate: code_prompt + "\n    pass\n" + solution

# dataframebench.prompt: the placeholders, and what each condition fills them with
IMPORT_PLACEHOLDER = "{library_import}"
INSTRUCTION_PLACEHOLDER = "{library_instruction}"
IMPORT_LINES = {"pandas": "import pandas as pd", "polars": "import polars as pl"}
INSTRUCTION_LINE = "Use {library} as the data processing library in your solution."
FREE_IMPORT = (
    "import ___  # you MUST import and use a data processing library here"
    " - which one is your choice"
)
FREE_INSTRUCTION = "Choose, import and use a data processing library in your solution."
FREE = "free"
PRELUDE = 'import matplotlib\nmatplotlib.use("Agg")  # as the harness script does'


def bigcodebench_items(path: Path, importer: str) -> tuple[list[Item], bytes]:
    """Every task of a BigCodeBench file as an item (see the module docstring)."""
    problems, raw = read_problems(path)
    items = []
    for problem in problems:
        task_id = problem.text(path, "task_id")
        stub = problem.text(path, "code_prompt") + CALIBRATION
        solution = problem.text(path, "complete_prompt") + "\n"
        solution += problem.text(path, "canonical_solution")
        items.append(
            Item(
                id=task_id,
                prompt=problem.text(path, "instruct_prompt"),
                test=_test(path, problem, task_id, "test", importer, "bigcodebench", ""),
                expected=CANDIDATE_FILE,
                reference=solution,
                starting=stub,
                candidate=CANDIDATE_STARTING_COMPLETION,
                requires=_libs(path, problem),
                harness_timeout_s=BIGCODEBENCH_TIMEOUT_S,
            )
        )
    return items, raw


def dataframebench_items(
    path: Path, importer: str, library: str = FREE
) -> tuple[list[Item], bytes]:
    """Every task of a DataFrameBench file as an item, its prompt filled for `library`
    (see the module docstring)."""
    problems, raw = read_problems(path)
    items = []
    for problem in problems:
        task_id = problem.text(path, "task_id")
        truths = problem.fields.get("ground_truth")
        if not isinstance(truths, dict) or not truths:
            raise problem.fail(path, "'ground_truth' must map libraries to solutions")
        chosen = library if library != FREE else next(iter(truths))
        if not isinstance(truths.get(chosen), str):
            raise problem.fail(path, f"no ground truth for {chosen!r}")
        parts = problem.fields.get("prompt_parts")
        stub = parts.get("stub") if isinstance(parts, dict) else None
        if not isinstance(stub, str):
            raise problem.fail(path, "'prompt_parts' must hold the 'stub'")
        libs = _libs(path, problem)
        extra = tuple(m for m in ("matplotlib", chosen) if m not in libs)
        items.append(
            Item(
                id=task_id,
                prompt=fill(problem.text(path, "prompt"), library),
                test=_test(
                    path, problem, task_id, "test_code", importer, "dataframebench", PRELUDE
                ),
                expected=CANDIDATE_FILE,
                reference=truths[chosen],
                starting=fill(stub, library),
                candidate=CANDIDATE_COMPLETION,
                requires=libs + extra,
                harness_timeout_s=DATAFRAMEBENCH_TIMEOUT_S,
            )
        )
    return items, raw


def fill(text: str, library: str) -> str:
    """Both placeholders filled for `library`, as DataFrameBench's `fill_condition` does
    (a plain replace, never `str.format`: stubs hold braces)."""
    if library == FREE:
        line, sentence = FREE_IMPORT, FREE_INSTRUCTION
    else:
        line = IMPORT_LINES.get(library, f"import {library}")
        sentence = INSTRUCTION_LINE.format(library=library)
    return text.replace(IMPORT_PLACEHOLDER, line).replace(INSTRUCTION_PLACEHOLDER, sentence)


def _libs(path: Path, problem: Problem) -> tuple[str, ...]:
    """The task's `libs` as top-level module names: a list, or (BigCodeBench) the text
    of one (`"['random', 'itertools']"`), read as a literal, never run."""
    value = problem.fields.get("libs", [])
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value) if value.strip() else []
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            raise problem.fail(path, "'libs' is not a list") from None
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise problem.fail(path, "'libs' must be a list of module names")
    tops = dict.fromkeys(v.split(".")[0] for v in value)
    bad = [m for m in tops if not m.isidentifier()]
    if bad:
        raise problem.fail(path, f"'libs' names {bad[0]!r}, which is no module name")
    return tuple(tops)


def _test(
    path: Path, problem: Problem, task_id: str, key: str, importer: str, shape: str, prelude: str
) -> str:
    try:
        return unittest_test(
            task_id, CANDIDATE_MODULE, problem.text(path, key), importer, PRESET[shape], prelude
        )
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise problem.fail(path, f"its test code is not Python: {exc}") from None
