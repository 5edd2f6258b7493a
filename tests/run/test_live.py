"""Live runs at the endpoint's pace: `--concurrency` apart from `--jobs`, AIMD on rate
limits, token usage, and a run file as a replay source. Everything talks real HTTP to
tests/fake_openai.py on 127.0.0.1; nothing asserts on time, only on counts and events."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evalpin.core.read.runfile import read_run
from evalpin.run.pace import Pace
from tests.clirun import cli, cli_process
from tests.conftest import GOLDEN_CASES
from tests.fake_openai import FakeOpenAI, Reply, chat, error

KEY = "sk-test-live-3f9a"
ANSWER = {
    "text": "Order 1001 is cancelled.",
    "tool_calls": (("lookup_order", '{"order": 1001}'), ("cancel_order", "{}")),
    "model": "live-model",
    "fingerprint": "fp_live",
}
SLOTS = (
    "slots:\n  live: {provider: openai, base_url_env: COMPLETION_BASE_URL, "
    "api_key_env: COMPLETION_API_KEY, model: live-model, retry_base_s: 0.001, "
    "timeout_s: 10, probes: false}\n"  # these count requests; probes: test_probes.py
)


def answer(req=None, delay_s: float = 0.05, usage: tuple[int, int] | None = (30, 7)) -> Reply:
    """The model's side of a tool conversation: the tool calls first, then, once their
    results came back, the answer text."""
    answered = req is not None and any(m.get("role") == "tool" for m in req.body["messages"])
    shape = {**ANSWER, "tool_calls": () if answered else ANSWER["tool_calls"]}
    return chat(**shape, usage=usage, delay_s=delay_s)  # type: ignore[arg-type]


@pytest.fixture
def live(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with 12 golden cases and an openai slot on the fake server."""
    monkeypatch.chdir(tmp_path)
    for name in ("EVAL_DATASET", "EVAL_SEEDS", "EVAL_TEMPERATURE", "EVAL_NETWORK", "EVAL_WORKDIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COMPLETION_BASE_URL", server.base_url)
    monkeypatch.setenv("COMPLETION_API_KEY", KEY)
    many = [{**GOLDEN_CASES[i % 2], "id": f"case-{i:02d}"} for i in range(12)]
    (tmp_path / "many.jsonl").write_text("".join(json.dumps(c) + "\n" for c in many))
    (tmp_path / "slots.yaml").write_text(SLOTS)
    return tmp_path


PLAN = [(f"case-{i:02d}", seed) for i in range(12) for seed in (1, 2)]


def run_live(capsys, out: str, *extra: str) -> tuple[int, list[dict], str]:
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "many.jsonl",
        "--slot",
        "live",
        "--seeds",
        "1,2",
        "--out",
        out,
        "--progress",
        "json",
        *extra,
    )
    return r.code, [json.loads(line) for line in r.out.splitlines()], r.err


def cases(path: Path) -> list[dict]:
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["record"] == "case"]


# -- the pace: AIMD arithmetic ------------------------------------------------------------


def test_pace_halves_once_per_round_and_climbs_back_one_per_success() -> None:
    pace = Pace(16)
    with pace.request() as first, pace.request() as second:
        first.rate_limited()
        assert pace.state().limit == 8
        second.rate_limited()  # sent before the decrease: the same signal
        assert pace.state().limit == 8
    with pace.request() as third:
        third.rate_limited()  # sent after it: a new signal
    assert pace.state().limit == 4 and pace.state().rate_limited == 3
    assert pace.state().lowest == 4
    for _ in range(20):
        with pace.request() as permit:
            permit.succeeded()
    assert pace.state().limit == 16  # never above the ceiling
    for _ in range(10):
        with pace.request() as permit:
            permit.rate_limited()
    assert pace.state().limit == 1  # never below one


def test_pace_holds_requests_beyond_the_limit_until_a_permit_frees() -> None:
    pace = Pace(2)
    entered = threading.Semaphore(0)
    release = threading.Event()

    def hold() -> None:
        with pace.request():
            entered.release()
            release.wait(10)

    threads = [threading.Thread(target=hold) for _ in range(3)]
    for t in threads:
        t.start()
    assert entered.acquire(timeout=10) and entered.acquire(timeout=10)
    assert not entered.acquire(timeout=0.2)  # the third waits for a permit
    assert pace.state().in_flight == 2
    release.set()
    assert entered.acquire(timeout=10)
    for t in threads:
        t.join(10)
    assert pace.state().in_flight == 0


