"""Every key of every nested object evalpin reads, mutated (issue 51): renamed (a typo)
and written twice. Each mutation is refused (exit 3, one line naming the file and the
key, or the key it left missing) or changes nothing by a stated rule, never silently
accepted and never a traceback.

The rules under which a key is free, and so not mutated here:
- a property name under a JSON Schema's `properties` (the tool's own parameter names),
  a file name under `files`, a tool call's `args` (the model's own arguments), a canned
  tool result's content (the tool's own output; the tool names it is keyed by are
  checked against the tools offered), and a key of one's own (`x-`);
- in a run header, the recorded maps (`execution`, `probes`, `replay_of`,
  `control_sources`): written by evalpin from the provider and the machine, compared
  whole (the settings digest, the env digest), so a renamed key there moves a digest or
  leaves a pin missing, which every reader says; `slot`, `controls` (and its `limits`)
  and `env` are closed (core/read/header_maps.py) and mutated here, the maps below them
  that are open by design (`env.packages`, `env.controls`, `slot.sampling`, `slot.code`,
  `slot.headers_env`) are mutated too and read as before;
- none in a run's case line: a field the lean row does not read (seconds, tail, text)
  is checked while the run is read, as the others are (core/read/vouch.py says when the
  writer's trailer vouches for the lines instead).

Numbers JSON does not have (NaN, Infinity) and numbers past a limit (a float's
overflow, an integer of more digits than Python converts) are refused the same way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clirun import cli
from tests.fuzzkit import key_paths, written_twice

ROOT = Path(__file__).parents[2]
FREE = {"properties", "files", "args", "result"}
HEADER_OPEN = {"execution", "probes", "replay_of", "control_sources"}
# Below the closed header maps, the maps open by design: their keys are names of the
# user's or the machine's (a package, an endpoint's parameter, a file, an HTTP header).
HEADER_MAPS_OPEN = {("env", "packages"), ("env", "controls"), ("slot", "sampling")}
HEADER_MAPS_OPEN |= {("slot", "code"), ("slot", "headers_env")}

GOLDEN = {
    "id": "refund",
    "user": "Refund order A1 please",
    "require_tools": ["lookup"],
    "forbid_tools": [],
    "must_include": ["A1"],
    "must_not": ["sorry"],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Find an order.",
                "strict": True,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string", "minLength": 2},
                        "filters": {
                            "type": "array",
                            "items": {"type": "object", "additionalProperties": False},
                        },
                    },
                    "required": ["order_id"],
                    "additionalProperties": False,
                },
            },
        },
        {"name": "refund", "parameters": {"type": "object", "anyOf": [{"required": []}]}},
    ],
    "tool_results": {"lookup": {"order_id": "A1", "state": "paid"}},
}
REPLAY = {
    "case_id": "refund",
    "seed": 11,
    "text": "A1 is refunded",
    "model": "m",
    "turns": [
        {"text": "", "calls": [{"name": "lookup", "args": {"order_id": "A1"}, "result": {}}]},
        {"text": "A1 is refunded"},
    ],
    "tools": [{"name": "lookup", "args": {"order_id": "A1"}}],
}


def renamed(value: Any, path: tuple) -> tuple[Any, str]:
    """A copy of `value` with the key at `path` misspelt (its last letter dropped)."""
    copy = json.loads(json.dumps(value))
    node = copy
    for step in path[:-1]:
        node = node[step]
    key = path[-1]
    typo = key[:-1] if len(key) > 3 else key + "x"
    node[typo] = node.pop(key)
    return copy, typo


def _refused(r, *names: str) -> None:
    assert r.code == 3, (r.code, r.out, r.err)
    assert r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    assert any(name in r.err for name in names), (names, r.err)


GOLDEN_PATHS = list(key_paths(GOLDEN, FREE))


@pytest.mark.parametrize("path", GOLDEN_PATHS, ids=lambda p: ".".join(map(str, p)))
def test_every_golden_key_renamed_or_twice_is_refused(capsys, tmp_path, path) -> None:
    case, typo = renamed(GOLDEN, path)
    fixtures = tmp_path / "golden.jsonl"
    fixtures.write_text(json.dumps(case) + "\n")
    _refused(cli(capsys, "hash", str(fixtures)), repr(typo), f"'{path[-1]}'")
    fixtures.write_text(written_twice(GOLDEN, path) + "\n")
    _refused(cli(capsys, "hash", str(fixtures)), f"duplicate key {path[-1]!r}")


def test_the_golden_sample_itself_is_valid(capsys, tmp_path) -> None:
    fixtures = tmp_path / "golden.jsonl"
    fixtures.write_text(json.dumps(GOLDEN) + "\n")
    assert cli(capsys, "hash", str(fixtures)).code == 0
    assert len(GOLDEN_PATHS) > 20  # the walk reaches the nested schema


def _header() -> dict:
    text = (ROOT / "runs" / "demo-coding-publishable.jsonl").read_text().splitlines()[0]
    header = json.loads(text)
    header["seal"] = {"envelope_hash": "a" * 64, "lock": "x.lock", "by": "git", "why": "w"}
    return header


def _in_open_map(path: tuple) -> bool:
    return any(path[: len(at)] == at and len(path) > len(at) for at in HEADER_MAPS_OPEN)


HEADER_PATHS = [p for p in key_paths(_header(), HEADER_OPEN | {"files"}) if not _in_open_map(p)]
OPEN_MAP_PATHS = [p for p in key_paths(_header(), HEADER_OPEN | {"files"}) if _in_open_map(p)]


@pytest.mark.parametrize("path", HEADER_PATHS, ids=lambda p: ".".join(map(str, p)))
def test_every_run_header_key_renamed_or_twice_is_refused(capsys, tmp_path, path) -> None:
    lines = (ROOT / "runs" / "demo-coding-publishable.jsonl").read_text().splitlines(True)
    header, typo = renamed(_header(), path)
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    r = cli(capsys, "verdict", str(run))
    if path == ("record",):  # no longer a header: the first line is read as a case
        assert r.code == 3 and "Traceback" not in r.err
    else:
        _refused(r, repr(typo), f"`{path[-1]}`", "missing")
    run.write_text(written_twice(_header(), path) + "\n" + "".join(lines[1:]))
    _refused(cli(capsys, "verdict", str(run)), f"duplicate key {path[-1]!r}")


def test_the_header_walk_reaches_every_closed_map() -> None:
    reached = {p[:2] for p in HEADER_PATHS if len(p) > 1}
    assert {("slot", "provider"), ("controls", "limits"), ("env", "python")} <= reached
    assert ("controls", "limits", "memory") in HEADER_PATHS
    assert OPEN_MAP_PATHS  # the demo header holds open maps: they are mutated below


@pytest.mark.parametrize("path", OPEN_MAP_PATHS, ids=lambda p: ".".join(map(str, p)))
def test_a_key_renamed_in_an_open_header_map_is_read_as_before(capsys, tmp_path, path) -> None:
    """Open by the stated rule: the verdict reads as it did, never a refusal or a crash;
    written twice it is still refused (a duplicate is refused in every JSON)."""
    lines = (ROOT / "runs" / "demo-coding-publishable.jsonl").read_text().splitlines(True)
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps(_header()) + "\n" + "".join(lines[1:]))
    before = cli(capsys, "verdict", str(run))
    header, _ = renamed(_header(), path)
    run.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    after = cli(capsys, "verdict", str(run))
    assert after.code == before.code != 3 and "Traceback" not in after.err, after.err
    run.write_text(written_twice(_header(), path) + "\n" + "".join(lines[1:]))
    _refused(cli(capsys, "verdict", str(run)), f"duplicate key {path[-1]!r}")


REPLAY_PATHS = list(key_paths(REPLAY, FREE))


@pytest.mark.parametrize("path", REPLAY_PATHS, ids=lambda p: ".".join(map(str, p)))
def test_every_replay_key_renamed_is_refused(capsys, tmp_path, monkeypatch, path) -> None:
    """A recorded completion with a misspelt key (top level, a tool call, a turn, a
    turn's call) is refused where the recording is read: never an answer without it."""
    monkeypatch.chdir(tmp_path)
    golden = {k: GOLDEN[k] for k in ("id", "user", "require_tools", "must_include")}
    Path("golden.jsonl").write_text(json.dumps(golden) + "\n")
    line, typo = renamed(REPLAY, path)
    Path("replay.jsonl").write_text(json.dumps(line) + "\n")
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "r=replay:replay.jsonl",
            "--seeds", "11", "--out", "out.jsonl", "--progress", "none")  # fmt: skip
    said = r.out + r.err
    assert r.code in (1, 3) and "Traceback" not in said, said
    assert repr(typo) in said or f"`{typo}`" in said or "missing" in said, said


