"""Issue 39: never a false green. Nothing compared is not "no movement", a typo is not a
passing check, an empty run is not a finished one, and the statistics say when there is
too little to say. (Readers under hostile input: tests/core/test_fuzz_readers.py; every
command against degenerate runs: tests/cli/test_degenerate_runs.py.)"""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import pytest

from evalpin.core.judge import mcnemar
from tests.builders import case, coding_header, grid, header, write_run
from tests.clirun import cli

DATA = Path(__file__).parents[1] / "data"
REFUSE = "REFUSE_DIFF: triple mismatch, not a prompt regression"


# -- run-level pins decide before the join -----------------------------------------


def test_a_golden_run_beside_a_coding_run_is_refused_with_no_case_in_common(
    capsys, tmp_path: Path
) -> None:
    golden = write_run(tmp_path / "g.jsonl", grid({"refund-1": [True, False, True]}))
    coding = write_run(
        tmp_path / "c.jsonl",
        grid({"parse_dates": [True, True, False]}, model_slot="coder"),
        head=coding_header(),
    )
    r = cli(capsys, "diff", str(golden), str(coding))
    assert r.code == 2, r.out
    lines = r.out.splitlines()
    assert lines[0] == REFUSE
    assert "fixture set: golden set golden (left) vs coding set repairs (right)" in r.out
    assert "model_slot: night (left) vs coder (right) in the runs' own pins" in r.out
    assert "no movement" not in r.out
    j = cli(capsys, "diff", "--json", str(golden), str(coding))
    data = json.loads(j.out)
    assert j.code == 2 and data["refused"] and data["compared_cases"] == 0
    assert {m["key"] for m in data["run_mismatches"]} == {"fixture_set", "model_slot"}
    for fmt in ("--markdown", "--junit", "--html"):
        out = tmp_path / f"report{fmt}"
        assert cli(capsys, "diff", str(golden), str(coding), fmt, str(out)).code == 2
        assert "golden set golden" in out.read_text() and "coding set repairs" in out.read_text()


@pytest.mark.parametrize(
    ("over", "key"),
    [
        ({"grader_version": "g2"}, "grader_version"),
        ({"model_slot": "day"}, "model_slot"),
        ({"slot": {"provider": "replay", "settings_digest": "2" * 16}}, "slot_settings"),
    ],
)
def test_one_run_pin_that_differs_refuses_disjoint_runs(
    capsys, tmp_path: Path, over: dict, key: str
) -> None:
    left = write_run(
        tmp_path / "l.jsonl",
        grid({"a": [True] * 3}),
        head=header(slot={"provider": "replay", "settings_digest": "1" * 16}),
    )
    rows = {k: v for k, v in over.items() if k != "slot"}
    right = write_run(tmp_path / "r.jsonl", grid({"b": [True] * 3}, **rows), head=header(**over))
    r = cli(capsys, "diff", "--json", str(left), str(right))
    assert r.code == 2
    assert [m["key"] for m in json.loads(r.out)["run_mismatches"]] == [key]


async def test_the_review_shows_the_banner_for_runs_on_other_sets(tmp_path: Path) -> None:
    from evalpin.tui.screens.banner import BannerScreen
    from tests.tuikit import SIZE, new_app, screen_text, settle

    golden = write_run(tmp_path / "g.jsonl", grid({"refund-1": [True, False, True]}))
    rows = grid({"slugify": [True] * 3}, model_slot="coder")
    coding = write_run(tmp_path / "c.jsonl", rows, head=coding_header())
    app = new_app(golden, coding)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "banner")
        await settle(pilot, app, "diff")
        assert isinstance(app.screen, BannerScreen)
        text = screen_text(app)
        assert REFUSE in text and "fixture set" in text and "the runs' own pins" in text


# -- nothing compared is exit 4, never "no movement" ------------------------------


