"""Completion slots against real backends: replay files, child processes, and the real
openai SDK talking HTTP to a local fake server (tests/fake_openai.py)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.records import Completion, CompletionRequest, Message, ToolCall
from evalpin.run.slots import (
    NO_COMPLETION,
    CommandConfig,
    OpenAIConfig,
    ReplayConfig,
    Slot,
    SlotError,
    load_slots,
    open_slot,
    resolve_slot,
)
from tests.fake_openai import FakeOpenAI, Reply, chat, error, free_port

KEY = "sk-test-Zq8v1-very-secret"
KEY_ENV = "EVALPIN_TEST_COMPLETION_KEY"
URL_ENV = "EVALPIN_TEST_COMPLETION_URL"


def request(
    case_id: str = "c1",
    seed: int = 11,
    *users: str,
    tools: list | None = None,
    temperature: float | None = 0.0,
    max_tokens: int | None = 256,
) -> CompletionRequest:
    """A request; extra user messages after the first make it a repair round."""
    messages = [Message("system", "be brief")]
    for n, text in enumerate(users or ("hello",)):
        if n:
            messages.append(Message("assistant", f"attempt {n}"))
        messages.append(Message("user", text))
    return CompletionRequest(
        case_id=case_id,
        seed=seed,
        messages=messages,
        tools=tools or [],
        temperature=temperature,
        max_tokens=max_tokens,
    )


def write_lines(path: Path, *lines: bytes | dict) -> Path:
    path.write_bytes(
        b"".join((ln if isinstance(ln, bytes) else json.dumps(ln).encode()) + b"\n" for ln in lines)
    )
    return path


def write_slots(folder: Path, text: str) -> Path:
    path = folder / "slots.yaml"
    path.write_text(textwrap.dedent(text))
    return path


# -- configuration ------------------------------------------------------------------


def test_slots_file_loads_every_provider_with_paths_relative_to_its_folder(
    tmp_path: Path,
) -> None:
    path = write_slots(
        tmp_path,
        f"""
        slots:
          lab: {{provider: openai, base_url_env: {URL_ENV}, api_key_env: {KEY_ENV}, model: m-1}}
          night: {{provider: replay, path: rec/night-1.jsonl}}
          agent: {{provider: command, argv: [python, agents/solve.py], timeout_s: 5}}
        """,
    )
    slots = load_slots(path)
    lab, night, agent = slots["lab"], slots["night"], slots["agent"]
    assert isinstance(lab, OpenAIConfig)
    assert (lab.model, lab.max_attempts, lab.source) == ("m-1", 4, path)
    assert isinstance(night, ReplayConfig)
    assert night.path == tmp_path.absolute() / "rec" / "night-1.jsonl"
    assert night.path_text == "rec/night-1.jsonl"
    assert isinstance(agent, CommandConfig)
    assert (agent.argv, agent.cwd, agent.timeout_s) == (
        ("python", "agents/solve.py"),
        tmp_path.absolute(),
        5.0,
    )


def test_a_label_is_looked_up_in_the_slots_file(tmp_path: Path) -> None:
    path = write_slots(tmp_path, "slots:\n  night: {provider: replay, path: n.jsonl}\n")
    config = resolve_slot("night", path)
    assert isinstance(config, ReplayConfig)
    assert config.path == tmp_path.absolute() / "n.jsonl"


def test_inline_replay_slot_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = resolve_slot("quick=replay:rec/a.jsonl", None)
    assert isinstance(config, ReplayConfig)
    assert (config.label, config.source, config.path_text) == ("quick", None, "rec/a.jsonl")
    assert config.path == tmp_path / "rec" / "a.jsonl"


@pytest.mark.parametrize("spec", ["x=openai:m", "x=replay:", "=replay:a.jsonl", "x y=replay:a"])
def test_inline_form_takes_only_replay_with_a_path(spec: str) -> None:
    with pytest.raises(InputError, match="LABEL=replay:PATH") as info:
        resolve_slot(spec, None)
    assert info.value.path == "--slot"


def test_unknown_label_names_the_file_and_the_known_labels(tmp_path: Path) -> None:
    path = write_slots(tmp_path, "slots:\n  night: {provider: replay, path: n.jsonl}\n")
    with pytest.raises(InputError, match=r"no slot 'day' \(slots here: night\)") as info:
        resolve_slot("day", path)
    assert info.value.path == str(path)


def test_missing_slots_file_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="no slots file") as info:
        resolve_slot("night", None)
    assert info.value.path == "slots.yaml"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("{provider: openai, api_key: sk-LITERAL-123, model: m}", "'api_key' must not be written"),
        ("{provider: openai, base_url: 'https://host.example/v1'}", "'base_url' must not be"),
        ("{provider: replay, path: a.jsonl, api_key: sk-LITERAL-123}", "'api_key' must not be"),
        ("{provider: ftp, path: a}", "'provider' must be one of openai, replay, command"),
        (f"{{provider: openai, base_url_env: U, api_key_env: {KEY_ENV}}}", "'model' must be"),
        (
            "{provider: openai, model: m, base_url_env: U, api_key_env: sk-LITERAL-123}",
            "'api_key_env' must be the name of an environment variable",
        ),
        ("{provider: command, argv: python x.py}", "'argv' must be a non-empty list"),
        ("{provider: command, argv: [python], timeout_s: soon}", "'timeout_s' must be a number"),
        ("{provider: command, argv: [python], timeout_s: 0}", "'timeout_s' must be positive"),
        ("{provider: replay, path: a.jsonl, timout_s: 3}", "unknown key 'timout_s'"),
        ("[replay, a.jsonl]", "expected a mapping"),
    ],
)
def test_invalid_slot_entries_are_refused_naming_the_file(
    tmp_path: Path, entry: str, problem: str
) -> None:
    path = write_slots(tmp_path, f"slots:\n  s1: {entry}\n")
    with pytest.raises(InputError) as info:
        load_slots(path)
    assert info.value.path == str(path)
    assert problem in info.value.message
    assert "slot 's1'" in info.value.message
    assert "LITERAL" not in str(info.value)  # a pasted secret is never echoed
    assert "host.example" not in str(info.value)


def test_yaml_aliases_are_refused_in_a_slots_file(tmp_path: Path) -> None:
    path = write_slots(
        tmp_path,
        """
        base: &b {provider: replay, path: a.jsonl}
        slots:
          s1: *b
        """,
    )
    with pytest.raises(InputError, match="aliases are not allowed") as info:
        load_slots(path)
    assert info.value.line == 4


def test_a_slots_file_needs_one_slots_mapping(tmp_path: Path) -> None:
    path = write_slots(tmp_path, "slot:\n  s1: {provider: replay, path: a.jsonl}\n")
    with pytest.raises(InputError, match="'slots'"):
        load_slots(path)


def test_public_settings_name_variables_but_hold_no_secret_or_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:9/v1")
    rec = write_lines(tmp_path / "rec.jsonl", {"case_id": "c1", "text": "hi"})
    path = write_slots(
        tmp_path,
        f"""
        slots:
          lab: {{provider: openai, base_url_env: {URL_ENV}, api_key_env: {KEY_ENV}, model: m-1}}
          night: {{provider: replay, path: rec.jsonl}}
          agent: {{provider: command, argv: [python, solve.py]}}
        """,
    )
    settings = {label: c.public_settings() for label, c in load_slots(path).items()}
    assert settings["lab"] == {
        "provider": "openai",
        "model": "m-1",
        "base_url_env": URL_ENV,
        "api_key_env": KEY_ENV,
        "timeout_s": 120.0,
        "max_attempts": 4,
    }
    assert settings["night"] == {
        "provider": "replay",
        "path": "rec.jsonl",
        "sha256": hashlib.sha256(rec.read_bytes()).hexdigest(),
    }
    assert settings["agent"] == {
        "provider": "command",
        "argv": ["python", "solve.py"],
        "timeout_s": 60.0,
    }
    dumped = json.dumps(settings)
    assert KEY not in dumped
    assert "127.0.0.1" not in dumped
    assert str(tmp_path) not in dumped


# -- replay -------------------------------------------------------------------------


def open_replay(path: Path) -> Slot:
    return open_slot(ReplayConfig(label="rec", source=None, path=path, path_text=path.name))


def test_replay_prefers_the_exact_seed_over_a_seedless_line(tmp_path: Path) -> None:
    rec = write_lines(
        tmp_path / "rec.jsonl",
        {"case_id": "c1", "text": "any seed", "model": "m@fp1"},
        {"case_id": "c1", "seed": 11, "text": "seed 11", "model": "m@fp1"},
    )
    with open_replay(rec) as slot:
        assert slot.complete(request("c1", 11)).text == "seed 11"
        assert slot.complete(request("c1", 29)) == Completion(text="any seed", model="m@fp1")
        assert slot.warnings == []


def test_replay_returns_tools_and_files_as_recorded(tmp_path: Path) -> None:
    line = {
        "case_id": "c1",
        "seed": 11,
        "text": "done",
        "tools": [{"name": "lookup_order", "args": {"id": 1001}}],
        "files": {"fix.py": "x = 1\n"},
        "model": "m",
    }
    with open_replay(write_lines(tmp_path / "rec.jsonl", line)) as slot:
        assert slot.complete(request("c1", 11)) == Completion(
            text="done",
            tools=[ToolCall("lookup_order", {"id": 1001})],
            files={"fix.py": "x = 1\n"},
            model="m",
        )


def test_replay_without_a_line_for_the_case_is_no_completion(tmp_path: Path) -> None:
    rec = write_lines(tmp_path / "rec.jsonl", {"case_id": "c1", "seed": 11, "text": "x"})
    with open_replay(rec) as slot, pytest.raises(SlotError) as info:
        slot.complete(request("c1", 29))
    assert info.value.reason == NO_COMPLETION
    assert "case 'c1' seed 29" in info.value.detail


def test_broken_replay_lines_are_skipped_and_reported_by_line_number(tmp_path: Path) -> None:
    rec = write_lines(
        tmp_path / "rec.jsonl",
        {"case_id": "good", "text": "fine"},
        b'{"case_id": "notjson", "text": ',
        {"case_id": "shape", "text": 42},
        b'{"case_id": "latin", "text": "caf\xe9"}',
        {"case_id": "good", "text": "second copy"},
    )
    with open_replay(rec) as slot:
        assert slot.complete(request("good")).text == "fine"
        for case_id in ("notjson", "shape", "latin"):
            with pytest.raises(SlotError) as info:
                slot.complete(request(case_id))
            assert info.value.reason == NO_COMPLETION
        assert len(slot.warnings) == 4
        not_json, shape, latin, duplicate = slot.warnings
    assert not_json.startswith("rec.jsonl:2: line skipped: not JSON")
    assert shape.startswith("rec.jsonl:3: line skipped: wrong shape") and "$.text" in shape
    assert latin == "rec.jsonl:4: line skipped: not UTF-8: byte 0xe9 at column 34"
    assert duplicate == "rec.jsonl:5: line skipped: duplicate of line 1, which is kept"


def test_replay_answers_repair_rounds_by_loop(tmp_path: Path) -> None:
    rec = write_lines(
        tmp_path / "rec.jsonl",
        {"case_id": "c1", "text": "first try"},
        {"case_id": "c1", "loop": 1, "text": "repaired"},
    )
    with open_replay(rec) as slot:
        assert slot.complete(request("c1", 11, "fix it")).text == "first try"
        assert slot.complete(request("c1", 11, "fix it", "tests failed: ...")).text == "repaired"
        with pytest.raises(SlotError, match="loop 2") as info:
            slot.complete(request("c1", 11, "fix it", "failed", "failed again"))
        assert info.value.reason == NO_COMPLETION


@pytest.mark.parametrize(("content", "problem"), [(None, "no such replay file"), (b"\n", "empty")])
def test_a_missing_or_empty_replay_file_is_an_input_error(
    tmp_path: Path, content: bytes | None, problem: str
) -> None:
    rec = tmp_path / "rec.jsonl"
    if content is not None:
        rec.write_bytes(content)
    with pytest.raises(InputError, match=problem) as info:
        open_replay(rec)
    assert info.value.path == str(rec)


# -- command ------------------------------------------------------------------------

ECHO_AGENT = """
import json, os, sys
req = json.load(sys.stdin)
last = req["messages"][-1]["content"]
print(json.dumps({
    "text": f"{req['case_id']}/{req['seed']}: {last} (t={req['temperature']})",
    "tools": [{"name": "echo", "args": {"tools_offered": len(req["tools"])}}],
    "files": {"cwd.txt": os.getcwd()},
    "model": "echo-agent-1",
}))
"""


@pytest.fixture
def agent(tmp_path: Path) -> Callable[..., Slot]:
    """Writes `source` as agents/agent.py next to a slots file and opens it as a slot."""
    opened: list[Slot] = []

    def make(source: str, timeout_s: float = 10) -> Slot:
        (tmp_path / "agents").mkdir(exist_ok=True)
        (tmp_path / "agents" / "agent.py").write_text(textwrap.dedent(source))
        argv = json.dumps([sys.executable, "agents/agent.py"])
        path = write_slots(
            tmp_path,
            f"slots:\n  a: {{provider: command, argv: {argv}, timeout_s: {timeout_s}}}\n",
        )
        slot = open_slot(resolve_slot("a", path))
        opened.append(slot)
        return slot

    yield make
    for slot in opened:
        slot.close()


def test_command_slot_answers_from_a_program_run_in_the_slots_folder(
    tmp_path: Path, agent: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    slot = agent(ECHO_AGENT)
    answer = slot.complete(request("c1", 29, "ping", tools=[{"name": "t"}], temperature=0.2))
    assert answer == Completion(
        text="c1/29: ping (t=0.2)",
        tools=[ToolCall("echo", {"tools_offered": 1})],
        files={"cwd.txt": str(tmp_path.absolute())},
        model="echo-agent-1",
    )


def test_command_child_does_not_see_secrets_from_the_parent(
    agent: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALPIN_TEST_API_KEY", KEY)
    monkeypatch.setenv("EVALPIN_TEST_AUTH_TOKEN", "tok-123")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EVALPIN_TEST_PLAIN", "visible")
    slot = agent(
        """
        import json, os, sys
        names = ["EVALPIN_TEST_API_KEY", "EVALPIN_TEST_AUTH_TOKEN", "OPENAI_BASE_URL",
                 "EVALPIN_TEST_PLAIN"]
        print(json.dumps({"text": json.dumps({n: os.environ.get(n) for n in names})}))
        """
    )
    seen = json.loads(slot.complete(request()).text)
    assert seen == {
        "EVALPIN_TEST_API_KEY": None,
        "EVALPIN_TEST_AUTH_TOKEN": None,
        "OPENAI_BASE_URL": None,
        "EVALPIN_TEST_PLAIN": "visible",
    }


def _alive(pid: int) -> bool:
    """Running and not a zombie (a container's init may never reap a killed orphan)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_command_timeout_kills_the_whole_process_group(
    tmp_path: Path, agent: Callable[..., Slot]
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    slot = agent(
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pid_file)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """,
        timeout_s=1,
    )
    with pytest.raises(SlotError) as info:
        slot.complete(request())
    assert info.value.reason == "provider_error:timeout"  # not the agent's 60 s answer
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 60  # a guard for a loaded machine, not a measurement
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_command_nonzero_exit_is_command_failed_with_the_stderr_tail(
    agent: Callable[..., Slot],
) -> None:
    slot = agent("import sys\nprint('warming up', file=sys.stderr)\nsys.exit('model crashed')\n")
    with pytest.raises(SlotError) as info:
        slot.complete(request())
    assert info.value.reason == "provider_error:command_failed"
    assert info.value.detail == "exit status 1: model crashed"


@pytest.mark.parametrize(
    "output", ["print('thinking...')", "print('{}')", "print('{\"text\": 1}')", "pass"]
)
def test_command_output_that_is_not_one_completion_is_bad_output(
    agent: Callable[..., Slot], output: str
) -> None:
    slot = agent(f"import sys\nsys.stdin.read()\n{output}\n")
    with pytest.raises(SlotError) as info:
        slot.complete(request())
    assert info.value.reason == "provider_error:bad_output"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ('{"text": "no refund", "text": "refunded"}', "duplicate key 'text'"),
        ('{"text": "ok", "tools": [{"name": "t", "args": {"a": 1, "a": 2}}]}', "key 'a'"),
        ('{"text": "ok", "tools": [{"name": "t", "args": {"n": 1e999}}]}', "out of range"),
        ('{"text": "ok", "tools": [{"name": "t", "args": {"n": ' + "9" * 5000 + "}}]}", "range"),
        ('{"text": "ok", "tools": [{"name": "t", "args": {"n": NaN}}]}', "malformed"),
    ],
    ids=["twice", "args-twice", "overflow", "digits", "nan"],
)
def test_command_output_that_is_not_exactly_json_is_bad_output(
    agent: Callable[..., Slot], answer: str, said: str
) -> None:
    """Issue 51: an answer one reader would read otherwise than another, or a number no
    reader can hold (in the model's own arguments too), is not a completion."""
    slot = agent(f"import sys\nsys.stdin.read()\nprint({answer!r})\n")
    with pytest.raises(SlotError) as info:
        slot.complete(request())
    assert info.value.reason == "provider_error:bad_output"
    assert said in info.value.detail, info.value.detail


def test_command_program_that_does_not_exist_fails_when_opened(tmp_path: Path) -> None:
    path = write_slots(tmp_path, "slots:\n  a: {provider: command, argv: [agents/nope.py]}\n")
    with pytest.raises(InputError, match=r"no program 'agents/nope\.py'") as info:
        open_slot(resolve_slot("a", path))
    assert info.value.path == str(path)


# -- openai (the real SDK against tests/fake_openai.py) -------------------------------


@pytest.fixture
def openai_slot(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Slot]]:
    """Opens an openai slot on the fake server; retry delays are tiny unless overridden."""
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv(URL_ENV, server.base_url)
    opened: list[Slot] = []

    def make(**overrides: object) -> Slot:
        settings: dict = {
            "label": "lab",
            "source": tmp_path / "slots.yaml",
            "model": "some-model",
            "base_url_env": URL_ENV,
            "api_key_env": KEY_ENV,
            "timeout_s": 5.0,
            "retry_base_s": 0.001,
            "retry_max_s": 0.01,
        }
        slot = open_slot(OpenAIConfig(**{**settings, **overrides}))
        opened.append(slot)
        return slot

    yield make
    for slot in opened:
        slot.close()


def fails(slot: Slot, req: CompletionRequest | None = None) -> SlotError:
    with pytest.raises(SlotError) as info:
        slot.complete(req or request())
    assert KEY not in str(info.value) and KEY not in repr(info.value.args)
    return info.value


def test_openai_sends_the_controls_and_parses_tool_calls(
    server: FakeOpenAI, openai_slot: Callable[..., Slot]
) -> None:
    server.push(
        chat(
            None,
            tool_calls=(("lookup_order", '{"id": 1001}'), ("cancel_order", "id=1002, not json")),
        ),
        chat("done"),
    )
    openai_tool = {"type": "function", "function": {"name": "lookup_order", "parameters": {}}}
    bare_tool = {"name": "cancel_order", "description": "Cancel", "parameters": {"type": "object"}}
    req = request("c1", 47, "cancel 1002", tools=[openai_tool, bare_tool], temperature=0.3)
    answer = openai_slot().complete(req)
    assert answer.text == "done"
    assert answer.tools == [
        ToolCall("lookup_order", {"id": 1001}),
        ToolCall("cancel_order", "id=1002, not json"),
    ]
    assert answer.model == "fake-model-1@fp_test"
    first, second = server.received
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.body == {
        "model": "some-model",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "cancel 1002"},
        ],
        "seed": 47,
        "temperature": 0.3,
        "max_tokens": 256,
        "tools": [openai_tool, {"type": "function", "function": bare_tool}],
    }
    assert second.body["tools"] == first.body["tools"]
    assert [m["role"] for m in second.body["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
    ]


def test_openai_without_fingerprint_reports_the_model_name(
    server: FakeOpenAI, openai_slot: Callable[..., Slot]
) -> None:
    server.push(chat("hello there", fingerprint=None, model="served-model"))
    answer = openai_slot().complete(request(temperature=None, max_tokens=None))
    assert answer == Completion(text="hello there", model="served-model", finish_reason="stop")
    assert "temperature" not in server.received[0].body
    assert "max_tokens" not in server.received[0].body
    assert "tools" not in server.received[0].body


def test_openai_retries_a_server_error_then_succeeds(
    server: FakeOpenAI, openai_slot: Callable[..., Slot]
) -> None:
    server.push(error(500), error(503), chat("third time"))
    assert openai_slot().complete(request()).text == "third time"
    assert len(server.received) == 3


def test_openai_gives_up_after_max_attempts_default_four(
    server: FakeOpenAI, openai_slot: Callable[..., Slot]
) -> None:
    server.default = error(500, "overloaded")
    err = fails(openai_slot())
    assert err.reason == "provider_error:server_error"
    assert err.detail == "HTTP 500: overloaded (attempt 4 of 4)"
    assert len(server.received) == 4


class RecordedWaits(threading.Event):
    """Stands in for the slot's stop event: records each backoff it is asked to wait
    and returns at once, so the test checks the delay chosen, not the clock."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return self.is_set()


def recorded_waits(slot: Slot, monkeypatch: pytest.MonkeyPatch) -> RecordedWaits:
    waits = RecordedWaits()
    monkeypatch.setattr(slot, "_closed", waits)
    return waits


def test_openai_honours_retry_after(
    server: FakeOpenAI, openai_slot: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch
) -> None:
    server.push(error(429, "slow down", **{"Retry-After": "0.4"}), chat("ok"))
    slot = openai_slot(retry_max_s=5.0)
    waits = recorded_waits(slot, monkeypatch)
    assert slot.complete(request()).text == "ok"
    assert waits.waits == [0.4]


def test_openai_caps_retry_after_and_reports_rate_limited(
    server: FakeOpenAI, openai_slot: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch
) -> None:
    server.default = error(429, "quota", **{"Retry-After": "3600"})
    slot = openai_slot(max_attempts=3, retry_max_s=0.05)
    waits = recorded_waits(slot, monkeypatch)
    err = fails(slot)
    assert waits.waits == [0.05, 0.05]  # an hour asked, the cap waited, twice
    assert err.reason == "provider_error:rate_limited"
    assert len(server.received) == 3


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(body=b'{"id": "chatcmpl-1", "choices": ['), "provider_error:bad_response"),
        (Reply(body={"id": "chatcmpl-1", "model": "m"}), "provider_error:bad_response"),
        (Reply(body={"model": "m", "choices": [{"message": 7}]}), "provider_error:bad_response"),
        (Reply(body={"model": "m", "choices": []}), "provider_error:empty_choices"),
        (error(404, "no such model"), "provider_error:bad_request"),
    ],
)
def test_openai_unusable_answers_are_not_retried(
    server: FakeOpenAI, openai_slot: Callable[..., Slot], reply: Reply, reason: str
) -> None:
    server.push(reply)
    assert fails(openai_slot()).reason == reason
    assert len(server.received) == 1


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (403, "auth"), (400, "bad_request")])
def test_openai_refusals_keep_the_server_message_but_never_the_key(
    server: FakeOpenAI, openai_slot: Callable[..., Slot], status: int, kind: str
) -> None:
    server.default = error(status, f"Incorrect API key provided: {KEY}.")
    err = fails(openai_slot())
    assert err.reason == f"provider_error:{kind}"
    assert err.detail == f"HTTP {status}: Incorrect API key provided: ***. (attempt 1 of 4)"
    assert len(server.received) == 1


def test_openai_slow_answer_times_out_after_each_attempt(
    server: FakeOpenAI, openai_slot: Callable[..., Slot]
) -> None:
    # No clock is read: an attempt that did not time out would get the (late) answer.
    server.default = Reply(body=chat().body, delay_s=30)
    err = fails(openai_slot(timeout_s=0.3, max_attempts=2))
    assert err.reason == "provider_error:timeout"
    assert len(server.received) == 2


def test_openai_endpoint_down_is_a_connection_error(
    openai_slot: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(URL_ENV, f"http://127.0.0.1:{free_port()}/v1")
    err = fails(openai_slot(max_attempts=2))
    assert err.reason == "provider_error:connection"
    assert err.detail == "could not reach the endpoint (attempt 2 of 2)"


def test_openai_bad_tool_schema_is_refused_before_sending(
    server: FakeOpenAI, openai_slot: Callable[..., Slot]
) -> None:
    err = fails(openai_slot(), request(tools=[{"description": "no name"}]))
    assert err.reason == "provider_error:bad_request"
    assert server.received == []


@pytest.mark.parametrize("unset", [KEY_ENV, URL_ENV])
def test_openai_unset_variable_is_named_when_the_slot_opens(
    openai_slot: Callable[..., Slot], monkeypatch: pytest.MonkeyPatch, unset: str
) -> None:
    monkeypatch.delenv(unset)
    with pytest.raises(InputError, match=f"environment variable {unset} .* is not set") as info:
        openai_slot()
    assert KEY not in str(info.value)


def test_openai_concurrent_calls_overlap_and_each_gets_its_own_answer(
    server: FakeOpenAI, openai_slot: Callable[..., Slot]
) -> None:
    def echo(body: dict) -> dict:
        return {**chat().body, "choices": [{"message": {"content": f"seed={body['seed']}"}}]}

    server.default = Reply(body=echo, delay_s=0.2)
    slot = openai_slot()
    seeds = list(range(8))
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda s: slot.complete(request("c1", s)), seeds))
    assert [a.text for a in answers] == [f"seed={s}" for s in seeds]
    assert server.max_in_flight > 1


# -- boundaries ---------------------------------------------------------------------


def test_opening_replay_and_command_slots_does_not_load_the_sdk(tmp_path: Path) -> None:
    rec = write_lines(tmp_path / "rec.jsonl", {"case_id": "c1", "text": "hi"})
    write_slots(tmp_path, f"slots:\n  a: {{provider: command, argv: [{sys.executable}]}}\n")
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from evalpin.run.slots import open_slot, resolve_slot\n"
        f"open_slot(resolve_slot('r=replay:{rec}', None)).close()\n"
        "open_slot(resolve_slot('a', Path('slots.yaml'))).close()\n"
        "print('openai' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"


def test_slot_errors_stay_inside_the_documented_vocabulary() -> None:
    assert str(SlotError("provider_error:timeout", "late")) == "provider_error:timeout: late"
    with pytest.raises(ValueError, match="not a slot failure code"):
        SlotError("provider_error:flaky")
