"""Issue 41: promptfoo's results as runs. Every file here was made by promptfoo 0.123.1
itself against OpenAI-compatible servers on 127.0.0.1 (scripts/make_promptfoo_logs.py);
expected.json holds promptfoo's own numbers, read from its output by that script."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.judge.history import load_history
from evalpin.core.judge.verdict import judge
from evalpin.core.read.formats import ReadOptions, sniff
from evalpin.core.read.runfile import RunFile, read_run
from evalpin.core.reasons import lookup
from evalpin.core.records import ERROR
from tests.clirun import cli

DATA = Path(__file__).parents[1] / "data" / "promptfoo"
EXPECTED = json.loads((DATA / "expected.json").read_text())
REFUSED = "REFUSE_DIFF: triple mismatch, not a prompt regression"


def pf(name: str) -> str:
    return str(DATA / name)


def pairs_of(name: str) -> dict[str, ReadOptions]:
    """Each (prompt, provider) run of a file as promptfoo names it ("label | provider"),
    with the options that read it: its prompt id and provider (none for a file of one)."""
    expected = EXPECTED["files"][name]["pairs"]
    if len(expected) == 1:
        return {next(iter(expected)): ReadOptions()}
    return {
        key: ReadOptions(prompt=own["prompt_id"], provider=key.rsplit(" | ", 1)[1])
        for key, own in expected.items()
    }


def counts(run: RunFile) -> tuple[int, int, int]:
    return (
        sum(r.passed and not r.errored for r in run.rows),
        sum(not r.passed and not r.errored for r in run.rows),
        sum(r.errored for r in run.rows),
    )


# -- promptfoo's own numbers -------------------------------------------------------


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED["files"] if n.endswith(".json")))
def test_counts_are_promptfoos_own(name: str) -> None:
    """Per (prompt, provider): passed, failed and errored as promptfoo's metrics count
    them; the pass rate beside them says how promptfoo's differs."""
    for key, options in pairs_of(name).items():
        own = EXPECTED["files"][name]["pairs"][key]
        run = read_run(pf(name), options)
        assert counts(run) == (own["passed"], own["failed"], own["errors"]), (name, key)
        v = judge(run)
        assert v.errors == own["errors"]
        assert v.judged == own["passed"] + own["failed"]
        assert v.pass_rate == pytest.approx(own["passed"] / (own["passed"] + own["failed"]))
        total = own["passed"] + own["failed"] + own["errors"]
        assert v.tool_score is not None
        assert v.tool_score.value == pytest.approx(own["passed"] / total)
        assert not any("differ from the results read" in n for n in run.notes)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED["files"] if n.endswith(".json")))
def test_every_result_keeps_its_success_under_one_case_id_per_test(name: str) -> None:
    """Result by result (promptfoo's order), the grade is promptfoo's `success`, an
    errored result is an error case, and one test is one case id (and only it)."""
    for key, options in pairs_of(name).items():
        run = read_run(pf(name), options)
        results = EXPECTED["files"][name]["results"][key]
        assert len(results) == len(run.rows)
        case_of: dict[str, str] = {}
        for row, result in zip(run.rows, results, strict=True):
            assert case_of.setdefault(result["test"], row.case_id) == row.case_id
            if result["failureReason"] == 2:
                assert row.status == ERROR and not row.passed
            else:
                assert row.status is None and row.passed == result["success"]
        assert len(set(case_of.values())) == len(case_of)
        # the repeat is the occurrence of the same test
        per_test = Counter(r["test"] for r in results)
        assert sorted(run.seeds) == list(range(max(per_test.values())))
        assert len({(r.case_id, r.seed) for r in run.rows}) == len(run.rows)


# -- the acceptance: two servers under one model name -----------------------------