def test_a_right_run_with_a_header_and_no_cases_compares_nothing(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3, "b": [False] * 3}))
    empty = write_run(tmp_path / "r.jsonl", [], finished=False)
    r = cli(capsys, "diff", str(left), str(empty))
    assert r.code == 4
    assert "nothing compared: the right run has no cases (exit 4)" in r.out
    assert "no movement" not in r.out
    j = cli(capsys, "diff", "--json", str(left), str(empty))
    assert j.code == 4 and json.loads(j.out)["nothing_compared"] == "the right run has no cases"
    junit = tmp_path / "j.xml"
    assert cli(capsys, "diff", str(empty), str(left), "--junit", str(junit)).code == 4
    assert 'name="NOTHING_COMPARED"' in junit.read_text() and 'errors="1"' in junit.read_text()
    # A header and a tail that is no record: unreadable, one line, exit 3.
    torn = tmp_path / "t.jsonl"
    torn.write_bytes(empty.read_bytes() + b"\x00\x01 not a record\n")
    bad = cli(capsys, "diff", str(left), str(torn))
    assert bad.code == 3 and bad.err.count("\n") == 1 and f"{torn}:2:" in bad.err


def test_runs_sharing_no_case_or_only_errors_compare_nothing(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    other = write_run(tmp_path / "o.jsonl", grid({"z": [True] * 3}))
    r = cli(capsys, "diff", str(left), str(other))
    assert r.code == 4 and "the runs share no (case, seed): 3 only left, 3 only right" in r.out
    down = write_run(
        tmp_path / "e.jsonl",
        grid({"a": [False] * 3}, status="error", reasons=["provider_error:connection"]),
    )
    r = cli(capsys, "diff", str(left), str(down))
    assert r.code == 4 and "none of the 3 shared (case, seed) pairs was judged" in r.out


async def test_the_verdict_screen_says_nothing_was_compared(tmp_path: Path) -> None:
    from tests.tuikit import SIZE, new_app, screen_text, settle

    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    other = write_run(tmp_path / "o.jsonl", grid({"z": [True] * 3}))
    app = new_app(left, other)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("v")
        await pilot.pause()
        text = screen_text(app)
        assert "nothing compared: no (case, seed) was judged on both sides" in text
        assert "within noise" not in text


def test_lm_eval_predict_only_runs_say_nothing_was_judged(capsys, tmp_path: Path) -> None:
    """Samples with no metric (`--predict_only`): error cases on both sides, so no pair of
    grades: a plain line and exit 4, never a traceback or exit 1."""
    sides = []
    for name in ("mon", "tue"):
        folder = tmp_path / name
        shutil.copytree(DATA / "lm_eval" / "seed1", folder)
        for samples in folder.glob("samples_*.jsonl"):
            lines = [json.loads(x) for x in samples.read_text().splitlines() if x.strip()]
            for sample in lines:
                sample.pop("exact_match", None)
                sample["metrics"] = []
            samples.write_text("".join(json.dumps(s) + "\n" for s in lines))
        sides.append(str(folder))
    r = cli(capsys, "diff", *sides)
    assert r.code == 4 and "nothing compared: none of the" in r.out and "judged" in r.out
    assert "Traceback" not in r.err


def test_a_run_diffed_with_itself_says_so(capsys, tmp_path: Path) -> None:
    run = write_run(tmp_path / "a.jsonl", grid({"a": [True] * 3}))
    alias = tmp_path / "alias.jsonl"
    alias.symlink_to(run)
    for right in (run, alias):
        r = cli(capsys, "diff", str(run), str(right))
        assert r.code == 0 and "LEFT and RIGHT are the same file" in r.out


# -- every input schema is closed ---------------------------------------------------


@pytest.mark.parametrize(
    ("typo", "nearest"),
    [("required_tools", "require_tools"), ("must_includ", "must_include"), ("banned", None)],
)
def test_a_golden_typo_is_refused_by_every_command(
    capsys, tmp_path: Path, typo: str, nearest: str | None
) -> None:
    path = tmp_path / "golden.jsonl"
    good = {"id": "ok", "user": "hi", "must_include": ["hello"]}
    bad = {"id": "typo", "user": "hi", typo: ["lookup"]}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    for args in (("hash", str(path)), ("seal", str(path))):
        r = cli(capsys, *args)
        assert r.code == 3, args
        assert f"{path}:2: case 'typo': unknown key '{typo}'" in r.err
        assert (f"did you mean '{nearest}'?" in r.err) if nearest else ("valid keys:" in r.err)
    assert not (tmp_path / "golden.jsonl.lock").exists()  # nothing sealed
    r = cli(capsys, "run", "--fixtures", str(path), "--slot", "x=replay:none.jsonl", "--seeds", "1")
    assert r.code == 3 and f"unknown key '{typo}'" in r.err
    r = cli(capsys, "check", str(path))  # every problem listed, and exit 3 like the others
    assert r.code == 3 and f"line 2: case 'typo': unknown key '{typo}'" in r.out


def test_keys_of_ones_own_start_with_x_and_are_hashed(capsys, tmp_path: Path) -> None:
    from evalpin.core.instrument.fixtures import load_fixtures

    path = tmp_path / "golden.jsonl"
    base = {"id": "a", "user": "hi", "must_include": ["hello"]}
    path.write_text(json.dumps({**base, "x-owner": "ana"}) + "\n")
    owned = load_fixtures(path).cases[0].fixture_hash
    path.write_text(json.dumps({**base, "x-owner": "bo"}) + "\n")
    assert load_fixtures(path).cases[0].fixture_hash != owned
    assert cli(capsys, "check", str(path)).code == 0


def _coding(tmp_path: Path, item_keys: str) -> Path:
    (tmp_path / "p.md").write_text("fix it\n")
    (tmp_path / "test_x.py").write_text("def test_x():\n    assert True\n")
    path = tmp_path / "set.yaml"
    path.write_text(
        "schema: coding-eval/v1\ndataset_id: d\ndataset_version: '1'\nitems:\n"
        "  - id: one\n    language: python\n    prompt_file: p.md\n"
        "    expected_files: [solution.py]\n" + item_keys
    )
    return path


@pytest.mark.parametrize(
    ("line", "typo", "nearest"),
    [
        ("    forbidden_import: [os]\n", "forbidden_import", "forbidden_imports"),
        ("    test_fle: test_x.py\n", "test_fle", "test_file"),
        ("    timeout: 5\n", "timeout", "timeout_s"),
    ],
)
def test_a_coding_typo_names_the_key_its_line_and_the_nearest(
    capsys, tmp_path: Path, line: str, typo: str, nearest: str
) -> None:
    keys = {"forbidden_import": "", "test_fle": "", "timeout": ""}
    rest = "    test_file: test_x.py\n" * (typo != "test_fle") + "    timeout_s: 5\n" * (
        typo != "timeout"
    )
    path = _coding(tmp_path, rest + line)
    assert typo in keys
    lineno = path.read_text().splitlines().index(line.rstrip("\n")) + 1
    r = cli(capsys, "hash", str(path))
    assert r.code == 3 and r.err.count("\n") == 1
    assert f"{path}:{lineno}: item 'one': unknown key '{typo}' (did you mean '{nearest}'?)" in r.err


def test_check_lists_every_problem_of_a_coding_set(capsys, tmp_path: Path) -> None:
    typos = "    test_fle: test_x.py\n    timeout: 5\n    forbidden_import: [os]\n"
    path = _coding(tmp_path, typos)
    path.write_text(path.read_text().replace("dataset_version", "datset_version"))
    r = cli(capsys, "check", str(path))
    assert r.code == 3  # keys the format does not have: invalid input, all of them listed
    for key in ("datset_version", "test_fle", "timeout", "forbidden_import"):
        assert f"unknown key '{key}'" in r.out, key
    assert "not run in the sandbox" in r.out


def test_a_slots_typo_names_its_line_and_the_nearest(capsys, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "user": "hi", "must_include": ["x"]}) + "\n")
    slots = tmp_path / "slots.yaml"
    slots.write_text("slots:\n  rec:\n    provider: replay\n    pth: rec.jsonl\n")
    r = cli(capsys, "run", "--fixtures", str(golden), "--slots", str(slots), "--slot", "rec")
    assert r.code == 3
    assert f"{slots}:4: slot 'rec' (provider 'replay'): unknown key 'pth' (did you mean" in r.err


