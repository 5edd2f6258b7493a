"""Make small real logs with inspect-ai and lm-evaluation-harness, for evalpin's tests.

Both tools are development-time only: run this with a separate venv that has them, never
evalpin's own (see `make_foreign_logs.sh`). No network: inspect uses `mockllm/model` with
outputs chosen per prompt, lm-eval the `dummy` model on a local task over a local JSONL.
Writes tests/data/inspect/*.eval|.json, tests/data/lm_eval/..., and beside the inspect
logs `expected.json`: what inspect's own `read_eval_log` says moved between two nights.

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
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate, solver

    def task(night: int, target_of: dict[str, str] | None = None, crash: str | None = None) -> Task:
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
                return state

            return solve

        return Task(
            name="fruit",
            dataset=samples,
            solver=[maybe_crash(), generate()],
            scorer=[includes(), match()],
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

    def run(stem: str, night: int, name: str = "model", **kw) -> Path:
        crash = kw.get("crash") is not None
        [log] = eval(
            task(night, **kw),
            model=model(name, night),
            log_dir=str(work / stem),
            display="none",
            max_samples=1,
            temperature=0.0,
            seed=7,
            fail_on_error=crash,  # the crashed run stops with status "error"
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
    write_eval_log(read_eval_log(str(n1)), str(dest / "night1.json"), format="json")
    # A run killed before it wrote header.json: the same zip without it.
    with zipfile.ZipFile(n1) as src, zipfile.ZipFile(dest / "killed.eval", "w") as dst:
        for info in src.infolist():
            if info.filename not in ("header.json", "reductions.json", "summaries.json"):
                dst.writestr(info, src.read(info))

    # The expectation, from inspect's own reader: the first scorer's C/I per sample.
    def grades(path: Path) -> dict[str, bool]:
        log = read_eval_log(str(path))
        scorer = log.eval.scorers[0].name
        return {f"{s.id}/{s.epoch}": s.scores[scorer].value == "C" for s in log.samples}

    g1, g2 = grades(n1), grades(n2)
    expected = {
        "scorer": read_eval_log(str(n1)).eval.scorers[0].name,
        "regressed": sorted(k for k in g1 if g1[k] and not g2[k]),
        "fixed": sorted(k for k in g1 if not g1[k] and g2[k]),
        "made_by": "inspect_ai.log.read_eval_log",
    }
    (dest / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    shutil.rmtree(work)


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
    (work / "fruit.yaml").write_text(
        "task: fruit_qa\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        'doc_to_text: "Q: {{question}}\\nA:"\n'
        'doc_to_target: "{{answer}}"\n'
        "generation_kwargs:\n  until: ['\\n']\n  temperature: 0.0\n  do_sample: false\n"
        "metric_list:\n  - metric: exact_match\n"
        "metadata:\n  version: 1.0\n"
    )
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(work / "hf"),
    }
    for name, seed in (("seed1", "1"), ("seed2", "2")):
        subprocess.run(
            [
                sys.executable, "-m", "lm_eval", "run",
                "--model", "dummy",
                "--tasks", "fruit_qa",
                "--include_path", str(work),
                "--log_samples",
                "--seed", seed,
                "--output_path", str(work / name),
            ],
            check=True,
            env=env,
            cwd=work,
        )  # fmt: skip
        found = sorted((work / name).rglob("results_*.json"))
        target = dest / name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for f in found[-1].parent.iterdir():
            shutil.copy(f, target / f.name)
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
