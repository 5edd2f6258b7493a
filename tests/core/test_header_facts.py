"""A run header is a fact, checked (issue 51): closed all the way down (the nearest valid
key named, in the header and in its nested records), a key written twice refused, and
a seed list that is not its cases' refused by the publish rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import cli

DEMO = Path(__file__).parents[2] / "runs" / "demo-coding-publishable.jsonl"


def _copy(tmp_path: Path, header_text: str | None = None, **changes) -> Path:
    lines = DEMO.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header.update(changes)
    lines[0] = (header_text or json.dumps(header)) + "\n"
    out = tmp_path / "run.jsonl"
    out.write_text("".join(lines))
    return out


def _checks(capsys, run: Path) -> dict[str, dict]:
    r = cli(capsys, "verdict", str(run), "--json")
    return {c["rule"]: c for c in json.loads(r.out)["checklist"]}


@pytest.mark.parametrize("seeds", [[], [11, 29], [11, 29, 47, 53], [1, 2, 3]])
def test_a_header_seed_list_that_is_not_its_cases_is_refused(capsys, tmp_path, seeds) -> None:
    checks = _checks(capsys, _copy(tmp_path, seeds=seeds))
    facts = checks["header agrees with its cases"]
    assert not facts["ok"] and "11, 29, 47" in facts["why"]
    assert checks["seed list"]["value"] == [11, 29, 47]  # the cases' own


def test_a_controls_seed_list_that_is_not_its_cases_is_refused(capsys, tmp_path) -> None:
    header = json.loads(DEMO.read_text().splitlines()[0])
    controls = {**header["controls"], "seeds": [11]}
    checks = _checks(capsys, _copy(tmp_path, controls=controls))
    assert not checks["header agrees with its cases"]["ok"]
    assert "controls.seeds" in checks["header agrees with its cases"]["why"]


def test_the_bundled_header_agrees_with_its_cases(capsys, tmp_path) -> None:
    assert "header agrees with its cases" not in _checks(capsys, _copy(tmp_path))


@pytest.mark.parametrize("key", ["model_slot", "grader_version", "seeds", "fixtures"])
def test_a_header_key_written_twice_is_refused(capsys, tmp_path, key) -> None:
    text = DEMO.read_text().splitlines()[0]
    header = json.loads(text)
    twice = text[:-1] + f', "{key}": {json.dumps(header[key])}}}'
    run = _copy(tmp_path, header_text=twice)
    for command in ("verdict", "history"):
        r = cli(capsys, command, str(run if command == "verdict" else tmp_path))
        if command == "verdict":
            assert r.code == 3 and f"duplicate key {key!r}" in r.err, r.err
            assert r.err.count("\n") == 1 and ":1:" in r.err
    left = _copy(tmp_path)
    other = tmp_path / "twice.jsonl"
    other.write_text(twice + "\n" + "".join(DEMO.read_text().splitlines(keepends=True)[1:]))
    r = cli(capsys, "diff", str(left), str(other))
    assert r.code == 3 and "duplicate key" in r.err


@pytest.mark.parametrize(
    ("path", "typo", "said"),
    [
        ((), "modle_slot", "unknown key 'modle_slot' (did you mean 'model_slot'?)"),
        (("fixtures",), "envelope_hsh", "in fixtures: unknown key 'envelope_hsh'"),
        (("seal",), "comit", "in seal: unknown key 'comit' (did you mean 'commit'?)"),
    ],
)
def test_a_header_is_closed_all_the_way_down(capsys, tmp_path, path, typo, said) -> None:
    header = json.loads(DEMO.read_text().splitlines()[0])
    header.setdefault("seal", {"why": "x"})
    node = header
    for key in path:
        node = node[key]
    node[typo] = "x"
    run = _copy(tmp_path, header_text=json.dumps(header))
    r = cli(capsys, "verdict", str(run))
    assert r.code == 3 and said in r.err and r.err.count("\n") == 1, r.err


def test_a_tool_call_in_a_case_record_is_closed(capsys, tmp_path) -> None:
    """A case record's nested tool call with a typo is named when the case is shown."""
    lines = DEMO.read_text().splitlines(keepends=True)
    record = json.loads(lines[1])
    record["tools"] = [{"name": "lookup", "arg": {}}]
    lines[1] = json.dumps(record) + "\n"
    run = tmp_path / "run.jsonl"
    run.write_text("".join(lines))
    from evalpin.core.errors import InputError
    from evalpin.core.read.runfile import read_run

    with pytest.raises(InputError, match=r"in tools\[0\]: unknown key 'arg' \(did you mean 'args'"):
        read_run(run).record(0)


@pytest.mark.parametrize(
    "twice",
    [
        ', "pass": true',  # the grade, written again
        ', "p\\u0061ss": true',  # the same key, spelled with an escape
        ', "pass" : true',  # spaced
    ],
)
def test_a_case_line_that_writes_a_key_twice_is_refused(capsys, tmp_path, twice) -> None:
    """A failing case line given `"pass": true` again would read as a pass (the decoder
    keeps the last): refused naming the line, wherever the line sits in the file."""
    lines = DEMO.read_text().splitlines(keepends=True)
    failing = next(k for k, line in enumerate(lines) if '"pass":false' in line)
    lines[failing] = lines[failing].rstrip("\n")[:-1] + twice + "}\n"
    run = tmp_path / "run.jsonl"
    run.write_text("".join(lines))
    r = cli(capsys, "verdict", str(run))
    assert r.code == 3 and "duplicate key" in r.err and f":{failing + 1}:" in r.err, r.err
