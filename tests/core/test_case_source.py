"""Reading a case back from the fixture set its run names: found from where the run was
made, shown only while its fixture hash still holds, read once per file version, held to
the set's folder, and one line when it cannot be shown."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.records import FixturesInfo
from evalpin.core.review.case_source import (
    CaseSource,
    CaseSources,
    Unavailable,
    bare_test_name,
    def_lines,
)

CASE = {
    "id": "late",
    "user": "Order B5530 is late.",
    "require_tools": ["lookup_order"],
    "forbid_tools": ["issue_refund"],
    "must_include": ["B5530", "sorry"],
    "must_not": ["calm down"],
}


def golden(folder: Path, *cases: dict) -> Path:
    path = folder / "fixtures" / "golden.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in (cases or (CASE,))))
    return path


def hash_of(path: Path, case_id: str) -> str:
    return next(c.fixture_hash for c in load_fixtures(path).cases if c.id == case_id)


def info(path: str = "fixtures/golden.jsonl", kind: str = "golden") -> FixturesInfo:
    return FixturesInfo(path=path, kind=kind)


def test_a_golden_case_is_read_back_when_its_hash_holds(tmp_path: Path) -> None:
    path = golden(tmp_path)
    sources = CaseSources()
    found = sources.lookup(info(), tmp_path / "runs" / "n1.jsonl", "late", hash_of(path, "late"))
    assert isinstance(found, CaseSource)
    assert found.prompt == "Order B5530 is late."
    assert found.must_include == ("B5530", "sorry") and found.must_not == ("calm down",)
    assert found.require_tools == ("lookup_order",) and found.forbid_tools == ("issue_refund",)


def test_found_from_the_run_files_folder_and_above_when_not_from_cwd(tmp_path: Path) -> None:
    project = tmp_path / "project"
    path = golden(project)
    run = project / "runs" / "nightly" / "n1.jsonl"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sources = CaseSources()
    found = sources.lookup(info(), run, "late", hash_of(path, "late"), cwd=elsewhere)
    assert isinstance(found, CaseSource)
    # From cwd first: a set there wins over one beside the run.
    golden(elsewhere, {**CASE, "user": "the copy in cwd"})
    found = sources.lookup(info(), run, "late", hash_of(path, "late"), cwd=elsewhere)
    assert isinstance(found, Unavailable) and "changed since the run" in found.message


def test_a_moved_or_gone_set_is_one_line(tmp_path: Path) -> None:
    sources = CaseSources()
    found = sources.lookup(info(), tmp_path / "n1.jsonl", "late", "0" * 16, cwd=tmp_path)
    assert found == Unavailable(
        "case not shown: the fixture file fixtures/golden.jsonl has moved or is gone"
    )
    assert sources.loads == 0


def test_a_changed_case_is_not_shown_and_says_so(tmp_path: Path) -> None:
    path = golden(tmp_path)
    then = hash_of(path, "late")
    sources = CaseSources()
    assert isinstance(sources.lookup(info(), None, "late", then, cwd=tmp_path), CaseSource)
    golden(tmp_path, {**CASE, "must_include": ["B5530", "apologise"]})
    os.utime(path, ns=(1, 1))  # a new version even on a coarse clock
    found = sources.lookup(info(), None, "late", then, cwd=tmp_path)
    assert isinstance(found, Unavailable)
    assert found.message.startswith("case not shown: it changed since the run")
    assert then in found.message and hash_of(path, "late") in found.message
    assert "apologise" not in found.message  # nothing of the new case is shown as it


def test_a_case_gone_from_its_set_and_a_record_without_hash(tmp_path: Path) -> None:
    golden(tmp_path, {**CASE, "id": "other"})
    sources = CaseSources()
    gone = sources.lookup(info(), None, "late", "0" * 16, cwd=tmp_path)
    assert isinstance(gone, Unavailable) and "no longer has this case" in gone.message
    unhashed = sources.lookup(info(), None, "other", None, cwd=tmp_path)
    assert isinstance(unhashed, Unavailable) and "no fixture hash" in unhashed.message


def test_an_unreadable_set_is_one_line(tmp_path: Path) -> None:
    path = golden(tmp_path)
    path.write_text('{"id": "late", "user": 3}\n')
    found = CaseSources().lookup(info(), None, "late", "0" * 16, cwd=tmp_path)
    assert isinstance(found, Unavailable)
    assert found.message.startswith("case not shown: the fixture set fixtures/golden.jsonl")
    assert "cannot be read now" in found.message and "\n" not in found.message


def test_no_set_of_its_own_shows_nothing(tmp_path: Path) -> None:
    sources = CaseSources()
    assert sources.lookup(None, None, "late", None, cwd=tmp_path) is None
    assert sources.lookup(info(kind="inspect-ai"), None, "late", None, cwd=tmp_path) is None


def test_a_set_is_read_once_per_version_however_many_cases_are_asked(tmp_path: Path) -> None:
    path = golden(tmp_path, CASE, {**CASE, "id": "b"}, {**CASE, "id": "c"})
    hashes = {c.id: c.fixture_hash for c in load_fixtures(path).cases}
    sources = CaseSources()
    for _ in range(50):
        for case_id, fixture_hash in hashes.items():
            assert isinstance(
                sources.lookup(info(), None, case_id, fixture_hash, cwd=tmp_path), CaseSource
            )
    assert sources.loads == 1
    path.write_text(path.read_text() + json.dumps({**CASE, "id": "d"}) + "\n")
    sources.lookup(info(), None, "late", hashes["late"], cwd=tmp_path)
    assert sources.loads == 2  # another size: another version


def test_threads_asking_at_once_read_the_set_once(tmp_path: Path) -> None:
    golden(tmp_path)
    sources = CaseSources()
    located = sources.locate(info(), None, tmp_path)
    assert located is not None
    threads = [threading.Thread(target=sources.load, args=(located,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sources.loads == 1
    assert sources.case(located, "late", "x") is not None  # no I/O: it was read


def coding(folder: Path, prompt_file: str = "prompts/p.md", test: str | None = None) -> Path:
    (folder / "prompts").mkdir(parents=True, exist_ok=True)
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "prompts" / "p.md").write_text("Fix `f` in `mod.py`.\n")
    (folder / "tests" / "test_mod.py").write_text(
        test
        or "from mod import f\n\n\ndef test_one():\n    assert f() == 1\n\n\n"
        "class TestMore:\n    def test_two(self):\n        assert f() != 2\n"
    )
    path = folder / "coding.yaml"
    path.write_text(
        "schema: coding-eval/v1\ndataset_id: demo\ndataset_version: '1'\nitems:\n"
        f"  - id: fix_f\n    language: python\n    prompt_file: {prompt_file}\n"
        "    test_file: tests/test_mod.py\n    timeout_s: 5\n    expected_files: [mod.py]\n"
    )
    return path


def test_a_coding_item_gives_its_prompt_test_file_and_test_lines(tmp_path: Path) -> None:
    path = coding(tmp_path)
    found = CaseSources().lookup(
        info("coding.yaml", "coding"), None, "fix_f", hash_of(path, "fix_f"), cwd=tmp_path
    )
    assert isinstance(found, CaseSource)
    assert found.prompt == "Fix `f` in `mod.py`.\n"
    assert found.prompt_file == "prompts/p.md" and found.test_file == "tests/test_mod.py"
    assert found.tests == {"test_one": 4, "TestMore::test_two": 9}


def test_an_edited_test_file_changes_the_case_though_the_yaml_stays(tmp_path: Path) -> None:
    path = coding(tmp_path)
    then = hash_of(path, "fix_f")
    sources = CaseSources()
    where = info("coding.yaml", "coding")
    assert isinstance(sources.lookup(where, None, "fix_f", then, cwd=tmp_path), CaseSource)
    test = tmp_path / "tests" / "test_mod.py"
    test.write_text(test.read_text().replace("== 1", "== 11"))
    found = sources.lookup(where, None, "fix_f", then, cwd=tmp_path)
    assert isinstance(found, Unavailable) and "changed since the run" in found.message
    assert sources.loads == 2


def test_a_prompt_path_escaping_the_set_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("TOP SECRET TOKEN")
    folder = tmp_path / "set"
    coding(folder, prompt_file="../secret.md")
    found = CaseSources().lookup(
        info("set/coding.yaml", "coding"), None, "fix_f", "0" * 16, cwd=tmp_path
    )
    assert isinstance(found, Unavailable)
    assert "escapes the fixture folder" in found.message
    assert "TOP SECRET" not in found.message


def test_hostile_text_is_kept_as_text_for_the_renderer_to_make_inert(tmp_path: Path) -> None:
    hostile = {**CASE, "user": "\x1b]52;c;cHduZWQ=\x07[bold red]hi[/]", "must_include": ["\x1b[2J"]}
    path = golden(tmp_path, hostile)
    found = CaseSources().lookup(info(), None, "late", hash_of(path, "late"), cwd=tmp_path)
    assert isinstance(found, CaseSource)
    assert found.prompt == hostile["user"]  # exactly as written: the TUI escapes it
    # A hostile path in a run header is only ever named, never opened as something else.
    odd = CaseSources().lookup(info("\x1b]0;title\x07.jsonl"), None, "late", "x", cwd=tmp_path)
    assert isinstance(odd, Unavailable) and "moved or is gone" in odd.message
    nul = CaseSources().lookup(info("bad\x00name"), None, "late", "x", cwd=tmp_path)
    assert isinstance(nul, Unavailable)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("test_x", "test_x"),
        ("TestA::test_y", "TestA::test_y"),
        ("tests/test_a.py::TestA::test_y[1-2]", "TestA::test_y"),
        ("test_bad_size[0]", "test_bad_size"),
    ],
)
def test_bare_test_names(name: str, key: str) -> None:
    assert bare_test_name(name) == key


def test_def_lines_by_pytest_name_and_when_the_file_does_not_parse() -> None:
    source = (
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', [1])\n"
        "def test_a(n):\n    pass\n\n"
        "class TestB:\n"
        "    async def test_c(self):\n        pass\n"
        "    class TestD:\n        def test_e(self):\n            pass\n"
    )
    lines = def_lines(source)
    assert lines["test_a"] == 4
    assert lines["TestB::test_c"] == 8
    assert lines["TestB::TestD::test_e"] == 11
    broken = def_lines("def test_ok():\n    pass\ndef test_broken(:\n")
    assert broken == {"test_ok": 1, "test_broken": 3}
