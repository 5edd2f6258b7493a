"""Errors are not fails (issue 31): a case that could not be judged has its own status,
is counted apart in pass rates, moves into and out of error as its own kind in `diff`,
keeps a run from `publishable`, and `run --resume --retry-errors` asks exactly those
cases again. Driven through the CLI against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalpin.core.reasons import is_error, status_of
from tests.builders import vouched_whole
from tests.clirun import cli
from tests.fake_openai import FakeOpenAI, Reply, chat, error, tool_model

KEY = "sk-errors-test-DO-NOT-LEAK"
CASES = [
    {
        "id": f"q{n}",
        "user": f"Say the word w{n}.",
        "require_tools": [],
        "forbid_tools": [],
        "must_include": [f"w{n}"],
        "must_not": [],
    }
    for n in range(6)
]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def cases_of(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    return {(c["case_id"], c["seed"]): c for c in lines(path) if c.get("record") == "case"}


def answer_all(request: dict[str, Any]) -> dict[str, Any]:
    """A model that says the word each case asks for."""
    word = request["messages"][0]["content"].split()[-1].rstrip(".")
    body = chat(f"here: {word}", usage=(10, 3)).body
    assert isinstance(body, dict)
    return body


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    server = FakeOpenAI()
    server.start()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ERR_BASE_URL", server.base_url)
    monkeypatch.setenv("ERR_API_KEY", KEY)
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (tmp_path / "slots.yaml").write_text(
        "slots:\n  lab: {provider: openai, model: m, base_url_env: ERR_BASE_URL, "
        "api_key_env: ERR_API_KEY, max_attempts: 2, retry_base_s: 0, retry_max_s: 0, "
        "tier: dedicated, probes: false}\n"
    )
    yield tmp_path, server
    server.stop()


def run(capsys, out: str, *extra: str) -> Any:
    return cli(
        capsys,
        "run",
        "--fixtures",
        "golden.jsonl",
        "--slot",
        "lab",
        "--seeds",
        "1,2,3",
        "--temperature",
        "0",
        "--concurrency",
        "1",
        "--out",
        out,
        *extra,
    )


def outage(down: set[int]):
    """Answers every request but those whose arrival number is in `down` (a reset)."""

    def policy(n: int, in_flight: int, request) -> Reply:
        if n in down:
            return Reply(reset=True)
        return Reply(body=answer_all)

    return policy


def test_the_registry_decides_what_an_error_is() -> None:
    assert is_error("provider_error:connection") and is_error("no_completion")
    assert is_error("sandbox_error:unsupported") and is_error("log_error:error")
    # The candidate's own failures stay fails.
    for code in ("sandbox_error:memory", "timeout", "tests_failed", "tool_loop_exhausted"):
        assert not is_error(code), code
    assert status_of(["missing_text:x", "provider_error:timeout"]) == "error"
    assert status_of(["missing_text:x"]) is None


def test_an_outage_is_errors_counted_apart_and_retry_errors_asks_only_those(
    project, capsys
) -> None:
    folder, server = project
    server.policy = outage(set())
    assert run(capsys, "runs/night1.jsonl").code == 0
    # The next night: the endpoint drops 3 requests (each tried twice: max_attempts 2).
    server.received.clear()
    server.policy = outage({2, 3, 8, 9, 14, 15})
    r = run(capsys, "runs/night2.jsonl")
    assert r.code == 0
    assert "3 error case(s)" in r.err and "--retry-errors" in r.err
    rows = cases_of(folder / "runs/night2.jsonl")
    errored = {k for k, c in rows.items() if c.get("status") == "error"}
    assert len(errored) == 3
    for key in errored:
        rec = rows[key]
        assert rec["pass"] is False and rec["reasons"] == ["provider_error:connection"]
        assert rec["error"] and "reach" in rec["error"]  # the failure in words
    summary = lines(folder / "runs/night2.jsonl")[-1]
    assert summary["record"] == "summary" and summary["errors"] == 3
    assert summary["passed"] == 15

    # The verdict: not publishable, the errors named; the pass rate is over the judged.
    v = cli(capsys, "verdict", "runs/night2.jsonl", "--json")
    assert v.code == 1
    verdict = json.loads(v.out)
    assert verdict["label"] == "internal"
    assert verdict["errors"] == 3 and verdict["judged"] == 15
    assert verdict["pass_rate"] == 1.0
    assert any("3 error case(s) left" in why for why in verdict["reasons"])
    clean = json.loads(cli(capsys, "verdict", "runs/night1.jsonl", "--json").out)
    assert clean["errors"] == 0 and not any("error case" in w for w in clean["reasons"])

    # diff: the three moves into error are their own kind, exit 1, never "regressed".
    d = cli(capsys, "diff", "runs/night1.jsonl", "runs/night2.jsonl", "--json")
    assert d.code == 1
    report = json.loads(d.out)
    kinds = [m["kind"] for m in report["silent_regressions"]]
    assert kinds == ["errored"] * 3
    assert all(m["right_status"] == "error" for m in report["silent_regressions"])
    assert report["stats"]["clustered"]["regressed_cases"] == 0
    text = cli(capsys, "diff", "runs/night1.jsonl", "runs/night2.jsonl")
    assert "3 errored" in text.out and "ERRORED" in text.out

    # A plain resume of the finished run says how to retry; --retry-errors does it.
    again = run(capsys, "runs/night2.jsonl", "--resume")
    assert again.code == 3 and "--retry-errors" in again.err
    before = (folder / "runs/night2.jsonl").read_bytes().splitlines(keepends=True)
    server.received.clear()
    server.policy = outage(set())
    r = run(capsys, "runs/night2.jsonl", "--resume", "--retry-errors")
    assert r.code == 0, r.err
    assert len(server.received) == 3  # exactly the errored pairs were asked again
    after = (folder / "runs/night2.jsonl").read_bytes().splitlines(keepends=True)
    kept = [x for x in before if b'"status":"error"' not in x and b'"summary"' not in x]
    assert after[: len(kept)] == kept  # every other line byte for byte
    assert vouched_whole(folder / "runs/night2.jsonl")  # the rewritten file's CRC too
    rows = cases_of(folder / "runs/night2.jsonl")
    assert len(rows) == 18 and not any(c.get("status") for c in rows.values())
    assert json.loads(cli(capsys, "verdict", "runs/night2.jsonl", "--json").out)["errors"] == 0
    # And out of error is its own kind too.
    back = json.loads(cli(capsys, "diff", "runs/night2.jsonl", "runs/night1.jsonl", "--json").out)
    assert back["silent_regressions"] == []
    assert not (folder / "runs/.night2.jsonl.rewrite").exists()


def test_recovered_moves_and_a_retry_with_nothing_to_retry(project, capsys) -> None:
    folder, server = project
    server.policy = outage({0, 1})
    assert run(capsys, "runs/a.jsonl").code == 0
    server.policy = outage(set())
    assert run(capsys, "runs/b.jsonl").code == 0
    report = json.loads(cli(capsys, "diff", "runs/a.jsonl", "runs/b.jsonl", "--json").out)
    assert [m["kind"] for m in report["silent_regressions"]] == ["recovered"]
    junit = folder / "j.xml"
    cli(capsys, "diff", "runs/b.jsonl", "runs/a.jsonl", "--junit", str(junit))
    assert 'errors="1"' in junit.read_text() and 'type="errored"' in junit.read_text()
    r = run(capsys, "runs/b.jsonl", "--resume", "--retry-errors")
    assert r.code == 3 and "no error cases to retry" in r.err


def test_a_4xx_is_not_retried_and_the_servers_words_are_kept(project, capsys) -> None:
    folder, server = project
    words = "maximum context length is 2048 tokens, however you requested 9783 tokens"
    server.default = error(400, words)
    assert run(capsys, "runs/x.jsonl").code == 1  # not one case judged: the run failed
    assert len(server.received) == 18  # one request per pair: never retried
    rec = next(iter(cases_of(folder / "runs/x.jsonl").values()))
    assert rec["reasons"] == ["provider_error:bad_request"] and rec["status"] == "error"
    assert words in rec["error"] and KEY not in rec["error"]


def test_a_key_the_server_echoes_is_cut_from_the_error(project, capsys) -> None:
    folder, server = project
    server.default = error(400, f"bad key {KEY} for this model")
    assert run(capsys, "runs/x.jsonl").code == 1  # not one case judged: the run failed
    data = (folder / "runs/x.jsonl").read_text()
    assert KEY not in data and "bad key" in data


def test_the_tool_turn_goes_back_with_a_string_content_and_finish_reason_is_kept(
    project, capsys
) -> None:
    """llama.cpp's server answers 500 to an assistant turn with `content: null` (or
    none); the strict fake refuses both the same way."""
    folder, server = project
    case = {
        "id": "tool",
        "user": "Look up order 7.",
        "require_tools": ["get_order"],
        "forbid_tools": [],
        "must_include": ["shipped"],
        "must_not": [],
        "tools": [{"name": "get_order", "parameters": {"type": "object"}}],
        "tool_results": {"get_order": {"status": "shipped"}},
    }
    (folder / "golden.jsonl").write_text(json.dumps(case) + "\n")
    inner = tool_model(("get_order", '{"id": 7}')).body
    assert callable(inner)

    def strict(request: dict[str, Any]) -> dict[str, Any]:
        for m in request["messages"]:
            if m["role"] == "assistant" and not isinstance(m.get("content"), str):
                return {"detail": [{"msg": "Input should be a valid string"}]}
        return inner(request)

    server.default = Reply(body=strict)
    assert run(capsys, "runs/t.jsonl").code == 0
    rows = cases_of(folder / "runs/t.jsonl")
    assert all(c["pass"] for c in rows.values()), rows
    sent = server.received[1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["content"] == ""
    assert {c["finish_reason"] for c in rows.values()} == {"stop"}


def test_a_cut_answer_is_marked_and_a_failed_second_turn_keeps_the_first(project, capsys) -> None:
    folder, server = project
    cut = chat("here: w", usage=(5, 16))
    assert isinstance(cut.body, dict)
    cut.body["choices"][0]["finish_reason"] = "length"
    server.default = cut
    assert run(capsys, "runs/cut.jsonl").code == 0
    rec = next(iter(cases_of(folder / "runs/cut.jsonl").values()))
    assert rec["finish_reason"] == "length"

    case = {
        "id": "tool",
        "user": "Look up order 7.",
        "require_tools": ["get_order"],
        "forbid_tools": [],
        "must_include": [],
        "must_not": [],
        "tools": [{"name": "get_order", "parameters": {"type": "object"}}],
        "tool_results": {"get_order": {"status": "shipped"}},
    }
    (folder / "golden.jsonl").write_text(json.dumps(case) + "\n")
    first = chat(None, tool_calls=(("get_order", "{}"),), usage=(40, 7))

    def policy(n: int, in_flight: int, request) -> Reply:
        return first if n % 3 == 0 else error(500, "the server fell over")

    server.default = None
    server.policy = policy
    assert run(capsys, "runs/half.jsonl").code == 1  # not one case judged: the run failed
    rec = next(iter(cases_of(folder / "runs/half.jsonl").values()))
    assert rec["status"] == "error" and rec["reasons"] == ["provider_error:server_error"]
    assert rec["usage"]["prompt_tokens"] == 40  # the first turn's tokens are not lost
    assert rec["turns"][0]["calls"][0]["name"] == "get_order"
    assert "the server fell over" in rec["error"]


async def test_the_review_marks_error_cases_and_filters_them(tmp_path: Path) -> None:
    from evalpin.tui.widgets.case_list import CaseList
    from tests.builders import case, write_run
    from tests.tuikit import SIZE, new_app, screen_text, settle

    down = {"reasons": ["provider_error:connection"], "status": "error"}
    left = write_run(
        tmp_path / "l.jsonl", [case(c, True, s) for c in ("a", "b", "c") for s in (1, 2)]
    )
    right_cases = [case("a", True, 1), case("a", True, 2), case("b", True, 1)]
    right_cases += [case("b", False, 2, error="could not reach the endpoint", **down)]
    right_cases += [case("c", False, s, completion_digest=None, **down) for s in (1, 2)]
    right = write_run(tmp_path / "r.jsonl", right_cases)
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "regressed 0 · fixed 0 · drift 0 · errored 2 · flaky 0 · unchanged 1" in text
        while app.review.filter != "errored":
            await pilot.press("f")
            await pilot.pause()
        ids = [app.review.cases.cases[i].case_id for i in app.review.query_one(CaseList).rows]
        assert ids == ["b", "c"]
        await pilot.pause()
        assert "ERROR (not judged)" in screen_text(app)

    alone = new_app(right)
    async with alone.run_test(size=SIZE) as pilot:
        await settle(pilot, alone, "verdicts")
        # c errored on every seed, b on one with no fail: both are error, not fail.
        assert "fail 0 · error 2 · flaky 0 · pass 1" in screen_text(alone)