def test_a_recording_line_with_a_typo_answers_nothing(capsys, tmp_path: Path) -> None:
    """`sed` for `seed` would make a line answer every seed: the line is skipped, named,
    and its cases are not judged (the run fails: not one case was)."""
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "user": "hi", "must_include": ["hi"]}) + "\n")
    recording = tmp_path / "rec.jsonl"
    recording.write_text(json.dumps({"case_id": "a", "sed": 11, "text": "hi"}) + "\n")
    out = tmp_path / "r.jsonl"
    r = cli(
        capsys,
        "run",
        "--fixtures",
        str(golden),
        "--slot",
        f"r=replay:{recording}",
        "--seeds",
        "11,29",
        "--out",
        str(out),
    )
    assert r.code == 1 and "unknown key 'sed' (did you mean 'seed'?)" in r.err


def test_a_key_written_twice_is_refused_not_settled_silently(capsys, tmp_path: Path) -> None:
    path = _coding(
        tmp_path,
        "    test_file: test_x.py\n    timeout_s: 5\n    forbidden_imports: [os]\n"
        "    forbidden_imports: []\n",
    )
    first = path.read_text().splitlines().index("    forbidden_imports: [os]") + 1
    r = cli(capsys, "hash", str(path))
    assert r.code == 3 and f":{first + 1}: duplicate key 'forbidden_imports'" in r.err
    assert f"(first on line {first})" in r.err
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "a", "user": "hi", "must_not": ["x"], "must_not": []}\n')
    r = cli(capsys, "hash", str(golden))
    assert r.code == 3 and "duplicate key 'must_not'" in r.err


