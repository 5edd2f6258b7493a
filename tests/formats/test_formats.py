"""Other tools' logs as runs: inspect-ai (.eval, .json) and lm-eval, made by the real
tools (scripts/make_foreign_logs.py), through the real command line."""

from __future__ import annotations

import json
import shutil
import struct
import zipfile
from pathlib import Path

import pytest

from evalpin.core.read.formats import sniff
from evalpin.core.read.formats.inspect_log import grade
from evalpin.core.read.runfile import read_run
from tests.builders import grid, write_run
from tests.clirun import cli

DATA = Path(__file__).parents[1] / "data"
INSPECT = DATA / "inspect"
LM_EVAL = DATA / "lm_eval"


def ins(name: str) -> str:
    return str(INSPECT / name)


def one_error_line(r, path: Path | str) -> None:
    assert r.code == 3
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], r.err
    assert r.out == ""


def test_sniffing_table_names_each_format(tmp_path: Path) -> None:
    own = write_run(tmp_path / "own.jsonl", grid({"a": [True, True, True]}))
    found = {
        INSPECT / "night1.eval": "inspect-eval",
        INSPECT / "night1.json": "inspect-json",
        LM_EVAL / "seed1": "lm-eval",
        next((LM_EVAL / "seed1").glob("samples_*.jsonl")): "lm-eval",
        next((LM_EVAL / "seed1").glob("results_*.json")): "lm-eval",
        own: "evalpin",
    }
    for path, name in found.items():
        assert sniff(path)[0].name == name, path


def test_two_nights_move_the_samples_inspect_says(capsys) -> None:
    expected = json.loads((INSPECT / "expected.json").read_text())
    r = cli(capsys, "diff", ins("night1.eval"), ins("night2.eval"), "--json")
    assert r.code == 1
    moved = json.loads(r.out)["silent_regressions"]
    by_kind = {
        kind: sorted(f"{m['case_id']}/{m['seed']}" for m in moved if m["kind"] == kind)
        for kind in ("regressed", "fixed")
    }
    assert by_kind == {"regressed": expected["regressed"], "fixed": expected["fixed"]}
    assert expected["regressed"] and expected["fixed"]
    text = cli(capsys, "diff", ins("night1.eval"), ins("night2.eval")).out
    assert "REGRESSED banana  epoch 1" in text
    assert "inspect-ai log (.eval, scorer includes)" in text


def test_another_model_is_refused(capsys) -> None:
    r = cli(capsys, "diff", ins("night1.eval"), ins("other_model.eval"))
    assert r.code == 2
    assert r.out.splitlines()[0] == "REFUSE_DIFF: triple mismatch, not a prompt regression"
    assert "model_slot: mockllm/model (left) vs mockllm/other (right)" in r.out


def test_changed_target_is_refused_naming_the_sample(capsys, tmp_path: Path) -> None:
    artifact = tmp_path / "delta.json"
    r = cli(
        capsys, "diff", ins("night1.eval"), ins("changed_target.eval"), "--artifact", str(artifact)
    )
    assert r.code == 2
    assert "fixture_hash" in r.out and "e.g. grape" in r.out
    data = json.loads(
        cli(capsys, "diff", ins("night1.eval"), ins("changed_target.eval"), "--json").out
    )
    assert {m["case_id"] for m in data["mismatches"]} == {"grape"}
    assert json.loads(artifact.read_text())["kind"] == "backend_delta"


def test_eval_and_json_forms_of_one_run_agree(capsys) -> None:
    r = cli(capsys, "diff", ins("night1.eval"), ins("night1.json"))
    assert r.code == 0, r.out
    left, right = read_run(ins("night1.eval")), read_run(ins("night1.json"))
    assert left.rows == right.rows
    assert left.header == right.header


