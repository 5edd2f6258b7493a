"""`crosscheck` with the run's set (issue 52): a difference the set explains says why
(MBPP's set-up code, which bigcode-evaluation-harness leaves out), and a pass that took
longer than the harness's own limit, which the harness failed, is counted the harness's
way: its fail, said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"


def _run(capsys, source: str, shape: str, answers: dict, seeds: str = "1") -> None:
    assert cli(capsys, "import", shape, source, "--out", "set").code == 0
    Path("rec.jsonl").write_text(
        "".join(json.dumps({"case_id": t, "seed": 1, "text": a}) + "\n" for t, a in answers.items())
    )
    yaml_path = next(Path("set").glob("*.yaml"))
    ran = cli(capsys, "run", "--fixtures", str(yaml_path), "--slot", "rec=replay:rec.jsonl",
              "--seeds", seeds, "--out", "run.jsonl")  # fmt: skip
    assert ran.code == 0, ran.err


def test_mbpps_set_up_code_left_out_by_the_harness_is_named_as_its_defect(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    problem = json.loads((DATA / "mbpp" / "mbpp-setup.jsonl").read_text())
    _run(capsys, str(DATA / "mbpp" / "mbpp-setup.jsonl"), "mbpp", {"Mbpp/9001": problem["code"]})
    # the harness's verdict on the same answer, run without the set-up code
    Path("results.jsonl").write_text(json.dumps({
        "task_id": "Mbpp/9001", "seed": 1, "passed": False,
        "result": "failed: name 'PRICES' is not defined",
    }) + "\n")  # fmt: skip
    r = cli(capsys, "crosscheck", "run.jsonl", "results.jsonl")
    assert r.code == 1  # still a difference: said, not hidden
    assert "differ Mbpp/9001 seed 1: evalpin pass" in r.out
    assert "test_setup_code" in r.out and "the harness's defect, evalpin is right" in r.out
    shown = json.loads(cli(capsys, "crosscheck", "run.jsonl", "results.jsonl", "--json").out)
    assert "test_setup_code" in shown["disagreements"][0]["note"]
    # an answer the harness fails for its own reasons gets no such note
    Path("results.jsonl").write_text(json.dumps({
        "task_id": "Mbpp/9001", "seed": 1, "passed": True, "result": "passed"}) + "\n")  # fmt: skip
    assert cli(capsys, "crosscheck", "run.jsonl", "results.jsonl").code == 0


def test_a_pass_past_the_harnesss_limit_counts_as_its_fail(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HumanEval's harness gives an answer 3 s (`harness_timeout_s`); evalpin's item
    allows 10: a correct answer that takes 4 s passes here and times out there, and the
    crosscheck counts it as the harness does, naming it."""
    monkeypatch.chdir(tmp_path)
    problem = {
        "task_id": "Slow/1",
        "prompt": "def double(n):\n",
        "canonical_solution": "    return 2 * n\n",
        "test": "def check(candidate):\n    assert candidate(3) == 6\n",
        "entry_point": "double",
    }
    Path("p.jsonl").write_text(json.dumps(problem) + "\n")
    slow = "    import time\n    time.sleep(4)\n    return 2 * n\n"
    _run(capsys, "p.jsonl", "humaneval", {"Slow/1": slow})
    case = json.loads(Path("run.jsonl").read_text().splitlines()[1])
    assert case["pass"] is True and case["seconds"] > 3
    Path("results.jsonl").write_text(
        json.dumps({"task_id": "Slow/1", "seed": 1, "passed": False, "result": "timed out"}) + "\n"
    )
    r = cli(capsys, "crosscheck", "run.jsonl", "results.jsonl", "--json")
    shown = json.loads(r.out)
    assert r.code == 0 and shown["agree"] == 1 and shown["both_fail"] == 1, shown
    assert shown["past_harness_limit"] == [{"task_id": "Slow/1", "seed": 1}]
    text = cli(capsys, "crosscheck", "run.jsonl", "results.jsonl").out
    assert "past the harness's own 3 s limit" in text
    # the harness passing it is no difference, whatever it took
    Path("results.jsonl").write_text(
        json.dumps({"task_id": "Slow/1", "seed": 1, "passed": True, "result": "passed"}) + "\n"
    )
    shown = json.loads(cli(capsys, "crosscheck", "run.jsonl", "results.jsonl", "--json").out)
    assert shown["both_pass"] == 1 and shown["past_harness_limit"] == []