def test_a_note_with_an_unknown_key_is_skipped_and_named(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    right = write_run(tmp_path / "r.jsonl", grid({"a": [True, False, True]}))
    note = {"record": "note", "case_id": "a", "fixture_hash": "fh-a", "kind": "text", "txt": "x"}
    (tmp_path / "notes.jsonl").write_text(json.dumps(note) + "\n")
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 1 and "unknown key 'txt' (did you mean 'text'?)" in r.err


def test_a_lock_line_with_an_unknown_key_names_the_nearest(capsys, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "user": "hi", "must_include": ["x"]}) + "\n")
    assert cli(capsys, "seal", str(golden)).code == 0
    lock = tmp_path / "golden.jsonl.lock"
    lock.write_text(lock.read_text().replace("dataset_id:", "datasetid:"))
    r = cli(capsys, "seal", "--check", str(golden))
    assert r.code == 3 and "unknown key 'datasetid' (did you mean 'dataset_id'?)" in r.err


# -- check collects every problem ---------------------------------------------------


def test_check_lists_every_problem_of_a_golden_set(capsys, tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    cases = [
        {"id": "a", "user": "hi", "must_include": ["x"]},
        {"id": "a", "user": "again", "must_include": ["y"]},
        {"id": "b", "user": "hi", "require_tools": ["refund"], "forbid_tools": ["refund"]},
        {"id": "c", "user": "hi", "must_not": [" "]},
        {"id": "d", "user": "hi"},
    ]
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    r = cli(capsys, "check", str(path))
    assert r.code == 1
    assert "line 2: duplicate case id 'a' (first on line 1)" in r.out
    assert "refund both required and forbidden" in r.out
    assert "an empty must_not entry" in r.out
    assert "the case checks nothing" in r.out
    assert cli(capsys, "hash", str(path)).code == 3  # the others refuse at the first


# -- a run with nothing judged ------------------------------------------------------


def test_a_run_whose_every_request_failed_exits_1(capsys, tmp_path: Path, monkeypatch) -> None:
    with socket.socket() as s:  # a port nothing listens on: every request is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOWN_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("DOWN_KEY", "k")
    (tmp_path / "golden.jsonl").write_text(
        json.dumps({"id": "a", "user": "hi", "must_include": ["x"]}) + "\n"
    )
    (tmp_path / "slots.yaml").write_text(
        "slots:\n  down: {provider: openai, model: m, base_url_env: DOWN_URL, "
        "api_key_env: DOWN_KEY, max_attempts: 1, timeout_s: 5}\n"
    )
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "down", "--out", "r.jsonl")
    assert r.code == 1, r.err
    assert "not one case could be judged" in r.err
    v = cli(capsys, "verdict", "r.jsonl")
    assert v.code == 1 and "nothing judged" in v.out
    assert not any(x.startswith(("spread", "cases", "power")) for x in v.out.splitlines())
    data = json.loads(cli(capsys, "verdict", "r.jsonl", "--json").out)
    assert data["judged"] == 0 and data["spread"] is None and data["pass_rate"] is None
    assert any(c["rule"] == "judged" and not c["ok"] for c in data["checklist"])