def test_inspect_pins_come_from_the_log() -> None:
    run = read_run(ins("night1.eval"))
    h = run.header
    assert h is not None and run.repeat_label == "epoch"
    assert run.seeds == [1, 2] and run.complete is True
    assert h.model_slot == "mockllm/model"
    assert h.controls["temperature"] == 0.0 and h.controls["seed"] == 7
    assert "inspect_ai" in h.env["packages"] and h.env_digest
    assert h.scorer_commit and run.rows[0].reported_model == "model"
    rec = run.record(next(i for i, r in enumerate(run.rows) if r.case_id == "banana"))
    assert rec.text == "banana" and rec.text_digest and rec.completion_digest
    # what the log lacks stays missing: no fixture file, and it says why
    assert run.missing_pins == []


def test_scorer_option_picks_the_grade(capsys) -> None:
    inc = read_run(ins("night1.eval"))
    r = cli(capsys, "verdict", ins("night1.eval"), "--scorer", "nope")
    one_error_line(r, ins("night1.eval"))
    assert "includes, match" in r.err
    from evalpin.core.read.formats import ReadOptions

    m = read_run(ins("night1.eval"), ReadOptions(scorer="match"))
    assert m.header.grader_version != inc.header.grader_version


@pytest.mark.parametrize(
    ("value", "passed", "reasons"),
    [
        ("C", True, []),
        (1, True, []),
        (1.0, True, []),
        (True, True, []),
        ("true", True, []),
        ("I", False, []),
        (0, False, []),
        (False, False, []),
        ("P", False, ["score:P"]),
        (0.5, False, ["score:0.5"]),
        ({"a": 1}, False, ['score:{"a":1}']),
    ],
)
def test_score_values(value, passed, reasons) -> None:
    assert grade(value) == (passed, reasons)


def test_crashed_and_killed_logs_are_incomplete(capsys) -> None:
    r = cli(capsys, "verdict", ins("crashed.eval"))
    assert r.code == 1 and "run is incomplete (status error)" in r.out
    r = cli(capsys, "verdict", ins("killed.eval"))
    assert r.code == 1 and "no header.json" in r.out
    killed = read_run(ins("killed.eval"))
    assert killed.complete is False and len(killed.rows) == 12


def test_verdict_says_why_an_inspect_log_is_not_publishable(capsys) -> None:
    r = cli(capsys, "verdict", ins("night1.eval"), "--json")
    assert r.code == 1
    data = json.loads(r.out)
    assert data["label"] != "publishable"
    assert any("seed" in why for why in data["reasons"])


def _rezip(src: Path, dest: Path, rename: dict[str, str] | None = None, edit=None) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename) if info.compress_type != 93 else None
            if data is None:
                from evalpin.core.read.formats.ziplog import LogZip

                with LogZip(src) as raw:
                    data = raw.read(info.filename)
            if edit is not None:
                data = edit(info.filename, data)
            zout.writestr((rename or {}).get(info.filename, info.filename), data)
    return dest


