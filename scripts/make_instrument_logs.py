"""Make small real inspect-ai logs whose instruments differ only where issue 51 looks:
the grader model of a model-graded scorer (inspect's model roles), and the limits of a
run. Development-time only, offline: run with the venv of `make_foreign_logs.sh`.

Writes tests/data/inspect/instruments/:

- `graded_a.eval`: `model_graded_qa()` with `--model-role grader=mockllm/grader-a`;
- `graded_b.eval`: the same completions, graded by `mockllm/grader-b`, which gives three
  of the samples I where grader-a gave P;
- `graded_none.eval`: the same, no grader role (the scorer grades with the model under
  test, which answers as grader-a would);
- `limit_10.eval`, `limit_4.eval`: a tool-using task at `message_limit` 10 and 4 (the
  tighter limit cuts two samples' conversations short; they fail);
- `expected.json`: what inspect's own reader says of each (grades per sample, the roles,
  the limits).

    python scripts/make_instrument_logs.py [--out tests/data]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_foreign_logs import _no_token_download

QUESTIONS = [
    ("q1", "Name a primary colour.", "red"),
    ("q2", "Name a planet with rings.", "Saturn"),
    ("q3", "Name a noble gas.", "neon"),
    ("q4", "Name a prime number below ten.", "seven"),
    ("q5", "Name a continent.", "Africa"),
    ("q6", "Name a string instrument.", "violin"),
]
# The model's answers (the same in every graded log), and each grader's grades.
ANSWERS = {
    "q1": "red",
    "q2": "Saturn, I think",
    "q3": "argon",
    "q4": "9",
    "q5": "Asia",
    "q6": "a cello",
}
GRADES_A = {"q1": "C", "q2": "C", "q3": "P", "q4": "P", "q5": "P", "q6": "I"}
GRADES_B = {**GRADES_A, "q3": "I", "q4": "I", "q5": "I"}  # P -> I on three samples


def make(out: Path) -> None:
    _no_token_download()
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import includes, model_graded_qa
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    dest = out / "inspect" / "instruments"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    work = Path(tempfile.mkdtemp())
    by_question = {q: ANSWERS[sid] for sid, q, _ in QUESTIONS}

    def grade_of(prompt: str, grades: dict[str, str]) -> str:
        """The grade a grader gives: the submission model_graded_qa's template shows,
        looked up (I for one it does not know)."""
        submitted = prompt.partition("[Submission]: ")[2].partition("\n")[0].strip()
        sid = next((s for s, a in ANSWERS.items() if a == submitted), None)
        return f"GRADE: {grades.get(sid, 'I') if sid else 'I'}"

    def grader(name: str, grades: dict[str, str]):
        def answer(messages, tools, tool_choice, config):
            return ModelOutput.from_content(model=name, content=grade_of(messages[-1].text, grades))

        return get_model(f"mockllm/{name}", custom_outputs=answer)

    def model(name: str = "model"):
        """The model under test: it answers the question; asked to grade (no grader role),
        it grades as grader-a does."""

        def answer(messages, tools, tool_choice, config):
            text = messages[-1].text
            if text in by_question:
                return ModelOutput.from_content(model=name, content=by_question[text])
            return ModelOutput.from_content(model=name, content=grade_of(text, GRADES_A))

        return get_model(f"mockllm/{name}", custom_outputs=answer)

    def graded_task() -> Task:
        samples = [Sample(id=sid, input=q, target=t) for sid, q, t in QUESTIONS]
        scorer = model_graded_qa(partial_credit=True)  # C, P (partial) or I
        return Task(name="quiz", dataset=samples, solver=[generate()], scorer=scorer)

    def save(stem: str, log) -> Path:
        target = dest / f"{stem}.eval"
        shutil.copy(Path(log.location.removeprefix("file://")), target)
        return target

    logs: dict[str, Path] = {}
    for stem, role in (
        ("graded_a", grader("grader-a", GRADES_A)),
        ("graded_b", grader("grader-b", GRADES_B)),
        ("graded_none", None),
    ):
        roles = {"grader": role} if role is not None else None
        [log] = eval(
            graded_task(), model=model(), model_roles=roles, log_dir=str(work / stem),
            display="none", max_samples=1, temperature=0.0,
        )  # fmt: skip
        logs[stem] = save(stem, log)

    @tool
    def lookup():
        async def execute(topic: str) -> str:
            """Look a topic up.

            Args:
              topic: what to look up.
            """
            return f"notes on {topic}"

        return execute

    def looping(messages, tools, tool_choice, config):
        """Calls `lookup` twice for q1 and q2, then answers; answers at once otherwise."""
        question = messages[0].text if messages else ""
        sid = next((s for s, q, _ in QUESTIONS if q == question), "")
        calls = sum(1 for m in messages if m.role == "tool")
        if sid in ("q1", "q2") and calls < 2:
            return ModelOutput.for_tool_call(
                model="model", tool_name="lookup", tool_arguments={"topic": sid}
            )
        target = {s: t for s, _, t in QUESTIONS}.get(sid, "?")
        return ModelOutput.from_content(model="model", content=target)

    for stem, limit in (("limit_10", 10), ("limit_4", 4)):
        samples = [Sample(id=sid, input=q, target=t) for sid, q, t in QUESTIONS]
        task = Task(
            name="quiz_tools", dataset=samples, solver=[use_tools(lookup()), generate()],
            scorer=includes(),
        )  # fmt: skip
        [log] = eval(
            task, model=get_model("mockllm/model", custom_outputs=looping),
            log_dir=str(work / stem), display="none", max_samples=1, temperature=0.0,
            message_limit=limit,
        )  # fmt: skip
        logs[stem] = save(stem, log)

    expected = {}
    for stem, path in logs.items():
        log = read_eval_log(str(path))
        scorer = log.eval.scorers[0].name
        roles = log.eval.model_roles or {}
        expected[stem] = {
            "grades": {str(s.id): s.scores[scorer].value for s in log.samples},
            "roles": {k: (v.model if hasattr(v, "model") else str(v)) for k, v in roles.items()},
            "message_limit": log.eval.config.message_limit,
            "limited": sorted(str(s.id) for s in log.samples if s.limit is not None),
        }
    (dest / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "tests/data")
    make(parser.parse_args().out)


if __name__ == "__main__":
    main()
