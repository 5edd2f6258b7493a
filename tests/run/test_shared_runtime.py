"""evalpin's own modules for the sandboxed side are written once per grading process
(`sandbox/shared.py`), not once per case: a case can read them but never change what the
next case reads, on both namespace backends; a grade without namespaces keeps its own
copy; nothing is left once the last run or check ends."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import textwrap
from pathlib import Path

import pytest

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run import isolation
from evalpin.run.sandbox import Isolation, run_item, shared
from evalpin.run.sandbox import zygote as fork_server
from evalpin.run.sandbox.box import Box


@pytest.fixture(autouse=True)
def _closed():
    shared.close()
    yield
    fork_server.close()


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _digest_of(files: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


def test_one_folder_per_set_of_files_made_once_and_removed_on_close() -> None:
    files = {"pkg/__init__.py": b"", "pkg/mod.py": b"X = 1\n", "top.py": b"import pkg\n"}
    first = shared.folder(files)
    assert shared.folder(dict(reversed(files.items()))) == first  # the same files
    assert _digest(first) == _digest_of(files)
    other = shared.folder({**files, "top.py": b"import pkg.mod\n"})
    assert other != first and other.parent == first.parent
    # Named for this process in the system's temp folder, so a later grader reaps it
    # if this one is killed; no half-written folder stays beside it.
    scratch = first.parent
    assert scratch.parent == Path(tempfile.gettempdir())
    assert scratch.name.startswith(f"evalpin-{os.getpid()}-")
    assert not [p for p in scratch.iterdir() if p.name.startswith("staging-")]
    shared.close()
    assert not scratch.exists()
    again = shared.folder(files)  # made again on next use
    assert again.parent != scratch and _digest(again) == _digest_of(files)


def test_without_namespaces_a_box_keeps_its_own_copy(tmp_path: Path) -> None:
    box = Box(tmp_path, None, None, namespaces=False)
    folder, seen = isolation._runtime(box, {"m.py": b"A = 1\n"})
    assert seen == folder
    assert folder.is_relative_to(tmp_path)
    assert (folder / "m.py").read_bytes() == b"A = 1\n"
    assert (folder / "evalpin_capture.py").is_file()
    assert shared._ROOT is None  # nothing shared was made


# The candidate, at import, tries to change every file of evalpin's that its process
# loaded from the runtime folder and to add one beside them: directly, through its
# read-only mount made writable again, through a handle reopened for writing, and at the
# folder's host path as the mount table names it. Any success fails the case (the grade
# then cannot pass), and the folder's bytes are compared too. (Attack code: it runs in
# the sandbox only, never on the host.)
TAMPER = textwrap.dedent(
    """\
    import ctypes, os, sys

    libc = ctypes.CDLL(None, use_errno=True)
    seen, got = [], []


    def attempt(what, step):
        try:
            if step() == 0:  # a libc call that worked
                got.append(what)
        except OSError:
            pass
        else:
            if what.startswith("py:"):
                got.append(what)


    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if not (name.startswith("evalpin_") and os.path.isfile(path)):
            continue
        seen.append(path)
        folder = os.path.dirname(path).encode()
        attempt("remount", lambda: libc.mount(None, folder, None, 32 | 4096, None))
        attempt("py:append", lambda: open(path, "a").write("raise SystemExit(0)\\n"))
        attempt("py:chmod", lambda: os.chmod(path, 0o777))
        attempt("py:unlink", lambda: os.unlink(path))
        attempt("py:rename", lambda: os.rename(path, path + ".x"))
        attempt("py:plant", lambda: open(os.path.join(folder.decode(), "planted.py"), "w"))
        handle = os.open(path, os.O_PATH)
        attempt("py:reopen", lambda: open(f"/proc/self/fd/{handle}", "a").write("#\\n"))
        for line in open("/proc/self/mountinfo"):
            fields = line.split()
            if fields[4] == folder.decode():  # its host path, as the table names it
                host = os.path.join(fields[3], "planted.py")
                attempt("py:host path", lambda: open(host, "w"))
    if not seen:  # the test would prove nothing: fail the case, and the test
        raise RuntimeError("no module of evalpin's runtime folder was loaded")
    if got:
        raise RuntimeError(f"changed the runtime folder: {got}")

    def answer():
        return 42
    """
)
HONEST = "def answer():\n    return 42\n"
TEST = "from solution import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"


def _item(folder: Path, **extra: object):
    folder.mkdir()
    (folder / "prompt.md").write_text("Answer.\n")
    (folder / "test_answer.py").write_text(TEST)
    entry = {
        "id": "answer",
        "language": "python",
        "prompt_file": "prompt.md",
        "test_file": "test_answer.py",
        "timeout_s": 30,
        "expected_files": ["solution.py"],
        **extra,
    }
    doc = {"schema": "coding-eval/v1", "dataset_id": "shared", "dataset_version": "1"}
    (folder / "set.yaml").write_text(json.dumps({**doc, "items": [entry]}))
    return load_fixtures(folder / "set.yaml").cases[0]


@pytest.mark.parametrize("mode", ["process", "in-process"])
def test_a_case_cannot_change_what_the_next_reads(
    tmp_path: Path, backend: Isolation, mode: str
) -> None:
    item = _item(tmp_path / "set", isolation=mode)
    work = tmp_path / "work"
    work.mkdir()
    honest = run_item(item, {"solution.py": HONEST}, isolation=backend, workdir_parent=work)
    assert honest.passed, honest.tail
    folders = sorted(p for p in shared._root().iterdir() if p.name.startswith("runtime-"))
    assert folders, "the grade did not use the shared folder"
    before = {str(p): _digest(p) for p in folders}
    attack = run_item(item, {"solution.py": TAMPER}, isolation=backend, workdir_parent=work)
    # What the sandbox loaded came from the folder, and every change was refused: the
    # honest answer it also carries passes, and the folder is byte for byte as before.
    assert attack.passed, attack.tail
    assert sorted(p for p in shared._root().iterdir() if p.name.startswith("runtime-")) == folders
    assert {str(p): _digest(p) for p in folders} == before
    again = run_item(item, {"solution.py": HONEST}, isolation=backend, workdir_parent=work)
    assert again.passed, again.tail
    assert list(work.iterdir()) == []


def test_the_last_run_removes_it(
    tmp_path: Path, backend: Isolation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fork_server, "_USERS", 0)  # this test's run is the only one
    item = _item(tmp_path / "set")
    fork_server.acquire()
    try:
        assert run_item(item, {"solution.py": HONEST}, isolation=backend).passed
        scratch = shared._root()
        assert any(p.name.startswith("runtime-") for p in scratch.iterdir())
    finally:
        fork_server.release()
    assert not scratch.exists()


def test_an_executor_holds_the_servers_from_its_first_grade_to_close(
    tmp_path: Path, backend: Isolation, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalpin.run.executors import GradeJob, LocalExecutor

    monkeypatch.setattr(fork_server, "_USERS", 0)
    planned = LocalExecutor(1, isolation=backend)  # planned, never graded: holds nothing
    assert fork_server._USERS == 0
    planned.close()
    item = _item(tmp_path / "set")
    used = LocalExecutor(1, isolation=backend)
    assert used.grade(GradeJob(item, {"solution.py": HONEST}, seed=1)).passed
    assert fork_server._USERS == 1 and shared._ROOT is not None
    used.close()
    used.close()  # twice: released once
    assert fork_server._USERS == 0 and shared._ROOT is None
