"""Issue 41, inspect-ai and lm-eval: the shapes people make next, on logs made by the
real tools (scripts/make_foreign_shapes.py), with what the tools' own readers said in
each set's expected.json. A solver step, a few-shot count, a chat template or a system
instruction changed is a changed instrument, named; a reducer is named beside inspect's
own accuracy; an eval set's manifests are no runs; a --limit/--samples run is a subset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalpin.core.judge.history import load_history
from evalpin.core.judge.verdict import judge
from evalpin.core.read.formats import runs_in
from evalpin.core.read.runfile import read_run
from tests.clirun import cli

DATA = Path(__file__).parents[1] / "data"
INSPECT = DATA / "inspect" / "shapes"
LM = DATA / "lm_eval" / "shapes"
INSPECT_EXPECTED = json.loads((INSPECT / "expected.json").read_text())
LM_EXPECTED = json.loads((LM / "expected.json").read_text())["runs"]
REFUSED = "REFUSE_DIFF: triple mismatch, not a prompt regression"


def ins(name: str) -> str:
    return str(INSPECT / name)


def lm(name: str) -> str:
    return str(LM / name)


def refusal(capsys, left: str, right: str) -> tuple[list[str], dict]:
    r = cli(capsys, "diff", left, right)
    assert r.code == 2, r.out
    lines = r.out.splitlines()
    assert lines[0] == REFUSED
    data = json.loads(cli(capsys, "diff", left, right, "--json").out)
    return lines, data


# -- inspect: the solver chain decides the answer ----------------------------------


def test_a_system_prompt_step_changed_is_refused_naming_it(capsys) -> None:
    lines, data = refusal(capsys, ins("system_terse.eval"), ins("system_polite.eval"))
    named = [line for line in lines if line.strip().startswith("prompt changed:")]
    assert len(named) == 1 and "system_message" in named[0]
    assert "Answer with one word." in named[0] and "Answer politely" in named[0]
    assert [c["part"] for c in data["prompt_changes"]] == ["system_message"]
    # the answers were the same: without the chain every sample would have joined
    both = [read_run(ins(n)) for n in ("system_terse.eval", "system_polite.eval")]
    assert [r.completion_digest for r in both[0].rows] == [
        r.completion_digest for r in both[1].rows
    ]


def test_a_step_added_to_the_chain_is_refused_naming_the_chain(capsys) -> None:
    _, data = refusal(capsys, ins("system_terse.eval"), ins("chain_of_thought.eval"))
    changed = {c["part"]: (c["left"], c["right"]) for c in data["prompt_changes"]}
    assert changed["solver chain"] == (
        "system_message, generate",
        "system_message, chain_of_thought, generate",
    )
    assert changed["chain_of_thought"][0] is None


def test_the_same_chain_joins(capsys) -> None:
    """A run of part of the samples, same chain: its samples join the whole run's."""
    r = cli(capsys, "diff", ins("system_terse.eval"), ins("limit3.eval"), "--json")
    assert r.code == 0, r.out
    data = json.loads(r.out)
    assert data["compared_cases"] == 3 and len(data["only_left"]) == 3
    assert data["prompt_changes"] == []


def test_history_breaks_where_the_chain_moved_and_calls_it_a_prompt_change() -> None:
    history = load_history(INSPECT)
    moved = [b for b in history.breaks if "prompt change" in b.kinds]
    assert moved
    keys = {c.key for b in moved for c in b.changes}
    assert "system_message" in keys and "solver chain" in keys
    assert not any("backend delta" in b.kinds or "dataset edit" in b.kinds for b in history.breaks)
    # the terse and the polite runs are never one series
    series_of = {Path(r.path).name: s.index for s in history.series for r in s.runs}
    assert series_of["system_terse.eval"] != series_of["system_polite.eval"]


# -- inspect: epochs reducers ------------------------------------------------------


@pytest.mark.parametrize("name", ["reducer_mode.eval", "reducer_at_least_2.eval"])
def test_reducer_is_named_beside_inspects_own_accuracy(capsys, name: str) -> None:
    own = INSPECT_EXPECTED["logs"][name]
    run = read_run(ins(name))
    v = judge(run)
    assert v.tool_score is not None
    assert v.tool_score.value == pytest.approx(own["accuracy"])
    assert own["reducer"] in v.tool_score.name
    # evalpin's rate counts every (sample, epoch): here it differs, and the verdict says why
    judged = [r for r in run.rows if not r.errored]
    assert v.pass_rate == pytest.approx(sum(r.passed for r in judged) / len(judged))
    assert v.pass_rate != pytest.approx(own["accuracy"])
    assert "every (sample, epoch)" in v.tool_score.why
    assert run.header.controls["epochs_reducer"] == [own["reducer"]]
    out = cli(capsys, "verdict", ins(name)).out
    assert f"epochs reducer {own['reducer']}" in out and f"{own['accuracy']:.3f}" in out
    data = json.loads(cli(capsys, "verdict", ins(name), "--json").out)
    assert data["tool_score"]["value"] == pytest.approx(own["accuracy"])