def test_two_servers_under_one_model_name_are_refused(capsys) -> None:
    left, right = (
        json.loads((DATA / n).read_text()) for n in ("night2.json", "night2_server_b.json")
    )
    # promptfoo itself records the same provider id and prompt id for both nights
    ids = {
        (r["provider"]["id"], r["promptId"]) for d in (left, right) for r in d["results"]["results"]
    }
    assert len(ids) == 1
    r = cli(capsys, "diff", pf("night2.json"), pf("night2_server_b.json"))
    assert r.code == 2, r.out
    lines = r.out.splitlines()
    assert lines[0] == REFUSED
    urls = [
        p["config"]["apiBaseUrl"]
        for p in (left["config"]["providers"][0], right["config"]["providers"][0])
    ]
    assert urls[0] != urls[1]
    slot = next(line for line in lines if line.strip().startswith("model_slot:"))
    assert urls[0] in slot and urls[1] in slot
    data = json.loads(
        cli(capsys, "diff", pf("night2.json"), pf("night2_server_b.json"), "--json").out
    )
    assert data["refused"] and data["silent_regressions"] == []


def test_two_nights_on_one_server_move_as_promptfoo_says(capsys) -> None:
    r = cli(capsys, "diff", pf("night1.json"), pf("night2.json"), "--json")
    assert r.code == 1
    data = json.loads(r.out)
    moved = {
        (m["case_id"], m["kind"])
        for m in data["silent_regressions"]
        if m["kind"] in ("regressed", "fixed")
    }
    # promptfoo's own successes, result by result, joined on the test
    key = next(iter(EXPECTED["files"]["night1.json"]["results"]))
    before = {x["test"]: x for x in EXPECTED["files"]["night1.json"]["results"][key]}
    after = {x["test"]: x for x in EXPECTED["files"]["night2.json"]["results"][key]}
    run = read_run(pf("night1.json"))
    ids = {x["test"]: row.case_id for x, row in zip(before.values(), run.rows, strict=True)}
    flips = {
        (ids[t], "regressed" if before[t]["success"] else "fixed")
        for t in before
        if before[t]["success"] != after[t]["success"]
        and 2 not in (before[t]["failureReason"], after[t]["failureReason"])
    }
    assert flips and moved == flips
    assert data["mismatches"] == [] and data["refused"] is False
    # an error on both nights is no move
    assert not any(m["case_id"] == "durian" for m in data["silent_regressions"])


def test_filter_failing_on_another_server_is_refused(capsys) -> None:
    """--filter-failing asked night 1's failures of server B: evalpin says so."""
    r = cli(capsys, "diff", pf("night1.json"), pf("filter_failing.json"))
    assert r.code == 2 and r.out.splitlines()[0] == REFUSED
    assert "model_slot" in r.out


# -- cases -------------------------------------------------------------------------


def test_case_ids_are_descriptions_or_vars_never_positions() -> None:
    night1 = read_run(pf("night1.json"))
    ids = [r.case_id for r in night1.rows]
    assert "apple" in ids and "durian" in ids
    hashed = [i for i in ids if i.startswith("vars:")]
    # two tests without a description, two sharing one: four known by their vars
    assert len(hashed) == 4 and len(set(hashed)) == 4
    # the --filter-failing run renumbered its tests from 0; its cases keep their ids
    subset = read_run(pf("filter_failing.json"))
    fx1 = {r.case_id: r.fixture_hash for r in night1.rows}
    assert {r.case_id for r in subset.rows} < set(fx1)
    assert all(fx1[r.case_id] == r.fixture_hash for r in subset.rows)
    assert subset.subset is not None and "3 of the config's 10 tests" in subset.subset
    assert night1.subset is None


def test_a_described_test_shared_by_two_tests_is_known_by_its_vars(tmp_path: Path) -> None:
    """Renaming one duplicate description to be unique gives that test its name."""
    doc = json.loads((DATA / "night1.json").read_text())
    for r in doc["results"]["results"]:
        if r["testCase"].get("description") == "inside out" and "fuzzy" in json.dumps(r["vars"]):
            r["testCase"]["description"] = "fuzzy one"
    for t in doc["config"]["tests"]:
        if t.get("description") == "inside out" and "fuzzy" in json.dumps(t["vars"]):
            t["description"] = "fuzzy one"
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(doc))
    ids = {r.case_id for r in read_run(path).rows}
    assert "fuzzy one" in ids and "inside out" in ids


