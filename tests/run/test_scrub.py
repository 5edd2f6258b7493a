"""Secret values never reach a run file (the second line behind the sandbox), in-process
grading is recorded and keeps a run from `publishable`, and the per-item isolation and
memory cap are read from the coding YAML."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.judge.verdict import INTERNAL, judge
from evalpin.core.read.runfile import read_run
from evalpin.core.records import CaseRecord, ToolCall
from evalpin.run.scrub import REDACTED, scrub_record, secret_values
from tests.builders import grid, header, write_run
from tests.clirun import cli


def test_secret_looking_variables_are_scrubbed_from_every_free_text_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = "tok-" + secrets.token_hex(10)
    monkeypatch.setenv("SERVICE_AUTH_TOKEN", value)
    monkeypatch.setenv("SHORT_KEY", "abc")  # too short to cut from honest text
    values = secret_values()
    assert value in values and "abc" not in values
    record = CaseRecord(
        "c",
        False,
        tail=f"RuntimeError: {value}",
        text=f"here: {value}",
        files={"a.py": f"KEY = {value!r}"},
        tools=[ToolCall("send", {"body": [value]})],
        error=f"repair round 1: {value}",
    )
    clean = scrub_record(record, values)
    assert value not in json.dumps(
        [clean.tail, clean.text, clean.files, clean.error, clean.tools[0].args]
    )
    assert clean.tail == f"RuntimeError: {REDACTED}"


def test_a_completion_that_echoes_a_secret_leaves_no_trace_in_the_run_file(
    capsys, tmp_path: Path, golden_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    value = "sk-live-" + secrets.token_hex(12)
    monkeypatch.setenv("OTHER_SERVICE_API_KEY", value)
    monkeypatch.chdir(tmp_path)
    replay = {"case_id": "order-1", "text": f"My key is {value}", "model": "m"}
    (tmp_path / "replay.jsonl").write_text(json.dumps(replay) + "\n")
    r = cli(
        capsys, "run", "--fixtures", "golden.jsonl", "--slot", "x=replay:replay.jsonl",
        "--out", "runs/a.jsonl", "--seeds", "11",
    )  # fmt: skip
    assert r.code == 0, r.err
    text = (tmp_path / "runs" / "a.jsonl").read_text()
    assert value not in text and REDACTED in text


def _coding_set(tmp_path: Path, **extra: object) -> Path:
    (tmp_path / "p.md").write_text("x")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    item = {
        "id": "x",
        "language": "python",
        "prompt_file": "p.md",
        "test_file": "test_x.py",
        "timeout_s": 5,
        "expected_files": ["x.py"],
        **extra,
    }
    path = tmp_path / "set.yaml"
    doc = {"schema": "coding-eval/v1", "dataset_id": "d", "dataset_version": "1"}
    path.write_text(json.dumps({**doc, "items": [item]}))
    return path


def test_isolation_and_memory_cap_are_read_per_item(tmp_path: Path) -> None:
    item = load_fixtures(_coding_set(tmp_path)).cases[0]
    assert (item.isolation, item.memory_mb) == ("process", 1024)
    item = load_fixtures(_coding_set(tmp_path, isolation="in-process", memory_mb=256)).cases[0]
    assert (item.isolation, item.memory_mb) == ("in-process", 256)
    for bad in ({"isolation": "none"}, {"memory_mb": 0}, {"memory_mb": "1G"}):
        with pytest.raises(InputError):
            load_fixtures(_coding_set(tmp_path, **bad))


def test_in_process_grading_is_at_most_internal(tmp_path: Path) -> None:
    rows = grid({"a": [True, True, True]})
    clean = write_run(tmp_path / "clean.jsonl", rows)
    flagged = write_run(tmp_path / "flagged.jsonl", rows, head=header(graded_in_process=["a"]))
    assert judge(read_run(clean)).label == "publishable"
    verdict = judge(read_run(flagged))
    assert verdict.label == INTERNAL
    assert any("in-process grading" in why for why in verdict.reasons)
