"""Every JSON evalpin reads is read exactly (issue 51): a key written twice (at the top
level or in a nested object) and a number JSON does not have or cannot hold (NaN,
Infinity, a float's overflow, an integer of more than 4,300 digits) are refused, also in
a field the reader does not read (an `x-` key of one's own, another tool's field evalpin
ignores): exit 3, one line naming the file, never a traceback, never read silently.
Recorded completions and notes skip such a line with a warning naming it (their stated
rule: a bad line costs its case or its note, never the run).

Every JSON reader of the fuzz tests (tests/fuzzkit.py) is driven, plus inspect-ai's `.eval`
members and lm-eval's two files.
"""

from __future__ import annotations

import json
import shutil

import pytest

from evalpin.core.read.formats.ziplog import LogZip
from tests import fuzzkit as fuzz
from tests.builders import grid, write_run

BAD = {"nan": "NaN", "infinity": "-Infinity", "overflow": "1e999", "digits": "9" * 5000}
SAID = {
    "nan": ("malformed", "not JSON"),
    "infinity": ("malformed", "not JSON"),
    "overflow": ("too large for a float", "out of range"),
    "digits": ("4,300-digit limit", "out of range"),
}
SKIPPING = {"replay"}  # a bad recorded line is skipped, its case an error, said in a warning
JSON_READERS = [r for r in fuzz.READERS if r.suffix in (".json", ".jsonl")]


def _mutated(text: str, kind: str) -> str:
    """`text` (one JSON object) with a mutation: its first key written again (`twice`),
    a nested object's first key written again (`nested`), or an unread `x-zz` key
    holding a number JSON does not have or cannot hold."""
    obj = json.loads(text)
    if kind == "twice":
        key = next(iter(obj))
        return "{" + json.dumps(key) + ": " + json.dumps(obj[key]) + ", " + text.lstrip()[1:]
    if kind == "nested":
        node = _first_object_below(obj)
        assert node is not None, "no object below the top level to write a key twice in"
        marker = {"__twice__": None}
        key = next(iter(node))
        node.update(marker)
        again = json.dumps(key) + ": " + json.dumps(node[key])
        return json.dumps(obj).replace('"__twice__": null', again)
    return "{" + f'"x-zz": {BAD[kind]}, ' + text.lstrip()[1:]


def _first_object_below(value: object) -> dict | None:
    todo = list(value.values()) if isinstance(value, dict) else []
    while todo:
        item = todo.pop(0)
        if isinstance(item, dict) and item:
            return item
        if isinstance(item, dict | list):
            todo.extend(item.values() if isinstance(item, dict) else item)
    return None


def _expect(kind: str, err: str, reader: str) -> None:
    if kind in ("twice", "nested"):
        assert "duplicate key" in err, (reader, kind, err)
    else:
        assert any(word in err for word in SAID[kind]), (reader, kind, err)


MUTATIONS = ["twice", "nested", *BAD]
# The valid files whose records hold no object below the top level (checked below).
FLAT = {"case-records", "golden", "humaneval", "mbpp", "harness-results", "bigcodebench"}
CASES = [
    (reader, kind)
    for reader in JSON_READERS
    for kind in MUTATIONS
    if not (kind == "nested" and reader.name in FLAT)
]


@pytest.mark.parametrize(("reader", "kind"), CASES, ids=[f"{r.name}-{k}" for r, k in CASES])
def test_every_json_reader_reads_exactly(reader, kind, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    fuzz.base_files(tmp_path)
    (tmp_path / "out").mkdir()
    text = fuzz.valid_file(tmp_path, reader.name).decode()
    first, newline, rest = text.partition("\n")
    whole = not newline or not rest.strip() or reader.suffix == ".json"
    mutated = _mutated(text if whole else first, kind)
    nested = _first_object_below(json.loads(text if whole else first)) is not None
    assert nested != (reader.name in FLAT), reader.name  # FLAT says which have none
    path = tmp_path / f"bad{reader.suffix}"
    path.write_text(mutated if whole else mutated + "\n" + rest)
    for args, allowed in reader.commands(tmp_path, path):
        got = fuzz.run_cli(*args)
        fuzz.check_exit(args, allowed, got, f"{reader.name}/{kind}")
        if reader.name in SKIPPING:
            assert "line skipped" in got.err and ":1:" in got.err, got.err
        else:
            assert got.code == 3, (args, got.code, got.out, got.err)
        _expect(kind, got.err, reader.name)


@pytest.mark.parametrize("kind", MUTATIONS)
@pytest.mark.parametrize("member", ["header.json", "samples/"])
def test_an_inspect_eval_member_is_read_exactly(member, kind, tmp_path) -> None:
    import zipfile

    source = fuzz.DATA / "inspect" / "night1.eval"
    with LogZip(source) as log:
        members = {name: log.read(name) for name in log.names()}
    target = next(name for name in members if name.startswith(member))
    mutated = _mutated(members[target].decode(), kind)
    path = tmp_path / "bad.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, mutated.encode() if name == target else data)
    got = fuzz.run_cli("verdict", str(path))
    assert got.code == 3 and f"zip member {target!r}" in got.err, got.err
    fuzz.check_exit(("verdict",), {3}, got, f"eval/{target}/{kind}")
    _expect(kind, got.err, target)


@pytest.mark.parametrize("kind", MUTATIONS)
@pytest.mark.parametrize("part", ["samples", "results"])
def test_an_lm_eval_file_is_read_exactly(part, kind, tmp_path) -> None:
    folder = tmp_path / "lm"
    shutil.copytree(fuzz.DATA / "lm_eval" / "seed1", folder)
    target = next(folder.glob(f"{part}_*"))
    text = target.read_text()
    if part == "samples":
        first, _, rest = text.partition("\n")
        target.write_text(_mutated(first, kind) + "\n" + rest)
    else:
        target.write_text(_mutated(text, kind))
    got = fuzz.run_cli("verdict", str(folder))
    fuzz.check_exit(("verdict",), {3}, got, f"lm-eval/{part}/{kind}")
    _expect(kind, got.err, part)


@pytest.mark.parametrize("kind", [k for k in MUTATIONS if k != "nested"])  # a note is flat
def test_a_notes_line_read_inexactly_is_skipped_and_named(kind, tmp_path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    right = write_run(tmp_path / "r.jsonl", grid({"a": [True, False, True]}))
    note = {"record": "note", "case_id": "a", "fixture_hash": "fh-a", "kind": "flaky"}
    notes = tmp_path / "notes.jsonl"
    notes.write_text(_mutated(json.dumps(note), kind) + "\n")
    got = fuzz.run_cli("diff", str(left), str(right), "--notes", str(notes))
    assert got.code == 1 and "skipped 1 line" in got.err and "line 1" in got.err, got.err
    _expect(kind, got.err, "notes")
