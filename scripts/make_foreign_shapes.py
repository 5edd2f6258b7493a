"""Make real inspect-ai and lm-eval logs of the shapes issue 41 reads, with the tools
themselves (the same venv and versions as `make_foreign_logs.sh`, which runs this too).

inspect-ai (`mockllm/model`, outputs chosen per prompt; tests/data/inspect/shapes/):

  system_terse.eval, system_polite.eval   one task, the same answers, its system prompt a
                                          solver step (`system_message`) worded otherwise
  chain_of_thought.eval                   the same with `chain_of_thought()` added
  reducer_mode.eval, reducer_at_least_2.eval
                                          answers that change between epochs, reduced
                                          by `mode` (3 epochs) / `at_least_2` (4 epochs)
  limit3.eval, sample_ids.eval            `limit=3` and `sample_id=[...]`: subsets
  eval_set/                               an `eval_set()` folder: its two logs and the
                                          manifests it writes (logs.json, eval-set.json)

lm-eval (the custom `fruit_lm`, tests/data/lm_eval/shapes/):

  fewshot0/, fewshot2/          `--num_fewshot 0` and `2`
  chat/, chat_other/            `--apply_chat_template` with two templates
  system/                       `--system_instruction ...`
  limit2/, samples/             `--limit 2`, `--samples '{"fruit_gen": [0, 2, 4]}'`
  full/                         the same task, every document (the subsets' reference)

and beside each set an `expected.json`: what the tool's own reader says (inspect's
`read_eval_log`: accuracy after its epochs reducer, per scorer; lm-eval's results
files: each task's metrics, its n-samples and its prompt settings).

    python scripts/make_foreign_shapes.py [--out tests/data]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_foreign_logs import (
    FRUIT,
    FRUIT_LM,
    GEN,
    LM_ANSWERS,
    _no_token_download,
    _task_yaml,
)

# What the mock model answers per sample on its 1st, 2nd, 3rd call (then again from
# the 1st): the reducer logs' epochs.
BY_EPOCH = {
    "apple": ("apple", "apple", "apple"),
    "banana": ("banana", "plantain", "banana"),  # 2 of 3: mode and at_least_2 pass
    "cherry": ("plum", "cherry", "plum"),  # 1 of 3: both fail
    "grape": ("grape", "grape", "raisin"),
    "lemon": ("lime", "lime", "lime"),
    "mango": ("mango", "papaya", "mango"),  # 2 of 3
}


def inspect_shapes(out: Path) -> None:
    _no_token_download()
    from inspect_ai import Task, eval, eval_set
    from inspect_ai.dataset import Sample
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import chain_of_thought, generate, system_message

    dest = out / "inspect" / "shapes"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    work = Path(tempfile.mkdtemp())
    questions = {q: sid for sid, q, _ in FRUIT}

    def model(by_epoch: bool = False):
        calls: dict[str, int] = {}

        def answer(messages, tools, tool_choice, config):
            text = messages[-1].text
            sid = next((s for q, s in questions.items() if q in text), None)
            if sid is None:
                return ModelOutput.from_content(model="model", content="?")
            if by_epoch:
                n = calls[sid] = calls.get(sid, 0) + 1
                said = BY_EPOCH[sid][(n - 1) % 3]
            else:
                said = BY_EPOCH[sid][0]
            return ModelOutput.from_content(model="model", content=said)

        return get_model("mockllm/model", custom_outputs=answer)

    def task(solver, epochs=1, name="fruit") -> Task:
        samples = [Sample(id=sid, input=q, target=t) for sid, q, t in FRUIT]
        return Task(name=name, dataset=samples, solver=solver, scorer=includes(), epochs=epochs)

    def run(stem: str, t: Task, by_epoch: bool = False, **kw) -> Path:
        [log] = eval(t, model=model(by_epoch), log_dir=str(work / stem), display="none",
                     max_samples=1, temperature=0.0, seed=7, **kw)  # fmt: skip
        target = dest / f"{stem}.eval"
        shutil.copy(Path(log.location.removeprefix("file://")), target)
        return target

    from inspect_ai import Epochs

    terse = system_message("Answer with one word.")
    made = [
        run("system_terse", task([terse, generate()])),
        run("system_polite", task([system_message("Answer politely, in a sentence."), generate()])),
        run("chain_of_thought", task([terse, chain_of_thought(), generate()])),
        run("reducer_mode", task([generate()], epochs=Epochs(3, "mode")), by_epoch=True),
        run(
            "reducer_at_least_2", task([generate()], epochs=Epochs(4, "at_least_2")), by_epoch=True
        ),
        run("limit3", task([terse, generate()]), limit=3),
        run("sample_ids", task([terse, generate()]), sample_id=["banana", "grape"]),
    ]
    # An eval set: two tasks in one folder, with the manifests eval_set writes beside them.
    folder = work / "eval_set"
    ok, _ = eval_set(
        [task([generate()], name="fruit"), task([generate()], name="fruit_again")],
        log_dir=str(folder), model=model(), display="none", max_samples=1,
        temperature=0.0, seed=7,
    )  # fmt: skip
    assert ok
    shutil.copytree(folder, dest / "eval_set")

    def accuracy(path: Path) -> dict[str, object]:
        log = read_eval_log(str(path))
        [score] = log.results.scores
        return {
            "scorer": score.name,
            "reducer": score.reducer,
            "accuracy": score.metrics["accuracy"].value,
            "samples": len(log.samples),
        }

    expected = {
        "made_by": "inspect_ai.log.read_eval_log",
        "logs": {p.name: accuracy(p) for p in made},
        "eval_set": sorted(p.name for p in (dest / "eval_set").iterdir()),
    }
    (dest / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    shutil.rmtree(work)


# The custom LM with chat templates: a template names its turn markers.
CHAT_LM = (
    FRUIT_LM.replace('@register_model("fruit_lm")', '@register_model("fruit_chat_lm")')
    + r"""

    @property
    def tokenizer_name(self):
        return "fruit-tokenizer"

    def chat_template(self, chat_template=False):
        # lm-eval asks for the template (and records it) before it builds the prompts.
        self.style = chat_template if isinstance(chat_template, str) else "plain"
        return TEMPLATES[self.style]

    def apply_chat_template(self, chat_history, add_generation_prompt=True):
        if getattr(self, "style", "plain") == "terse":
            return "".join(f"{m['content']}\n" for m in chat_history)
        out = "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in chat_history)
        return out + ("<assistant>" if add_generation_prompt else "")