def test_one_epoch_keeps_inspects_accuracy_equal_to_the_pass_rate() -> None:
    v = judge(read_run(ins("system_terse.eval")))
    own = INSPECT_EXPECTED["logs"]["system_terse.eval"]["accuracy"]
    assert v.tool_score is not None and v.tool_score.value == pytest.approx(own)
    assert v.pass_rate == pytest.approx(own)


# -- inspect: eval-set folders ---------------------------------------------------------


def test_eval_set_manifests_are_not_runs(capsys, tmp_path: Path) -> None:
    folder = INSPECT / "eval_set"
    assert {"logs.json", "eval-set.json"} <= {p.name for p in folder.iterdir()}
    listed = runs_in(folder)
    assert len(listed) == 2 and all(p.suffix == ".eval" for p in listed)
    history = load_history(folder)
    assert history.unreadable == [] and history.runs == 2
    # a folder of one log and the manifests is that log, for diff
    one = tmp_path / "set"
    one.mkdir()
    for p in folder.iterdir():
        if p.suffix == ".json" or "fruit_" in p.name:
            shutil.copy(p, one / p.name)
    [log] = [p for p in one.iterdir() if p.suffix == ".eval"]
    r = cli(capsys, "diff", str(one), str(log), "--json")
    assert r.code == 0, r.err
    # a manifest named as a run is refused saying what it is
    r = cli(capsys, "verdict", str(folder / "logs.json"))
    assert r.code == 3 and "manifest, not a run" in r.err and len(r.err.strip().splitlines()) == 1


# -- lm-eval: what the user changed is named -------------------------------------------


@pytest.mark.parametrize(
    ("left", "right", "part"),
    [
        ("fewshot0", "fewshot2", "num_fewshot"),
        ("full", "system", "system_instruction"),
        ("full", "chat", "chat_template"),
        ("chat", "chat_other", "chat_template"),
    ],
)
def test_lm_eval_refusal_names_the_prompt_setting(capsys, left: str, right: str, part: str) -> None:
    lines, data = refusal(capsys, lm(left), lm(right))
    changes = {c["part"]: (c["left"], c["right"]) for c in data["prompt_changes"]}
    assert part in changes
    assert any(line.strip().startswith(f"prompt changed: {part}:") for line in lines)
    if part == "num_fewshot":
        own = (LM_EXPECTED[left]["n-shot"]["fruit_gen"], LM_EXPECTED[right]["n-shot"]["fruit_gen"])
        assert changes[part] == own
    if part == "system_instruction":
        assert changes[part] == (None, LM_EXPECTED[right]["system_instruction"])


def test_lm_eval_same_prompt_settings_join(capsys) -> None:
    """`--num_fewshot 0` is the task's default here: the same prompts, one instrument."""
    r = cli(capsys, "diff", lm("full"), lm("fewshot0"), "--json")
    assert r.code == 0, r.out
    assert json.loads(r.out)["compared_cases"] == 6


@pytest.mark.parametrize("name", sorted(LM_EXPECTED))
def test_lm_eval_pass_rate_is_the_tools_metric(name: str) -> None:
    run = read_run(lm(name))
    assert len(run.rows) == LM_EXPECTED[name]["n-samples"]["fruit_gen"]["effective"]
    v = judge(run)
    assert v.pass_rate == pytest.approx(LM_EXPECTED[name]["metrics"]["exact_match,none"])


# -- both: a subset is a subset --------------------------------------------------------


def test_history_calls_limit_and_samples_runs_subsets(tmp_path: Path) -> None:
    for name in ("full", "limit2"):
        shutil.copytree(LM / name, tmp_path / "lm" / name)
    history = load_history(tmp_path / "lm" / "full")
    assert history.runs == 1
    folder = tmp_path / "nights"
    folder.mkdir()
    for name in ("full", "limit2", "samples"):
        for f in (LM / name).iterdir():
            shutil.copy(f, folder / f.name)
    history = load_history(folder)
    assert history.breaks
    for brk in history.breaks:
        assert brk.kinds == ["subset"], brk
    subsets = {c.after for b in history.breaks for c in b.changes if c.key == "subset"}
    subsets |= {c.before for b in history.breaks for c in b.changes if c.key == "subset"}
    assert any(s.startswith("limit 2 (fruit_gen: 2 of 6") for s in subsets)
    assert any(s.startswith("chosen samples") and "3 of 6" in s for s in subsets)


def test_inspect_limit_and_sample_id_are_subsets(tmp_path: Path) -> None:
    for name in ("system_terse.eval", "limit3.eval", "sample_ids.eval"):
        shutil.copy(INSPECT / name, tmp_path / name)
    history = load_history(tmp_path)
    assert history.breaks and all(b.kinds == ["subset"] for b in history.breaks)
    assert read_run(ins("limit3.eval")).subset == "limit 3"
    assert read_run(ins("sample_ids.eval")).subset == "sample_id banana, grape"
    assert read_run(ins("system_terse.eval")).subset is None