def test_pace_refuses_a_ceiling_below_one() -> None:
    with pytest.raises(ValueError):
        Pace(0)


# -- concurrency apart from jobs ------------------------------------------------------


def test_concurrency_not_jobs_sets_requests_in_flight(capsys, live: Path, server) -> None:
    server.policy = lambda n, in_flight, req: answer(req, delay_s=0.2)
    code, events, err = run_live(capsys, "runs/c.jsonl", "--jobs", "1", "--concurrency", "6")
    assert code == 0, err
    assert 1 < server.max_in_flight <= 6  # more than --jobs, never above --concurrency
    path = live / "runs/c.jsonl"
    assert [(r.case_id, r.seed) for r in read_run(path).rows] == PLAN  # plan order
    header = json.loads(path.read_text().splitlines()[0])
    assert header["execution"] == {"jobs": 1, "concurrency": 6, "executor": {"kind": "local"}}
    assert "concurrency" not in json.dumps(header["env"]) and "jobs" not in header["controls"]
    assert max(e.get("in_flight", 0) for e in events if e["event"] in ("case", "pace")) >= 1


def test_execution_settings_do_not_change_comparability(capsys, live: Path, server) -> None:
    server.policy = lambda n, in_flight, req: answer(req, delay_s=0.0)
    assert run_live(capsys, "runs/a.jsonl", "--concurrency", "1", "--jobs", "1")[0] == 0
    assert run_live(capsys, "runs/b.jsonl", "--concurrency", "9", "--jobs", "3")[0] == 0
    a, b = (json.loads((live / f"runs/{n}.jsonl").read_text().splitlines()[0]) for n in "ab")
    assert a["execution"] != b["execution"]
    assert (a["env_digest"], a["slot"], a["controls"]) == (
        b["env_digest"],
        b["slot"],
        b["controls"],
    )
    r = cli(capsys, "diff", "runs/a.jsonl", "runs/b.jsonl")
    assert r.code == 0, r.out  # comparable, and nothing moved


def test_usage_per_case_and_summed_in_the_trailer(capsys, live: Path, server) -> None:
    server.policy = lambda n, in_flight, req: answer(req, delay_s=0.0, usage=(30 + n % 3, 7))
    code, events, err = run_live(capsys, "runs/u.jsonl")
    assert code == 0, err
    records = cases(live / "runs/u.jsonl")
    assert all(r["usage"]["total_tokens"] == sum(r["usage"].values()) / 2 for r in records)
    total = {
        k: sum(r["usage"][k] for r in records)
        for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    }
    summary = json.loads((live / "runs/u.jsonl").read_text().splitlines()[-1])
    # Two requests a case (the tool calls, then the answer), each one paid for.
    assert summary["usage"] == total and total["completion_tokens"] == 7 * 2 * len(PLAN)
    assert events[-1]["event"] == "done" and events[-1]["usage"] == total
    r = cli(capsys, "run", "--fixtures", "many.jsonl", "--slot", "live", "--out", "runs/v.jsonl")
    shown = json.loads((live / "runs/v.jsonl").read_text().splitlines()[-1])["usage"]
    assert r.code == 0 and f"{shown['total_tokens']:,} tokens" in r.err, r.err
    r = cli(capsys, "verdict", "runs/v.jsonl")
    assert f"usage     {shown['total_tokens']:,} tokens ({shown['prompt_tokens']:,} prompt" in r.out


def test_an_endpoint_without_usage_records_none(capsys, live: Path, server) -> None:
    server.policy = lambda n, in_flight, req: answer(req, delay_s=0.0, usage=None)
    assert run_live(capsys, "runs/n.jsonl")[0] == 0
    assert not any("usage" in r for r in cases(live / "runs/n.jsonl"))
    assert "usage" not in json.loads((live / "runs/n.jsonl").read_text().splitlines()[-1])


# -- rate limits, resets, 5xx -----------------------------------------------------------