TEMPLATES = {
    "plain": "{% for m in messages %}<{{m.role}}>{{m.content}}</{{m.role}}>{% endfor %}",
    "terse": "{% for m in messages %}{{m.content}}\n{% endfor %}",
}
"""
)


def lm_eval_shapes(out: Path) -> None:
    dest = out / "lm_eval" / "shapes"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    work = Path(tempfile.mkdtemp())
    data = work / "fruit.jsonl"
    with data.open("w") as fh:
        for sid, question, answer in FRUIT:
            fh.write(json.dumps({"id": sid, "question": question, "answer": answer}) + "\n")
    tasks = work / "tasks"
    tasks.mkdir()
    (tasks / "fruit_gen.yaml").write_text(
        _task_yaml(
            "fruit_gen", data, GEN + "fewshot_split: test\nmetric_list:\n  - metric: exact_match\n"
        )
    )
    (work / "fruit_lm.py").write_text(
        CHAT_LM.replace("{ANSWERS!r}", repr(LM_ANSWERS)).replace(
            "class FruitLM", "class FruitChatLM"
        )
    )
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "HF_HOME": str(work / "hf"), "PYTHONPATH": str(work)}  # fmt: skip
    cli = [sys.executable, "-c", "import sys, fruit_lm; from lm_eval.__main__ import cli_evaluate;"
           " sys.argv[0] = 'lm_eval'; cli_evaluate()"]  # fmt: skip

    def lm_eval(name: str, *extra: str) -> Path:
        output = work / name
        subprocess.run(
            [*cli, "run", "--model", "fruit_chat_lm", "--model_args", "pretrained=fruit-v1",
             "--tasks", "fruit_gen", "--include_path", str(tasks), "--log_samples",
             "--output_path", str(output), "--seed", "1", *extra],
            check=True, env=env, cwd=work,
        )  # fmt: skip
        [found] = sorted(output.rglob("results_*.json"))
        target = dest / name
        date = found.name.removeprefix("results_").removesuffix(".json")
        target.mkdir()
        for f in found.parent.iterdir():
            if f.name.endswith((f"_{date}.json", f"_{date}.jsonl")):
                shutil.copy(f, target / f.name)
        return target

    made = [
        lm_eval("full"),
        lm_eval("fewshot0", "--num_fewshot", "0"),
        lm_eval("fewshot2", "--num_fewshot", "2"),
        lm_eval("chat", "--apply_chat_template"),
        lm_eval("chat_other", "--apply_chat_template", "terse"),
        lm_eval("system", "--system_instruction", "Answer with the fruit's name only."),
        lm_eval("limit2", "--limit", "2"),
        lm_eval("samples", "--samples", json.dumps({"fruit_gen": [0, 2, 4]})),
    ]
    keys = ("n-shot", "n-samples", "chat_template_sha", "system_instruction",
            "system_instruction_sha", "fewshot_as_multiturn")  # fmt: skip
    expected = {}
    for folder in made:
        [results] = folder.glob("results_*.json")
        doc = json.loads(results.read_text())
        expected[folder.name] = {
            "metrics": {k: v for k, v in doc["results"]["fruit_gen"].items()
                        if isinstance(v, int | float) and "_stderr" not in k},
            **{k: doc.get(k) for k in keys},
        }  # fmt: skip
    (dest / "expected.json").write_text(
        json.dumps({"made_by": "lm-eval results_*.json", "runs": expected}, indent=1) + "\n"
    )
    shutil.rmtree(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent.parent / "tests" / "data")
    parser.add_argument("--only", choices=["inspect", "lm_eval"])
    args = parser.parse_args()
    if args.only in (None, "inspect"):
        inspect_shapes(args.out)
    if args.only in (None, "lm_eval"):
        lm_eval_shapes(args.out)


if __name__ == "__main__":
    main()
