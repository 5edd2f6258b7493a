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

import io
import json
import os
import random
import shutil
import signal
import sys
import time
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalpin.cli import main
from tests.builders import grid, write_run
from tests.clirun import cli_forked

DATA = Path(__file__).parents[1] / "data"
# A hang turns into a failure (an alarm stops it); what a reader normally takes is
# measured in benchmarks/bench_bounded.py.
SLOW = 20.0
DEEP = 100_000


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    seconds: float


class Hung(BaseException):
    """An invocation ran past `SLOW` (raised by the alarm, so no `except Exception` in
    the code under test can swallow it)."""


def _alarm(signum: int, frame: object) -> None:
    raise Hung


def run_cli(*args: str) -> Outcome:
    """The command line in this process, stopped by an alarm after `SLOW` seconds; any
    exception but SystemExit fails the test with its traceback (a reader must never let
    one out)."""
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, SLOW)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except Hung:
        pytest.fail(f"evalpin {' '.join(args)} still running after {SLOW:.0f} s")
    except BaseException:  # the point of the test: none may get out
        pytest.fail(f"evalpin {' '.join(args)} raised:\n{traceback.format_exc()}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(code, out.getvalue(), err.getvalue(), time.perf_counter() - start)


def deep_json(levels: int = DEEP) -> bytes:
    return b"[" * levels + b"]" * levels


def json_variants(valid: bytes, rng: random.Random) -> dict[str, bytes]:
    """Hostile versions of a JSON or JSONL file."""
    first, _, rest = valid.partition(b"\n")
    brace = first.find(b"{")
    inside = first[: brace + 1] + b'"zz":' + deep_json() + b"," + first[brace + 1 :]
    # A lone surrogate escape, as a key and as a value: decodes to a string nothing prints.
    lone = first[: brace + 1] + b'"\\udc80": "a\\ud800",' + first[brace + 1 :]
    five_hundred = first[: brace + 1] + b'"zz":' + deep_json(500) + b"," + first[brace + 1 :]
    return {
        "empty": b"",
        "blank": b"\n  \n\t\n",
        "half": valid[: len(valid) // 2],
        "one-short": valid[:-2],
        "cut-utf8": valid.rstrip(b"\n") + "é".encode()[:1],
        "garbage-tail": valid + b"\xff\xfe\x00 not a record\n",
        "random": rng.randbytes(4096),
        "nul": b"\x00" * 4096,
        "bom": b"\xef\xbb\xbf" + valid,
        "deep-alone": deep_json() + b"\n",
        "deep-object": b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"\n",
        "deep-in-first": inside + b"\n" + rest if brace >= 0 else deep_json(),
        "deep-500": five_hundred + b"\n" + rest if brace >= 0 else deep_json(500),
        "deep-later": valid + deep_json() + b"\n",
        "wrong-shape": b"[" + first + b"]\n" + rest,
        "lone-surrogate": lone + b"\n" + rest if brace >= 0 else b'"\\ud800"\n',
        "scalar": b"12345678901234567890123456789\n",
        "huge-number": first.replace(b'"', b'1e99999 "', 1) + b"\n" + rest,
    }


def yaml_variants(valid: bytes, rng: random.Random) -> dict[str, bytes]:
    """Hostile versions of a YAML file."""
    text = valid.decode()
    return {
        "empty": b"",
        "half": valid[: len(valid) // 2],
        "cut-utf8": valid + "é".encode()[:1],
        "random": rng.randbytes(4096),
        "nul": b"\x00" * 4096,
        "tabs": valid.replace(b"  ", b"\t"),
        "deep-flow": b"[" * DEEP + b"]" * DEEP,
        "deep-flow-map": b"{a: " * DEEP + b"1" + b"}" * DEEP,
        "deep-dashes": b"- " * DEEP + b"x\n",
        "deep-keys": b"? " * DEEP + b"x\n",
        "deep-indent": "".join(" " * i + "a:\n" for i in range(2000)).encode(),
        "deep-in-value": (text + "x-deep: " + "[" * DEEP + "]" * DEEP + "\n").encode(),
        "aliases": b"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
        "tag": text.replace(":", ": !!python/object/apply:os.system", 1).encode(),
        "bad-date": (text + "frozen_at: 2026-02-30\n").encode(),
        "twice": (text + text).encode(),
        "lone-surrogate": (text + 'x-s: "a\\ud800"\n"\\udc80": 1\n').encode(),
        "list": b"- " + valid.replace(b"\n", b"\n  "),
    }


def text_variants(valid: bytes, rng: random.Random) -> dict[str, bytes]:
    """Hostile versions of a line-based text file (a lock, a disclosure list)."""
    return {
        "empty": b"",
        "half": valid[: len(valid) // 2],
        "cut-utf8": valid + "é".encode()[:1],
        "random": rng.randbytes(4096),
        "nul": b"\x00" * 4096,
        "crlf": valid.replace(b"\n", b"\r\n"),
        "deep": valid.replace(b'"', b"[" * 5000 + b'"', 1),
        "long": valid + b"#" + b"x" * 3_000_000 + b"\n",
    }


@dataclass(frozen=True)
class Reader:
    """One input format, a valid file of it, how to mutate it and how to drive it."""

    name: str
    suffix: str
    variants: Callable[[bytes, random.Random], dict[str, bytes]]
    # (workspace, hostile file) -> the commands to run, each with its allowed exit codes
    commands: Callable[[Path, Path], list[tuple[tuple[str, ...], set[int]]]]


def _base(tmp: Path) -> dict[str, Path]:
    """The valid files every reader's commands use beside the hostile one."""
    left = write_run(tmp / "base" / "left.jsonl", grid({"a": [True] * 3, "b": [False] * 3}))
    golden = tmp / "base" / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "user": "hi", "must_include": ["x"]}) + "\n")
    return {"left": left, "golden": golden}


def _runs(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    left = str(tmp / "base" / "left.jsonl")
    return [
        (("diff", left, str(path)), {1, 2, 3, 4}),
        (("diff", "--json", str(path), left), {1, 2, 3, 4}),
        (("verdict", str(path)), {0, 1, 3}),
        (("power", str(path)), {0, 3}),
    ]


def _fixtures(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    return [(("hash", str(path)), {0, 3}), (("seal", "--check", str(path)), {0, 1, 3})]


def _golden(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    return [*_fixtures(tmp, path), (("check", str(path)), {0, 1, 3})]


def _slots(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    golden = str(tmp / "base" / "golden.jsonl")
    out = str(tmp / "out" / f"{path.stem}.jsonl")
    args = ("run", "--fixtures", golden, "--slots", str(path), "--slot", "s", "--seeds", "1")
    return [((*args, "--progress", "none", "--out", out), {0, 1, 3})]


def _replay(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    golden = str(tmp / "base" / "golden.jsonl")
    out = str(tmp / "out" / f"{path.stem}.jsonl")
    args = ("run", "--fixtures", golden, "--slot", f"s=replay:{path}", "--seeds", "1")
    return [((*args, "--progress", "none", "--out", out), {0, 1, 3})]


def _lock(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    folder = path.parent / path.stem
    folder.mkdir()
    shutil.copy(tmp / "base" / "golden.jsonl", folder / "golden.jsonl")
    shutil.copy(path, folder / "golden.jsonl.lock")
    return [(("seal", "--check", str(folder / "golden.jsonl")), {0, 1, 3})]


def _disclosed(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    return [(("verdict", str(tmp / "base" / "left.jsonl"), "--disclosed", str(path)), {0, 1, 3})]


def _import(shape: str) -> Callable[[Path, Path], list[tuple[tuple[str, ...], set[int]]]]:
    """A benchmark file read by `evalpin import` (issue 42): a set, or exit 3 and nothing."""

    def commands(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
        out = str(tmp / "out" / f"import-{shape}-{path.stem}")
        return [(("import", shape, str(path), "--out", out, "--json"), {0, 3})]

    return commands


def _results(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
    """A harness's graded samples read by `evalpin crosscheck` (issue 42)."""
    left = str(tmp / "base" / "left.jsonl")
    return [
        (("crosscheck", left, str(path)), {0, 1, 3}),
        (("crosscheck", "--json", left, str(path)), {0, 1, 3}),
    ]


def _valid(tmp: Path, name: str) -> bytes:
    """A valid file of each kind."""
    folder = tmp / "valid"
    folder.mkdir(exist_ok=True)
    if name == "evalpin-run":
        return write_run(folder / "r.jsonl", grid({"a": [True, False, True]})).read_bytes()
    if name == "case-records":
        rows = [{"case_id": "a", "pass": True, "seed": 1, "fixture_hash": "f", "reasons": []}]
        return b"".join(json.dumps(r).encode() + b"\n" for r in rows * 3)
    if name == "report":
        return json.dumps({"dataset_id": "d", "rows": [{"id": "a", "passed": True}]}).encode()
    if name == "inspect-json":
        return (DATA / "inspect" / "night1.json").read_bytes()
    if name == "promptfoo":
        return (DATA / "promptfoo" / "night1.json").read_bytes()
    if name == "promptfoo-jsonl":
        return (DATA / "promptfoo" / "night1.jsonl").read_bytes()
    if name == "golden":
        return (tmp / "base" / "golden.jsonl").read_bytes()
    if name == "coding":
        (folder / "p.md").write_text("fix\n")
        (folder / "test_x.py").write_text("def test_x():\n    assert True\n")
        return (
            b"schema: coding-eval/v1\ndataset_id: d\ndataset_version: '1'\nitems:\n"
            b"  - id: one\n    language: python\n    prompt_file: p.md\n"
            b"    test_file: test_x.py\n    timeout_s: 5\n    expected_files: [s.py]\n"
        )
    if name == "slots":
        (folder / "rec.jsonl").write_text('{"case_id": "a", "text": "x"}\n')
        return f"slots:\n  s: {{provider: replay, path: {folder / 'rec.jsonl'}}}\n".encode()
    if name == "replay":
        return b'{"case_id": "a", "text": "x", "tools": [{"name": "t", "args": {}}]}\n'
    if name == "lock":
        golden = tmp / "base" / "golden.jsonl"
        assert run_cli("seal", str(golden)).code == 0
        lock = golden.with_name("golden.jsonl.lock")
        data = lock.read_bytes()
        lock.unlink()
        return data
    if name == "disclosed":
        return b"# disclosed\na\nWhere is my order?\n"
    if name == "humaneval":
        problem = {
            "task_id": "Mine/0",
            "prompt": "def double(x):\n",
            "canonical_solution": "    return 2 * x\n",
            "test": "def check(candidate):\n    assert candidate(2) == 4\n",
            "entry_point": "double",
        }
        return json.dumps(problem).encode() + b"\n"
    if name == "mbpp":
        return (DATA / "benchmarks" / "mbpp" / "mbpp-setup.jsonl").read_bytes()
    if name == "harness-results":
        rows = [{"task_id": t, "seed": s, "passed": t == "a"} for t in "ab" for s in (11, 29, 47)]
        return b"".join(json.dumps(r).encode() + b"\n" for r in rows)
    if name == "bigcodebench":
        return (DATA / "benchmarks" / "bigcodebench" / "bigcodebench-sample.jsonl").read_bytes()
    if name == "dataframebench":
        stub = "{library_import}\ndef task_func(x):\n"
        problem = {"task_id": "DFB/1", "entry_point": "task_func", "libs": ["math"],
                   "prompt": "Do it. {library_instruction}\n" + stub,
                   "prompt_parts": {"stub": stub},
                   "test_code": "import unittest\nclass TestCases(unittest.TestCase):\n"
                   "    def test_x(self):\n        self.assertEqual(task_func(1), 1)\n",
                   "ground_truth": {"pandas": "def task_func(x):\n    return x\n"}}  # fmt: skip
        return json.dumps(problem).encode() + b"\n"
    if name in ("bigcodebench-results", "dataframebench-results"):
        if name == "bigcodebench-results":
            doc = {"date": "", "eval": {t: [{"task_id": t, "solution": "x", "status": "pass",
                                             "details": {}}] for t in "ab"}}  # fmt: skip
        else:
            doc = {"results": [{"task_id": t, "outcomes": ["passed", "failed"]} for t in "ab"]}
        return json.dumps(doc, indent=2).encode()
    raise AssertionError(name)


READERS = [
    Reader("evalpin-run", ".jsonl", json_variants, _runs),
    Reader("case-records", ".jsonl", json_variants, _runs),
    Reader("report", ".json", json_variants, _runs),
    Reader("inspect-json", ".json", json_variants, _runs),
    Reader("promptfoo", ".json", json_variants, _runs),
    Reader("promptfoo-jsonl", ".jsonl", json_variants, _runs),
    Reader("golden", ".jsonl", json_variants, _golden),
    Reader("coding", ".yaml", yaml_variants, _fixtures),
    Reader("slots", ".yaml", yaml_variants, _slots),
    Reader("replay", ".jsonl", json_variants, _replay),
    Reader("lock", ".lock", text_variants, _lock),
    Reader("disclosed", ".txt", text_variants, _disclosed),
    Reader("humaneval", ".jsonl", json_variants, _import("humaneval")),
    Reader("mbpp", ".jsonl", json_variants, _import("mbpp")),
    Reader("harness-results", ".jsonl", json_variants, _results),
    Reader("bigcodebench", ".jsonl", json_variants, _import("bigcodebench")),
    Reader("dataframebench", ".jsonl", json_variants, _import("dataframebench")),
    Reader("bigcodebench-results", ".json", json_variants, _results),
    Reader("dataframebench-results", ".json", json_variants, _results),
]


def _check(args: tuple[str, ...], allowed: set[int], got: Outcome, where: str) -> None:
    assert got.code in allowed, f"{where}: evalpin {' '.join(args)} -> {got.code}\n{got.err}"
    assert "Traceback" not in got.err, where
    if got.code == 3:
        lines = got.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("evalpin: error: "), (where, got.err)
    assert got.seconds < SLOW, f"{where}: {got.seconds:.1f} s"


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_a_reader_under_hostile_input(reader: Reader, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _base(tmp_path)
    (tmp_path / "out").mkdir()
    rng = random.Random(f"issue-39-{reader.name}")
    valid = _valid(tmp_path, reader.name)
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    for variant, data in reader.variants(valid, rng).items():
        path = hostile / f"{variant}{reader.suffix}"
        path.write_bytes(data)
        for args, allowed in reader.commands(tmp_path, path):
            _check(args, allowed, run_cli(*args), f"{reader.name}/{variant}")


def test_the_other_tools_logs_and_folders_under_hostile_input(tmp_path: Path) -> None:
    """inspect's `.eval` zip and lm-eval's folder (results beside samples)."""
    rng = random.Random("issue-39-zip")
    left = str(_base(tmp_path)["left"])
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
        for args, allowed in _runs(tmp_path, path):
            _check(args, allowed, run_cli(*args), f"eval/{name}")
    for part in ("samples", "results"):
        for variant, data in json_variants(b'{"doc_id": 0, "doc_hash": "x"}\n', rng).items():
            folder = tmp_path / f"lm-{part}-{variant}"
            shutil.copytree(DATA / "lm_eval" / "seed1", folder)
            target = next(folder.glob(f"{part}_*"))
            target.write_bytes(data)
            for args in (("diff", left, str(folder)), ("verdict", str(folder))):
                _check(args, {1, 2, 3, 4}, run_cli(*args), f"lm-eval {part}/{variant}")


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
