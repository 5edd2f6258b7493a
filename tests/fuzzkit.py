"""What the fuzz tests of the readers share (tests/core/test_fuzz_readers.py,
test_exact_json.py, test_fuzz_keys.py, test_case_keys.py): the command line run in this
process under an alarm, hostile versions of each kind of input, every reader with a
valid file of its kind and the commands that read it, the exit-code contract they are
held to, and the paths of an object's keys with a key written twice."""

from __future__ import annotations

import io
import json
import random
import shutil
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalpin.cli import main
from tests.builders import grid, write_run

DATA = Path(__file__).parent / "data"
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


def base_files(tmp: Path) -> dict[str, Path]:
    """The valid files every reader's commands use beside the hostile one."""
    left = write_run(tmp / "base" / "left.jsonl", grid({"a": [True] * 3, "b": [False] * 3}))
    golden = tmp / "base" / "golden.jsonl"
    golden.write_text(json.dumps({"id": "a", "user": "hi", "must_include": ["x"]}) + "\n")
    return {"left": left, "golden": golden}


def run_commands(tmp: Path, path: Path) -> list[tuple[tuple[str, ...], set[int]]]:
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


def valid_file(tmp: Path, name: str) -> bytes:
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
    Reader("evalpin-run", ".jsonl", json_variants, run_commands),
    Reader("case-records", ".jsonl", json_variants, run_commands),
    Reader("report", ".json", json_variants, run_commands),
    Reader("inspect-json", ".json", json_variants, run_commands),
    Reader("promptfoo", ".json", json_variants, run_commands),
    Reader("promptfoo-jsonl", ".jsonl", json_variants, run_commands),
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


def check_exit(args: tuple[str, ...], allowed: set[int], got: Outcome, where: str) -> None:
    assert got.code in allowed, f"{where}: evalpin {' '.join(args)} -> {got.code}\n{got.err}"
    assert "Traceback" not in got.err, where
    if got.code == 3:
        lines = got.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("evalpin: error: "), (where, got.err)
    assert got.seconds < SLOW, f"{where}: {got.seconds:.1f} s"


# Maps whose keys are checked (tool names) but whose values are another tool's output.
RESULTS = "tool_results"


def key_paths(value: Any, free: set[str], at: tuple = ()) -> Iterator[tuple]:
    """The path of every key of every object inside `value`, outside the free maps."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*at, key)
            if key not in free and not (at and at[-1] == RESULTS):
                yield from key_paths(inner, free, (*at, key))
    elif isinstance(value, list):
        for n, inner in enumerate(value):
            yield from key_paths(inner, free, (*at, n))


def written_twice(value: Any, path: tuple) -> str:
    """The JSON text of `value` with the key at `path` written a second time."""
    marker = "__evalpin_twice__"
    copy = json.loads(json.dumps(value))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[marker] = None
    text = json.dumps(copy)
    again = json.dumps(path[-1]) + ": " + json.dumps(node[path[-1]])
    return text.replace(f'"{marker}": null', again)
