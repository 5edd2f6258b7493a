"""Tool conversations: the openai slot's loop against a real HTTP server on 127.0.0.1 that
behaves as a tool-calling model (tests/fake_openai.py), canned results, the turn cap,
and the client that never sends what the environment holds unless the slot names it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from evalpin.core.instrument.conversation import CannedResults, settle
from evalpin.core.records import Completion, CompletionRequest, Message, ToolCall, Turn, TurnCall
from evalpin.run.slots import OpenAIConfig, Slot, SlotError, open_slot
from tests.fake_openai import FakeOpenAI, Reply, chat, conversation_problem, tool_model

KEY = "sk-loop-test-DO-NOT-LEAK"
URL_ENV, KEY_ENV = "LOOP_TEST_BASE_URL", "LOOP_TEST_API_KEY"
ORDER = {"id": 1001, "status": "shipped", "eta": "2026-12-03"}


@pytest.fixture
def slot(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Slot]]:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv(URL_ENV, server.base_url)
    opened: list[Slot] = []

    def make(**overrides: Any) -> Slot:
        settings: dict[str, Any] = {
            "label": "lab",
            "source": tmp_path / "slots.yaml",
            "model": "m",
            "base_url_env": URL_ENV,
            "api_key_env": KEY_ENV,
            "timeout_s": 5.0,
            "max_attempts": 1,
        }
        opened.append(open_slot(OpenAIConfig(**{**settings, **overrides})))
        return opened[-1]

    yield make
    for s in opened:
        s.close()


def ask(
    tool_results: dict[str, Any] | None = None, max_turns: int | None = None
) -> CompletionRequest:
    return CompletionRequest(
        case_id="c1",
        seed=11,
        messages=[Message("user", "Where is order 1001?")],
        tools=[{"name": "get_order", "parameters": {"type": "object"}}],
        temperature=0.0,
        tool_results=tool_results or {},
        max_turns=max_turns,
    )


def tool_messages(body: dict[str, Any]) -> list[Any]:
    return [json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def test_a_tool_call_is_answered_and_the_final_text_quotes_the_result(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    server.default = tool_model(("get_order", '{"id": 1001}'))
    answer = slot().complete(ask({"get_order": ORDER}))
    assert "2026-12-03" in answer.text and "shipped" in answer.text
    assert answer.tools == [ToolCall("get_order", {"id": 1001})]
    assert answer.turns == [
        Turn(text="", calls=[TurnCall("get_order", {"id": 1001}, ORDER)]),
        Turn(text=answer.text),
    ]
    first, second = server.received
    assert "tools" in second.body and second.body["tools"] == first.body["tools"]
    assert conversation_problem(second.body["messages"]) is None
    assert tool_messages(second.body) == [ORDER]


def test_parallel_calls_each_get_their_result_in_order(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    server.default = tool_model(
        ("get_order", '{"id": 1001}'), ("get_order", '{"id": 1002}'), ("get_customer", "{}")
    )
    results = {"get_order": [{"id": 1001}, {"id": 1002}], "get_customer": {"name": "Ada"}}
    answer = slot().complete(ask(results))
    [calls, final] = answer.turns
    assert [(c.name, c.result) for c in calls.calls] == [
        ("get_order", {"id": 1001}),
        ("get_order", {"id": 1002}),
        ("get_customer", {"name": "Ada"}),
    ]
    assert tool_messages(server.received[1].body) == [{"id": 1001}, {"id": 1002}, {"name": "Ada"}]
    assert final.calls == [] and "Ada" in final.text
    assert [t.name for t in answer.tools] == ["get_order", "get_order", "get_customer"]


def test_a_call_to_an_unknown_tool_gets_an_error_result_not_a_crash(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    server.default = tool_model(("delete_everything", "{}"))
    answer = slot().complete(ask({"get_order": ORDER}))
    assert answer.turns[0].calls[0].result == {"error": "no result for delete_everything"}
    assert "no result for delete_everything" in answer.text


def test_a_model_that_never_stops_calling_tools_runs_out_of_turns(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    server.default = tool_model(("get_order", '{"id": 1001}'), forever=True)
    answer = slot().complete(ask({"get_order": ["first", "second"]}, max_turns=3))
    assert len(server.received) == 3  # the cap counts model requests
    assert answer.turns[-1].calls  # still calling tools when the turns ran out
    assert [c.result for t in answer.turns for c in t.calls] == [
        "first",
        "second",
        msgspec.UNSET,  # the last calls were never answered
    ]
    assert tool_messages(server.received[2].body) == ["first", "second"]


def test_default_cap_is_four_turns(server: FakeOpenAI, slot: Callable[..., Slot]) -> None:
    server.default = tool_model(("get_order", "{}"), forever=True)
    assert len(slot().complete(ask()).turns) == 4
    assert len(server.received) == 4


def test_malformed_arguments_are_recorded_as_given_and_get_an_error_result(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    server.default = tool_model(("get_order", "{id: 1001,"))
    answer = slot().complete(ask({"get_order": [ORDER, "unused"]}))
    [call] = answer.turns[0].calls
    assert call.args == "{id: 1001,"
    assert call.result == {"error": "arguments for get_order are not valid JSON"}
    assert answer.tools == [ToolCall("get_order", "{id: 1001,")]
    # The assistant message goes back with the arguments exactly as the model wrote them.
    sent = server.received[1].body["messages"][1]
    assert sent["tool_calls"][0]["function"]["arguments"] == "{id: 1001,"


def test_a_reply_without_tool_calls_stays_a_plain_completion(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    server.push(chat("no tools needed"))
    answer = slot().complete(ask({"get_order": ORDER}))
    assert answer == Completion(
        text="no tools needed", model="fake-model-1@fp_test", finish_reason="stop"
    )


def test_environment_credentials_and_headers_are_never_sent_unless_named(
    server: FakeOpenAI, slot: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-ambient")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-ambient")
    monkeypatch.setenv(
        "OPENAI_CUSTOM_HEADERS", "X-Ambient-Tenant: tenant-7\nAuthorization: Bearer sk-ambient"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ambient-key")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    server.push(chat("one"))
    slot().complete(ask())
    [got] = server.received
    assert got.headers["authorization"] == f"Bearer {KEY}"
    assert "openai-organization" not in got.headers
    assert "openai-project" not in got.headers
    assert "x-ambient-tenant" not in got.headers
    assert not any("ambient" in v for v in got.headers.values())


def test_a_slot_sends_the_organization_project_and_headers_it_names(
    server: FakeOpenAI, slot: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-ambient")
    monkeypatch.setenv("LOOP_ORG", "org-chosen")
    monkeypatch.setenv("LOOP_TENANT", "tenant-chosen")
    server.push(chat("one"))
    s = slot(organization_env="LOOP_ORG", headers_env={"X-Tenant": "LOOP_TENANT"})
    s.complete(ask())
    [got] = server.received
    assert got.headers["openai-organization"] == "org-chosen"
    assert got.headers["x-tenant"] == "tenant-chosen"
    assert "openai-project" not in got.headers
    assert {"LOOP_ORG", "LOOP_TENANT"} <= set(s.config.secret_env_names())


def test_sampling_settings_are_sent_and_pinned(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    server.push(chat("one"))
    s = slot(sampling={"top_p": 0.5})
    s.complete(ask())
    assert server.received[0].body["top_p"] == 0.5
    assert s.config.settings_digest() != slot().config.settings_digest()


# -- the pure parts -------------------------------------------------------------------


def test_list_results_come_in_call_order_and_the_last_repeats() -> None:
    canned = CannedResults({"a": [1, 2], "b": {"x": 1}, "c": [[1, 2]]})
    assert [canned.answer("a") for _ in range(4)] == [1, 2, 2, 2]
    assert canned.answer("b") == {"x": 1} and canned.answer("b") == {"x": 1}
    assert canned.answer("c") == [1, 2]  # a list result is written as a one-item list
    assert canned.answer("zzz") == {"error": "no result for zzz"}


def test_settle_derives_text_and_tools_and_refuses_contradictions() -> None:
    turns = [Turn(calls=[TurnCall("t", {"a": 1}, "r")]), Turn(text="final")]
    done = settle(Completion(turns=turns))
    assert done.text == "final" and done.tools == [ToolCall("t", {"a": 1})]
    assert settle(Completion(text="final", tools=[ToolCall("t", {"a": 1})], turns=turns)) == done
    with pytest.raises(ValueError, match="text"):
        settle(Completion(text="other", turns=turns))
    with pytest.raises(ValueError, match="tools"):
        settle(Completion(tools=[ToolCall("u")], turns=turns))


def test_a_body_nested_past_any_sense_is_bad_response_not_a_crash(
    server: FakeOpenAI, slot: Callable[..., Slot]
) -> None:
    deep = b'{"choices": [{"message": {"content": "x", "tool_calls": ' + b"[" * 100_000 + b"}]}"
    server.push(Reply(body=deep), Reply(status=400, body=b'{"error": ' + b"[" * 100_000))
    s = slot()
    for reason in ("bad_response", "bad_request"):  # the second is an HTTP 400
        with pytest.raises(SlotError) as info:
            s.complete(ask())
        assert info.value.reason == f"provider_error:{reason}"


@pytest.mark.parametrize(
    "twice",
    [
        b'"message": {"content": "no refund", "content": "refunded"}',
        b'"message": {"content": null, "tool_calls": [{"id": "c", "function": '
        b'{"name": "get_order", "name": "delete_everything", "arguments": "{}"}}]}',
    ],
    ids=["content", "tool-name"],
)
def test_a_body_writing_a_key_twice_is_bad_response(
    server: FakeOpenAI, slot: Callable[..., Slot], twice: bytes
) -> None:
    """One client keeps the first, another the last: the answer is ambiguous, so the
    case is an error (`bad_response`), never graded on whichever value was kept."""
    server.push(Reply(body=b'{"model": "m", "choices": [{"index": 0, ' + twice + b"}]}"))
    with pytest.raises(SlotError) as info:
        slot().complete(ask())
    assert info.value.reason == "provider_error:bad_response"
    assert "duplicate key" in str(info.value)


def test_the_grader_marks_a_conversation_that_ran_out_of_turns() -> None:
    from evalpin.core.instrument.fixtures import GoldenCase
    from evalpin.core.instrument.graders.tools import grade_golden

    case = GoldenCase("c", "u", ["t"], [], ["done"], [], [], "h", 1)
    answered = settle(Completion(turns=[Turn(calls=[TurnCall("t", {}, 1)]), Turn(text="done")]))
    assert grade_golden(case, answered) == []
    cut = settle(
        Completion(turns=[Turn(calls=[TurnCall("t", {}, 1)]), Turn(calls=[TurnCall("t")])])
    )
    assert grade_golden(case, cut) == ["missing_text:done", "tool_loop_exhausted"]
    assert grade_golden(case, Completion(text="done", tools=[ToolCall("t")])) == []


@pytest.mark.parametrize(
    "entry",
    [
        "headers_env: {X-Tenant: sk-literal-value}",
        'headers_env: {"X-Bad\\nHeader": TENANT}',
        "headers_env: [X-Tenant]",
        "organization_env: org-123",
        "sampling: {temperature: 0.5}",
        "sampling: {top_p: high}",
    ],
)
def test_bad_named_headers_and_sampling_are_refused(tmp_path: Path, entry: str) -> None:
    from evalpin.core.errors import InputError
    from evalpin.run.slots import resolve_slot

    (tmp_path / "slots.yaml").write_text(
        f"slots:\n  lab: {{provider: openai, model: m, base_url_env: U, api_key_env: K, {entry}}}\n"
    )
    with pytest.raises(InputError, match="slot 'lab'"):
        resolve_slot("lab", tmp_path / "slots.yaml")


@pytest.mark.parametrize(
    "raw",
    [
        '{"id": 1001, "id": 2002}',  # a key twice: which did the model mean?
        '{"id": NaN}',
        '{"id": Infinity}',
        '{"id": 1e999}',
        '{"filter": {"id": 1, "id": 2}}',  # below the top level too
        '{"id": ' + "9" * 5000 + "}",
    ],
    ids=["twice", "nan", "infinity", "overflow", "nested-twice", "digits"],
)
def test_arguments_json_does_not_have_are_recorded_as_given_and_get_an_error_result(
    server: FakeOpenAI, slot: Callable[..., Slot], raw: str
) -> None:
    """Arguments that are not exactly JSON (issue 51) are the model's malformed call, as
    unparsable ones are: kept as written, never a value one reader would read otherwise."""
    server.default = tool_model(("get_order", raw))
    answer = slot().complete(ask({"get_order": [ORDER, "unused"]}))
    [call] = answer.turns[0].calls
    assert call.args == raw
    assert call.result == {"error": "arguments for get_order are not valid JSON"}
    sent = server.received[1].body["messages"][1]
    assert sent["tool_calls"][0]["function"]["arguments"] == raw
