"""`import` and `crosscheck` read only regular files, bounded before any work, and an
import refuses names the sandbox already gives another file (issue 50, item 5).

Every refusal is exit 3 with one line naming the file or the name, nothing written,
and comes at once: a FIFO is never waited on, a link to a device never read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.core.instrument.graders.coding import module_name
from evalpin.core.instrument.graders.surface import RUNTIME_MODULES
from evalpin.run.sandbox import run_item, shared
from evalpin.run.sandbox import zygote as fork_server
from tests.capabilities import need
from tests.clirun import cli, cli_forked

DATA = Path(__file__).resolve().parents[1] / "data" / "benchmarks"
PROBLEM = {
    "task_id": "Mine/1",
    "prompt": "def double(n):\n",
    "canonical_solution": "    return 2 * n\n",
    "test": "def check(candidate):\n    assert candidate(3) == 6\n",
    "entry_point": "double",
}


def _one_line_refusal(r, *words: str) -> None:
    assert r.code == 3, (r.code, r.out, r.err)
    assert r.err.startswith("evalpin: error: ") and len(r.err.strip().splitlines()) == 1, r.err
    for word in words:
        assert word in r.err, r.err


def _not_files(tmp_path: Path) -> dict[str, Path]:
    """A FIFO, a link to /dev/zero, a link to a FIFO and a folder, each where a file goes."""
    fifo = tmp_path / "problems.fifo"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    linked = tmp_path / "linked.jsonl"
    linked.symlink_to(fifo)
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    return {"FIFO": fifo, "character device": zero, "linked FIFO": linked, "directory": folder}


def test_import_and_crosscheck_refuse_what_is_not_a_regular_file_at_once(tmp_path: Path) -> None:
    """Each runs in a process of its own with a deadline: the old code hung on the FIFO
    and read /dev/zero until it ran out of memory."""
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(PROBLEM) + "\n")
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"task_id": "Mine/1", "passed": True}) + "\n")
    run = next(Path(__file__).resolve().parents[2].joinpath("runs").glob("*.jsonl"))
    commands = [
        (kind, path, args)
        for kind, path in _not_files(tmp_path).items()
        for args in (
            ("import", "humaneval", str(path), "--out", str(tmp_path / f"h-{path.name}")),
            ("import", "mbpp", str(path), "--out", str(tmp_path / f"m-{path.name}")),
            ("crosscheck", str(run), str(path)),
            ("crosscheck", str(path), str(results)),
        )
    ]
    done = cli_forked([args for _, _, args in commands], timeout=60)
    for (kind, path, args), r in zip(commands, done, strict=True):
        if kind == "directory":  # click's own usage error where an option says so
            assert r.code == 3 and str(path) in r.err, (args, r.err)
            continue
        _one_line_refusal(r, str(path), "not a regular file")
    assert not any(tmp_path.glob("[hm]-*/*"))


def _peak_kib(code: str) -> tuple[int, str]:
    """Run `code` in a fresh interpreter that prints its own peak RSS (KiB) last."""
    probe = code + "\nimport resource\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    lines = done.stdout.strip().splitlines()
    return int(lines[-1]), "\n".join(lines[:-1])


_N = (8 << 20) // 3  # 8 MiB of three-byte values
SHAPES = {
    "empty objects, a line each": lambda: b"{}\n" * _N,
    "empty objects in one list": lambda: b"[" + b"{}," * _N + b"{}]",
    "lists in one problem": lambda: b'{"task_id": 1, "x": [' + b"[]," * _N + b"[]]}\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_what_decoding_would_build_is_counted_before_it_is_built(
    tmp_path: Path, shape: str
) -> None:
    """8 MiB of tiny JSON values cost ~1 GiB once decoded: refused from the bytes."""
    path = tmp_path / "problems.jsonl"
    path.write_bytes(SHAPES[shape]())
    code = textwrap.dedent(f"""
        from evalpin.core.errors import InputError
        from evalpin.core.instrument.importers import import_set
        try:
            import_set("mbpp", {str(path)!r}, {str(tmp_path / "out")!r})
        except InputError as exc:
            print("refused:", exc)
    """)
    peak, said = _peak_kib(code)
    assert said.startswith("refused:") and "over the" in said and "limit" in said, (shape, said)
    baseline, _ = _peak_kib("import evalpin.core.instrument.importers")
    assert peak - baseline < 120 * 1024, (shape, peak, baseline)  # the file, a copy or two
    assert not (tmp_path / "out").exists()


def _exercise(root: Path, folder_name: str = "leap") -> Path:
    shutil.copytree(DATA / "exercism" / "leap", root / folder_name)
    return root / folder_name


def _rename(folder: Path, role: str, new: str) -> None:
    """Give the exercise's `role` file (solution or test) another name."""
    config_path = folder / ".meta" / "config.json"
    config = json.loads(config_path.read_text())
    old = config["files"][role][0]
    (folder / old).rename(folder / new)
    config["files"][role] = [new]
    config_path.write_text(json.dumps(config))


