"""Live slots end to end through `evalpin run` and `evalpin diff`: golden cases with
canned tool results graded on a real tool conversation (openai against the local fake
model, a command slot's own loop), a recorded loop replayed to the same grade, and a
slot whose settings or agent code moved refused by `diff` as a re-pointed slot."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalpin.core.instrument.fixtures import case_hash, load_fixtures
from evalpin.core.read.runfile import read_run
from evalpin.run.slots import resolve_slot
from tests.builders import case, header, write_run
from tests.clirun import cli
from tests.fake_openai import FakeOpenAI, tool_model

KEY = "sk-live-test-DO-NOT-LEAK"
ORDER = {"id": 1001, "status": "shipped", "eta": "2026-12-03"}
CASES = [
    {
        "id": "where-1001",
        "user": "Where is order 1001?",
        "require_tools": ["get_order"],
        "forbid_tools": ["issue_refund"],
        "must_include": ["2026-12-03"],
        "must_not": [],
        "tool_results": {"get_order": ORDER},
    },
    {
        "id": "greeting",
        "user": "Hello!",
        "require_tools": [],
        "forbid_tools": [],
        "must_include": [],
        "must_not": [],
    },
]
TOOLS = [{"name": "get_order", "parameters": {"type": "object"}}]


def write_golden(folder: Path, cases: list[dict], defaults: dict | None = None) -> Path:
    path = folder / "golden.jsonl"
    head = [json.dumps({"defaults": defaults}) + "\n"] if defaults else []
    path.write_text("".join(head + [json.dumps(c) + "\n" for c in cases]))
    return path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A project folder with a golden set and an openai slot on the local fake model."""
    server = FakeOpenAI()
    server.start()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LIVE_BASE_URL", server.base_url)
    monkeypatch.setenv("LIVE_API_KEY", KEY)
    write_golden(tmp_path, CASES, {"tools": TOOLS})
    (tmp_path / "slots.yaml").write_text(
        "slots:\n  lab: {provider: openai, model: m, base_url_env: LIVE_BASE_URL, "
        "api_key_env: LIVE_API_KEY, max_attempts: 1, probes: false}\n"
    )
    yield tmp_path, server
    server.stop()


def run(capsys, out: str, *extra: str, slot: str = "lab", code: int = 0) -> dict[str, Any]:
    """`code` 1: no case could be judged (every one an error case), so the run failed."""
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", slot, "--out", out, *extra)
    assert r.code == code, r.err
    head, *cases, _ = lines(Path(out))
    return {"header": head, "cases": {c["case_id"]: c for c in cases}, "out": r.out}


# -- fixtures ---------------------------------------------------------------------------


def test_tool_results_and_set_defaults_are_part_of_the_fixture_hash(tmp_path: Path) -> None:
    plain = {k: v for k, v in CASES[1].items()}
    fs = load_fixtures(write_golden(tmp_path, [CASES[0], plain]))
    assert fs.cases[0].tool_results == {"get_order": ORDER}
    assert fs.cases[0].fixture_hash == case_hash(CASES[0])
    # A case with no tool results keeps the common recipe byte for byte.
    assert fs.cases[1].fixture_hash == case_hash(plain)
    edited = {**CASES[0], "tool_results": {"get_order": {**ORDER, "eta": "2027-01-01"}}}
    assert load_fixtures(write_golden(tmp_path, [edited])).cases[0].fixture_hash != (
        fs.cases[0].fixture_hash
    )
    # Defaults fill in; the case's own results win per tool; the hash is over the case
    # as it is run.
    defaults = {"tool_results": {"get_order": "default", "get_customer": {"n": 1}}}
    with_defaults = load_fixtures(write_golden(tmp_path, [CASES[0], plain], defaults))
    first, second = with_defaults.cases
    assert first.tool_results == {"get_order": ORDER, "get_customer": {"n": 1}}
    assert second.tool_results == defaults["tool_results"]
    assert second.fixture_hash == case_hash({**plain, "tool_results": defaults["tool_results"]})
    assert second.fixture_hash != fs.cases[1].fixture_hash


@pytest.mark.parametrize(
    ("lines_", "message"),
    [
        ([{**CASES[0], "tool_results": ["x"]}], "'tool_results' must be an object"),
        ([{**CASES[0], "tool_results": {"get_order": []}}], "empty list"),
        ([CASES[1], {"defaults": {"tools": []}}], "before the first case"),
        (
            [{"defaults": {"must_include": ["x"]}}, CASES[1]],
            "defaults (tools, tool_results): unknown key 'must_include'",
        ),
        ([{"defaults": {"tool_results": 3}}, CASES[1]], "defaults: 'tool_results'"),
    ],
)
def test_bad_tool_results_name_the_line(
    capsys, tmp_path: Path, lines_: list[dict], message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines_))
    r = cli(capsys, "hash", str(path))
    assert r.code == 3 and message in r.err and "bad.jsonl" in r.err