def test_errored_results_are_error_cases_with_promptfoos_message() -> None:
    run = read_run(pf("night1.json"))
    [i] = [k for k, r in enumerate(run.rows) if r.errored]
    rec = run.record(i)
    assert rec.case_id == "durian" and rec.status == ERROR and not rec.passed
    assert rec.reasons == ["log_error:error"]
    assert "500" in rec.error and "overloaded" in rec.error
    assert rec.reported_model is None and rec.completion_digest is None


def test_failing_assertions_are_registered_reasons() -> None:
    run = read_run(pf("night2.json"))
    reasons = {r.case_id: r.reasons for r in run.records(range(len(run.rows))).values()}
    assert reasons["banana"] == ["assert:contains"]
    assert any(v == ["assert:not-icontains"] for v in reasons.values())
    assert reasons["apple"] == []
    for codes in reasons.values():
        assert all(lookup(c) is not None for c in codes), codes
    tail = run.record([r.case_id for r in run.rows].index("banana")).tail
    assert tail and "banana" in tail  # promptfoo's own reason


# -- the instrument ----------------------------------------------------------------


def test_slot_is_provider_and_base_url_without_secrets(tmp_path: Path) -> None:
    doc = json.loads((DATA / "night1.json").read_text())
    provider = doc["config"]["providers"][0]
    url = provider["config"]["apiBaseUrl"]
    # a config promptfoo did not redact: evalpin drops the secrets itself
    provider["config"].update(
        apiKey="sk-live-4f9a2c",
        apiBaseUrl=url.replace("http://", "http://user:pw-77@") + "?api_key=qq-31",
        headers={"Authorization": "Bearer zz-90", "X-Trace": "keep-me"},
        passthrough={"client_secret": "cs-12", "top_k": 5},
    )
    path = tmp_path / "secrets.json"
    path.write_text(json.dumps(doc))
    run = read_run(path)
    shown = json.dumps(run.header.slot) + run.header.model_slot + json.dumps(run.header.controls)
    for secret in ("sk-live-4f9a2c", "pw-77", "qq-31", "zz-90", "cs-12", "[REDACTED]"):
        assert secret not in shown
    assert run.header.model_slot == f"openai:chat:night-model @ {url}"
    assert "keep-me" in shown and '"top_k": 5' in shown
    assert run.header.controls["max_tokens"] == 64 and run.header.controls["temperature"] == 0
    # another sampling setting under the same provider id is a re-pointed slot
    provider["config"]["temperature"] = 0.7
    path.write_text(json.dumps(doc))
    assert read_run(path).header.slot["settings_digest"] != run.header.slot["settings_digest"]


def test_grading_provider_is_part_of_a_model_graded_tests_grader(tmp_path: Path) -> None:
    doc = json.loads((DATA / "night1.json").read_text())
    for r in doc["results"]["results"]:
        r["testCase"]["options"]["provider"]["config"]["apiBaseUrl"] = "http://127.0.0.1:9/v1"
    path = tmp_path / "other_grader.json"
    path.write_text(json.dumps(doc))
    before = {r.case_id: r.grader_version for r in read_run(pf("night1.json")).rows}
    after = {r.case_id: r.grader_version for r in read_run(path).rows}
    moved = {c for c in before if before[c] != after[c]}
    assert moved == {"mango", "coconut"}  # the llm-rubric tests; a contains check is not


def test_reported_model_is_missing_and_said(capsys) -> None:
    run = read_run(pf("night1.json"))
    assert all(r.reported_model is None for r in run.rows)
    assert any("reported_model missing" in n for n in run.notes)
    out = cli(capsys, "verdict", pf("night1.json")).out
    assert "reported_model missing" in out
    out = cli(capsys, "diff", pf("night1.json"), pf("night2.json")).out
    assert out.count("reported_model missing") == 1  # said once for both sides


