"""The Python API (evalpin.api, re-exported lazily by `evalpin`): read the demo runs,
compare them, judge them, hand the rows to plain Python or pandas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import evalpin
from evalpin import api
from tests.builders import grid, write_run

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "runs"
NIGHT_1 = RUNS / "demo-night-1.jsonl"
NIGHT_2 = RUNS / "demo-night-2.jsonl"
ROTATED = RUNS / "demo-night-2-lab_free_2.jsonl"
PUBLISHABLE = RUNS / "demo-coding-publishable.jsonl"
PROBE = RUNS / "demo-coding-probe.jsonl"


def test_read_run_gives_the_header_pins_and_one_row_per_case_and_seed() -> None:
    run = evalpin.read_run(NIGHT_1)
    assert isinstance(run, api.Run)
    assert run.path == str(NIGHT_1)
    assert run.complete is True and run.what == "evalpin run"
    assert run.seeds == [11, 29, 47]
    assert len(run) == len(run.rows) == 90  # 30 cases x 3 seeds
    assert run.header is not None and run.header.model_slot == "lab_free_1"
    assert run.summary is not None and run.summary.records == 90
    assert run.pins["model_slot"] == "lab_free_1"
    assert run.pins["dataset_hash"] == run.header.fixtures.dataset_hash
    assert run.pins["envelope_hash"] == run.header.fixtures.envelope_hash
    assert list(run.pins) == [
        "dataset_hash",
        "envelope_hash",
        "grader_version",
        "model_slot",
        "reported_model",
        "slot_settings",
        "env_digest",
        "scorer_commit",
        "seeds",
    ]
    assert "90 case records, complete" in run.label
    assert next(iter(run)).case_id == run.rows[0].case_id


def test_compare_refuses_the_rotated_slot_and_joins_the_two_nights() -> None:
    refused = evalpin.compare(NIGHT_2, ROTATED)
    assert isinstance(refused, evalpin.Comparison)
    assert refused.refused
    assert "model_slot" in {m.key for m in refused.mismatches}
    assert refused.movements == [] and refused.stats is None

    nights = evalpin.compare(evalpin.read_run(NIGHT_1), str(NIGHT_2))
    assert not nights.refused
    assert nights.counts["regressed"] == 8
    assert nights.counts["fixed"] == 6
    assert nights.counts["drift"] == 15
    assert all(isinstance(m, evalpin.Movement) for m in nights.movements)
    payload = nights.to_json()  # the `diff --json` payload, every movement decoded
    assert len(payload["silent_regressions"]) == len(nights.movements) == 29
    assert json.loads(json.dumps(payload)) == payload


def test_verdict_applies_the_publish_rule_to_one_run_or_several() -> None:
    probe = evalpin.verdict(PROBE)
    assert isinstance(probe, evalpin.Verdict)
    assert probe.label == api.EXPLORATORY
    night = evalpin.verdict(evalpin.read_run(NIGHT_1))
    assert night.label == api.INTERNAL
    assert night.reasons
    labels = [v.label for v in evalpin.verdict([NIGHT_1, ROTATED])]
    assert labels == [api.INTERNAL, api.INTERNAL]
    assert set(probe.pass_rate_by_seed) == {11, 29}
    assert probe.to_json()["label"] == api.EXPLORATORY


def test_the_coding_demo_run_is_publishable_from_its_commit() -> None:
    # Needs the clean scorer commit make_demo.py records (fixtures/ committed).
    v = evalpin.verdict(PUBLISHABLE)
    assert v.label == api.PUBLISHABLE, v.reasons
    assert v.unstable  # the two flaky items, as the README says


def test_a_disclosed_holdout_case_makes_the_run_contaminated(tmp_path: Path) -> None:
    first = evalpin.read_run(PUBLISHABLE).rows[0].case_id
    disclosed = tmp_path / "disclosed.txt"
    disclosed.write_text(f"# published last week\n{first}\n")
    assert evalpin.verdict(PUBLISHABLE, disclosed=disclosed).label == api.CONTAMINATED


def test_to_dicts_has_the_run_files_keys() -> None:
    run = evalpin.read_run(NIGHT_1)
    rows = run.to_dicts()
    assert len(rows) == 90
    assert tuple(rows[0]) == api.ROW_KEYS
    assert set(api.ROW_KEYS) >= {"case_id", "seed", "pass", "fixture_hash", "model_slot"}
    assert rows[0]["case_id"] == run.rows[0].case_id
    assert rows[0]["pass"] is run.rows[0].passed
    assert sum(r["pass"] for r in rows) == run.summary.passed
    json.dumps(rows)  # plain values only

    detailed = run.to_dicts(detail=True)
    assert tuple(detailed[0]) == api.ROW_KEYS + api.DETAIL_KEYS
    failing = next(r for r in detailed if not r["pass"])
    assert failing["reasons"]  # a failed golden case says why
    assert isinstance(failing["tool_names"], list)
    json.dumps(detailed)
    assert run.records([0])[0].case_id == rows[0]["case_id"]


def test_to_pandas_builds_a_frame_of_the_rows() -> None:
    import pandas as pd  # optional for users; the test extra installs it

    frame = evalpin.read_run(NIGHT_1).to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(api.ROW_KEYS)
    assert len(frame) == 90
    assert frame.groupby("seed")["pass"].mean().to_dict()[11] == pytest.approx(0.9)


def test_to_pandas_without_pandas_says_how_to_get_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now fails
    run = evalpin.read_run(NIGHT_1)
    with pytest.raises(ImportError, match="pip install pandas"):
        run.to_pandas()


def test_other_formats_are_read_too() -> None:
    inspect_logs = sorted((ROOT / "tests" / "data" / "inspect").glob("*.eval"))
    run = evalpin.read_run(inspect_logs[0])
    assert run.what.startswith("inspect-ai log")
    assert run.repeat_label == "epoch"
    assert len(run.to_dicts()) == len(run)


def test_a_bad_file_raises_input_error_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    good = write_run(tmp_path / "good.jsonl", grid({"a": [True, True, True]}))
    bad.write_text(good.read_text().splitlines()[0] + "\nnot json\n")
    with pytest.raises(evalpin.InputError) as info:
        evalpin.read_run(bad)
    assert info.value.path == str(bad)
    assert info.value.line == 2
    with pytest.raises(evalpin.InputError, match="no such file"):
        evalpin.read_run(tmp_path / "missing.jsonl")
    with pytest.raises(evalpin.InputError):
        evalpin.compare(good, bad)
    with pytest.raises(TypeError):
        evalpin.compare(good, 42)  # type: ignore[arg-type]


def test_import_evalpin_is_cheap_and_loads_no_textual() -> None:
    probe = (
        "import sys, evalpin\n"
        "print(','.join(m for m in ('textual', 'rich', 'openai', 'evalpin.api') "
        "if m in sys.modules))\n"
        "evalpin.read_run\n"
        "print(','.join(m for m in ('textual', 'rich', 'openai') if m in sys.modules))\n"
        "print(evalpin.__version__)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, after, version = done.stdout.splitlines()
    assert before == ""  # not even the API until it is asked for
    assert after == ""  # and the API loads no UI or SDK
    assert version == evalpin.__version__


def test_the_package_namespace() -> None:
    assert evalpin.read_run is api.read_run
    assert evalpin.Comparison is api.DiffReport
    assert {"read_run", "compare", "verdict", "__version__"} <= set(evalpin.__all__)
    assert set(api.__all__) <= set(dir(api))
    assert "compare" in dir(evalpin)
    with pytest.raises(AttributeError):
        evalpin.no_such_name  # noqa: B018
    assert (Path(evalpin.__file__).parent / "py.typed").is_file()