@pytest.mark.parametrize(
    "spoil, named",
    [
        (lambda root: _exercise(root, "le\nap"), "'le\\nap'"),
        (lambda root: _exercise(root, "leap\x1b[31m"), "'leap\\x1b[31m'"),
        (lambda root: _rename(_exercise(root), "solution", "evalpin_wire.py"), "evalpin_wire.py"),
        (lambda root: _rename(_exercise(root), "solution", "evalpin_guard.py"), "evalpin_guard"),
        (lambda root: _rename(_exercise(root), "solution", "conftest.py"), "conftest.py"),
        (lambda root: _rename(_exercise(root), "test", "evalpin_capture.py"), "evalpin_capture"),
        (lambda root: _rename(_exercise(root), "test", "conftest.py"), "conftest.py"),
        (lambda root: _rename(_exercise(root), "test", "leap.py"), "leap.py"),
        (lambda root: _rename(_exercise(root), "solution", "le\tap.py"), "'le\\tap.py'"),
    ],
)
def test_names_the_sandbox_gives_another_file_are_refused_naming_them(
    tmp_path: Path, capsys, spoil, named: str
) -> None:
    spoil(tmp_path / "src")
    out = tmp_path / "out"
    r = cli(capsys, "import", "exercises", str(tmp_path / "src"), "--out", str(out))
    _one_line_refusal(r, named)
    assert not out.exists()


def test_an_honest_exercise_still_imports(tmp_path: Path, capsys) -> None:
    _exercise(tmp_path / "src")
    r = cli(capsys, "import", "exercises", str(tmp_path / "src"), "--out", str(tmp_path / "o"))
    assert r.code == 0, r.err


def _one_item_set(folder: Path, expected: str, test: str) -> Path:
    """A coding set written by hand: one item expecting `expected`, tested by `test`."""
    (folder / "p.md").write_text("Double it.\n")
    (folder / "test_d.py").write_text(test)
    path = folder / "set.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        schema: coding-eval/v1
        dataset_id: d
        dataset_version: "1"
        frozen_at: "2026-01-01T00:00:00Z"
        holdout_policy: public
        items:
          - {{id: d, language: python, prompt_file: p.md, test_file: test_d.py, timeout_s: 30,
             forbidden_imports: [], expected_files: ["{expected}"]}}
    """)
    )
    return path


def test_the_reserved_names_are_every_module_the_runtime_folder_gives(
    tmp_path: Path, monkeypatch
) -> None:
    """Grade one case both ways and list what the sandbox's runtime folder held: a new
    module there that `RUNTIME_MODULES` does not name would be a name an import lets a
    candidate take."""
    given: set[str] = set()
    real = shared.folder

    def recording(files: dict[str, bytes]) -> Path:
        given.update((module_name(name) or name).split(".")[0].split("/")[0] for name in files)
        return real(files)

    monkeypatch.setattr(shared, "folder", recording)
    test = "from solution import double\n\n\ndef test_d():\n    assert double(3) == 6\n"
    set_path = _one_item_set(tmp_path, "solution.py", test)
    item = load_fixtures(set_path).cases[0]
    try:
        outcome = run_item(item, {"solution.py": "def double(n):\n    return 2 * n\n"})
    finally:
        fork_server.close()
        shared.close()
    assert outcome.passed, outcome.tail
    if not given:
        need("unshare", "no namespace backend here: the runtime folder is a copy in each box")
    assert given <= RUNTIME_MODULES, given - RUNTIME_MODULES


@pytest.mark.parametrize("name", ["evalpin_capture.py", "EVALPIN_WIRE.py", "evalpin_guard/x.py",
                                  "evalpin_wire.cpython-311-x86_64-linux-gnu.so"])  # fmt: skip
def test_a_hand_written_set_cannot_expect_a_runtime_modules_name(
    tmp_path: Path, capsys, name: str
) -> None:
    """The same names in a set written by hand: the loader refuses them, naming them."""
    _one_item_set(tmp_path, name, "def test_d():\n    pass\n")
    r = cli(capsys, "hash", str(tmp_path / "set.yaml"))
    _one_line_refusal(r, name, "reserved")