def test_a_share_of_429s_never_fails_a_case_and_lowers_the_limit(
    capsys, live: Path, server
) -> None:
    def policy(n: int, in_flight: int, req) -> Reply:
        if n % 5 == 1:
            return error(429, "slow down", **{"Retry-After": "0.05"})
        return answer(req, delay_s=0.05)

    server.policy = policy
    code, events, err = run_live(capsys, "runs/r.jsonl", "--concurrency", "8")
    assert code == 0, err
    records = cases(live / "runs/r.jsonl")
    assert [r["pass"] for r in records] == [True] * len(PLAN)
    done = events[-1]
    assert done["event"] == "done" and done["rate_limited"] == server.served[429] > 0
    assert done["waited"] > 0 and done["lowest_limit"] < 8
    assert all(e["limit"] <= 8 for e in events if e["event"] == "case")


def test_a_rate_limit_on_requests_in_flight_is_found_and_respected(
    capsys, live: Path, server
) -> None:
    """An endpoint that allows 3 requests at once and answers 429 beyond: the run adapts
    and every case passes."""

    def policy(n: int, in_flight: int, req) -> Reply:
        if in_flight > 3:
            return error(429, "too many requests", **{"Retry-After": "0.02"})
        return answer(req, delay_s=0.1)

    server.policy = policy
    code, events, err = run_live(capsys, "runs/l.jsonl", "--concurrency", "16")
    assert code == 0, err
    assert all(r["pass"] for r in cases(live / "runs/l.jsonl"))
    assert server.served[429] > 0 and server.served[200] == 2 * len(
        PLAN
    )  # tool calls, then the answer
    assert 1 <= events[-1]["lowest_limit"] <= 8  # lowered, toward what the endpoint accepts


def test_429_beyond_the_retry_budget_is_rate_limited(capsys, live: Path, server) -> None:
    (live / "slots.yaml").write_text(SLOTS.replace("timeout_s: 10", "retry_max_s: 0.01"))
    server.policy = lambda n, in_flight, req: error(429, "quota", **{"Retry-After": "0.01"})
    code, _, err = run_live(capsys, "runs/q.jsonl", "--concurrency", "2")
    assert code == 1, err  # every pair rate-limited: not one case judged
    records = cases(live / "runs/q.jsonl")
    assert {tuple(r["reasons"]) for r in records} == {("provider_error:rate_limited",)}
    # budget (4 - 1) * 0.01 s: three waits of 0.01 s, so four requests per pair
    assert len(server.received) == 4 * len(PLAN)


def test_connection_resets_are_retried(capsys, live: Path, server) -> None:
    # Every fourth request reset, but never one already reset: four requests in flight
    # that arrive in turn would put one of them on every fourth place again and again,
    # past its four attempts (under load, a case failed so).
    reset: set[str] = set()

    def policy(n: int, in_flight: int, req) -> Reply:
        body = json.dumps(req.body, sort_keys=True)
        if n % 4 == 0 and body not in reset:
            reset.add(body)
            return Reply(reset=True)
        return answer(req, delay_s=0.02)

    server.policy = policy
    code, _, err = run_live(capsys, "runs/x.jsonl", "--concurrency", "4")
    assert code == 0, err
    assert all(r["pass"] for r in cases(live / "runs/x.jsonl"))
    assert server.served[0] > 0


def test_a_slow_stream_of_5xx_fails_only_its_cases_after_the_attempts(
    capsys, live: Path, server
) -> None:
    def policy(n: int, in_flight: int, req) -> Reply:
        user = req.body["messages"][0]["content"]
        seed = req.body["seed"]
        if (user, seed) == ("Cancel order 1002 please.", 2):
            slow = error(503, "overloaded")
            slow.delay_s = 0.1
            return slow
        return answer(req, delay_s=0.02)

    server.policy = policy
    code, _, err = run_live(capsys, "runs/s.jsonl", "--concurrency", "8")
    assert code == 0, err
    records = cases(live / "runs/s.jsonl")
    assert [(r["case_id"], r["seed"]) for r in records] == PLAN
    failed = {(r["case_id"], r["seed"]) for r in records if not r["pass"]}
    # odd cases are the cancel case; seed 2 of each fails after 4 attempts
    assert failed == {(f"case-{i:02d}", 2) for i in range(1, 12, 2)}
    assert all(r["reasons"] == ["provider_error:server_error"] for r in records if not r["pass"])
    assert server.served[503] == 4 * len(failed)


