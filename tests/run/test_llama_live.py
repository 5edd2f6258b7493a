"""`evalpin run` against a real llama.cpp server (issue 31), as a new user would point a
slot at one: a tool conversation goes past its second request, a context overflow is an
error case with the server's own words (asked once, not retried), a cut answer says it
was cut, and the probes record a backend with no fingerprint. Skips without the llama
venv (scripts/install_llama_server.sh; CI installs it and requires it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.clirun import cli
from tests.llama_server import LlamaServer

WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
CASES = [
    {
        "id": "weather",
        "user": "What is the weather in Paris? Use the get_weather tool.",
        "require_tools": ["get_weather"],
        "forbid_tools": [],
        "must_include": [],
        "must_not": [],
        "tools": [WEATHER],
        "tool_results": {"get_weather": {"city": "Paris", "sky": "sunny", "celsius": 18}},
    },
    {
        "id": "overflow",
        "user": "Summarise this: " + "lorem ipsum dolor " * 3000,
        "require_tools": [],
        "forbid_tools": [],
        "must_include": [],
        "must_not": [],
    },
]


STORY = {
    "id": "story",
    "user": "Tell me the long history of Rome.",
    "require_tools": [],
    "forbid_tools": [],
    "must_include": [],
    "must_not": [],
}


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_a_real_llama_cpp_server_end_to_end(
    llama_server: LlamaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LLAMA_BASE_URL", llama_server.base_url)
    monkeypatch.setenv("LLAMA_API_KEY", "sk-local-unused")
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    (tmp_path / "slots.yaml").write_text(
        "slots:\n"
        f"  local: {{provider: openai, model: {llama_server.tools_model}, "
        "base_url_env: LLAMA_BASE_URL, api_key_env: LLAMA_API_KEY, tool_choice: auto, "
        "timeout_s: 120, max_attempts: 2, retry_base_s: 0.1, tier: local}\n"
        f"  plain: {{provider: openai, model: {llama_server.model}, "
        "base_url_env: LLAMA_BASE_URL, api_key_env: LLAMA_API_KEY, probes: false}\n"
    )
    (tmp_path / "story.jsonl").write_text(json.dumps(STORY) + "\n")
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "golden.jsonl",
        "--slot",
        "local",
        "--seeds",
        "1",
        "--temperature",
        "0",
        "--max-tokens",
        "40",
        "--max-turns",
        "3",
        "--out",
        "runs/llama.jsonl",
    )
    assert r.code == 0, r.err + llama_server.log_tail()
    head, *rows, summary = records(tmp_path / "runs/llama.jsonl")
    cases = {c["case_id"]: c for c in rows}

    # The tool conversation went on past its second request: no provider error, and the
    # model's call got its result back.
    weather = cases["weather"]
    assert not any(x.startswith("provider_error") for x in weather["reasons"]), weather
    assert weather.get("status") is None
    assert len(weather["turns"]) >= 2, weather
    assert weather["turns"][0]["calls"][0]["name"] == "get_weather"
    assert weather["usage"]["prompt_tokens"] > 0

    # A cut answer is marked.
    r = cli(
        capsys,
        *("run", "--fixtures", "story.jsonl", "--slot", "plain", "--seeds", "1"),
        *("--max-tokens", "5", "--out", "runs/story.jsonl"),
    )
    assert r.code == 0, r.err
    story = records(tmp_path / "runs/story.jsonl")[1]
    assert story["finish_reason"] == "length" and story["usage"]["completion_tokens"] == 5

    # A prompt past the context: an error case with the server's words, not a fail.
    overflow = cases["overflow"]
    assert overflow["status"] == "error" and overflow["pass"] is False
    assert overflow["reasons"] == ["provider_error:bad_request"]
    assert "maximum context length is 2048 tokens" in overflow["error"]
    assert "attempt 1 of 2" in overflow["error"]  # a 400 is never retried
    assert summary["errors"] == 1

    # The probes: answered alike twice at temperature 0, no fingerprint from the server.
    probes = head["probes"]
    assert probes["repeatable"] is True and probes["fingerprint"] is False
    assert summary["probes_end"] == probes["start"]
    assert weather["reported_model"].endswith("~probes:" + probes["start"])

    v = cli(capsys, "verdict", "runs/llama.jsonl", "--json")
    verdict = json.loads(v.out)
    assert v.code == 1 and verdict["errors"] == 1 and verdict["judged"] == 1
    assert any("no fingerprint" in n for n in verdict["notes"])
    assert any("1 error case(s) left" in why for why in verdict["reasons"])