def test_every_slot_entry_key_renamed_is_refused(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    entry = {
        "provider": "openai",
        "model": "m",
        "base_url_env": "U",
        "api_key_env": "K",
        "sampling": {"top_p": 0.5},
    }
    Path("golden.jsonl").write_text(
        json.dumps({"id": "a", "user": "u", "must_include": ["x"]}) + "\n"
    )
    for path in key_paths({"slots": {"s": entry}}, set()):
        if path == ("slots", "s"):
            continue  # a slot's label is the operator's own
        doc, typo = renamed({"slots": {"s": entry}}, path)
        Path("slots.yaml").write_text(yaml.safe_dump(doc))
        r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "s", "--out", "o.jsonl")
        assert r.code == 3 and "Traceback" not in r.err, (path, r.err)
        assert typo in r.err or "missing" in r.err or "no slot" in r.err, (path, r.err)


BAD_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "9" * 5000]


@pytest.mark.parametrize("number", BAD_NUMBERS, ids=lambda n: n[:12])
def test_a_number_json_does_not_have_is_refused_in_one_line(capsys, tmp_path, number) -> None:
    """NaN, Infinity, a float's overflow and an integer past Python's own limit, in a
    golden case's tool result, a run header and a run's case line: exit 3, one line."""
    fixtures = tmp_path / "golden.jsonl"
    case = json.dumps({**GOLDEN, "tool_results": {"lookup": {"total": 1}}})
    fixtures.write_text(case.replace('"total": 1', f'"total": {number}') + "\n")
    _refused(cli(capsys, "hash", str(fixtures)), "not JSON", "out of range")
    lines = (ROOT / "runs" / "demo-coding-publishable.jsonl").read_text().splitlines(True)
    run = tmp_path / "run.jsonl"
    header = lines[0].replace('"seeds":[11', f'"seeds":[{number}', 1)
    assert header != lines[0]
    run.write_text(header + "".join(lines[1:]))
    _refused(cli(capsys, "verdict", str(run)), "JSON", "range")
    case_line = re.sub(  # whatever time the demo's first case took
        r'"seconds":([0-9.]+)', lambda m: f'"seconds":{number},"x":{m[1]}', lines[1], count=1
    )
    assert case_line != lines[1]
    run.write_text(lines[0] + case_line + "".join(lines[2:]))
    r = cli(capsys, "verdict", str(run))
    _refused(r, "JSON", "malformed")  # in a field the lean row does not read, too
    assert ":2: " in r.err