# -- killed with requests in the air --------------------------------------------------


def test_sigkill_with_requests_in_flight_resumes_with_no_duplicate_or_loss(
    live: Path, server
) -> None:
    """The first 6 conversations are answered; the rest are held (until the server
    stops), so the kill finds requests in the air, whatever the machine's speed."""
    opened = itertools.count()

    def policy(n: int, in_flight: int, req) -> Reply:
        follow_up = any(m.get("role") == "tool" for m in req.body["messages"])
        return answer(req, delay_s=0.02 if follow_up or next(opened) < 6 else 60)

    server.policy = policy
    env = {
        **os.environ,
        "COMPLETION_BASE_URL": server.base_url,
        "COMPLETION_API_KEY": KEY,
    }
    args = ["run", "--fixtures", "many.jsonl", "--slot", "live", "--seeds", "1,2"]
    args += ["--out", "runs/k.jsonl", "--concurrency", "5", "--progress", "json"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalpin", *args],
        cwd=live,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        seen = 0
        while seen < 4:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "no output"
            seen += json.loads(line)["event"] == "case"
        deadline = time.monotonic() + 60  # a guard, not a measurement
        while server.in_flight < 1:  # held requests reach the server
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        proc.kill()
        proc.communicate()
    out = live / "runs/k.jsonl"
    partial = read_run(out)
    assert not partial.complete and 4 <= len(partial.rows) <= 6
    server.policy = lambda n, in_flight, req: answer(req, delay_s=0.02)
    r = cli_process("run", "--resume", "--out", "runs/k.jsonl", cwd=live, env=env)
    assert r.code == 0, r.err
    done = read_run(out)
    keys = [(row.case_id, row.seed) for row in done.rows]
    assert sorted(keys) == sorted(PLAN) and len(set(keys)) == len(PLAN)
    assert all(row.passed for row in done.rows), [
        (r.case_id, r.seed) for r in done.rows if not r.passed
    ]
    assert done.summary is not None and done.summary.resumed == len(partial.rows)


# -- a run file is a replay source ------------------------------------------------------


def test_a_live_run_replays_to_the_same_grades_without_the_endpoint(
    capsys, live: Path, server
) -> None:
    def policy(n: int, in_flight: int, req) -> Reply:
        if req.body["seed"] == 2 and req.body["messages"][0]["content"].startswith("Cancel"):
            return error(400, "refused")  # recorded without a completion
        return answer(req, delay_s=0.0)

    server.policy = policy
    assert run_live(capsys, "runs/live.jsonl")[0] == 0
    asked = len(server.received)
    source = json.loads((live / "runs/live.jsonl").read_text().splitlines()[0])
    code, events, err = cli_run_replay(capsys)
    assert code == 0, err
    assert len(server.received) == asked  # the endpoint was not called
    assert not [e for e in events if e["event"] == "warning"]
    header = json.loads((live / "runs/again.jsonl").read_text().splitlines()[0])
    assert header["replay_of"] == {
        "run_id": source["run_id"],
        "model_slot": "live",
        "path": "runs/live.jsonl",
    }
    assert "warnings" not in header

    def key(r: dict) -> tuple:
        return (r["case_id"], r["seed"], r["pass"], r["reasons"], r.get("completion_digest"))

    was, now = cases(live / "runs/live.jsonl"), cases(live / "runs/again.jsonl")
    assert [key(r) for r in now] == [key(r) for r in was]
    assert {r.get("reported_model") for r in now} == {"live-model@fp_live", None}
    assert any(r["reasons"] == ["provider_error:bad_request"] for r in now)
    assert not any("usage" in r for r in now)  # nothing was spent


def cli_run_replay(capsys) -> tuple[int, list[dict], str]:
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "many.jsonl",
        "--slot",
        "again=replay:runs/live.jsonl",
        "--seeds",
        "1,2",
        "--out",
        "runs/again.jsonl",
        "--progress",
        "json",
    )
    return r.code, [json.loads(line) for line in r.out.splitlines()], r.err


