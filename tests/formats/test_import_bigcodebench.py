"""`evalpin import bigcodebench` and `dataframebench` (issue 52): unittest modules graded
as their harness runs them, in one namespace with the solution (the stub its harness
calibrates with first, the names its runner puts there), their libraries recorded and
checked before a run, and the harness's own results read by `crosscheck`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from evalpin.core.instrument.importers import import_set
from evalpin.core.judge.harness_results import read_results
from evalpin.core.reasons import is_disputed
from evalpin.run.sandbox import run_item
from tests.capabilities import lacking
from tests.clirun import cli

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks" / "bigcodebench"
SAMPLE = DATA / "bigcodebench-sample.jsonl"
TASKS = {t["task_id"]: t for t in map(json.loads, SAMPLE.read_text().splitlines())}


def _plain_pass(outcome) -> bool:
    """Plain pytest's verdict: a pass, or a pass the witness disputes (its own issue)."""
    return outcome.passed or any(is_disputed(r) for r in outcome.reasons)


@pytest.fixture(scope="module")
def bcb(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("bcb") / "set"
    return import_set("bigcodebench", SAMPLE, out, frozen_at="2026-01-01T00:00:00Z").fixtures


def test_the_set_records_the_harness_its_libraries_and_its_limit(bcb) -> None:
    doc = yaml.safe_load(bcb.path.read_text())
    first = doc["items"][0]
    assert doc["source"]["format"] == "bigcodebench"
    assert first["candidate"] == "starting+completion"
    assert first["requires"] == ["random", "itertools"]  # the text of a list, read
    assert first["harness_timeout_s"] == 241.0
    item = bcb.cases[0]
    stub = item.starting_files["solution.py"].read_text()
    assert stub == TASKS["BigCodeBench/0"]["code_prompt"] + "\n    pass\n"
    assert item.prompt == TASKS["BigCodeBench/0"]["instruct_prompt"]
    test = item.test_file.read_text()
    assert "from solution import task_func\n" in test and "class TestCases" in test


def test_references_pass_and_stubs_fail_under_plain_pytest(bcb) -> None:
    for item in bcb.cases:
        reference = {"solution.py": item.reference_files["solution.py"].read_text()}
        assert _plain_pass(run_item(item, reference)), item.id
        assert not run_item(item, {"solution.py": ""}).passed, item.id


def test_the_stub_comes_first_as_the_calibrated_harness_puts_it(bcb) -> None:
    """An answer that leaves out the stub's imports and constants passes, as under
    BigCodeBench's harness (`code_prompt + pass + solution`); a wrong one fails."""
    item = next(c for c in bcb.cases if c.id == "BigCodeBench/1")
    bare = "def task_func(text):\n"
    bare += "    return collections.Counter(c for c in text.lower() if c in LETTERS)\n"
    assert run_item(item, {"solution.py": bare}).passed
    wrong = "def task_func(text):\n    return collections.Counter(text)\n"
    graded = run_item(item, {"solution.py": wrong})
    assert not graded.passed and "TestCases::test_only_letters" in graded.failed_tests


def _task(**fields) -> dict:
    return {**TASKS["BigCodeBench/3"], "task_id": "Mine/1", **fields}


def test_the_names_the_harness_runner_provides_are_there(tmp_path: Path) -> None:
    """BigCodeBench's runner puts `os`, `sys` and `os.environ` in the namespace before
    the solution: tests may use them unimported; a candidate's own `os` comes first."""
    test = textwrap.dedent("""\
        import unittest
        class TestCases(unittest.TestCase):
            def test_runner_names(self):
                self.assertEqual(task_func(), os.getcwd())
                self.assertIs(environ, os.environ)
                self.assertTrue(sys.version)
        """)
    task = _task(code_prompt="def task_func():\n", test=test, libs="[]",
                 complete_prompt="def task_func():\n", canonical_solution="    import os\n"
                 "    return os.getcwd()\n")  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(task) + "\n")
    (item,) = import_set("bigcodebench", path, tmp_path / "s").fixtures.cases
    text = item.test_file.read_text()
    assert "    import os\n" in text and "    from os import environ\n" in text
    answer = "def task_func():\n    import pathlib\n    return str(pathlib.Path.cwd())\n"
    assert _plain_pass(run_item(item, {"solution.py": answer}))


