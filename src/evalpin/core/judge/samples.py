"""A run's completions in a benchmark's own samples format, and the cross-check of its
grades against that benchmark's harness.

`samples`: one `{"task_id", "completion", "seed"}` line per judged (case, seed), in the
run's order (BigCodeBench's harness reads a `solution`, DataFrameBench's a `response`
with the code in a fenced block: `SAMPLE_SHAPES`). The completion is the code the item's
`candidate:` convention took from the answer (the fenced block, or a base model's text
as it came), so the benchmark's harness grades what evalpin graded: under
`prompt+completion` it runs `prompt + completion`, exactly the candidate file. `seed` is
extra; HumanEval's harness keeps extra keys in its results. Error and other not-judged
cases are left out and counted: they have no grade to cross-check.

`crosscheck`: the harness's results in its own format (`harness_results.py`: HumanEval's
JSON lines, BigCodeBench's and DataFrameBench's documents) joined with the run on
(task_id, seed), each pair agreeing or not, and what neither side could match.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalpin.core import syntax
from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import CANDIDATE_FILES, CodingItem, FixtureSet
from evalpin.core.instrument.graders.candidate import answer_files
from evalpin.core.judge.harness_results import read_results
from evalpin.core.read.rundata import RunFile
from evalpin.core.records import Completion


def _completion(code: str) -> dict[str, str]:
    return {"completion": code}


# What each harness reads a sample's code from, by the set's source format: BigCodeBench
# a whole `solution` (its calibrated harness puts the stub before it), DataFrameBench a
# model's `response` (it takes the code from the fenced block); the rest a `completion`.
SAMPLE_SHAPES = {
    "bigcodebench": lambda code: {"solution": code},
    "dataframebench": lambda code: {"response": f"```python\n{code.rstrip()}\n```\n"},
}


@dataclass
class Samples:
    """The samples of a run, and the records left out (not judged), by case id."""

    lines: list[dict[str, Any]]
    left_out: list[tuple[str, int | None, str]] = field(default_factory=list)


def samples(run: RunFile, fixtures: FixtureSet) -> Samples:
    """The run's judged completions as benchmark samples (see the module docstring)."""
    items = {c.id: c for c in fixtures.cases if isinstance(c, CodingItem)}
    if not items:
        raise InputError(fixtures.path, "not a coding set: there are no completions to export")
    files_only = sorted(i for i, c in items.items() if c.candidate == CANDIDATE_FILES)
    if len(files_only) == len(items):
        msg = (
            "its items take the files an answer names (candidate: files): a samples file"
            " holds one completion per task (candidate: completion or prompt+completion)"
        )
        raise InputError(fixtures.path, msg)
    records = run.records(range(len(run.rows)))
    shape = SAMPLE_SHAPES.get((fixtures.source or {}).get("format"), _completion)
    found = Samples([])
    for index in range(len(run.rows)):
        rec = records[index]
        item = items.get(rec.case_id)
        if item is None or item.candidate == CANDIDATE_FILES:
            found.left_out.append((rec.case_id, rec.seed, "not an item of the set's kind"))
            continue
        if rec.status is not None:
            found.left_out.append((rec.case_id, rec.seed, f"{rec.status}: not judged"))
            continue
        answer = Completion(text=rec.text or "", files=rec.files or {})
        code = answer_files(answer, item)[item.expected_files[0]]
        found.lines.append({"task_id": rec.case_id, **shape(code), "seed": rec.seed})
    return found


@dataclass(frozen=True)
class Pair:
    """One sample graded by both."""

    task_id: str
    seed: int | None
    ours: bool
    theirs: bool
    reasons: list[str]
    result: str
    # evalpin's pass took longer than the harness's own limit (`harness_timeout_s`: its
    # tests, by pytest's own summary), and the harness failed it: counted its way
    past_limit: bool = False
    note: str = ""  # what explains a disagreement, where the set tells

    @property
    def counted(self) -> bool:
        """evalpin's verdict as the harness counts it."""
        return self.ours and not self.past_limit

    @property
    def agree(self) -> bool:
        return self.counted == self.theirs


