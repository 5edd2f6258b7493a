"""`evalpin run`: pinned headers, slots, controls, parallel jobs, crash safety, resume."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.read.runfile import read_run
from tests.builders import vouched_whole
from tests.clirun import cli, cli_process
from tests.conftest import GOLDEN_CASES
from tests.fake_openai import FakeOpenAI, tool_model
from tests.runkit import project, slow_project, start, wait_for_cases

__all__ = ["project", "slow_project"]  # the fixtures


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_golden_run_records_the_pinned_triple(capsys, project: Path) -> None:
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/a.jsonl")
    assert r.code == 0, r.err
    header, *cases, summary = lines(project / "runs" / "a.jsonl")
    fs = load_fixtures(project / "golden.jsonl")
    assert header["record"] == "run" and header["schema"] == "evalpin.run/1"
    assert header["fixtures"]["dataset_hash"] == fs.dataset_hash
    assert header["fixtures"]["path"] == "golden.jsonl"
    assert header["model_slot"] == "night"
    assert header["slot"]["provider"] == "replay" and len(header["slot"]["sha256"]) == 64
    assert header["seeds"] == [11, 29, 47]
    assert header["controls"]["temperature"] == 0.0
    assert header["control_sources"]["seeds"] == "default"
    assert header["env"]["controls"] == header["controls"]
    assert len(header["env_digest"]) == 16
    assert len(cases) == 6 and summary["record"] == "summary"
    by_key = {(c["case_id"], c["seed"]): c for c in cases}
    assert by_key[("order-1", 47)]["pass"] is True
    assert by_key[("order-1", 47)]["fixture_hash"] == fs.cases[0].fixture_hash
    assert by_key[("order-1", 47)]["reported_model"] == "orders-mini@fp_1"
    assert by_key[("order-2", 29)]["reasons"] == [
        "missing_tool:lookup_order",
        "missing_tool:cancel_order",
        "missing_text:cancelled",
    ]
    assert by_key[("order-2", 47)]["reasons"] == ["no_completion"]
    assert summary["records"] == 6 and summary["passed"] == 4


def test_default_out_path_and_never_overwrite(capsys, project: Path) -> None:
    assert cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night").code == 0
    [made] = list((project / "runs").glob("*.jsonl"))
    hash8 = load_fixtures(project / "golden.jsonl").dataset_hash[:8]
    assert made.name.endswith(f"-night-{hash8}.jsonl")
    assert cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night").code == 0
    assert len(list((project / "runs").glob("*.jsonl"))) == 2
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", str(made))
    assert r.code == 3 and "already exists" in r.err


def test_control_plane_variables(capsys, project: Path, monkeypatch) -> None:
    monkeypatch.setenv("EVAL_DATASET", "golden.jsonl")
    monkeypatch.setenv("EVAL_SEEDS", "5,6")
    monkeypatch.setenv("EVAL_TEMPERATURE", "0.7")
    r = cli(capsys, "run", "--slot", "night", "--out", "runs/env.jsonl")
    assert r.code == 0, r.err
    header = lines(project / "runs" / "env.jsonl")[0]
    assert header["seeds"] == [5, 6] and header["controls"]["temperature"] == 0.7
    assert header["control_sources"]["seeds"] == "env:EVAL_SEEDS"
    assert header["control_sources"]["temperature"] == "env:EVAL_TEMPERATURE"
    r = cli(capsys, "run", "--slot", "night", "--seeds", "9", "--out", "runs/flag.jsonl")
    assert lines(project / "runs" / "flag.jsonl")[0]["control_sources"]["seeds"] == "flag"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("EVAL_NETWORK", "on", "only 'off'"),
        ("EVAL_SEEDS", "1,x", "comma-separated integers"),
        ("EVAL_TEMPERATURE", "warm", "not a number"),
        ("EVAL_WORKDIR", "/no/such/dir", "not a directory"),
    ],
)
def test_bad_control_values_refuse_to_run(
    capsys, project, monkeypatch, name, value, message
) -> None:
    monkeypatch.setenv(name, value)
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/x.jsonl")
    assert r.code == 3 and message in r.err and f"${name}" in r.err
    assert not (project / "runs" / "x.jsonl").exists()


def test_progress_json_events(capsys, project: Path) -> None:
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "golden.jsonl",
        "--slot",
        "night",
        "--out",
        "runs/p.jsonl",
        "--progress",
        "json",
        "--jobs",
        "2",
    )
    events = [json.loads(line) for line in r.out.splitlines()]
    assert events[0]["event"] == "start" and events[0]["total"] == 6
    cases = [e for e in events if e["event"] == "case"]
    assert [e["done"] for e in cases] == [1, 2, 3, 4, 5, 6]
    assert events[-1] == {
        "event": "done",
        "out": "runs/p.jsonl",
        "records": 6,
        "passed": 4,
        "failed": 1,
        "errors": 1,  # no_completion: not judged, not a fail
        "seconds": events[-1]["seconds"],
    }


def test_jobs_do_not_change_what_diff_sees(capsys, project: Path) -> None:
    for jobs in ("1", "2"):
        r = cli(
            capsys,
            "run",
            "--fixtures",
            "golden.jsonl",
            "--slot",
            "night",
            "--jobs",
            jobs,
            "--out",
            f"runs/j{jobs}.jsonl",
        )
        assert r.code == 0
    r = cli(capsys, "diff", "runs/j1.jsonl", "runs/j2.jsonl")
    assert r.code == 0, r.out


def test_broken_replay_line_is_reported_and_the_run_continues(capsys, project: Path) -> None:
    with open(project / "night.jsonl", "ab") as fh:
        fh.write(b'{"case_id": "order-3", "text": \n')
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/w.jsonl")
    assert r.code == 0
    assert "line skipped" in r.err
    header = lines(project / "runs" / "w.jsonl")[0]
    assert any("night.jsonl:4" in w for w in header["warnings"])


def test_bad_inputs_exit_3_and_write_nothing(capsys, project: Path) -> None:
    (project / "evil.yaml").write_text("schema: coding-eval/v1\nx: !!python/object:os.system {}\n")
    for args, message in [
        (["--fixtures", "missing.jsonl", "--slot", "night"], "no such file"),
        (["--fixtures", "evil.yaml", "--slot", "night"], "invalid YAML"),
        (["--fixtures", "golden.jsonl", "--slot", "nobody"], "no slot 'nobody'"),
        (["--fixtures", "golden.jsonl"], "no slot"),
        (["--slot", "night"], "no fixture set"),
        (["--fixtures", "golden.jsonl", "--slot", "x=replay:none.jsonl"], "no such replay file"),
    ]:
        r = cli(capsys, "run", *args)
        assert r.code == 3, (args, r)
        assert message in r.err, (args, r.err)
    assert not (project / "runs").exists()


# -- crash safety and resume ---------------------------------------------------------


def test_kill_9_leaves_a_readable_file_and_resume_finishes_it(slow_project: Path) -> None:
    proc = start(slow_project)
    wait_for_cases(proc, 3)
    proc.kill()
    proc.wait()
    out = slow_project / "runs" / "slow.jsonl"
    with open(out, "ab") as fh:  # and a write torn by the kill
        fh.write(b'{"record":"case","case_id":"case-09","pa')
    partial = read_run(out)
    assert partial.complete is False and partial.torn and len(partial.rows) >= 3
    r = cli_process(
        "run", "--resume", "--out", "runs/slow.jsonl", "--slots", "slots.yaml", cwd=slow_project
    )
    assert r.code == 0, r.err
    done = read_run(out)
    assert done.complete and not done.torn
    keys = [(row.case_id, row.seed) for row in done.rows]
    assert len(keys) == 24 and len(set(keys)) == 24
    assert done.summary is not None and done.summary.resumed == len(partial.rows)


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(slow_project: Path) -> None:
    proc = start(slow_project)
    wait_for_cases(proc, 2)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    last = json.loads(out.splitlines()[-1])
    assert last["event"] == "interrupted"
    assert last["resume"] == "evalpin run --resume --out runs/slow.jsonl"
    run = read_run(slow_project / "runs" / "slow.jsonl")
    assert run.complete is False and not run.torn and len(run.rows) == last["done"]


def test_sigterm_is_an_interrupt_too(slow_project: Path) -> None:
    proc = start(slow_project)
    wait_for_cases(proc, 1)
    proc.terminate()
    proc.communicate(timeout=30)
    assert proc.returncode == 130


@pytest.fixture
def partial_run(capsys, project: Path) -> Path:
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/r.jsonl")
    assert r.code == 0
    path = project / "runs" / "r.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:3]))
    return path


def test_resume_runs_only_the_missing_pairs(capsys, project: Path, partial_run: Path) -> None:
    before = partial_run.read_text().splitlines()
    r = cli(capsys, "run", "--resume", "--out", str(partial_run), "--progress", "json")
    assert r.code == 0, r.err
    events = [json.loads(line) for line in r.out.splitlines()]
    assert events[0]["todo"] == 4
    after = partial_run.read_text().splitlines()
    assert after[:3] == before  # nothing rewritten
    assert read_run(partial_run).complete
    r = cli(capsys, "run", "--resume", "--out", str(partial_run))
    assert r.code == 3 and "already complete" in r.err


def test_a_resumed_run_is_vouched_for_whole_once_its_lines_were_checked(
    capsys, project: Path, partial_run: Path
) -> None:
    """The trailer's CRC covers the lines an earlier process wrote too, once the resume
    read them exactly: a key written twice there refuses the resume instead."""
    lines = partial_run.read_text().splitlines(keepends=True)
    partial_run.write_text(lines[0] + lines[1] + lines[2].rstrip()[:-1] + ',"seed":47}\n')
    r = cli(capsys, "run", "--resume", "--out", str(partial_run))
    assert r.code == 3 and ":3: duplicate key 'seed'" in r.err, r.err
    partial_run.write_text("".join(lines))
    assert cli(capsys, "run", "--resume", "--out", str(partial_run)).code == 0
    assert vouched_whole(partial_run)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("fixtures", "fixtures (dataset hash)"),
        ("slot", "slot settings"),
        ("seeds", "controls"),
    ],
)
def test_resume_refuses_when_the_instrument_changed(
    capsys, project: Path, partial_run: Path, change: str, message: str
) -> None:
    args = ["run", "--resume", "--out", str(partial_run)]
    if change == "fixtures":
        with open(project / "golden.jsonl", "a") as fh:
            fh.write(json.dumps({**GOLDEN_CASES[0], "id": "order-9"}) + "\n")
    elif change == "slot":
        with open(project / "night.jsonl", "a") as fh:
            fh.write(json.dumps({"case_id": "order-2", "text": "new"}) + "\n")
    else:
        args += ["--seeds", "1,2,3"]
    before = partial_run.read_bytes()
    r = cli(capsys, *args)
    assert r.code == 3 and "cannot resume" in r.err and message in r.err
    assert partial_run.read_bytes() == before


# -- openai slot, end to end: the key never lands anywhere ----------------------------

KEY = "sk-test-DO-NOT-LEAK-8c1f2e"


def test_openai_slot_run_records_reported_model_and_no_secret(
    capsys, project: Path, monkeypatch
) -> None:
    server = FakeOpenAI()
    server.start()
    try:
        server.default = tool_model(
            ("lookup_order", '{"order": 1001}'),
            ("cancel_order", "{}"),
            answer="Order 1001 is cancelled.",
            model="lab-model-2026-11",
        )
        monkeypatch.setenv("COMPLETION_BASE_URL", server.base_url)
        monkeypatch.setenv("COMPLETION_API_KEY", KEY)
        (project / "slots.yaml").write_text(
            "slots:\n  lab: {provider: openai, base_url_env: COMPLETION_BASE_URL, "
            "api_key_env: COMPLETION_API_KEY, model: lab-model, retry_base_s: 0.001, "
            "probes: false}\n"  # the probes have their own tests (test_probes.py)
        )
        r = cli(
            capsys,
            "run",
            "--fixtures",
            "golden.jsonl",
            "--slot",
            "lab",
            "--out",
            "runs/lab.jsonl",
            "--progress",
            "json",
            "--temperature",
            "0.2",
            "--seeds",
            "3",
        )
        assert r.code == 0, r.err
    finally:
        server.stop()
    text = (project / "runs" / "lab.jsonl").read_text()
    assert KEY not in text and KEY not in r.out and KEY not in r.err
    assert server.base_url not in text
    header, *cases, _ = lines(project / "runs" / "lab.jsonl")
    digest = header["slot"].pop("settings_digest")
    assert header["slot"] == {
        "provider": "openai",
        "model": "lab-model",
        "base_url_env": "COMPLETION_BASE_URL",
        "api_key_env": "COMPLETION_API_KEY",
        "timeout_s": 120.0,
        "max_attempts": 4,
    }
    assert {c["slot_settings"] for c in cases} == {digest}
    assert {c["reported_model"] for c in cases} == {"lab-model-2026-11@fp_test"}
    sent = server.received[0].body
    assert sent["temperature"] == 0.2 and sent["seed"] == 3 and sent["max_tokens"] == 2048
    assert server.received[0].headers["authorization"] == f"Bearer {KEY}"
    assert [c["pass"] for c in cases] == [True, True]


def test_parallel_runs_write_cases_in_plan_order(slow_project: Path) -> None:
    r = cli_process(
        "run",
        "--fixtures",
        "many.jsonl",
        "--slot",
        "agent",
        "--jobs",
        "2",
        "--seeds",
        "1,2",
        "--out",
        "runs/ordered.jsonl",
        cwd=slow_project,
    )
    assert r.code == 0, r.err
    keys = [(row.case_id, row.seed) for row in read_run(slow_project / "runs/ordered.jsonl").rows]
    assert keys == [(f"case-{i:02d}", seed) for i in range(12) for seed in (1, 2)]


def test_untracked_fixtures_make_the_scorer_commit_dirty(capsys, project: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/u.jsonl")
    assert lines(project / "runs" / "u.jsonl")[0]["scorer_commit"].endswith("-dirty")
    (project / ".gitignore").write_text("runs/\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "fixtures")
    cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/c.jsonl")
    commit = lines(project / "runs" / "c.jsonl")[0]["scorer_commit"]
    assert commit is not None and not commit.endswith("-dirty")