# -- the openai loop, recorded and replayed ------------------------------------------


def test_a_case_that_needs_a_tool_result_passes_and_keeps_its_transcript(
    capsys, live, tmp_path: Path
) -> None:
    _, server = live
    server.default = tool_model(("get_order", '{"id": 1001}'))
    got = run(capsys, "runs/a.jsonl", "--seeds", "11")
    assert got["header"]["controls"]["max_turns"] == 4
    assert got["header"]["control_sources"]["max_turns"] == "default"
    rec = got["cases"]["where-1001"]
    assert rec["pass"] is True, rec["reasons"]
    assert rec["tool_names"] == ["get_order"]
    call = {"name": "get_order", "args": {"id": 1001}, "result": ORDER}
    assert rec["turns"][0]["calls"] == [call]
    assert "2026-12-03" in rec["turns"][1]["text"] == rec["text"]
    assert KEY not in Path("runs/a.jsonl").read_text()


def test_running_out_of_turns_is_tool_loop_exhausted_and_replays_the_same(
    capsys, live, tmp_path: Path
) -> None:
    _, server = live
    server.default = tool_model(("get_order", '{"id": 1001}'), forever=True)
    got = run(capsys, "runs/a.jsonl", "--seeds", "11", "--max-turns", "2")
    assert got["header"]["controls"]["max_turns"] == 2
    rec = got["cases"]["where-1001"]
    assert rec["reasons"] == ["missing_text:2026-12-03", "tool_loop_exhausted"]
    assert len(rec["turns"]) == 2 and len(server.received) == 4  # 2 turns, 2 cases
    # Every case record is a replay line: the recorded loop replays to the same grade.
    recording = tmp_path / "recorded.jsonl"
    keep = ("case_id", "seed", "turns", "text", "tools", "model")
    recording.write_text(
        "".join(
            json.dumps({k: c.get(k if k != "model" else "reported_model") for k in keep}) + "\n"
            for c in got["cases"].values()
        )
    )
    again = run(capsys, "runs/b.jsonl", "--seeds", "11", slot=f"lab=replay:{recording}")
    for case_id, rec in got["cases"].items():
        replayed = again["cases"][case_id]
        assert replayed["reasons"] == rec["reasons"]
        assert replayed["completion_digest"] == rec["completion_digest"]
        assert replayed.get("turns") == rec.get("turns")
    # The replay stands in for the live slot it recorded: the two compare, nothing moved.
    assert again["header"]["slot"]["settings_digest"] is None
    r = cli(capsys, "diff", "runs/a.jsonl", "runs/b.jsonl")
    assert r.code == 0, r.out
    assert "not checked" not in r.out


def test_a_replay_line_of_turns_alone_is_graded_on_its_last_text(
    capsys, live, tmp_path: Path
) -> None:
    recording = tmp_path / "turns.jsonl"
    turns = [
        {"calls": [{"name": "get_order", "args": {"id": 1001}, "result": ORDER}]},
        {"text": "It arrives 2026-12-03."},
    ]
    recording.write_text(
        json.dumps({"case_id": "where-1001", "turns": turns})
        + "\n"
        # contradicts its own turns: skipped, with the line number
        + json.dumps({"case_id": "greeting", "text": "hi", "turns": turns})
        + "\n"
    )
    got = run(capsys, "runs/r.jsonl", "--seeds", "11", slot=f"lab=replay:{recording}")
    assert got["cases"]["where-1001"]["pass"] is True
    assert got["cases"]["greeting"]["reasons"] == ["no_completion"]
    assert any("turns.jsonl:2" in w for w in got["header"]["warnings"])


# -- command slots -------------------------------------------------------------------

LOOP_AGENT = """
import json, sys
req = json.load(sys.stdin)
results = req["tool_results"]
turns = [{"calls": [{"name": "get_order", "args": {"id": 1001},
                     "result": results.get("get_order", {"error": "none"})}]}]
eta = turns[0]["calls"][0]["result"].get("eta", "unknown")
turns.append({"text": f"ETA {eta} (cap {req['max_turns']})"})
print(json.dumps({"turns": turns, "model": "loop-agent-1"}))
"""


def command_project(tmp_path: Path, source: str, code: str = "") -> None:
    (tmp_path / "agents").mkdir(exist_ok=True)
    (tmp_path / "agents" / "agent.py").write_text(textwrap.dedent(source))
    argv = json.dumps([sys.executable, "agents/agent.py"])
    extra = f", code: {code}" if code else ""
    (tmp_path / "slots.yaml").write_text(
        f"slots:\n  agent: {{provider: command, argv: {argv}{extra}}}\n"
    )