def test_cached_answers_keep_a_run_from_publishable(capsys) -> None:
    cached = read_run(pf("cached.json"))
    flagged = [r for r in cached.records(range(len(cached.rows))).values() if r.cached]
    expected = EXPECTED["files"]["cached.json"]["results"]
    assert (
        cached.cached == len(flagged) == sum(x["cached"] for v in expected.values() for x in v) > 0
    )
    v = judge(cached)
    [check] = [c for c in v.checklist if c.rule == "fresh answers"]
    assert not check.ok and check.label == "internal"
    assert any("cache" in reason for reason in v.reasons)
    assert not any(c.rule == "fresh answers" for c in judge(read_run(pf("night1.json"))).checklist)
    r = cli(capsys, "verdict", pf("cached.json"), "--json")
    assert r.code == 1 and "fresh answers" in r.out


def test_export_is_the_same_run_as_the_output() -> None:
    out, export = read_run(pf("night2.json")), read_run(pf("export.json"))
    assert [
        (r.case_id, r.seed, r.passed, r.fixture_hash, r.grader_version, r.model_slot)
        for r in out.rows
    ] == [
        (r.case_id, r.seed, r.passed, r.fixture_hash, r.grader_version, r.model_slot)
        for r in export.rows
    ]


def test_jsonl_output_reads_the_same_cases_and_says_what_it_lacks() -> None:
    assert sniff(DATA / "night1.jsonl")[0].name == "promptfoo-jsonl"
    assert sniff(DATA / "night1.json")[0].name == "promptfoo"
    lines, doc = read_run(pf("night1.jsonl")), read_run(pf("night1.json"))
    key = lambda run: [(r.case_id, r.seed, r.passed, r.status, r.fixture_hash) for r in run.rows]  # noqa: E731
    assert key(lines) == key(doc)
    assert lines.dataset_hash == doc.dataset_hash
    assert "settings_digest" not in lines.header.slot  # the config is not in the file
    assert any("provider config not in the file" in n for n in lines.notes)


# -- choosing a (prompt, provider) run ---------------------------------------------


def test_a_file_of_several_runs_lists_them_until_one_is_chosen(capsys) -> None:
    r = cli(capsys, "verdict", pf("matrix.json"))
    assert r.code == 3 and r.out == ""
    [line] = r.err.strip().splitlines()
    assert "holds 4 (prompt, provider) runs" in line
    assert line.count("--provider server-a") == 2 and line.count("--provider server-b") == 2
    r = cli(capsys, "verdict", pf("matrix.json"), "--provider", "server-c")
    assert r.code == 3 and "no (prompt, provider) run matches --provider server-c" in r.err
    # one option narrows to two: still a list, of those two
    r = cli(capsys, "verdict", pf("matrix.json"), "--provider", "server-b")
    assert r.code == 3 and "holds 2" in r.err and "server-a" not in r.err
    r = cli(
        capsys,
        "verdict",
        pf("matrix.json"),
        "--provider",
        "server-b",
        "--prompt",
        "One word only. {{question}}",
        "--json",
    )
    assert r.code == 1
    data = json.loads(r.out)
    assert "provider server-b" in data["run"]["label"]
    # a prompt id's prefix chooses too
    prompt_id = EXPECTED["files"]["matrix.json"]["pairs"]["One word only. {{question}} | server-a"][
        "prompt_id"
    ]
    run = read_run(pf("matrix.json"), ReadOptions(prompt=prompt_id[:8], provider="server-a"))
    assert run.header.slot["label"] == "server-a"


def test_wrong_choice_on_a_file_of_one_run_is_an_error() -> None:
    wrong = r"no \(prompt, provider\) run matches --provider elsewhere"
    with pytest.raises(InputError, match=wrong):
        read_run(pf("night1.json"), ReadOptions(provider="elsewhere"))