def test_truncated_zip_is_one_line(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "cut.eval"
    bad.write_bytes((INSPECT / "night1.eval").read_bytes()[:20000])
    one_error_line(cli(capsys, "diff", str(bad), ins("night1.eval")), bad)


def test_path_escaping_member_is_one_line(capsys, tmp_path: Path) -> None:
    bad = _rezip(
        INSPECT / "night1.eval",
        tmp_path / "escape.eval",
        rename={"samples/apple_epoch_1.json": "../../etc/apple_epoch_1.json"},
    )
    r = cli(capsys, "verdict", str(bad))
    one_error_line(r, bad)
    assert "leaves the archive" in r.err


def test_zip_bomb_and_lying_sizes_are_refused(capsys, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", b"{" + b" " * (300 << 20) + b"}")
    r = cli(capsys, "diff", str(bomb), str(bomb))
    one_error_line(r, bomb)
    assert "too large" in r.err
    # A member that inflates past the size its directory entry declares.
    liar = _rezip(INSPECT / "night1.eval", tmp_path / "liar.eval")
    raw = bytearray(liar.read_bytes())
    with zipfile.ZipFile(liar) as zf:
        info = zf.getinfo("header.json")
    name = b"header.json"
    at = raw.find(b"PK\x01\x02")  # central directory entries: the name sits at +46
    while raw[at + 46 : at + 46 + len(name)] != name:
        at = raw.find(b"PK\x01\x02", at + 4)
    struct.pack_into("<L", raw, at + 24, info.file_size // 2)  # uncompressed size
    liar.write_bytes(bytes(raw))
    r = cli(capsys, "verdict", str(liar))
    one_error_line(r, liar)


def test_non_utf8_sample_is_one_line(capsys, tmp_path: Path) -> None:
    def spoil(name: str, data: bytes) -> bytes:
        return data.replace(b'"banana"', b'"ban\xffana"') if name.startswith("samples/") else data

    bad = _rezip(INSPECT / "night1.eval", tmp_path / "latin.eval", edit=spoil)
    r = cli(capsys, "verdict", str(bad))
    one_error_line(r, bad)


def test_model_base_url_and_args_keep_no_secret(tmp_path: Path) -> None:
    log = json.loads((INSPECT / "night1.json").read_text())
    log["eval"]["model_base_url"] = "https://user:sk-secret1@api.example.test/v1?api_key=sk-secret2"
    path = tmp_path / "keyed.json"
    path.write_text(json.dumps(log))
    run = read_run(path)
    assert run.header.model_slot == "mockllm/model @ https://api.example.test/v1"
    assert "sk-secret" not in json.dumps([run.header.model_slot, run.rows[0].model_slot])
    folder = tmp_path / "lm"
    shutil.copytree(LM_EVAL / "seed1", folder)
    results = next(folder.glob("results_*.json"))
    data = json.loads(results.read_text())
    data["config"]["model_args"] = (
        "pretrained=tiny,api_key=sk-secret3,auth_token=sk-secret4,"
        "base_url=https://u:sk-secret5@h.test/v1?key=sk-secret6"
    )
    results.write_text(json.dumps(data))
    lm = read_run(folder)
    assert lm.header.model_slot == "dummy(pretrained=tiny,base_url=https://h.test/v1)"
    assert "sk-secret" not in json.dumps([r.model_slot for r in lm.rows])


def test_hostile_strings_in_a_log_stay_inert(capsys, tmp_path: Path) -> None:
    log = json.loads((INSPECT / "night1.json").read_text())
    log["samples"][0]["id"] = "apple\x1b]0;pwned\x07\x1b[2J"
    log["eval"]["scorers"][0]["name"] = "inc\x1b[31mludes"
    for sample in log["samples"]:
        sample["scores"]["inc\x1b[31mludes"] = sample["scores"].pop("includes")
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(log))
    for args in (("diff", str(path), ins("night1.json")), ("verdict", str(path))):
        r = cli(capsys, *args)
        assert "\x1b" not in r.out and "\x07" not in r.out


def test_lm_eval_runs_differing_only_in_seed_compare(capsys) -> None:
    left, right = read_run(LM_EVAL / "seed1"), read_run(LM_EVAL / "seed2")
    assert left.header.controls["random_seed"] != right.header.controls["random_seed"]
    assert left.header.controls["temperature"] == 0.0
    r = cli(capsys, "diff", str(LM_EVAL / "seed1"), str(LM_EVAL / "seed2"))
    assert r.code == 0, r.out
    rec = left.record(0)
    assert rec.source_id == "apple" and rec.text == "lol" and left.rows[0].passed
    # TASK/DOC_ID, as in a run of several tasks (issue 27: one task's samples join)
    assert left.rows[0].case_id == "fruit_qa/0"


def test_lm_eval_changed_target_is_refused(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "edited"
    shutil.copytree(LM_EVAL / "seed2", folder)
    samples = next(folder.glob("samples_*.jsonl"))
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    lines[3]["target_hash"] = "0" * 64
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = cli(capsys, "diff", str(LM_EVAL / "seed1"), str(folder))
    assert r.code == 2 and "e.g. fruit_qa/3" in r.out


def test_lm_eval_samples_without_results_are_incomplete(capsys, tmp_path: Path) -> None:
    lone = tmp_path / next((LM_EVAL / "seed1").glob("samples_*.jsonl")).name
    shutil.copy(next((LM_EVAL / "seed1").glob("samples_*.jsonl")), lone)
    run = read_run(lone)
    assert run.complete is False and "grader_version" in run.missing_pins
    r = cli(capsys, "verdict", str(lone))
    assert r.code == 1 and "run is incomplete" in r.out


def test_history_over_a_folder_of_mixed_logs(capsys, tmp_path: Path) -> None:
    for name in ("night1.eval", "night2.eval", "other_model.eval"):
        shutil.copy(INSPECT / name, tmp_path / name)
    for f in (LM_EVAL / "seed1").iterdir():
        shutil.copy(f, tmp_path / f.name)
    write_run(tmp_path / "own.jsonl", grid({"a": [True, True, True]}))
    r = cli(capsys, "history", str(tmp_path), "--json")
    assert r.code == 0
    data = json.loads(r.out)
    assert data["unreadable"] == []
    paths = sorted(Path(run["path"]).name for s in data["series"] for run in s["runs"])
    results = next((LM_EVAL / "seed1").glob("results_*.json")).name
    assert paths == sorted(["night1.eval", "night2.eval", "other_model.eval", results, "own.jsonl"])


def test_tool_calls_name_tools_and_move_the_completion_digest(capsys, tmp_path: Path) -> None:
    log = json.loads((INSPECT / "night1.json").read_text())
    sample = log["samples"][0]
    assistant = next(m for m in sample["messages"] if m["role"] == "assistant")
    assistant["tool_calls"] = [
        {"id": "c1", "function": "lookup", "arguments": {"fruit": sample["id"]}, "type": "function"}
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(log))
    run = read_run(path)
    i = next(
        k
        for k, r in enumerate(run.rows)
        if r.case_id == str(sample["id"]) and r.seed == sample["epoch"]
    )
    rec = run.record(i)
    plain = read_run(ins("night1.json"))
    assert rec.tool_names == ["lookup"] and rec.tools[0].args == {"fruit": sample["id"]}
    assert run.rows[i].text_digest == plain.rows[i].text_digest
    assert run.rows[i].completion_digest != plain.rows[i].completion_digest
    r = cli(capsys, "diff", ins("night1.json"), str(path), "--json")
    assert r.code == 1
    [moved] = json.loads(r.out)["silent_regressions"]
    assert (moved["case_id"], moved["kind"]) == (str(sample["id"]), "drift")


@pytest.mark.parametrize(
    "text", ["", "apple", 'quote " and \\ back', "é✓\u202e\x1b[2J", "\U0001f600"]
)
def test_fast_digest_equals_evalpins_own(text: str) -> None:
    from evalpin.core.instrument.pins import completion_digest, text_digest
    from evalpin.core.read.formats.foreign import digests
    from evalpin.core.records import Completion

    assert digests(text, []) == (text_digest(text), completion_digest(Completion(text=text)))


def test_disclosed_sample_ids_contaminate_an_inspect_log(capsys, tmp_path: Path) -> None:
    disclosed = tmp_path / "disclosed.txt"
    disclosed.write_text("# leaked\nbanana\n")
    r = cli(capsys, "verdict", ins("night1.eval"), "--disclosed", str(disclosed), "--json")
    assert r.code == 1
    data = json.loads(r.out)
    assert data["label"] == "contaminated"
    assert any("not an evalpin fixture file" in note for note in data["notes"])


def test_too_many_members_is_one_line(capsys, tmp_path: Path, monkeypatch) -> None:
    from evalpin.core.read.formats import ziplog

    monkeypatch.setattr(ziplog, "MAX_MEMBERS", 5)
    r = cli(capsys, "verdict", ins("night1.eval"))
    one_error_line(r, ins("night1.eval"))
    assert "over the 5 cap" in r.err