# -- statistics that say when there is too little to say ----------------------------


def test_two_shared_cases_give_no_interval_wider_than_the_scale(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3, "b": [True] * 3}))
    right = write_run(tmp_path / "r.jsonl", grid({"a": [False] * 3, "b": [True, False, True]}))
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 1 and "too few cases to say" in r.out
    assert "95% [" not in r.out and "detectable at 80% power" not in r.out
    c = json.loads(cli(capsys, "diff", "--json", str(left), str(right)).out)["stats"]["clustered"]
    assert c["ci95"] is None and c["mde80"] is None and c["too_few_cases"]


def test_an_interval_is_clipped_to_the_scale() -> None:
    # 9 of 10 cases fell from pass to fail on every seed: mean -0.9, SE 0.1.
    c = mcnemar.clustered([(3, 3, 0)] * 9, unmoved_cases=1, unmoved_pairs=3)
    assert c.mean_difference == pytest.approx(-0.9) and c.ci95 is not None
    assert c.ci95[0] == -1.0 and c.ci95[1] == pytest.approx(-0.9 + 1.959963984540054 * 0.1)


def test_identical_runs_claim_no_detectable_effect(capsys, tmp_path: Path) -> None:
    cases = {f"c{i}": [i % 3 != 0] * 3 for i in range(12)}
    left = write_run(tmp_path / "l.jsonl", grid(cases))
    right = write_run(tmp_path / "r.jsonl", grid(cases))
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 0 and "detectable at 80% power" not in r.out and "0.0 points;" not in r.out
    assert "no spread to measure noise by" in r.out


def test_the_headline_says_cases_moved_and_whether_it_is_noise(capsys, tmp_path: Path) -> None:
    before = {f"c{i}": [True, True, True] for i in range(30)}
    after = dict(before, c1=[False, True, True], c2=[True, False, False], c3=[False] * 3)
    left = write_run(tmp_path / "l.jsonl", grid(before))
    right = write_run(tmp_path / "r.jsonl", grid(after))
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 1
    headline = next(x for x in r.out.splitlines() if x.startswith("headline"))
    assert "cases moved: 6 regressed of 90 shared (case, seed) pairs (exit 1)" in headline
    assert "over 30 cases the change in pass rate is" in headline and "noise" in headline
    md = tmp_path / "d.md"
    cli(capsys, "diff", str(left), str(right), "--markdown", str(md))
    assert "cases moved: 6 regressed" in md.read_text()


def test_power_on_a_few_cases_says_too_few(capsys, tmp_path: Path) -> None:
    run = write_run(tmp_path / "a.jsonl", grid({"a": [True, False, True], "b": [False] * 3}))
    r = cli(capsys, "power", str(run))
    assert r.code == 0 and "too few cases to say" in r.out


def test_a_case_record_the_review_decodes_is_bounded(tmp_path: Path) -> None:
    """The lean read skips a deep value it never keeps; decoding the case in full (the
    detail view, reasons of a move) refuses it in one line instead of recursing."""
    from evalpin.core.errors import InputError
    from evalpin.core.read.runfile import read_run

    deep = {"x": [[[[[]]]]]}
    for _ in range(200):
        deep = {"x": deep}
    run = write_run(tmp_path / "a.jsonl", [case("a", True, tools=None)])
    lines = run.read_text().splitlines()
    record = json.loads(lines[1])
    record["tools"] = [{"name": "lookup", "args": deep}]
    lines[1] = json.dumps(record)
    run.write_text("\n".join(lines) + "\n")
    read = read_run(run)
    assert len(read.rows) == 1
    with pytest.raises(InputError, match=r"nested too deeply \(more than 100 levels\)"):
        read.record(0)