def test_history_reads_every_run_of_a_file_and_calls_a_filtered_run_a_subset() -> None:
    history = load_history(DATA)
    assert [u.path for u in history.unreadable] == [str(DATA / "expected.json")]
    paths = [r.path for s in history.series for r in s.runs]
    assert sum("matrix.json [" in p for p in paths) == 4
    [brk] = [b for b in history.breaks if any(c.key == "subset" for c in b.changes)]
    assert "subset" in brk.kinds and "dataset edit" not in brk.kinds
    # the prompts of one config are tracks of their own, not a dataset edit
    assert not any("dataset edit" in b.kinds for b in history.breaks)


def test_malformed_promptfoo_output_is_one_line(capsys, tmp_path: Path) -> None:
    doc = json.loads((DATA / "night1.json").read_text())
    doc["results"]["results"] = {"not": "a list"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    r = cli(capsys, "verdict", str(path))
    assert r.code == 3 and len(r.err.strip().splitlines()) == 1 and str(path) in r.err


def test_row_numbers_promptfoo_gives_csv_tests_are_positions_not_ids(tmp_path: Path) -> None:
    """promptfoo names a test loaded from a CSV `Row #N`: a position, so the vars decide."""
    doc = json.loads((DATA / "night1.json").read_text())
    for n, r in enumerate(doc["results"]["results"]):
        r["testCase"]["description"] = f"Row #{n + 1}"
    path = tmp_path / "csv.json"
    path.write_text(json.dumps(doc))
    ids = [r.case_id for r in read_run(path).rows]
    assert all(i.startswith("vars:") for i in ids) and len(set(ids)) == len(ids)


def test_a_local_provider_has_no_endpoint_to_miss(tmp_path: Path) -> None:
    doc = json.loads((DATA / "night1.json").read_text())
    for r in doc["results"]["results"]:
        r["provider"] = {"id": "echo"}
    doc["config"]["providers"] = ["echo"]
    path = tmp_path / "echo.json"
    path.write_text(json.dumps(doc))
    run = read_run(path)
    assert run.header.model_slot == "echo"
    assert not any("no base URL" in n for n in run.notes)
    # an HTTP provider without one is said
    doc["config"]["providers"] = [{"id": "openai:chat:night-model", "config": {"temperature": 0}}]
    for r in doc["results"]["results"]:
        r["provider"] = {"id": "openai:chat:night-model"}
    path.write_text(json.dumps(doc))
    assert any("no base URL" in n for n in read_run(path).notes)


def test_an_output_without_success_is_graded_by_its_grading(tmp_path: Path) -> None:
    """Older outputs carry no `success`: the grading result's `pass` decides, the same."""
    doc = json.loads((DATA / "night2.json").read_text())
    for r in doc["results"]["results"]:
        del r["success"]
    path = tmp_path / "older.json"
    path.write_text(json.dumps(doc))
    grades = lambda run: [(r.case_id, r.passed, r.status) for r in run.rows]  # noqa: E731
    assert grades(read_run(path)) == grades(read_run(pf("night2.json")))


def test_an_output_without_failure_reasons_knows_an_error_by_its_response(
    tmp_path: Path,
) -> None:
    """Older outputs carry no `failureReason`: a result whose response holds an error is
    still an error case (not a graded fail), and the others keep their grades."""
    doc = json.loads((DATA / "night1.json").read_text())
    for r in doc["results"]["results"]:
        del r["failureReason"]
    path = tmp_path / "older.json"
    path.write_text(json.dumps(doc))
    grades = lambda run: [(r.case_id, r.passed, r.status) for r in run.rows]  # noqa: E731
    older = read_run(path)
    assert grades(older) == grades(read_run(pf("night1.json")))
    assert [r.case_id for r in older.rows if r.status == ERROR] == ["durian"]
