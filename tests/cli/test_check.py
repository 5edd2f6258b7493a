"""`evalpin check` (issue 25): a set validated before it is sealed. Real sandboxed grades
for coding items (a reference that fails, starting code that passes or fails for the
wrong reason, a witness that cannot carry the tests), the golden lint, bad input, and
the bundled coding set, which passes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.clirun import cli

REPO = Path(__file__).resolve().parents[2]
TEST = textwrap.dedent(
    """\
    from chunks import chunked


    def test_chunks():
        assert chunked([1, 2, 3], 2) == [[1, 2], [3]]
    """
)
RIGHT = "def chunked(xs, n):\n    return [xs[i : i + n] for i in range(0, len(xs), n)]\n"
WRONG = "def chunked(xs, n):\n    return [xs]\n"
# A test that also runs the candidate's file as a script: plain pytest has it beside the
# tests; the witness's pytest never runs a candidate file (it says so): only in-process.
IN_PROCESS_ONLY = textwrap.dedent(
    """\
    import sys

    import chunks


    def test_chunks_of_anything_even_frames():
        assert chunks.chunked([1, 2, 3], 2) == [[1, 2], [3]]
        assert len(chunks.chunked([sys._getframe()], 1)) == 1
    """
)


def _set(folder: Path, *, test: str = TEST, reference: str = RIGHT, starting: str = WRONG) -> Path:
    (folder / "tests").mkdir(parents=True)
    (folder / "ref").mkdir()
    (folder / "start").mkdir()
    (folder / "prompt.md").write_text("Fix chunked.\n")
    (folder / "tests" / "test_chunks.py").write_text(test)
    (folder / "ref" / "chunks.py").write_text(reference)
    (folder / "start" / "chunks.py").write_text(starting)
    (folder / "coding.yaml").write_text(
        textwrap.dedent(
            """\
            schema: coding-eval/v1
            dataset_id: chunks
            dataset_version: "1"
            items:
              - id: chunked
                language: python
                prompt_file: prompt.md
                test_file: tests/test_chunks.py
                timeout_s: 20
                expected_files: [chunks.py]
                reference_files: {chunks.py: ref/chunks.py}
                starting_files: {chunks.py: start/chunks.py}
            """
        )
    )
    return folder / "coding.yaml"


def _problems(capsys, path: Path) -> tuple[int, list[str]]:
    r = cli(capsys, "check", str(path), "--json")
    report = json.loads(r.out)
    return r.code, [p for item in report["items"] for p in item["problems"]]


def test_a_good_item_passes(capsys, tmp_path: Path) -> None:
    assert _problems(capsys, _set(tmp_path)) == (0, [])


@pytest.mark.parametrize(
    ("kind", "found"),
    [
        ({"reference": WRONG}, "the reference does not pass: fail (tests_failed"),
        ({"starting": RIGHT}, "the starting code passes: no test fails"),
        ({"starting": "def chunked(:\n"}, "the starting code fails by syntax_error:chunks.py"),
        ({"test": IN_PROCESS_ONLY}, "the witness cannot carry the tests: plain pytest passes"),
    ],
    ids=["reference-fails", "starting-passes", "starting-does-not-compile", "isolations"],
)
def test_each_broken_item_is_named(capsys, tmp_path: Path, kind: dict, found: str) -> None:
    code, problems = _problems(capsys, _set(tmp_path, **kind))
    assert code == 1 and any(found in p for p in problems), problems
    human = cli(capsys, "check", str(tmp_path / "coding.yaml"))
    assert human.code == 1 and "FAIL  chunked" in human.out and found in human.out


def test_an_item_without_reference_is_a_note_unless_strict(capsys, tmp_path: Path) -> None:
    path = _set(tmp_path)
    path.write_text(
        path.read_text().replace("    reference_files: {chunks.py: ref/chunks.py}\n", "")
    )
    assert cli(capsys, "check", str(path)).code == 0
    strict = cli(capsys, "check", str(path), "--strict")
    assert strict.code == 1 and "names no reference_files" in strict.out


@pytest.mark.parametrize(
    ("case", "found"),
    [
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"must_includ": ["x"]}, "unknown key 'must_includ' (did you mean 'must_include'?)"),
        ({"require_tools": ["a"], "forbid_tools": ["a"]}, "a both required and forbidden"),
        ({"must_include": [""]}, "an empty must_include entry"),
        ({"must_include": ["refund issued"], "must_not": ["refund"]}, "can never pass"),
        ({"require_tools": ["lookup"], "tools": [{"name": "cancel"}]}, "not among the tools"),
        ({"require_tools": ["x"], "tools": [{"name": "z"}, {"name": "y"}]}, "not among"),
    ],
)
def test_golden_lint(capsys, tmp_path: Path, case: dict, found: str) -> None:
    good = {"id": "ok", "user": "hi", "must_include": ["hello"]}
    bad = {"id": "bad", "user": "hi", **case}
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    r = cli(capsys, "check", str(path), "--json")
    report = json.loads(r.out)
    assert r.code == (3 if "unknown key" in found else 1)  # a key the format lacks: invalid
    by_id = {i["id"]: i["problems"] for i in report["items"]}
    assert by_id["ok"] == [] and any(found in p for p in by_id["bad"]), by_id


@pytest.mark.parametrize(
    ("tools", "found", "code"),
    [
        ([{"type": "function", "functon": {"name": "a"}}], "(did you mean 'function'?)", 3),
        ([{"name": "a", "parameter": {}}], "unknown key 'parameter' (did you mean 'param", 3),
        (
            [{"name": "a", "parameters": {"type": "object", "requird": ["q"]}}],
            "tools[0].parameters: unknown key 'requird' (did you mean 'required'?)",
            3,
        ),
        (
            [{"name": "a", "parameters": {"properties": {"q": {"type": "strng"}}}}],
            "'strng' is not a JSON type (did you mean 'string'?)",
            1,
        ),
        ([{"function": "x"}], "tools[0]: 'type' must be 'function', got None", 1),
        ([{"type": "function", "function": "x"}], "tools[0].function: must be an object", 1),
        ([{"name": "a b"}], "a function's name is 1 to 64", 1),
        ([{"name": "a"}, {"name": "a"}], "offered twice", 1),
    ],
)
def test_a_tool_schema_is_closed_all_the_way_down(
    capsys, tmp_path: Path, tools: list, found: str, code: int
) -> None:
    """A typo below a case's top level is named with the nearest valid key wherever the
    set is read, never a case that quietly offers another tool (issue 51)."""
    lines = [{"id": "ok", "user": "hi", "must_include": ["hello"]}]
    lines.append({"id": "bad", "user": "hi", "must_include": ["x"], "tools": tools})
    path = tmp_path / "golden.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = cli(capsys, "check", str(path))
    assert r.code == code and found in r.out, r.out
    for command in ("hash", "seal"):
        r = cli(capsys, command, str(path))
        assert r.code == 3 and found in r.err and r.err.count("\n") == 1, r.err


def test_a_canned_result_for_a_tool_not_offered_names_the_nearest(capsys, tmp_path) -> None:
    tools = [{"name": "lookup_order"}, {"name": "cancel_order"}]
    case = {"id": "a", "user": "hi", "must_include": ["x"], "tools": tools}
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps({**case, "tool_results": {"lookup_ordr": {"ok": 1}}}) + "\n")
    r = cli(capsys, "hash", str(path))
    assert r.code == 3 and "did you mean 'lookup_order'?" in r.err, r.err
    defaults = {"defaults": {"tools": tools, "tool_results": {"cancel_order": {}}}}
    own = {"id": "b", "user": "hi", "must_include": ["x"], "tools": [{"name": "lookup_order"}]}
    path.write_text(json.dumps(defaults) + "\n" + json.dumps(own) + "\n")
    assert cli(capsys, "hash", str(path)).code == 0  # the defaults' result: for their tools


def test_the_defaults_lines_tools_are_the_offered_ones(capsys, tmp_path: Path) -> None:
    path = tmp_path / "golden.jsonl"
    lines = [{"defaults": {"tools": [{"name": "cancel"}]}}]
    lines.append({"id": "a", "user": "hi", "require_tools": ["cancel"]})
    lines.append({"id": "b", "user": "hi", "require_tools": ["lookup"]})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = cli(capsys, "check", str(path), "--json")
    problems = {i["id"]: i["problems"] for i in json.loads(r.out)["items"]}
    assert r.code == 1 and problems["a"] == [] and "not among the tools" in problems["b"][0]


def test_a_broken_item_is_a_problem_listed_with_its_line(capsys, tmp_path: Path) -> None:
    """A set that reads but holds a broken item: listed (exit 1), never run; `run`,
    `hash` and `seal` refuse the same set at once (exit 3)."""
    path = _set(tmp_path)
    (tmp_path / "ref" / "chunks.py").unlink()
    r = cli(capsys, "check", str(path))
    assert r.code == 1 and "does not exist" in r.out and "line " in r.out
    assert "not run in the sandbox" in r.out
    r = cli(capsys, "hash", str(path))
    assert r.code == 3 and "does not exist" in r.err and len(r.err.strip().splitlines()) == 1
    (tmp_path / "outside.py").write_text(RIGHT)
    (tmp_path / "ref" / "chunks.py").symlink_to(tmp_path.parent / "nowhere.py")
    r = cli(capsys, "check", str(path))
    assert r.code == 1 and "escapes the fixture folder" in r.out


def test_an_unreadable_set_is_exit_3_one_line(capsys, tmp_path: Path) -> None:
    path = _set(tmp_path)
    path.write_bytes(path.read_bytes() + b"  note: \xff\n")
    r = cli(capsys, "check", str(path))
    assert r.code == 3 and "not UTF-8" in r.err and len(r.err.strip().splitlines()) == 1


def test_the_bundled_coding_set_passes(capsys) -> None:
    r = cli(capsys, "check", str(REPO / "fixtures" / "repairs" / "coding.yaml"), "--json")
    assert r.code == 0, r.out
    report = json.loads(r.out)
    assert len(report["items"]) == 8 and report["problems"] == 0
    assert all(not i["notes"] for i in report["items"])  # every item names both files


def test_a_repeated_id_is_named_and_its_content_still_checked(capsys, tmp_path: Path) -> None:
    """The line with the repeated id is left out of the set, but what else is wrong
    with it is said too (issue 51): an empty must_include must not go unreported."""
    path = tmp_path / "golden.jsonl"
    lines = [{"id": "a", "user": "hi", "must_include": ["x"]}]
    lines.append({"id": "a", "user": "hi", "must_include": [""], "must_not": ["y"]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    r = cli(capsys, "check", str(path))
    assert r.code == 1 and "duplicate case id 'a'" in r.out
    assert "line 2: an empty must_include entry" in r.out, r.out


def test_a_test_file_that_does_not_compile_is_named(capsys, tmp_path: Path) -> None:
    path = _set(tmp_path)
    test = next(tmp_path.rglob("test_*.py"))
    test.write_text(test.read_text() + "\ndef broken(:\n")
    r = cli(capsys, "check", str(path))
    assert r.code == 1 and f"the test file {test.name} does not compile" in r.out, r.out
    assert "at line" in r.out and "reference does not pass" not in r.out