@dataclass
class CrossCheck:
    """The run against the harness's results."""

    pairs: list[Pair]
    only_run: list[tuple[str, int | None]]
    only_results: list[tuple[str, int | None]]

    @property
    def disagreements(self) -> list[Pair]:
        return [p for p in self.pairs if not p.agree]

    @property
    def agrees(self) -> bool:
        """Agreement needs something compared: no sample graded by both is not a match."""
        return bool(self.pairs) and not (self.disagreements or self.only_run or self.only_results)

    def to_json(self) -> dict[str, Any]:
        def shown(p: Pair) -> dict[str, Any]:
            return {
                "task_id": p.task_id,
                "seed": p.seed,
                "evalpin": "pass" if p.ours else "fail",
                "harness": "pass" if p.theirs else "fail",
                "reasons": p.reasons,
                "result": p.result,
                "note": p.note,
            }

        return {
            "compared": len(self.pairs),
            "agrees": self.agrees,
            "agree": len(self.pairs) - len(self.disagreements),
            "both_pass": sum(p.counted and p.theirs for p in self.pairs),
            "both_fail": sum(not p.counted and not p.theirs for p in self.pairs),
            "past_harness_limit": [
                {"task_id": p.task_id, "seed": p.seed} for p in self.pairs if p.past_limit
            ],
            "disagreements": [shown(p) for p in self.disagreements],
            "only_run": [{"task_id": t, "seed": s} for t, s in self.only_run],
            "only_results": [{"task_id": t, "seed": s} for t, s in self.only_results],
        }


def crosscheck(run: RunFile, results: Path, fixtures: FixtureSet | None = None) -> CrossCheck:
    """Join the run's judged cases with the harness's results on (task_id, seed); a
    result without a seed takes the task's next one in the run's order. With the run's
    set, a pass that took longer than the item's `harness_timeout_s` and that the harness
    failed is counted as the harness counts it (a fail, said), and a disagreement the set
    explains says why."""
    items = {c.id: c for c in fixtures.cases if isinstance(c, CodingItem)} if fixtures else {}
    setup = _setup_note if fixtures and (fixtures.source or {}).get("format") == "mbpp" else None
    judged = [i for i, row in enumerate(run.rows) if row.status is None]
    records = run.records(judged)
    ours: dict[tuple[str, int | None], tuple[bool, list[str], float | None]] = {}
    order: dict[str, list[int | None]] = {}
    for i in judged:
        rec = records[i]
        ours[(rec.case_id, rec.seed)] = (rec.passed, list(rec.reasons or []), tests_took(rec.tail))
        order.setdefault(rec.case_id, []).append(rec.seed)
    pairs: list[Pair] = []
    only_results: list[tuple[str, int | None]] = []
    for _, line in read_results(results):
        task = line["task_id"]
        seed = line.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            queue = order.get(task, [])
            seed = queue.pop(0) if queue else None
        key = (task, seed)
        if key not in ours:
            only_results.append(key)
            continue
        passed, reasons, seconds = ours.pop(key)
        result = str(line.get("result") or "")
        item = items.get(task)
        limit = item.harness_timeout_s if item is not None else None
        past = bool(passed and not line["passed"] and limit and seconds and seconds > limit)
        note = ""
        if past:
            note = f"its tests took {seconds:.1f} s, past the harness's own {limit:g} s limit"
            note += ": its fail"
        elif passed and not line["passed"] and setup is not None and item is not None:
            note = setup(item)
        pairs.append(Pair(task, seed, passed, line["passed"], reasons, result, past, note))
    return CrossCheck(pairs, sorted(ours, key=lambda k: (k[0], k[1] or 0)), only_results)


_SESSION = re.compile(r"\b\d+ (?:passed|failed|errors?)\b[^\n]* in (\d+(?:\.\d+)?)s\b")


def tests_took(tail: str | None) -> float | None:
    """How long plain pytest's session took, by its own summary line in the case's tail
    (`3 passed in 4.12s`): the tests and the candidate's import, as a harness's limit
    counts its program's run; never the sandbox's start or the witness. None when the
    tail has no summary."""
    found = _SESSION.findall(tail or "")
    return float(found[-1]) if found else None


def _setup_note(item: CodingItem) -> str:
    """MBPP's `test_setup_code` runs before its asserts (the dataset defines it so;
    `import mbpp` writes it at the top of the test); bigcode-evaluation-harness leaves it
    out, so an answer passes here and fails there on a name the set-up defines."""
    try:
        tree = syntax.parse(item.test_file.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return ""
    plain = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef)
    if any(not isinstance(node, plain) for node in tree.body):
        return (
            "the task's test_setup_code, which MBPP runs before its asserts and evalpin"
            " runs, is left out by this harness: the harness's defect, evalpin is right"
        )
    return ""
