"""Which cached bytecode beside a candidate's module an import would run instead of its
source (issue 48). A cache written while the tests ran is the candidate rewriting its
code only when the worker's own import system would use it: a `.pyc` under
`__pycache__` named for this interpreter, whose header matches the source as the worker
sees it (its modification time and size, or its hash), or an unchecked hash-based one,
which is used whatever the source says, and whose code is not this interpreter's own
compilation of that very source (a child process of the candidate's, `python -m pkg`
without `-B`, caches the source it graded: the same code). A cache that fails those
checks is never loaded: the stand-in's own bytecode written by a child process of the
tests (which compiles the stand-in it finds there), a stale or foreign one."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

_HEADER = 16


def cache_names(stem: str) -> tuple[str, ...]:
    """The cache files this interpreter's import of module `stem` reads, at every
    optimisation level."""
    tag = sys.implementation.cache_tag
    return (f"{stem}.{tag}.pyc", f"{stem}.{tag}.opt-1.pyc", f"{stem}.{tag}.opt-2.pyc")


def would_load(cache: bytes, source: bytes, source_stat: os.stat_result) -> bool:
    """Whether the import system would run `cache` in place of `source` (as
    `importlib._bootstrap_external` validates a cache before using it)."""
    if len(cache) < _HEADER or cache[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(cache[4:8], "little")
    if flags & ~0b11:
        return False
    if flags & 0b1:  # hash-based: checked against the source, or always used
        return not flags & 0b10 or cache[8:16] == importlib.util.source_hash(source)
    mtime = int(source_stat.st_mtime) & 0xFFFFFFFF
    size = source_stat.st_size & 0xFFFFFFFF
    return cache[8:16] == mtime.to_bytes(4, "little") + size.to_bytes(4, "little")


def own_compilation(cache: bytes, source: bytes, path: str, optimize: int) -> bool:
    """Whether `cache` holds exactly this interpreter's code for `source` imported from
    `path` (its header as the cache has it): never unmarshalled, compiled and compared."""
    import marshal

    try:
        code = compile(source, path, "exec", dont_inherit=True, optimize=optimize)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return cache[_HEADER:] == marshal.dumps(code)


def loaded_cache(source_path: Path, imported_as: str, source: bytes, read) -> str | None:
    """The name of a cache beside `source_path` (read with `read`, which never follows
    a link) that an import of `imported_as` (the path the worker's import sees) would
    run instead of the source's own code, or None."""
    try:
        source_stat = os.stat(source_path, follow_symlinks=False)
    except OSError:
        return None
    folder = source_path.parent / "__pycache__"
    for level, name in enumerate(cache_names(source_path.name.rsplit(".", 1)[0])):
        cache = read(folder / name)
        if cache is None or not would_load(cache, source, source_stat):
            continue
        if not own_compilation(cache, source, imported_as, level):
            return name
    return None