def test_check_names_every_item_whose_libraries_the_grader_lacks(tmp_path: Path, capsys) -> None:
    tasks = [
        _task(task_id="Mine/ok", libs="['re']"),
        _task(task_id="Mine/absent", libs="['re', 'evalpin_no_such_lib_x', 'numpy.linalg']"),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    out = tmp_path / "s"
    fs = import_set("bigcodebench", path, out).fixtures
    assert fs.cases[1].requires == ("re", "evalpin_no_such_lib_x", "numpy")
    r = cli(capsys, "check", str(fs.path), "--json")
    assert r.code == 1, r.out
    shown = {i["id"]: i["problems"] for i in json.loads(r.out)["items"]}
    assert shown["Mine/ok"] == []
    (problem,) = shown["Mine/absent"]
    assert problem.startswith("needs evalpin_no_such_lib_x, which")  # only what is missing


@pytest.mark.parametrize("libs", ["['ok', 'not a name']", "{'a': 1}", "__import__('os')", "[1]"])
def test_libs_are_read_as_a_list_of_module_names_never_run(tmp_path: Path, capsys, libs) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(_task(libs=libs)) + "\n")
    r = cli(capsys, "import", "bigcodebench", str(path), "--out", str(tmp_path / "s"))
    assert r.code == 3 and "'libs'" in r.err and len(r.err.strip().splitlines()) == 1


def _dfb_record(n: int) -> dict:
    """A DataFrameBench-shaped record (the package's data is evaluation-only and stays
    out of this repository): placeholders in the prompt and the stub, a ground truth per
    library, tests that use the stub's names."""
    stub = "{library_import}\nimport statistics\n\n\ndef task_func(values):\n"
    stub += '    """Return the median of the values."""\n'
    return {
        "task_id": f"DFB/T{n:04d}",
        "category": "aggregation",
        "entry_point": "task_func",
        "libs": ["statistics"],
        "prompt": "Write self-contained Python code...\n\nMedian.\n\n{library_instruction}\n\n"
        "```python\n" + stub + "```",
        "test_code": "import unittest\n\n\nclass TestCases(unittest.TestCase):\n"
        "    def test_median(self):\n        self.assertEqual(task_func([3, 1, 2]), 2)\n",
        "prompt_parts": {"statement": "Median.", "instruction": "{library_instruction}"}
        | {"stub": stub},
        "ground_truth": {
            "pandas": "import pandas as pd\n\n\ndef task_func(values):\n"
            "    return pd.Series(values).median()\n",
            "polars": "import polars as pl\n\n\ndef task_func(values):\n"
            "    return pl.Series(values).median()\n",
        },
        "seed_id": "BigCodeBench/0",
    }


@pytest.mark.parametrize(
    "library, line, sentence",
    [
        ("free", "import ___  # you MUST import", "Choose, import and use a data processing"),
        ("polars", "import polars as pl", "Use polars as the data processing library"),
        ("duckdb", "import duckdb", "Use duckdb as the data processing library"),
    ],
)
def test_dataframebench_prompts_are_filled_for_the_library_chosen(
    tmp_path: Path, capsys, library: str, line: str, sentence: str
) -> None:
    path = tmp_path / "dfb.jsonl"
    path.write_text(json.dumps(_dfb_record(1)) + "\n")
    out = tmp_path / "s"
    r = cli(capsys, "import", "dataframebench", str(path), "--out", str(out), "--library", library)
    if library == "duckdb":  # no ground truth for it: refused, naming the library
        assert r.code == 3 and "duckdb" in r.err
        return
    assert r.code == 0, r.err
    doc = yaml.safe_load(next(out.glob("*.yaml")).read_text())
    (item,) = doc["items"]
    prompt = (out / item["prompt_file"]).read_text()
    assert line in prompt and sentence in prompt and "{library" not in prompt
    assert item["candidate"] == "completion" and item["harness_timeout_s"] == 30.0
    chosen = "pandas" if library == "free" else library
    assert item["requires"] == ["statistics", "matplotlib", chosen]
    test = (out / item["test_file"]).read_text()
    assert test.index('matplotlib.use("Agg")') < test.index("from solution import task_func")