def test_a_command_slot_holds_its_own_loop_through_the_protocol(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_golden(tmp_path, CASES)
    command_project(tmp_path, LOOP_AGENT)
    got = run(capsys, "runs/c.jsonl", "--seeds", "11", slot="agent")
    rec = got["cases"]["where-1001"]
    assert rec["pass"] is True and rec["text"] == "ETA 2026-12-03 (cap 4)"
    assert rec["turns"][0]["calls"][0]["result"] == ORDER
    assert got["header"]["slot"]["code"]["agents/agent.py"]


def test_command_stdout_past_the_cap_is_oversized(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_golden(tmp_path, CASES[1:])
    command_project(
        tmp_path,
        "import sys\nsys.stdin.read()\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
    )
    slots = (tmp_path / "slots.yaml").read_text().replace("}", ", max_output_bytes: 100000}")
    (tmp_path / "slots.yaml").write_text(slots)
    got = run(capsys, "runs/o.jsonl", "--seeds", "11", slot="agent", code=1)
    assert got["cases"]["greeting"]["reasons"] == ["provider_error:oversized"]


# -- slot identity: the settings digest ----------------------------------------------


def test_editing_the_agent_between_two_runs_is_refused_as_slot_settings(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_golden(tmp_path, CASES)
    command_project(tmp_path, LOOP_AGENT)
    first = run(capsys, "runs/1.jsonl", "--seeds", "11", slot="agent")
    command_project(tmp_path, LOOP_AGENT.replace("ETA", "Arrives"))
    second = run(capsys, "runs/2.jsonl", "--seeds", "11", slot="agent")
    d1 = first["header"]["slot"]["settings_digest"]
    d2 = second["header"]["slot"]["settings_digest"]
    assert d1 != d2
    assert {c["slot_settings"] for c in first["cases"].values()} == {d1}
    r = cli(capsys, "diff", "runs/1.jsonl", "runs/2.jsonl")
    assert r.code == 2
    out = r.out.splitlines()
    assert out[0] == "REFUSE_DIFF: triple mismatch, not a prompt regression"
    assert any(x.startswith("  slot settings: ") and d1 in x and d2 in x for x in out)
    r = cli(capsys, "diff", "runs/1.jsonl", "runs/2.jsonl", "--json")
    assert r.code == 2
    body = json.loads(r.out)
    assert body["refused"] is True and body["silent_regressions"] == []
    assert body["mismatches"][0]["left"]["slot_settings"] == d1
    # The same agent again: comparable.
    command_project(tmp_path, LOOP_AGENT)
    run(capsys, "runs/3.jsonl", "--seeds", "11", slot="agent")
    assert cli(capsys, "diff", "runs/1.jsonl", "runs/3.jsonl").code == 0


def test_code_globs_pin_helper_modules_too(tmp_path: Path) -> None:
    command_project(tmp_path, LOOP_AGENT, code="[agents/lib/*.py]")
    (tmp_path / "agents" / "lib").mkdir()
    (tmp_path / "agents" / "lib" / "prompt.py").write_text("PROMPT = 'a'\n")
    (tmp_path / "agents" / "lib" / "__pycache__").mkdir()
    before = resolve_slot("agent", tmp_path / "slots.yaml")
    digest = before.settings_digest()
    # The interpreter is a file argv names too: a changed Python is a changed instrument.
    assert set(before.code_hashes()) == {sys.executable, "agents/agent.py", "agents/lib/prompt.py"}
    (tmp_path / "agents" / "lib" / "__pycache__" / "prompt.cpython-311.pyc").write_bytes(b"x")
    assert before.settings_digest() == digest  # compiled caches are not code
    (tmp_path / "agents" / "lib" / "prompt.py").write_text("PROMPT = 'b'\n")
    assert before.settings_digest() != digest


def test_a_code_entry_that_matches_nothing_is_refused(capsys, tmp_path: Path) -> None:
    command_project(tmp_path, LOOP_AGENT, code="[agents/nope/*.py]")
    with pytest.raises(Exception, match="matches no file"):
        resolve_slot("agent", tmp_path / "slots.yaml")


def test_openai_digest_covers_model_and_base_url_variable_not_waiting(tmp_path: Path) -> None:
    def digest(entry: str) -> str:
        (tmp_path / "slots.yaml").write_text(f"slots:\n  lab: {{provider: openai, {entry}}}\n")
        return resolve_slot("lab", tmp_path / "slots.yaml").settings_digest()

    base = "model: m, base_url_env: U, api_key_env: K"
    same = {digest(base), digest(base + ", timeout_s: 5, max_attempts: 2")}
    assert len(same) == 1
    moved = {
        digest("model: m2, base_url_env: U, api_key_env: K"),
        digest("model: m, base_url_env: U2, api_key_env: K"),
        digest(base + ", sampling: {top_p: 0.9}"),
    }
    assert len(moved | same) == 4


def test_runs_recorded_before_settings_digests_still_compare_and_say_so(
    capsys, tmp_path: Path
) -> None:
    old = [case("a", True), case("b", True)]
    new = [case("a", True), case("b", False)]
    write_run(tmp_path / "old1.jsonl", old)
    write_run(tmp_path / "old2.jsonl", new)
    r = cli(capsys, "diff", str(tmp_path / "old1.jsonl"), str(tmp_path / "old2.jsonl"))
    assert r.code == 1
    assert "slot settings not checked" in r.out and "left and right" in r.out
    r = cli(capsys, "diff", str(tmp_path / "old1.jsonl"), str(tmp_path / "old2.jsonl"), "--json")
    assert r.code == 1 and "slot settings not checked" in json.loads(r.out)["notes"][0]
    # One side recorded, the other not: still compared, the note names the side.
    head = header(slot={"provider": "replay", "settings_digest": "s1"})
    write_run(tmp_path / "new.jsonl", [case("a", True, slot_settings="s1")], head=head)
    r = cli(capsys, "diff", str(tmp_path / "old1.jsonl"), str(tmp_path / "new.jsonl"))
    assert r.code == 0 and "not checked" in r.out and "on the left " in r.out
    # Both recorded and equal: no note.
    write_run(tmp_path / "new2.jsonl", [case("a", True, slot_settings="s1")], head=head)
    r = cli(capsys, "diff", str(tmp_path / "new.jsonl"), str(tmp_path / "new2.jsonl"))
    assert r.code == 0 and "not checked" not in r.out
    assert read_run(tmp_path / "new2.jsonl").rows[0].slot_settings == "s1"


# -- the bundled demo ----------------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def test_the_bundled_live_set_replays_its_recorded_loops(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "live.jsonl"
    r = cli(
        capsys,
        "run",
        "--fixtures",
        "fixtures/orders-live/golden.jsonl",
        "--slot",
        "orders_live_replay",
        "--out",
        str(out),
    )
    assert r.code == 0, r.err
    head, *cases, _ = lines(out)
    assert "warnings" not in head  # no recorded line skipped
    graded = {c["case_id"]: c["reasons"] for c in cases if c["seed"] == 11}
    assert graded == {
        "eta-from-tool": [],
        "cancel-after-lookup": [],
        "refund-over-limit": [],
        "return-policy-international": ["missing_text:30 days", "tool_loop_exhausted"],
    }
    fs = load_fixtures(REPO / "fixtures/orders-live/golden.jsonl")
    by_id = {k.id: k for k in fs.cases}
    # Every recorded result is the canned result the fixture set gives for that call.
    for c in cases:
        canned = by_id[c["case_id"]].tool_results
        for turn in c.get("turns", []):
            for call in turn.get("calls", []):
                if "result" in call:
                    expected = canned[call["name"]]
                    options = expected if isinstance(expected, list) else [expected]
                    assert call["result"] in options


def test_deeply_nested_output_or_recordings_are_refused_not_crashes(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_golden(tmp_path, CASES[1:])
    nested = '{"text": "x", "tools": [{"name": "t", "args": ' + "[" * 100000
    command_project(tmp_path, f"import sys\nsys.stdin.read()\nprint({nested!r})\n")
    got = run(capsys, "runs/n.jsonl", "--seeds", "11", slot="agent", code=1)
    assert got["cases"]["greeting"]["reasons"] == ["provider_error:bad_output"]
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"case_id": "greeting", ' + nested[1:] + "\n")
    got = run(capsys, "runs/d.jsonl", "--seeds", "11", slot=f"x=replay:{deep}", code=1)
    assert got["cases"]["greeting"]["reasons"] == ["no_completion"]
    assert "nested too deeply" in got["header"]["warnings"][0]
    (tmp_path / "golden.jsonl").write_text('{"id": "x", "user": ' + "[" * 100000 + "\n")
    r = cli(capsys, "hash", "golden.jsonl")
    assert r.code == 3 and "nested too deeply" in r.err


def test_an_agent_edited_mid_run_refuses_the_resume(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_golden(tmp_path, CASES)
    command_project(tmp_path, LOOP_AGENT)
    run(capsys, "runs/1.jsonl", "--seeds", "11", slot="agent")
    unfinished = Path("runs/1.jsonl").read_text().splitlines(keepends=True)[:-2]
    Path("runs/1.jsonl").write_text("".join(unfinished))  # one case and the trailer gone
    command_project(tmp_path, LOOP_AGENT.replace("ETA", "Arrives"))
    r = cli(capsys, "run", "--resume", "--out", "runs/1.jsonl", "--slot", "agent")
    assert r.code == 3 and "cannot resume" in r.err and "slot settings" in r.err
