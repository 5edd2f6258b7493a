"""The real llama.cpp server answers the OpenAI SDK (skips without the llama venv;
see tests/llama_server.py and scripts/install_llama_server.sh)."""

from __future__ import annotations

import json

import openai
import pytest

from tests.llama_server import LlamaServer

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture
def client(llama_server: LlamaServer):
    with openai.OpenAI(base_url=llama_server.base_url, api_key="unused", max_retries=0) as c:
        yield c


def test_chat_completion(llama_server: LlamaServer, client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model=llama_server.model,
        messages=[{"role": "user", "content": "Say hello."}],
        max_tokens=8,
        temperature=0,
    )
    assert reply.choices, reply
    choice = reply.choices[0]
    assert choice.message.content
    assert choice.finish_reason in {"stop", "length"}
    assert reply.model == llama_server.model  # the server echoes the requested name
    assert reply.usage is not None and 0 < reply.usage.completion_tokens <= 8


def test_tool_call(llama_server: LlamaServer, client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model=llama_server.tools_model,
        messages=[{"role": "user", "content": "What is the weather in Paris? Use the tool."}],
        tools=[WEATHER],
        tool_choice="auto",
        max_tokens=32,
        temperature=0,
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls or []
    assert call.function.name == "get_weather"
    assert isinstance(json.loads(call.function.arguments).get("city"), str)
