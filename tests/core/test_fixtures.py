from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import KIND_CODING, KIND_GOLDEN, load_fixtures
from tests.conftest import GOLDEN_CASES


def common_recipe(case: dict) -> str:
    return hashlib.sha256(
        json.dumps(case, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:16]


def test_golden_hashes_follow_the_common_recipe(golden_file: Path) -> None:
    fs = load_fixtures(golden_file)
    assert fs.kind == KIND_GOLDEN
    assert fs.dataset_hash == hashlib.sha256(golden_file.read_bytes()).hexdigest()
    assert [c.id for c in fs.cases] == ["order-1", "order-2"]
    assert [c.fixture_hash for c in fs.cases] == [common_recipe(c) for c in GOLDEN_CASES]


def test_golden_hash_ignores_key_order_but_not_content(tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    case = dict(GOLDEN_CASES[0])
    a.write_text(json.dumps(case) + "\n")
    b.write_text(json.dumps(dict(reversed(list(case.items())))) + "\n")
    assert load_fixtures(a).cases[0].fixture_hash == load_fixtures(b).cases[0].fixture_hash
    case["must_include"] = ["1002"]
    b.write_text(json.dumps(case) + "\n")
    assert load_fixtures(a).cases[0].fixture_hash != load_fixtures(b).cases[0].fixture_hash


def write_coding(folder: Path, items: str | None = None, top: str = "") -> Path:
    (folder / "prompts").mkdir(parents=True, exist_ok=True)
    (folder / "tests").mkdir(exist_ok=True)
    (folder / "prompts" / "add.md").write_text("Fix add() in solution.py\n")
    (folder / "tests" / "test_add.py").write_text(
        "from solution import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    items = items or (
        "  - id: add\n"
        "    language: python\n"
        "    prompt_file: prompts/add.md\n"
        "    test_file: tests/test_add.py\n"
        "    timeout_s: 10\n"
        "    forbidden_imports: [subprocess]\n"
        "    expected_files: [solution.py]\n"
    )
    path = folder / "set.yaml"
    path.write_text(
        "schema: coding-eval/v1\n"
        "dataset_id: repairs\n"
        "dataset_version: '3'\n"
        "frozen_at: 2026-11-01\n"
        "holdout_policy: sealed\n" + top + "items:\n" + items
    )
    return path


def test_coding_set_loads_and_resolves_paths(tmp_path: Path) -> None:
    fs = load_fixtures(write_coding(tmp_path))
    assert fs.kind == KIND_CODING
    assert (fs.dataset_id, fs.dataset_version, fs.frozen_at) == ("repairs", "3", "2026-11-01")
    assert fs.network_policy == "forbidden"
    item = fs.cases[0]
    assert item.test_file == (tmp_path / "tests" / "test_add.py").resolve()
    assert item.expected_files == ["solution.py"]
    assert item.prompt.startswith("Fix add()")


def test_coding_hash_moves_when_a_referenced_file_changes(tmp_path: Path) -> None:
    path = write_coding(tmp_path)
    before = load_fixtures(path)
    (tmp_path / "tests" / "test_add.py").write_text(
        "from solution import add\n\ndef test_add():\n    assert add(2, 3) == 6\n"
    )
    after = load_fixtures(path)
    assert before.dataset_hash == after.dataset_hash  # the YAML did not change
    assert before.cases[0].fixture_hash != after.cases[0].fixture_hash


def test_network_allowed_is_read(tmp_path: Path) -> None:
    fs = load_fixtures(write_coding(tmp_path, top="network: allowed\n"))
    assert fs.network_policy == "allowed"


def item_with(**fields: str) -> str:
    base = {
        "id": "add",
        "language": "python",
        "prompt_file": "prompts/add.md",
        "test_file": "tests/test_add.py",
        "timeout_s": "10",
        "expected_files": "[solution.py]",
    }
    base.update(fields)
    lines = [f"  - id: {base.pop('id')}"] + [f"    {k}: {v}" for k, v in base.items()]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"test_file": "../../etc/passwd"}, "escapes the fixture folder"),
        ({"prompt_file": "/etc/passwd"}, "is absolute"),
        ({"test_file": "tests/missing.py"}, "does not exist"),
        ({"timeout_s": "-1"}, "timeout_s"),
        ({"expected_files": "[../escape.py]"}, "must stay in the work folder"),
        ({"expected_files": "[/etc/x]"}, "must stay in the work folder"),
        ({"expected_files": "[conftest.py]"}, "is reserved"),
        ({"expected_files": "[test_add.py]"}, "is reserved"),
        ({"expected_files": "[pkg/pytest.ini]"}, "is reserved"),
    ],
)
def test_coding_item_problems_are_input_errors(tmp_path: Path, fields, message: str) -> None:
    path = write_coding(tmp_path, items=item_with(**fields))
    with pytest.raises(InputError, match=message) as err:
        load_fixtures(path)
    assert err.value.path == str(path)


def test_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    folder = tmp_path / "set"
    path = write_coding(folder)
    os.symlink(outside, folder / "tests" / "link.py")
    path.write_text(path.read_text().replace("tests/test_add.py", "tests/link.py"))
    with pytest.raises(InputError, match="escapes the fixture folder"):
        load_fixtures(path)


def test_yaml_alias_bomb_is_refused_without_expanding(tmp_path: Path) -> None:
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        bomb.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(bomb) + "\n")
    with pytest.raises(InputError, match="aliases are not allowed") as err:
        load_fixtures(path)
    assert err.value.line == 2


def test_yaml_python_object_tag_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text("schema: coding-eval/v1\nx: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(InputError, match="invalid YAML") as err:
        load_fixtures(path)
    assert err.value.line == 2


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        (b"", "empty file", None),
        (b'{"id": "a", "user": "x"}\n{not json\n', "not JSON", 2),
        (b'{"id": "a", "user": "x"}\n{"id": "b", "user": "\xff"}\n', "not UTF-8", 2),
        (b'{"id": "a", "user": "x"}\n[1, 2]\n', "not a JSON object", 2),
        (b'{"id": "a", "user": 3}\n', "'user' must be a string", 1),
        (b'{"id": "a", "user": "x", "require_tools": "lookup"}\n', "list of strings", 1),
        (b'{"user": "x"}\n', "non-empty string 'id'", 1),
        (b'{"id": "a", "user": "x"}\n{"id": "a", "user": "y"}\n', "duplicate case id", 2),
    ],
)
def test_golden_problems_name_the_line(tmp_path: Path, content: bytes, message, line) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as err:
        load_fixtures(path)
    assert err.value.line == line


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_fixtures(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="is a directory"):
        load_fixtures(tmp_path)


@pytest.mark.parametrize(
    ("top", "message"),
    [
        ("schema: other/v1\n", "schema must be"),
        ("network: sometimes\n", "'network' must be"),
    ],
)
def test_coding_header_problems(tmp_path: Path, top: str, message: str) -> None:
    path = write_coding(tmp_path, top=top)
    if top.startswith("schema"):  # in place of the schema line: a key written once
        path.write_text(path.read_text().replace("schema: coding-eval/v1\n", "", 1))
    with pytest.raises(InputError, match=message):
        load_fixtures(path)