# -- grading stays bounded by --jobs ------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def test_coding_set_grades_at_most_jobs_at_once_while_completions_overlap(
    capsys, live: Path, server, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from evalpin.core.instrument.fixtures import load_fixtures
    from evalpin.run import sandbox

    shutil.copytree(REPO / "fixtures" / "repairs", live / "repairs")
    items = load_fixtures(live / "repairs" / "coding.yaml").cases
    recorded = [json.loads(x) for x in (REPO / "fixtures/completions/coder_a.jsonl").open()]
    texts = {r["case_id"]: r["text"] for r in recorded if r.get("loop", 0) == 0}
    by_prompt = {item.prompt: texts[item.id] for item in items}
    server.policy = lambda n, in_flight, req: chat(
        by_prompt[req.body["messages"][0]["content"]], delay_s=0.3
    )

    real_run_item = sandbox.run_item
    grading, most = 0, 0
    lock = threading.Lock()

    def counted(*args, **kwargs):
        nonlocal grading, most
        with lock:
            grading += 1
            most = max(most, grading)
        try:
            return real_run_item(*args, **kwargs)
        finally:
            with lock:
                grading -= 1

    monkeypatch.setattr(sandbox, "run_item", counted)
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "repairs/coding.yaml",
        "--slot",
        "live",
        "--seeds",
        "1",
        "--jobs",
        "1",
        "--concurrency",
        "8",
        "--out",
        "runs/coding.jsonl",
    )
    assert r.code == 0, r.err
    rows = read_run(live / "runs/coding.jsonl").rows
    assert len(rows) == len(items) and any(row.passed for row in rows)
    assert most == 1  # --jobs 1: one sandboxed grader at a time
    assert server.max_in_flight > 1  # while completions overlapped


# -- the review screen: replay of a run, tokens on the verdict screen ---------------------


async def test_review_says_replay_of_run_and_the_verdict_screen_shows_tokens(
    tmp_path: Path,
) -> None:
    from evalpin.core.read.runfile import RunWriter
    from evalpin.core.records import Summary, Usage
    from evalpin.tui.screens.verdict import VerdictScreen
    from tests.builders import grid, header
    from tests.tuikit import SIZE, new_app, screen_text, settle

    path = tmp_path / "again.jsonl"
    head = header(replay_of={"run_id": "fc7a4bc2bef0", "model_slot": "live", "path": "x"})
    rows = grid({"a": [True] * 3, "b": [True, False, True]})
    with RunWriter(path, new=True) as w:
        w.write(head)
        for row in rows:
            w.write(row)
        usage = Usage(prompt_tokens=12000, completion_tokens=345, total_tokens=12345)
        w.write(Summary("2026-11-29T02:05:00Z", records=6, passed=5, usage=usage))
    app = new_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        assert "night (replay) · replay of run fc7a4bc2bef0" in screen_text(app)
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, VerdictScreen)
        shown = "usage          12,345 tokens (12,000 prompt, 345 completion)"
        assert shown in screen_text(app)


