"""Every reader fed truncated, nested, huge and binary input (issue 39): the command that
reads it ends with its contract's exit code (3 for unreadable input, one line on stderr
naming the file) or a clean result, never a traceback, in bounded time; the huge inputs
run in a child process whose address space is capped, so a reader that loads a file
whole fails the test.

The inputs are made here from a valid file of each kind with a seeded generator (the
same every run): truncations (at the middle, one byte short, inside a UTF-8 character),
a garbage tail, random and NUL bytes, a byte-order mark, nesting 500 and 100,000 deep
(inside a valid record and alone), JSON where the wrong shape is expected, and for YAML
deep flow, block and indentation nesting, aliases, tags and impossible dates.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
from pathlib import Path

import pytest

from tests.builders import grid, write_run
from tests.clirun import cli_forked
from tests.fuzzkit import (
    DATA,
    READERS,
    SLOW,
    Reader,
    base_files,
    check_exit,
    deep_json,
    json_variants,
    run_cli,
    run_commands,
    valid_file,
)


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_a_reader_under_hostile_input(reader: Reader, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    base_files(tmp_path)
    (tmp_path / "out").mkdir()
    rng = random.Random(f"issue-39-{reader.name}")
    valid = valid_file(tmp_path, reader.name)
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    for variant, data in reader.variants(valid, rng).items():
        path = hostile / f"{variant}{reader.suffix}"
        path.write_bytes(data)
        for args, allowed in reader.commands(tmp_path, path):
            check_exit(args, allowed, run_cli(*args), f"{reader.name}/{variant}")


def test_the_other_tools_logs_and_folders_under_hostile_input(tmp_path: Path) -> None:
    """inspect's `.eval` zip and lm-eval's folder (results beside samples)."""
    rng = random.Random("issue-39-zip")
    left = str(base_files(tmp_path)["left"])
    log = (DATA / "inspect" / "night1.eval").read_bytes()
    zips = {
        "half": log[: len(log) // 2],
        "magic-only": b"PK\x03\x04" + rng.randbytes(2048),
        "tail-cut": log[:-22],
        "flipped": log[:200] + bytes(b ^ 0xFF for b in log[200:400]) + log[400:],
    }
    for name, data in zips.items():
        path = tmp_path / f"{name}.eval"
        path.write_bytes(data)
        for args, allowed in run_commands(tmp_path, path):
            check_exit(args, allowed, run_cli(*args), f"eval/{name}")
    for part in ("samples", "results"):
        for variant, data in json_variants(b'{"doc_id": 0, "doc_hash": "x"}\n', rng).items():
            folder = tmp_path / f"lm-{part}-{variant}"
            shutil.copytree(DATA / "lm_eval" / "seed1", folder)
            target = next(folder.glob(f"{part}_*"))
            target.write_bytes(data)
            for args in (("diff", left, str(folder)), ("verdict", str(folder))):
                check_exit(args, {1, 2, 3, 4}, run_cli(*args), f"lm-eval {part}/{variant}")


def test_a_hostile_notes_file_never_changes_the_exit_code(tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    right = write_run(tmp_path / "r.jsonl", grid({"a": [True, False, True]}))
    base = run_cli("diff", str(left), str(right))
    note = b'{"record": "note", "case_id": "a", "fixture_hash": "fh-a", "kind": "flaky"}\n'
    rng = random.Random("issue-39-notes")
    for variant, data in json_variants(note, rng).items():
        notes = tmp_path / f"{variant}.jsonl"
        notes.write_bytes(data)
        got = run_cli("diff", str(left), str(right), "--notes", str(notes))
        assert got.code == base.code == 1, (variant, got.err)
        assert "Traceback" not in got.err and got.seconds < SLOW, variant
    folder = tmp_path / "notes-dir"
    (folder / "notes.jsonl").mkdir(parents=True)  # where the notes file should be
    for name in ("l.jsonl", "r.jsonl"):
        shutil.copy(tmp_path / name, folder / name)
    got = run_cli("diff", str(folder / "l.jsonl"), str(folder / "r.jsonl"))
    assert got.code == 1 and "notes" in got.err


def test_history_lists_an_unreadable_run_and_goes_on(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    write_run(folder / "a.jsonl", grid({"a": [True] * 3}))
    write_run(folder / "b.jsonl", grid({"a": [True, False, True]}))
    (folder / "deep.jsonl").write_bytes(deep_json() + b"\n")
    good = (folder / "a.jsonl").read_bytes()
    (folder / "deep-line.jsonl").write_bytes(
        good + b'{"case_id": "x", "pass": true, "z": ' + deep_json() + b"}\n"
    )
    (folder / "noise.json").write_bytes(random.Random(39).randbytes(2048))
    got = run_cli("history", str(folder), "--json")
    assert got.code == 0, got.err
    data = json.loads(got.out)
    unreadable = {Path(u["path"]).name: u["error"] for u in data["unreadable"]}
    assert set(unreadable) == {"deep.jsonl", "deep-line.jsonl", "noise.json"}
    assert "nested too deeply (more than 100 levels)" in unreadable["deep.jsonl"]
    line = len(good.splitlines()) + 1
    assert f"deep-line.jsonl:{line}: nested too deeply" in unreadable["deep-line.jsonl"]
    assert sum(len(s["runs"]) for s in data["series"]) == 2


def test_a_lone_surrogate_is_refused_before_anything_prints_it(tmp_path: Path) -> None:
    """`\\ud800` alone in a JSON or YAML string decodes to text no stream can write: in a
    real process (not captured into a StringIO) it must be one line and exit 3, never a
    UnicodeEncodeError while printing a case id, and never a run file that cannot be
    read back."""
    from tests.clirun import cli_process

    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "a\\ud800", "user": "hi", "must_include": ["x"]}\n')
    coding = tmp_path / "set.yaml"
    coding.write_text('schema: coding-eval/v1\ndataset_id: "d\\udc80"\n')
    results = tmp_path / "results.jsonl"  # a harness's graded samples (crosscheck)
    results.write_text('{"task_id": "a\\ud800", "passed": true}\n')
    run = write_run(tmp_path / "run.jsonl", grid({"a": [True] * 3}))
    for args in (
        ("hash", str(golden)),
        ("check", str(golden)),
        ("hash", str(coding)),
        ("crosscheck", str(run), str(results)),
    ):
        got = cli_process(*args)
        assert got.code == 3 and "surrogate" in got.err and "Traceback" not in got.err, args


def test_huge_inputs_are_refused_without_being_read_whole(tmp_path: Path) -> None:
    """Sparse files of 3 GiB (no disk used) in every shape, read by a child whose address
    space is capped at 768 MiB: a reader that loads one whole dies of MemoryError (a
    traceback), which fails the test."""
    huge = 3 << 30
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "user": "hi", "must_include": ["x"]}) + "\n")
    files = {}
    for name, head in (
        ("run.jsonl", left.read_bytes()),  # a valid run, then one endless unended line
        ("doc.json", b'{\n"rows": ['),  # a document over the cap
        ("log.eval", b"PK\x03\x04"),
        ("golden-huge.jsonl", b""),
        ("set.yaml", b"schema: coding-eval/v1\n"),
        ("notes.jsonl", b""),
        ("results.jsonl", b'{"task_id": "a", "passed": true}\n'),  # a harness's, then one line
        ("problems.jsonl", b""),
        ("problems.json", b"[\n"),
    ):
        path = tmp_path / name
        with open(path, "wb") as fh:
            fh.write(head)
            fh.truncate(huge)
        files[name] = path
    commands = [
        # an unended last line is a torn write however long: dropped and said so (a kill
        # during a 100 MB record must not break the file for good), never read whole
        (("diff", str(left), str(files["run.jsonl"])), {0}),
        (("verdict", str(files["doc.json"])), {3}),
        (("power", str(files["log.eval"])), {3}),
        (("hash", str(files["golden-huge.jsonl"])), {3}),
        (("hash", str(files["set.yaml"])), {3}),
        (("diff", str(left), str(left), "--notes", str(files["notes.jsonl"])), {0}),
        (("crosscheck", str(left), str(files["results.jsonl"])), {3}),
        (("import", "humaneval", str(files["problems.jsonl"]), "--out", str(tmp_path / "h")), {3}),
        (("import", "mbpp", str(files["problems.json"]), "--out", str(tmp_path / "m")), {3}),
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = cli_forked([args for args, _ in commands], cap=768 << 20, timeout=120, env=env)
    for (args, allowed), got in zip(commands, done, strict=True):
        assert got.code in allowed, (args, got.code, got.err[-2000:])
        assert "Traceback" not in got.err and "MemoryError" not in got.err, args
        if files["run.jsonl"] in map(Path, args):
            assert "torn last line dropped" in got.out, got.out


def test_a_whole_line_over_the_line_cap_is_refused_naming_it(tmp_path: Path) -> None:
    """A line that ends, but past the cap, is no torn write: one line, exit 3, its number."""
    from evalpin.core.bounded import MAX_LINE_BYTES

    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    body = left.read_bytes()
    lines = body.count(b"\n")
    right = tmp_path / "r.jsonl"
    with open(right, "wb") as fh:
        fh.write(body)
        fh.truncate(len(body) + MAX_LINE_BYTES + 1)  # sparse: no disk used
        fh.seek(0, os.SEEK_END)
        fh.write(b"\n")
    got = run_cli("diff", str(left), str(right))
    assert got.code == 3, got.err
    assert f"r.jsonl:{lines + 1}: line longer than" in got.err, got.err