def test_library_is_dataframebenchs_option_only(capsys, tmp_path: Path) -> None:
    r = cli(capsys, "import", "bigcodebench", str(SAMPLE), "--out", str(tmp_path / "s"),
            "--library", "pandas")  # fmt: skip
    assert r.code != 0 and "dataframebench" in r.err


def test_the_harnesses_own_results_formats_are_read(tmp_path: Path) -> None:
    bcb = tmp_path / "samples_eval_results.json"
    bcb.write_text(json.dumps({
        "date": "2026-12-04 20:00",
        "eval": {
            "BigCodeBench/0": [
                {"task_id": "BigCodeBench/0", "solution": "x", "status": "pass", "details": {}},
                {"task_id": "BigCodeBench/0", "solution": "y", "status": "timeout",
                 "details": {"ALL": "Timeout"}},
            ],
            "BigCodeBench/1": [{"task_id": "BigCodeBench/1", "solution": "z", "status": "fail",
                                "details": {"test_counts": "Traceback ..."}}],
        },
    }, indent=2))  # fmt: skip
    read = [v for _, v in read_results(bcb)]
    assert [(v["task_id"], v["passed"]) for v in read] == [
        ("BigCodeBench/0", True), ("BigCodeBench/0", False), ("BigCodeBench/1", False)
    ]  # fmt: skip
    assert read[2]["result"] == "fail: test_counts"
    dfb = tmp_path / "dataframebench_eval.json"
    dfb.write_text(json.dumps({"split": "test", "summary": {}, "results": [
        {"task_id": "DFB/B0001", "n_samples": 3, "n_passed": 1,
         "outcomes": ["passed", "missing_module", "timeout"]},
    ]}))  # fmt: skip
    assert [v["passed"] for _, v in read_results(dfb)] == [True, False, False]
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"eval": {"T": [{"solution": "x"}]}}))
    with pytest.raises(Exception, match="no 'status'"):
        list(read_results(odd))


def test_a_run_crosschecks_with_bigcodebenchs_own_harness(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's samples, exported as BigCodeBench reads them (`solution`), graded by
    its own `untrusted_check` with its calibration, give the same verdicts."""
    try:
        import matplotlib  # noqa: F401 - bigcodebench's own guard imports it
        from bigcodebench import eval as harness
    except ImportError as exc:  # a development tool: scripts/ and docs/speed.md say how
        lacking("BigCodeBench's own harness", f"not installed here ({exc})")
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "import", "bigcodebench", str(SAMPLE), "--out", "set").code == 0
    right = {t: d["complete_prompt"] + "\n" + d["canonical_solution"] for t, d in TASKS.items()}
    wrong = {t: d["code_prompt"] + "    return None\n" for t, d in TASKS.items()}
    lines = [{"case_id": t, "seed": 1, "text": f"```python\n{c}```"} for t, c in right.items()]
    lines += [{"case_id": t, "seed": 2, "text": c} for t, c in wrong.items()]
    Path("rec.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    ran = cli(capsys, "run", "--fixtures", "set/bigcodebench-sample.yaml", "--slot",
              "rec=replay:rec.jsonl", "--seeds", "1,2", "--jobs", "2",
              "--out", "run.jsonl")  # fmt: skip
    assert ran.code in (0, 1), ran.err
    assert cli(capsys, "export", "run.jsonl", "--out", "samples.jsonl").code == 0
    samples = [json.loads(x) for x in Path("samples.jsonl").read_text().splitlines()]
    assert samples and all("solution" in s for s in samples)
    graded: dict = {}
    for s in samples:  # as bigcodebench.evaluate calibrates and checks each sample
        task = TASKS[s["task_id"]]
        code = task["code_prompt"] + "\n    pass\n" + s["solution"]
        status, details = harness.untrusted_check(
            code, task["test"], task["entry_point"], 30 * 1024, 30 * 1024, 10, 10, 20
        )
        graded.setdefault(s["task_id"], []).append(
            {"task_id": s["task_id"], "solution": s["solution"], "status": status,
             "details": dict(details)}
        )  # fmt: skip
    Path("samples_eval_results.json").write_text(json.dumps({"date": "", "eval": graded}))
    checked = cli(capsys, "crosscheck", "run.jsonl", "samples_eval_results.json", "--json")
    shown = json.loads(checked.out)
    assert shown["both_pass"] >= 3 and shown["both_fail"] == 4, shown
    assert shown["disagreements"] == [], shown["disagreements"]