async def test_launch_panel_shows_requests_in_flight_and_waits(tmp_path: Path) -> None:
    from evalpin.run import events
    from evalpin.tui.screens.launch import LaunchScreen
    from tests.builders import grid, write_run
    from tests.tuikit import SIZE, new_app, screen_text, settle

    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "golden.jsonl").write_text(json.dumps(GOLDEN_CASES[0]) + "\n")
    (tmp_path / "slots.yaml").write_text("slots:\n  night: {provider: replay, path: x.jsonl}\n")
    run = write_run(tmp_path / "runs" / "r.jsonl", grid({"a": [True] * 3}))
    app = new_app(run, cwd=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen
        assert isinstance(panel, LaunchScreen)
        assert "in flight" in screen_text(app)  # the form's --concurrency box
        panel.handle_event(events.StartEvent("runs/n.jsonl", "r2", 6, 6, "not-applicable"))
        panel.handle_event(events.PaceEvent(in_flight=3, limit=4, rate_limited=7, waited=1.4))
        await pilot.pause()
        assert "3/4 in flight, 7 rate-limited (1.4 s waiting)" in screen_text(app)


# -- the slot itself ----------------------------------------------------------------------


def open_live(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, **over: float):
    from evalpin.run.slots import OpenAIConfig, open_slot

    monkeypatch.setenv("COMPLETION_BASE_URL", server.base_url)
    monkeypatch.setenv("COMPLETION_API_KEY", KEY)
    settings: dict = {
        "label": "live",
        "source": None,
        "model": "m",
        "base_url_env": "COMPLETION_BASE_URL",
        "api_key_env": "COMPLETION_API_KEY",
        "retry_base_s": 0.001,
        "retry_max_s": 0.05,
    }
    return open_slot(OpenAIConfig(**{**settings, **over}))


def ask(slot):
    from evalpin.core.records import CompletionRequest, Message

    return slot.complete(CompletionRequest("c1", 1, [Message("user", "hi")]))


def test_more_429s_than_attempts_are_waited_out_within_the_budget(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    limited = error(429, "slow down", **{"Retry-After": "0.001"})
    server.push(*[limited] * 6, chat("at last"))
    slot = open_live(server, monkeypatch)
    try:
        assert ask(slot).text == "at last"  # 6 answers 429 > max_attempts 4
        state = slot.pace.state()
        assert state.rate_limited == 6 and state.waited_s > 0 and state.in_flight == 0
    finally:
        slot.close()


def test_a_5xx_with_retry_after_lowers_the_limit_but_uses_attempts(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.default = error(503, "busy", **{"Retry-After": "0.001"})
    slot = open_live(server, monkeypatch, max_attempts=3)
    try:
        with pytest.raises(Exception, match="server_error"):
            ask(slot)
        assert len(server.received) == 3
        assert slot.pace.state().limit < slot.pace.ceiling
    finally:
        slot.close()


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}, (11, 4, 15)),
        ({"prompt_tokens": "many", "completion_tokens": 4, "total_tokens": True}, (0, 4, 0)),
        ({"prompt_tokens": -3}, None),
        ("lots", None),
        (None, None),
    ],
)
def test_usage_is_read_leniently_and_never_costs_the_answer(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, usage, expected
) -> None:
    from evalpin.core.records import Usage

    server.push(Reply(body={**chat("fine").body, "usage": usage}))  # type: ignore[dict-item]
    slot = open_live(server, monkeypatch)
    try:
        answer = ask(slot)
    finally:
        slot.close()
    assert answer.text == "fine"
    assert answer.usage == (Usage(*expected) if expected else None)


@pytest.mark.parametrize("value", ["0", "-3", "1025", "many"])
def test_concurrency_out_of_range_is_refused_before_anything_runs(
    capsys, live: Path, server, value: str
) -> None:
    code, _, err = run_live(capsys, "runs/bad.jsonl", "--concurrency", value)
    assert code == 3 and "--concurrency" in err
    assert not (live / "runs").exists() and server.received == []


COUNTING_AGENT = """
import json, os, sys, time
json.load(sys.stdin)
mine = os.path.join("inflight", str(os.getpid()))
open(mine, "w").close()
with open("seen.log", "a") as log:
    log.write(f"{len(os.listdir('inflight'))}\\n")
time.sleep(0.1)
os.remove(mine)
print(json.dumps({"text": "Order 1001 is cancelled.", "model": "agent@1",
                  "tools": [{"name": "lookup_order"}, {"name": "cancel_order"}]}))
"""


def test_concurrency_bounds_command_slot_programs_too(capsys, live: Path) -> None:
    (live / "agent.py").write_text(COUNTING_AGENT)
    (live / "inflight").mkdir()
    (live / "slots.yaml").write_text(
        f"slots:\n  live: {{provider: command, argv: [{json.dumps(sys.executable)}, agent.py]}}\n"
    )
    code, _, err = run_live(capsys, "runs/cmd.jsonl", "--concurrency", "3", "--jobs", "8")
    assert code == 0, err
    seen = [int(n) for n in (live / "seen.log").read_text().split()]
    assert len(seen) == len(PLAN) and max(seen) <= 3  # a program's file exists while it runs
    assert [(r.case_id, r.seed) for r in read_run(live / "runs/cmd.jsonl").rows] == PLAN
