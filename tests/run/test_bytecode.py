"""Which bytecode beside a candidate's module counts as the candidate rewriting its code
(issue 48, `run/bytecode.py`): only a cache the worker's import would run in place of
the source that is not the source's own compilation. A cache written by an ordinary
import (a child process of the candidate's) or of the stand-in (a child process of the
tests) is not one; a forged cache with a valid header, or an unchecked hash-based one,
is."""

from __future__ import annotations

import importlib._bootstrap_external as external
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from evalpin.run.bytecode import cache_names, loaded_cache
from evalpin.run.sandbox.box import read_regular

SOURCE = b"def answer():\n    return 41 + 1\n"
OTHER = b"def answer():\n    return 42\n"


def _module(tmp_path: Path) -> Path:
    path = tmp_path / "m.py"
    path.write_bytes(SOURCE)
    return path


def _cache(path: Path) -> Path:
    folder = path.parent / "__pycache__"
    folder.mkdir(exist_ok=True)
    return folder / cache_names("m")[0]


def _found(path: Path) -> str | None:
    return loaded_cache(path, str(path), SOURCE, read_regular)


def test_an_ordinary_imports_cache_is_the_source_itself(tmp_path: Path) -> None:
    path = _module(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import m"], cwd=tmp_path, env=env, check=True)
    assert _cache(path).exists()
    assert _found(path) is None


def test_the_stand_ins_cache_is_never_loaded_for_the_source(tmp_path: Path) -> None:
    path = _module(tmp_path)
    stand_in = b"# a stand-in, longer than the source it stands for\nimport sys\n"
    code = compile(stand_in, str(path), "exec", dont_inherit=True)
    stat = path.stat()
    _cache(path).write_bytes(external._code_to_timestamp_pyc(code, stat.st_mtime, len(stand_in)))
    assert _found(path) is None


def test_other_code_under_the_sources_header_is_a_rewrite(tmp_path: Path) -> None:
    path = _module(tmp_path)
    code = compile(OTHER, str(path), "exec", dont_inherit=True)
    stat = path.stat()
    _cache(path).write_bytes(external._code_to_timestamp_pyc(code, stat.st_mtime, stat.st_size))
    assert _found(path) == cache_names("m")[0]


def test_an_unchecked_hash_cache_is_a_rewrite_a_checked_stale_one_is_not(tmp_path: Path) -> None:
    path = _module(tmp_path)
    code = compile(OTHER, str(path), "exec", dont_inherit=True)
    stale = importlib.util.source_hash(OTHER)
    _cache(path).write_bytes(external._code_to_hash_pyc(code, stale, checked=True))
    assert _found(path) is None
    _cache(path).write_bytes(external._code_to_hash_pyc(code, stale, checked=False))
    assert _found(path) == cache_names("m")[0]


def test_an_optimised_cache_is_checked_too(tmp_path: Path) -> None:
    path = _module(tmp_path)
    code = compile(OTHER, str(path), "exec", dont_inherit=True, optimize=2)
    stat = path.stat()
    name = cache_names("m")[2]
    (path.parent / "__pycache__").mkdir()
    (path.parent / "__pycache__" / name).write_bytes(
        external._code_to_timestamp_pyc(code, stat.st_mtime, stat.st_size)
    )
    assert _found(path) == name
