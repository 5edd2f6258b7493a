"""`evalpin hash`, `diff` and `verdict` through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import load_fixtures
from tests.builders import case, grid, header, write_run
from tests.clirun import cli, cli_process


def test_hash_prints_dataset_grader_and_each_case(capsys, golden_file: Path) -> None:
    fs = load_fixtures(golden_file)
    r = cli(capsys, "hash", str(golden_file))
    assert r.code == 0
    assert fs.dataset_hash in r.out
    assert "grader_version" in r.out
    for c in fs.cases:
        assert f"{c.fixture_hash}  {c.id}" in r.out
    data = json.loads(cli(capsys, "hash", str(golden_file), "--json").out)
    assert [c["fixture_hash"] for c in data["cases"]] == [c.fixture_hash for c in fs.cases]


def two_nights(tmp_path: Path) -> tuple[Path, Path]:
    left = grid({"a": [True] * 3, "b": [False] * 3, "c": [True] * 3})
    right = grid({"a": [True, False, True], "b": [True] * 3, "c": [True] * 3})
    right[-1] = case("c", True, 47, completion_digest="moved")
    return (
        write_run(tmp_path / "night1.jsonl", left),
        write_run(tmp_path / "night2.jsonl", right, head=header(run_id="r2")),
    )


def test_diff_human_output_lists_moves_with_reasons(capsys, tmp_path: Path) -> None:
    left, right = two_nights(tmp_path)
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 1
    assert "1 regressed, 3 fixed, 1 drift" in r.out
    assert "REGRESSED a  seed 29" in r.out
    assert "missing_tool:lookup" in r.out
    assert "completion digest" in r.out


def test_diff_json_shape(capsys, tmp_path: Path) -> None:
    left, right = two_nights(tmp_path)
    r = cli(capsys, "diff", str(left), str(right), "--json")
    assert r.code == 1
    data = json.loads(r.out)
    assert data["compared_cases"] == 9
    assert data["mismatches"] == [] and data["only_left"] == [] and data["only_right"] == []
    kinds = sorted(m["kind"] for m in data["silent_regressions"])
    assert kinds == ["drift", "fixed", "fixed", "fixed", "regressed"]
    first = next(m for m in data["silent_regressions"] if m["kind"] == "regressed")
    assert set(first) == {
        "case_id",
        "seed",
        "left_pass",
        "right_pass",
        "left_reasons",
        "right_reasons",
        "left_digest",
        "right_digest",
        "kind",
        "left_status",
        "right_status",
    }


def test_diff_identical_runs_exit_zero(capsys, tmp_path: Path) -> None:
    cases = grid({"a": [True] * 3})
    left = write_run(tmp_path / "a.jsonl", cases)
    right = write_run(tmp_path / "b.jsonl", cases)
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 0
    assert "no movement" in r.out


def test_diff_refuses_a_slot_change(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "a.jsonl", grid({"a": [True] * 3, "b": [True] * 3}))
    right = write_run(
        tmp_path / "b.jsonl",
        grid({"a": [False] * 3, "b": [True] * 3}, model_slot="lab_free_2"),
    )
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 2
    lines = r.out.splitlines()
    assert lines[0] == "REFUSE_DIFF: triple mismatch, not a prompt regression"
    assert "model_slot: night (left) vs lab_free_2 (right) on 6 pairs" in lines[1]
    assert "REGRESSED" not in r.out and "regressed" not in r.out.lower().replace(
        "not a prompt regression", ""
    )


def test_refusal_json_and_artifact(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "a.jsonl", grid({"a": [True] * 3}))
    right = write_run(tmp_path / "b.jsonl", grid({"a": [False] * 3}, grader_version="g2"))
    artifact = tmp_path / "out" / "delta.json"
    r = cli(capsys, "diff", str(left), str(right), "--json", "--artifact", str(artifact))
    assert r.code == 2
    assert r.err.startswith("REFUSE_DIFF: triple mismatch, not a prompt regression")
    data = json.loads(r.out)
    assert data["refused"] is True and data["silent_regressions"] == []
    assert len(data["mismatches"]) == 3
    assert data["mismatches"][0]["left"]["grader_version"] == "g1"
    assert data["mismatches"][0]["right"]["grader_version"] == "g2"
    written = json.loads(artifact.read_text())
    assert written["kind"] == "backend_delta"
    assert {c["label"] for c in written["cases"]} == {"backend_delta"}
    assert [c["differs"] for c in written["cases"]] == [True, True, True]
    assert not list(artifact.parent.glob(".*.tmp"))


def test_diff_says_when_a_side_is_incomplete(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "a.jsonl", grid({"a": [True] * 3}))
    right = write_run(tmp_path / "b.jsonl", grid({"a": [True] * 3})[:2], finished=False)
    r = cli(capsys, "diff", str(left), str(right))
    assert "INCOMPLETE" in r.out
    assert "1 only left" in r.out


def test_verdict_human_and_json(capsys, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r.jsonl", grid({"a": [True] * 3, "b": [True, False, True]}))
    r = cli(capsys, "verdict", str(run))
    assert r.code == 0
    assert "publishable" in r.out and "UNSTABLE" in r.out and "flaky" in r.out
    assert "11, 29, 47 (n=3)" in r.out
    data = json.loads(cli(capsys, "verdict", str(run), "--json").out)
    assert data["label"] == "publishable" and data["flaky_cases"] == ["b"]
    loose = cli(capsys, "verdict", str(run), "--band", "0.6", "--json")
    assert json.loads(loose.out)["unstable"] is False


def test_verdict_not_publishable_exits_one(capsys, tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r.jsonl", grid({"a": [True] * 2}, seeds=(1, 2)), head=header(seeds=[1, 2])
    )
    r = cli(capsys, "verdict", str(run))
    assert r.code == 1
    assert "exploratory-probe" in r.out and "2 seed(s)" in r.out
    assert "FAIL  seed list      1, 2 (n=2)" in r.out
    assert "ok    temperature    0.0" in r.out


def test_verdict_card_is_the_tuis_card(capsys, tmp_path: Path) -> None:
    from evalpin.core.judge.card import export_card
    from evalpin.core.judge.verdict import judge
    from evalpin.core.read.runfile import read_run

    run = write_run(tmp_path / "r.jsonl", grid({"a": [True] * 3, "b": [True, False, True]}))
    target = tmp_path / "cards" / "r.md"
    r = cli(capsys, "verdict", str(run), "--json", "--card", str(target))
    assert r.code == 0 and json.loads(r.out)["label"] == "publishable"
    assert r.err == f"publish card written to {target}\n"
    runfile = read_run(run)
    beside = export_card(runfile, judge(runfile))
    assert beside == tmp_path / "r.card.md"
    assert target.read_text() == beside.read_text()
    assert "Verdict: **publishable**" in target.read_text()


def test_verdict_card_refused_when_not_publishable(capsys, tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r.jsonl", grid({"a": [True] * 2}, seeds=(1, 2)), head=header(seeds=[1, 2])
    )
    target = tmp_path / "r.md"
    r = cli(capsys, "verdict", str(run), "--card", str(target))
    assert r.code == 1 and "exploratory-probe" in r.out
    assert r.err.startswith("evalpin: no card: not publishable (exploratory-probe: ")
    assert "2 seed(s); at least 3 needed" in r.err and r.err.count("\n") == 1
    assert not target.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]


def test_verdict_card_unwritable_exits_3(capsys, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r.jsonl", grid({"a": [True] * 3}))
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = cli(capsys, "verdict", str(run), "--card", str(blocker / "card.md"))
    assert r.code == 3
    assert r.err.startswith("evalpin: error: ") and "card not written" in r.err
    assert r.err.count("\n") == 1


HOSTILE_ID = "[bold red]x[/][@click=app.quit]\x1b]52;c;aGk=\x07\x1b[2J\x9bFAILED\rPASSED\u202e"


def test_hostile_text_is_printed_inert(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "a.jsonl", [case(HOSTILE_ID, True)])
    right = write_run(
        tmp_path / "b.jsonl", [case(HOSTILE_ID, False, reasons=["missing_text:\x1b[31mred"])]
    )
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 1
    for bad in ("\x1b", "\x07", "\x9b", "\r", "\u202e"):
        assert bad not in r.out
    assert "[bold red]x[/][@click=app.quit]\\x1b]52;c;aGk=\\x07" in r.out
    assert "missing_text:\\x1b[31mred" in r.out


# -- every bad input: exit 3, one line naming the file, no traceback ------------------

BAD_FILES = {
    "missing": None,
    "empty": b"",
    "not-utf8": b'{"case_id": "a", "pass": true}\n\xff\xfe\n',
    "not-json": b'{"case_id": "a", "pass": true}\n{oops\n',
    "wrong-shape": b'{"case_id": "a", "pass": "sometimes"}\n',
}


@pytest.fixture(params=[*BAD_FILES, "directory"])
def bad_file(request, tmp_path: Path) -> Path:
    if request.param == "directory":
        path = tmp_path / "adir"
        path.mkdir()
        return path
    path = tmp_path / f"{request.param}.jsonl"
    if BAD_FILES[request.param] is not None:
        path.write_bytes(BAD_FILES[request.param])
    return path


@pytest.mark.parametrize("command", ["diff-left", "diff-right", "verdict", "hash"])
def test_bad_input_exits_3_with_one_line(capsys, tmp_path: Path, bad_file: Path, command) -> None:
    good = write_run(tmp_path / "good.jsonl", grid({"a": [True] * 3}))
    args = {
        "diff-left": ["diff", str(bad_file), str(good)],
        "diff-right": ["diff", str(good), str(bad_file)],
        "verdict": ["verdict", str(bad_file)],
        "hash": ["hash", str(bad_file)],
    }[command]
    r = cli(capsys, *args)
    assert r.code == 3, r
    assert r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith("evalpin: error: ")
    assert str(bad_file) in lines[0]
    assert "Traceback" not in r.err


def test_bad_disclosure_file_exits_3(capsys, tmp_path: Path) -> None:
    good = write_run(tmp_path / "good.jsonl", grid({"a": [True] * 3}))
    r = cli(capsys, "verdict", str(good), "--disclosed", str(tmp_path / "none.txt"))
    assert r.code == 3 and "none.txt: no such file" in r.err


def test_line_number_is_named(capsys, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"case_id": "a", "pass": true}\n{"case_id": "b", "pass": true}\n{oops\n')
    r = cli(capsys, "verdict", str(path))
    assert r.code == 3 and f"{path}:3: not JSON" in r.err


def test_real_process_exit_codes_and_no_traceback(tmp_path: Path) -> None:
    left, right = two_nights(tmp_path)
    assert cli_process("diff", str(left), str(right)).code == 1
    r = cli_process("verdict", str(tmp_path / "missing.jsonl"))
    assert r.code == 3 and "Traceback" not in r.err and r.err.count("\n") == 1
    r = cli_process("diff", "--bogus-option", str(left), str(right))
    assert r.code == 3


YAML_ATTACKS = {
    "alias-bomb": "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n",
    "python-object": "schema: coding-eval/v1\nx: !!python/object/apply:os.system ['echo pwned']\n",
    "escape": "schema: coding-eval/v1\ndataset_id: d\ndataset_version: '1'\nitems:\n"
    "  - {id: a, language: python, prompt_file: ../../etc/passwd, test_file: t.py,"
    " timeout_s: 5, expected_files: [s.py]}\n",
    "absolute": "schema: coding-eval/v1\ndataset_id: d\ndataset_version: '1'\nitems:\n"
    "  - {id: a, language: python, prompt_file: /etc/passwd, test_file: t.py,"
    " timeout_s: 5, expected_files: [s.py]}\n",
}


@pytest.mark.parametrize("attack", YAML_ATTACKS)
@pytest.mark.parametrize("command", ["hash", "run"])
def test_hostile_fixture_yaml_exits_3_with_one_line(
    capsys, tmp_path: Path, attack, command
) -> None:
    path = tmp_path / f"{attack}.yaml"
    path.write_text(YAML_ATTACKS[attack])
    args = (
        ["hash", str(path)]
        if command == "hash"
        else [
            "run",
            "--fixtures",
            str(path),
            "--slot",
            "x=replay:none.jsonl",
            "--out",
            str(tmp_path / "out.jsonl"),
        ]
    )
    r = cli(capsys, *args)
    assert r.code == 3, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "Traceback" not in r.err
    assert not (tmp_path / "out.jsonl").exists()


def test_seed_style_records_report_text_digest_drift(capsys, tmp_path: Path) -> None:
    """Header-less records carry only `text_digest`: its movement at the same grade is
    drift (exit 1), as the seed's own diff reports it."""
    line = {
        "case_id": "weather",
        "pass": True,
        "reasons": [],
        "tool_names": ["lookup"],
        "text_digest": "aaaaaaaaaaaa",
        "fixture_hash": "f" * 16,
        "grader_version": "g1",
        "model_slot": "slot",
    }
    left, right = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    left.write_text(json.dumps(line) + "\n")
    right.write_text(json.dumps({**line, "text_digest": "bbbbbbbbbbbb"}) + "\n")
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 1
    assert "DRIFT" in r.out and "aaaaaaaaaaaa -> bbbbbbbbbbbb" in r.out
    data = json.loads(cli(capsys, "diff", str(left), str(right), "--json").out)
    [moved] = data["silent_regressions"]
    assert (moved["kind"], moved["left_digest"], moved["right_digest"]) == (
        "drift",
        "aaaaaaaaaaaa",
        "bbbbbbbbbbbb",
    )
    assert cli(capsys, "diff", str(left), str(left)).code == 0
