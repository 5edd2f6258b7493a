"""Make small real logs with inspect-ai and lm-evaluation-harness, for evalpin's tests.

Both tools are development-time only: run this with a separate venv that has them, never
evalpin's own (see `make_foreign_logs.sh`). No network: inspect uses `mockllm/model` with
outputs chosen per prompt, lm-eval the `dummy` model on a local task over a local JSONL.
lm-eval also a custom LM registered with `@register_model` (imported before its CLI runs).
Writes tests/data/inspect/*.eval|.json (and log_dir/, a log folder as inspect leaves it),
tests/data/lm_eval/... (and out/, an --output_path folder with its model subfolder and two
runs), and beside each an `expected.json`: what the tool's own reader says (inspect's
`read_eval_log`: what moved between two nights, each log's accuracy; lm-eval's results
files: each task's metrics).

    python scripts/make_foreign_logs.py [--out tests/data]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

FRUIT = [
    ("apple", "What fruit is red and keeps the doctor away?", "apple"),
    ("banana", "What long yellow fruit do monkeys eat?", "banana"),
    ("cherry", "What small red fruit grows in pairs on a stem?", "cherry"),
    ("grape", "What fruit is pressed to make wine?", "grape"),
    ("lemon", "What sour yellow fruit makes lemonade?", "lemon"),
    ("mango", "What orange tropical fruit is India's national fruit?", "mango"),
]
# What the model answers per sample id on each night: (night 1, night 2).
ANSWERS = {
    "apple": ("apple", "apple"),
    "banana": ("banana", "plantain"),  # regressed
    "cherry": ("plum", "cherry"),  # fixed
    "grape": ("grape", "grape"),
    "lemon": ("lime", "lime"),
    "mango": ("mango", "Mango!"),  # still passes under `includes`, drift
}
# (sample id, epoch) whose solver raises in the `errors` run.
ERRORED = frozenset({("banana", 1), ("cherry", 1), ("grape", 1), ("lemon", 2), ("mango", 2)})


def _no_token_download() -> None:
    """inspect's token counter downloads an encoding file: count characters instead."""
    from inspect_ai.model import _model, _tokens

    def count_text_tokens(text: str) -> int:
        return max(1, len(text) // 4)

    _tokens.count_text_tokens = count_text_tokens
    _model.count_text_tokens = count_text_tokens


def inspect_logs(out: Path) -> None:
    _no_token_download()
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import (
        CORRECT,
        INCORRECT,
        Score,
        accuracy,
        exact,
        includes,
        match,
        scorer,
    )
    from inspect_ai.solver import generate, solver

    @scorer(metrics={"exact": [accuracy()], "polite": [accuracy()]})
    def checks():
        """A scorer whose value is a dict: two grades of one answer."""

        async def score(state, target):
            said = state.output.completion
            return Score(
                value={
                    "exact": CORRECT if said == target.text else INCORRECT,
                    "polite": CORRECT if said[:1].islower() else INCORRECT,
                },
                answer=said,
            )

        return score

    def task(
        night: int,
        target_of: dict[str, str] | None = None,
        crash: str | None = None,
        crash_on: frozenset[tuple[str, int]] = frozenset(),
        scorers: list | None = None,
    ) -> Task:
        samples = [
            Sample(
                id=sid, input=q, target=(target_of or {}).get(sid, t), metadata={"kind": "fruit"}
            )
            for sid, q, t in FRUIT
        ]

        @solver
        def maybe_crash():
            async def solve(state, generate_fn):
                if crash and state.sample_id == crash:
                    raise RuntimeError("solver crashed on purpose")
                if (state.sample_id, state.epoch) in crash_on:
                    raise RuntimeError(f"tool sandbox unavailable for {state.sample_id}")
                return state

            return solve

        return Task(
            name="fruit",
            dataset=samples,
            solver=[maybe_crash(), generate()],
            scorer=scorers if scorers is not None else [includes(), match()],
            epochs=2,
        )

    def model(name: str, night: int):
        by_question = {q: ANSWERS[sid][night - 1] for sid, q, _ in FRUIT}

        def answer(messages, tools, tool_choice, config):
            question = messages[-1].text
            return ModelOutput.from_content(model=name, content=by_question.get(question, "?"))

        return get_model(f"mockllm/{name}", custom_outputs=answer)

    dest = out / "inspect"
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp())

    def run(stem: str, night: int, name: str = "model", generate_config=None, **kw) -> Path:
        crash = kw.get("crash") is not None
        config = {"temperature": 0.0, "seed": 7} if generate_config is None else generate_config
        [log] = eval(
            task(night, **kw),
            model=model(name, night),
            log_dir=str(work / stem),
            display="none",
            max_samples=1,
            fail_on_error=crash,  # the crashed run stops with status "error"
            **config,
        )
        src = Path(log.location.removeprefix("file://"))
        target = dest / f"{stem}.eval"
        shutil.copy(src, target)
        return target

    n1 = run("night1", 1)
    n2 = run("night2", 2)
    run("other_model", 1, name="other")
    run("changed_target", 1, target_of={"grape": "raisin"})
    run("crashed", 1, crash="lemon")
    # Five samples that error (fail_on_error=False: the run goes on, status success).
    errors = run("errors", 1, crash_on=ERRORED)
    # Generation config: inspect's defaults against --temperature 0.7.
    default = run("default_config", 1, generate_config={})
    hot = run("temperature_07", 1, generate_config={"temperature": 0.7})
    # A dict-valued scorer, and one more scorer than night1 has.
    dict_score = run("dict_score", 1, scorers=[checks()])
    run("extra_scorer", 1, scorers=[includes(), match(), exact()])
    write_eval_log(read_eval_log(str(n1)), str(dest / "night1.json"), format="json")
    # A run killed before it wrote header.json: the same zip without it.
    with zipfile.ZipFile(n1) as src, zipfile.ZipFile(dest / "killed.eval", "w") as dst:
        for info in src.infolist():
            if info.filename not in ("header.json", "reductions.json", "summaries.json"):
                dst.writestr(info, src.read(info))
    # A log folder as inspect lays it out (logs/*.eval, and its listing logs.json).
    folder = dest / "log_dir"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(work / "errors", folder)

    # The expectation, from inspect's own reader: the first scorer's C/I per sample.
    def grades(path: Path) -> dict[str, bool]:
        log = read_eval_log(str(path))
        scorer = log.eval.scorers[0].name
        return {f"{s.id}/{s.epoch}": s.scores[scorer].value == "C" for s in log.samples}

    def accuracy_of(path: Path) -> dict[str, dict[str, float | int]]:
        """inspect's own accuracy per score (over the samples it scored), and counts."""
        log = read_eval_log(str(path))
        out: dict[str, dict[str, float | int]] = {}
        for entry in log.results.scores:
            name = entry.name if entry.name == entry.scorer else f"{entry.scorer}.{entry.name}"
            out[name] = {
                "accuracy": entry.metrics["accuracy"].value,
                "scored": entry.scored_samples,
            }
        return out

    def errored(path: Path) -> list[str]:
        log = read_eval_log(str(path))
        return sorted(f"{s.id}/{s.epoch}" for s in log.samples if s.error is not None)

    g1, g2 = grades(n1), grades(n2)
    expected = {
        "scorer": read_eval_log(str(n1)).eval.scorers[0].name,
        "regressed": sorted(k for k in g1 if g1[k] and not g2[k]),
        "fixed": sorted(k for k in g1 if not g1[k] and g2[k]),
        "errored": {"errors.eval": errored(errors)},
        "accuracy": {p.name: accuracy_of(p) for p in (n1, errors, default, hot, dict_score)},
        "made_by": "inspect_ai.log.read_eval_log",
    }
    (dest / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    shutil.rmtree(work)


# The custom LM (registered with lm-eval's `@register_model`): it answers each question
# from this table, cased and worded per prompt, so the tasks below grade it differently.
FRUIT_LM = r"""
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

ANSWERS = {ANSWERS!r}


@register_model("fruit_lm")
class FruitLM(LM):
    def __init__(self, pretrained="fruit-v1", **kwargs):
        super().__init__()
        self.pretrained = pretrained

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for request in requests:
            prompt = request.arguments[0]
            out.append(next((a for q, a in ANSWERS.items() if q in prompt), "no idea"))
        return out

    def loglikelihood(self, requests, disable_tqdm=False):
        # The answer the table gives is likeliest; longer choices lose less per token.
        out = []
        for request in requests:
            context, continuation = request.arguments
            said = next((a for q, a in ANSWERS.items() if q in context), "")
            right = continuation.strip().lower() == said.strip().lower()
            out.append((-1.0 if right else -2.0 - 0.1 * len(continuation), right))
        return out

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        return [-1.0 for _ in requests]
"""
# What the custom LM says per question (a substring of the prompt).
LM_ANSWERS = {
    "red and keeps the doctor": "apple",
    "long yellow fruit": "Banana",  # a capital: passes only with ignore_case
    "small red fruit": "plum",
    "pressed to make wine": "grape",
    "sour yellow fruit": "Lemon",
    "orange tropical fruit": "mango",
    # fruit_math: strict-match wants "#### N", flexible-extract takes the last number.
    "How many legs has a spider": "#### 8",
    "How many sides has a square": "A square has 4",
    "How many wheels has a tricycle": "#### 4",
    "How many days has a week": "It is 7",
}
MATH = [
    ("How many legs has a spider?", "8"),
    ("How many sides has a square?", "4"),
    ("How many wheels has a tricycle?", "3"),
    ("How many days has a week?", "7"),
]


def _task_yaml(name: str, data: Path, body: str) -> str:
    return (
        f"task: {name}\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\n"
        "test_split: test\n" + body + "metadata:\n  version: 1.0\n"
    )


GEN = (
    "output_type: generate_until\n"
    'doc_to_text: "Q: {{question}}\\nA:"\n'
    'doc_to_target: "{{answer}}"\n'
    "generation_kwargs:\n  until: ['\\n']\n  temperature: 0.0\n  do_sample: false\n"
)


def lm_eval_logs(out: Path) -> None:
    dest = out / "lm_eval"
    work = Path(tempfile.mkdtemp())
    data = work / "fruit.jsonl"
    with data.open("w") as fh:
        for i, (sid, question, answer) in enumerate(FRUIT):
            # The dummy model answers "lol": make one document's answer that.
            fh.write(
                json.dumps({"id": sid, "question": question, "answer": "lol" if i == 0 else answer})
                + "\n"
            )
    plain = work / "fruit_plain.jsonl"
    with plain.open("w") as fh:
        for sid, question, answer in FRUIT:
            fh.write(json.dumps({"id": sid, "question": question, "answer": answer}) + "\n")
    choices = ["apple", "banana", "cherry", "grape", "lemon", "mango"]
    mc = work / "fruit_mc.jsonl"
    with mc.open("w") as fh:
        for sid, question, _ in FRUIT[:4]:
            fh.write(
                json.dumps({"id": sid, "question": question, "label": choices.index(sid)}) + "\n"
            )
    math = work / "math.jsonl"
    with math.open("w") as fh:
        for i, (question, answer) in enumerate(MATH):
            fh.write(json.dumps({"question": question, "answer": answer, "n": i}) + "\n")

    tasks = work / "tasks"
    tasks.mkdir()
    (tasks / "fruit.yaml").write_text(
        _task_yaml("fruit_qa", data, GEN + "metric_list:\n  - metric: exact_match\n")
    )
    (tasks / "fruit_gen.yaml").write_text(
        _task_yaml("fruit_gen", plain, GEN + "metric_list:\n  - metric: exact_match\n")
    )
    (tasks / "fruit_mc.yaml").write_text(
        _task_yaml(
            "fruit_mc",
            mc,
            "output_type: multiple_choice\n"
            'doc_to_text: "Q: {{question}}\\nA:"\n'
            "doc_to_target: label\n"
            f"doc_to_choice: {json.dumps(choices)}\n"
            "metric_list:\n  - metric: acc\n  - metric: acc_norm\n",
        )
    )
    (tasks / "fruit_math.yaml").write_text(
        _task_yaml(
            "fruit_math",
            math,
            GEN.replace("Q: {{question}}", "{{question}}")
            + "metric_list:\n  - metric: exact_match\n"
            "filter_list:\n"
            "  - name: strict-match\n"
            "    filter:\n"
            "      - function: regex\n"
            '        regex_pattern: "#### (\\\\d+)"\n'
            "      - function: take_first\n"
            "  - name: flexible-extract\n"
            "    filter:\n"
            "      - function: regex\n"
            "        group_select: -1\n"
            '        regex_pattern: "(\\\\d+)"\n'
            "      - function: take_first\n",
        )
    )
    # The same task twice, its metric's ignore_case flipped: a rubric edit.
    for flag in ("true", "false"):
        folder = work / f"case_{flag}"
        folder.mkdir()
        (folder / "fruit_case.yaml").write_text(
            _task_yaml(
                "fruit_case",
                plain,
                GEN + f"metric_list:\n  - metric: exact_match\n    ignore_case: {flag}\n",
            )
        )
    (work / "fruit_lm.py").write_text(FRUIT_LM.replace("{ANSWERS!r}", repr(LM_ANSWERS)))

    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(work / "hf"),
        "PYTHONPATH": str(work),
    }
    # The CLI, with the custom LM's module imported first (how a plugin registers).
    cli = [
        sys.executable,
        "-c",
        "import sys, fruit_lm; from lm_eval.__main__ import cli_evaluate;"
        " sys.argv[0] = 'lm_eval'; cli_evaluate()",
    ]

    def lm_eval(output: Path, task: str, *extra: str, model: str = "fruit_lm", include=tasks):
        subprocess.run(
            [
                *(cli if model == "fruit_lm" else [sys.executable, "-m", "lm_eval"]), "run",
                "--model", model,
                *(("--model_args", "pretrained=fruit-v1") if model == "fruit_lm" else ()),
                "--tasks", task,
                "--include_path", str(include),
                "--log_samples",
                "--output_path", str(output),
                *extra,
            ],
            check=True,
            env=env,
            cwd=work,
        )  # fmt: skip

    def keep(name: str, made: Path) -> Path:
        """The newest run's files, flat in tests/data/lm_eval/NAME."""
        found = sorted(made.rglob("results_*.json"))
        target = dest / name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        date = found[-1].name.removeprefix("results_").removesuffix(".json")
        for f in found[-1].parent.iterdir():
            if f.name.endswith(f"_{date}.json") or f.name.endswith(f"_{date}.jsonl"):
                shutil.copy(f, target / f.name)
        return target

    for name, seed in (("seed1", "1"), ("seed2", "2")):
        lm_eval(work / name, "fruit_qa", "--seed", seed, model="dummy")
        keep(name, work / name)
    # An --output_path folder as lm-eval lays it out: its model subfolder, two runs.
    for _ in range(2):
        lm_eval(work / "out", "fruit_gen")
    shutil.rmtree(dest / "out", ignore_errors=True)
    shutil.copytree(work / "out", dest / "out")
    lm_eval(work / "two_tasks", "fruit_gen,fruit_mc")
    keep("two_tasks", work / "two_tasks")
    lm_eval(work / "hot", "fruit_gen", "--gen_kwargs", "temperature=0.7")
    keep("hot", work / "hot")
    lm_eval(work / "filters", "fruit_math")
    keep("filters", work / "filters")
    for flag in ("true", "false"):
        lm_eval(work / f"ignore_case_{flag}", "fruit_case", include=work / f"case_{flag}")
        keep(f"ignore_case_{flag}", work / f"ignore_case_{flag}")

    # The expectation, from lm-eval's own results files: each task's metric per filter.
    expected: dict[str, dict[str, float]] = {}
    for results in sorted(dest.rglob("results_*.json")):
        data = json.loads(results.read_text())
        expected[str(results.relative_to(dest))] = {
            f"{task}/{key}": value
            for task, found in data["results"].items()
            for key, value in found.items()
            if isinstance(value, int | float) and "_stderr" not in key and key != "sample_len"
        }
    (dest / "expected.json").write_text(
        json.dumps({"metrics": expected, "made_by": "lm-eval results_*.json"}, indent=1) + "\n"
    )
    shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "tests" / "data")
    parser.add_argument("--only", choices=["inspect", "lm_eval"])
    args = parser.parse_args()
    if args.only in (None, "inspect"):
        inspect_logs(args.out)
    if args.only in (None, "lm_eval"):
        lm_eval_logs(args.out)


if __name__ == "__main__":
    main()
