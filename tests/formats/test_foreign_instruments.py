"""Issue 27, reader side: other tools' errors are errors, their instrument is what they
record as deciding the grade, every score can be chosen, and their runs are read as the
tools lay them out. All on logs made by the real tools (scripts/make_foreign_logs.py),
with what the tools' own readers said kept in expected.json."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.read.formats import ReadOptions, runs_in
from evalpin.core.read.runfile import RunFile, read_run
from evalpin.core.records import ERROR
from tests.clirun import cli

DATA = Path(__file__).parents[1] / "data"
INSPECT = DATA / "inspect"
LM_EVAL = DATA / "lm_eval"
INSPECT_EXPECTED = json.loads((INSPECT / "expected.json").read_text())
LM_EXPECTED = json.loads((LM_EVAL / "expected.json").read_text())["metrics"]
REFUSED = "REFUSE_DIFF: triple mismatch, not a prompt regression"


def ins(name: str) -> str:
    return str(INSPECT / name)


def results_of(folder: str) -> Path:
    [found] = sorted((LM_EVAL / folder).glob("results_*.json"))
    return found


def out_runs() -> list[Path]:
    return sorted((LM_EVAL / "out").rglob("results_*.json"))


def case_mean(run: RunFile) -> float:
    """Mean over cases of each case's pass rate over its judged repeats: inspect's
    accuracy after its epoch reduction (mean), which skips errored samples."""
    by_case: dict[str, list[bool]] = defaultdict(list)
    for r in run.rows:
        if not r.errored:
            by_case[r.case_id].append(r.passed)
    return sum(sum(v) / len(v) for v in by_case.values()) / len(by_case)


def judged_rate(run: RunFile) -> float:
    judged = [r for r in run.rows if not r.errored]
    return sum(r.passed for r in judged) / len(judged)


# -- errors are errors -------------------------------------------------------------


def test_errored_inspect_samples_are_error_cases_with_the_tools_message() -> None:
    run = read_run(ins("errors.eval"))
    errored = sorted(f"{r.case_id}/{r.seed}" for r in run.rows if r.errored)
    assert errored == INSPECT_EXPECTED["errored"]["errors.eval"]
    for i, row in enumerate(run.rows):
        if row.errored:
            rec = run.record(i)
            assert row.status == rec.status == ERROR and not row.passed
            assert rec.reasons == ["log_error:error"]
            assert "tool sandbox unavailable" in rec.error
            # no model answered: never evidence of another instrument
            assert row.reported_model is None and rec.reported_model is None
    assert run.header.repeat_key == "epoch"
    summary = run.summary
    assert summary is not None and summary.errors == 5 and summary.records == 12
    assert summary.passed == sum(r.passed for r in run.rows if not r.errored)


def test_pass_rate_over_judged_is_inspects_accuracy() -> None:
    for name in ("night1.eval", "errors.eval", "default_config.eval", "temperature_07.eval"):
        run = read_run(ins(name))
        accuracy = INSPECT_EXPECTED["accuracy"][name]["includes"]["accuracy"]
        assert case_mean(run) == pytest.approx(accuracy), name
    # With no errors, the plain pass rate is inspect's accuracy too.
    assert judged_rate(read_run(ins("night1.eval"))) == pytest.approx(
        INSPECT_EXPECTED["accuracy"]["night1.eval"]["includes"]["accuracy"]
    )


def test_errored_night_against_a_clean_night_is_the_same_instrument(capsys) -> None:
    r = cli(capsys, "diff", ins("night1.eval"), ins("errors.eval"), "--json")
    assert not r.out.startswith(REFUSED), r.out
    data = json.loads(r.out)
    assert data["mismatches"] == []
    moved = {(m["case_id"], m["seed"]): m["kind"] for m in data["silent_regressions"]}
    errored = {tuple(k.rsplit("/", 1)) for k in INSPECT_EXPECTED["errored"]["errors.eval"]}
    assert {(c, int(s)) for c, s in errored} == {k for k, v in moved.items() if v == "errored"}
    assert "regressed" not in moved.values() and "fixed" not in moved.values()
    text = cli(capsys, "diff", ins("night1.eval"), ins("errors.eval")).out
    assert "reported_model" not in text


def test_a_sample_without_the_chosen_score_is_unscored(tmp_path: Path) -> None:
    log = json.loads((INSPECT / "night1.json").read_text())
    del log["samples"][0]["scores"]["includes"]
    path = tmp_path / "unscored.json"
    path.write_text(json.dumps(log))
    run = read_run(path)
    [i] = [k for k, r in enumerate(run.rows) if r.errored]
    assert run.record(i).reasons == ["log_error:unscored"]
    assert "no includes score" in run.record(i).error
    # A cancelled sample (inspect records the backend cancellation's repr).
    log["samples"][1]["error"] = {"message": "CancelledError('Cancelled via cancel scope')"}
    path.write_text(json.dumps(log))
    run = read_run(path)
    assert sorted(run.record(k).reasons[0] for k, r in enumerate(run.rows) if r.errored) == [
        "log_error:cancelled",
        "log_error:unscored",
    ]


def test_long_tool_messages_are_capped(tmp_path: Path) -> None:
    log = json.loads((INSPECT / "night1.json").read_text())
    log["samples"][0]["error"] = {"message": "x" * 10_000 + "the end", "traceback": ""}
    path = tmp_path / "long.json"
    path.write_text(json.dumps(log))
    run = read_run(path)
    [i] = [k for k, r in enumerate(run.rows) if r.errored]
    error = run.record(i).error
    assert len(error) <= 2000 and error.endswith("the end")


def test_lm_eval_sample_without_the_metric_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "lm"
    shutil.copytree(LM_EVAL / "seed1", folder)
    samples = next(folder.glob("samples_*.jsonl"))
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    del lines[2]["exact_match"]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = read_run(folder)
    [row] = [r for r in run.rows if r.errored]
    assert row.case_id == "fruit_qa/2" and not row.passed
    assert run.summary.errors == 1


# -- the instrument ------------------------------------------------------------------


def test_inspect_temperature_is_a_repointed_slot(capsys) -> None:
    default, hot = read_run(ins("default_config.eval")), read_run(ins("temperature_07.eval"))
    assert hot.header.slot["generate"] == {"temperature": 0.7}
    assert default.header.slot["generate"] == {}
    assert default.rows[0].slot_settings != hot.rows[0].slot_settings
    assert hot.rows[0].slot_settings == hot.header.slot["settings_digest"]
    for left in ("default_config.eval", "night1.eval"):
        r = cli(capsys, "diff", ins(left), ins("temperature_07.eval"))
        assert r.code == 2 and r.out.splitlines()[0] == REFUSED
        assert "slot settings" in r.out


def test_lm_eval_temperature_is_a_repointed_slot(capsys) -> None:
    cold, hot = read_run(out_runs()[0]), read_run(LM_EVAL / "hot")
    assert hot.header.slot["gen_kwargs"] == {"temperature": 0.7}
    assert cold.rows[0].slot_settings != hot.rows[0].slot_settings
    r = cli(capsys, "diff", str(out_runs()[0]), str(LM_EVAL / "hot"))
    assert r.code == 2 and r.out.splitlines()[0] == REFUSED and "slot settings" in r.out


def test_generation_seed_alone_is_a_control_not_the_instrument() -> None:
    left, right = read_run(LM_EVAL / "seed1"), read_run(LM_EVAL / "seed2")
    assert left.header.controls["random_seed"] != right.header.controls["random_seed"]
    assert left.header.slot["settings_digest"] == right.header.slot["settings_digest"]
    assert read_run(ins("night1.eval")).header.controls["seed"] == 7


def test_an_extra_scorer_is_not_another_rubric(capsys) -> None:
    for scorer in ("match", "includes"):
        options = ReadOptions(scorer=scorer)
        night = read_run(ins("night1.eval"), options)
        extra = read_run(ins("extra_scorer.eval"), options)
        assert night.header.grader_version == extra.header.grader_version
        r = cli(capsys, "diff", ins("night1.eval"), ins("extra_scorer.eval"), "--scorer", scorer)
        assert r.code == 0, r.out
    # the scorer chosen is part of the rubric
    assert (
        read_run(ins("night1.eval"), ReadOptions(scorer="match")).header.grader_version
        != read_run(ins("night1.eval")).header.grader_version
    )


def test_metric_options_are_the_rubric_and_start_a_new_series(capsys, tmp_path: Path) -> None:
    r = cli(capsys, "diff", str(LM_EVAL / "ignore_case_true"), str(LM_EVAL / "ignore_case_false"))
    assert r.code == 2 and r.out.splitlines()[0] == REFUSED and "grader_version" in r.out
    for name in ("ignore_case_true", "ignore_case_false"):
        for f in (LM_EVAL / name).iterdir():
            shutil.copy(f, tmp_path / f.name)
    data = json.loads(cli(capsys, "history", str(tmp_path), "--json").out)
    assert len(data["series"]) == 2 and data["unreadable"] == []
    # the pass rates are lm-eval's own
    for name in ("ignore_case_true", "ignore_case_false"):
        results = results_of(name)
        want = LM_EXPECTED[f"{name}/{results.name}"]["fruit_case/exact_match,none"]
        assert judged_rate(read_run(results)) == pytest.approx(want)


def test_a_missing_pin_stays_missing(tmp_path: Path) -> None:
    lone = tmp_path / next((LM_EVAL / "seed1").glob("samples_*.jsonl")).name
    shutil.copy(next((LM_EVAL / "seed1").glob("samples_*.jsonl")), lone)
    run = read_run(lone)
    assert run.rows[0].slot_settings is None and run.rows[0].grader_version is None
    assert run.header.slot == {} and run.summary is None


# -- every score can be chosen ---------------------------------------------------------


def test_dict_scores_are_chosen_by_key(capsys) -> None:
    accuracy = INSPECT_EXPECTED["accuracy"]["dict_score.eval"]
    for key in ("exact", "polite"):
        run = read_run(ins("dict_score.eval"), ReadOptions(scorer=f"checks.{key}"))
        assert judged_rate(run) == pytest.approx(accuracy[f"checks.{key}"]["accuracy"])
        assert f"scorer checks.{key}" in run.what
    exact = read_run(ins("dict_score.eval"), ReadOptions(scorer="checks.exact"))
    polite = read_run(ins("dict_score.eval"), ReadOptions(scorer="checks.polite"))
    assert exact.header.grader_version != polite.header.grader_version
    # the default is the first scorer's first key
    assert read_run(ins("dict_score.eval")).rows == exact.rows
    r = cli(capsys, "verdict", ins("dict_score.eval"), "--scorer", "checks.exact")
    assert r.code in (0, 1) and "scorer checks.exact" in r.out
    for wrong in ("checks", "checks.nope", "nope"):
        r = cli(capsys, "verdict", ins("dict_score.eval"), "--scorer", wrong)
        assert r.code == 3 and "checks.exact, checks.polite" in r.err, (wrong, r.err)


def test_metric_applies_to_the_tasks_that_have_it(capsys) -> None:
    path = results_of("two_tasks")
    expected = LM_EXPECTED[f"two_tasks/{path.name}"]
    for metric in ("acc", "acc_norm"):
        run = read_run(path, ReadOptions(metric=metric))
        mc = [r for r in run.rows if r.case_id.startswith("fruit_mc/")]
        gen = [r for r in run.rows if r.case_id.startswith("fruit_gen/")]
        assert sum(r.passed for r in mc) / len(mc) == pytest.approx(
            expected[f"fruit_mc/{metric},none"]
        )
        assert sum(r.passed for r in gen) / len(gen) == pytest.approx(
            expected["fruit_gen/exact_match,none"]
        )
        assert f"fruit_mc: {metric}" in run.what and "fruit_gen: exact_match" in run.what
    same = read_run(path, ReadOptions(metric=("fruit_mc=acc_norm",)))
    assert "fruit_mc: acc_norm" in same.what
    r = cli(capsys, "verdict", str(path), "--metric", "acc")
    assert r.code in (0, 1) and "fruit_mc: acc" in r.out
    r = cli(capsys, "verdict", str(path), "--metric", "f1")
    assert r.code == 3 and "fruit_gen: exact_match; fruit_mc: acc, acc_norm" in r.err
    r = cli(capsys, "verdict", str(path), "--metric", "fruit_gen=acc")
    assert r.code == 3 and "no metric 'acc' for task fruit_gen" in r.err
    r = cli(capsys, "verdict", str(path), "--metric", "nope=acc")
    assert r.code == 3 and "fruit_gen, fruit_mc" in r.err


def test_filter_chooses_the_graded_answers(capsys) -> None:
    path = results_of("filters")
    expected = LM_EXPECTED[f"filters/{path.name}"]
    strict, flexible = (
        read_run(path, ReadOptions(filter=name)) for name in ("strict-match", "flexible-extract")
    )
    assert read_run(path).rows == strict.rows  # the task's first filter
    assert judged_rate(strict) == pytest.approx(expected["fruit_math/exact_match,strict-match"])
    assert judged_rate(flexible) == pytest.approx(
        expected["fruit_math/exact_match,flexible-extract"]
    )
    assert strict.header.grader_version != flexible.header.grader_version
    r = cli(capsys, "diff", str(path), str(path), "--filter", "flexible-extract")
    assert r.code == 0 and "filter flexible-extract" in r.out
    r = cli(capsys, "verdict", str(path), "--filter", "loose")
    assert r.code == 3 and "strict-match, flexible-extract" in r.err


def test_lm_eval_detail_shows_what_the_model_said_and_the_filtered_answer() -> None:
    run = read_run(results_of("filters"), ReadOptions(filter="flexible-extract"))
    [i] = [k for k, r in enumerate(run.rows) if r.case_id == "fruit_math/1"]
    rec = run.record(i)
    assert rec.text == "A square has 4"
    assert rec.tail == "filtered (flexible-extract): 4"


def test_letter_scores_keep_their_value(tmp_path: Path) -> None:
    log = json.loads((INSPECT / "night1.json").read_text())
    log["samples"][0]["scores"]["includes"]["value"] = "P"
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(log))
    run = read_run(path)
    i = next(
        k
        for k, r in enumerate(run.rows)
        if (r.case_id, r.seed) == (str(log["samples"][0]["id"]), log["samples"][0]["epoch"])
    )
    assert run.record(i).reasons == ["score:P"] and not run.rows[i].errored


# -- runs as the tools lay them out ------------------------------------------------------


def test_lm_eval_output_folder_is_a_runs_folder(capsys) -> None:
    assert runs_in(LM_EVAL / "out") == out_runs() and len(out_runs()) == 2
    data = json.loads(cli(capsys, "history", str(LM_EVAL / "out"), "--json").out)
    assert data["unreadable"] == []
    assert sorted(Path(run["path"]).name for s in data["series"] for run in s["runs"]) == [
        p.name for p in out_runs()
    ]
    r = cli(capsys, "verdict", str(LM_EVAL / "out"))
    assert r.code == 3 and "name one of:" in r.err and out_runs()[0].name in r.err


def test_a_folder_holding_one_run_is_that_run(capsys, tmp_path: Path) -> None:
    log_dir = INSPECT / "log_dir"
    [only] = runs_in(log_dir)
    assert read_run(log_dir).rows == read_run(only).rows
    r = cli(capsys, "diff", str(log_dir), ins("errors.eval"))
    assert r.code == 0, r.out
    data = json.loads(cli(capsys, "history", str(log_dir), "--json").out)
    assert sum(len(s["runs"]) for s in data["series"]) == 1
    # an lm-eval output folder with one run, model subfolder and all
    one = tmp_path / "out"
    shutil.copytree(LM_EVAL / "out", one)
    newest = out_runs()[-1].name.removeprefix("results_").removesuffix(".json")
    for f in list(one.rglob("*")):
        if f.is_file() and newest in f.name:
            f.unlink()
    assert read_run(one).rows == read_run(out_runs()[0]).rows
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="is a directory"):
        read_run(empty)


def test_one_task_joins_across_a_one_task_and_a_two_task_run(capsys) -> None:
    one, two = read_run(out_runs()[0]), read_run(results_of("two_tasks"))
    ids = {r.case_id for r in one.rows}
    assert ids == {r.case_id for r in two.rows if r.case_id.startswith("fruit_gen/")}
    assert all(i.startswith("fruit_gen/") for i in ids)
    assert one.record(0).source_id == "apple"
    r = cli(capsys, "diff", str(out_runs()[0]), str(results_of("two_tasks")), "--json")
    assert r.code == 0, r.out
    data = json.loads(r.out)
    assert data["compared_cases"] == len(ids) and data["mismatches"] == []
    assert {k["case_id"] if isinstance(k, dict) else k[0] for k in data["only_right"]} == {
        r.case_id for r in two.rows if r.case_id.startswith("fruit_mc/")
    }


def test_repeat_words_are_the_tools() -> None:
    assert read_run(ins("night1.eval")).header.repeat_key == "epoch"
    assert read_run(LM_EVAL / "seed1").header.repeat_key == "repeat"


def test_read_options_round_trip_and_accept_old_shapes() -> None:
    options = ReadOptions(scorer="checks.exact", metric=["acc", "fruit_gen=exact_match"])
    assert options.metric == ("acc", "fruit_gen=exact_match") and options.filter == ()
    assert ReadOptions.from_json(json.loads(json.dumps(options.to_json()))) == options
    assert ReadOptions(metric="acc").metric == ("acc",) and ReadOptions(metric=None).metric == ()
    assert options.choices("metric") == (["acc"], {"fruit_gen": "exact_match"})
