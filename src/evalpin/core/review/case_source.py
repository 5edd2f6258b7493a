"""What a case asked, read back from the fixture set its run names, when it still holds.

A run's header names its fixture set as it was given (`fixtures.path`, relative to where
the run was made). To show a case's prompt beside its answers, the set is found again
(`locate`: the path as given, from the working folder, else from the run file's folder
and each folder above it), read and hashed once (`CaseSources.load`, kept per (file,
mtime, size), so stepping through cases never reads or hashes a set again), and a case is
shown only when the fixture hash its record carries is the hash the set gives that case
now. Otherwise there is one line saying why not (`Unavailable`): the file moved or is
gone, it cannot be read, the case is no longer in it, or it changed since the run.

Reading goes through `fixtures.load_fixtures`, so a coding item's files are held to the
set's folder by the same checks a run applies. No UI here: the detail pane calls
`locate` and `load` from a worker and `case`, which does no I/O, when it lays out.
"""

from __future__ import annotations

import ast
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalpin.core import syntax
from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import FIXTURE_KINDS, KIND_CODING, CodingItem, load_fixtures
from evalpin.core.instrument.pins import dataset_hash
from evalpin.core.records import FixturesInfo

TEXT_BYTES = 256 * 1024  # of a prompt or test file read for display
MAX_FIXTURE_BYTES = 64 << 20  # a set hashed to tell which candidate is the run's
SETS_KEPT = 4

Stamp = tuple[str, int, int]  # (file, mtime_ns, size)


@dataclass(frozen=True)
class CaseSource:
    """One case as its fixture set gives it now (its hash matched the record's)."""

    case_id: str
    kind: str  # golden or coding
    set_path: str  # the set's file, as shown (relative to the working folder if under it)
    fixture_hash: str
    # golden: the user's message; coding: the prompt file's text
    prompt: str = ""
    require_tools: tuple[str, ...] = ()
    forbid_tools: tuple[str, ...] = ()
    must_include: tuple[str, ...] = ()
    must_not: tuple[str, ...] = ()
    # coding: the prompt and test files (relative to the set's folder), the test file's
    # text, and each test's pytest name (`test_x`, `TestA::test_y`) -> its `def` line
    prompt_file: str | None = None
    test_file: str | None = None
    test_text: str | None = None
    tests: dict[str, int] = field(default_factory=dict)
    cut: bool = False  # a prompt or test file longer than TEXT_BYTES, shown in part


@dataclass(frozen=True)
class Unavailable:
    """Why the case is not shown, in one line."""

    message: str


@dataclass(frozen=True)
class Located:
    """A run's fixture set, looked for on disk: the file found, or why not."""

    given: str  # the path as the run header gives it
    kind: str
    shown: str  # how to name it in a message
    key: Stamp | None = None  # the file found, resolved, with its mtime and size
    problem: str | None = None


@dataclass
class LoadedSet:
    """A fixture set read once: each case as shown, by id, or why the set is unreadable."""

    key: Stamp
    kind: str
    cases: dict[str, CaseSource] = field(default_factory=dict)
    # coding: each item's referenced files as stamped when read (an edit to one moves
    # the item's hash though the YAML stays the same)
    stamps: dict[str, tuple[Stamp, ...]] = field(default_factory=dict)
    problem: str | None = None


def _stamp(path: Path) -> Stamp | None:
    try:
        st = path.stat()
    except (OSError, ValueError):
        return None
    return (str(path), st.st_mtime_ns, st.st_size)


def candidates(given: str, run_path: str | Path | None, cwd: Path) -> list[Path]:
    """Where a run's fixture path may be now: as given from `cwd` (an absolute path:
    only itself), then from the run file's folder and each folder above it."""
    path = Path(given)
    if path.is_absolute():
        return [path]
    out = [cwd / path]
    if run_path is not None:
        folder = Path(os.path.abspath(run_path)).parent
        out += [d / path for d in (folder, *folder.parents)]
    seen: set[str] = set()
    unique = []
    for p in out:
        text = os.path.normpath(p)
        if text not in seen:
            seen.add(text)
            unique.append(p)
    return unique


def _shown(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def bare_test_name(name: str) -> str:
    """A pytest name as a test file's functions are keyed: no file part, no parameters
    (`tests/test_a.py::TestA::test_y[1-2]` -> `TestA::test_y`)."""
    if ".py::" in name:
        name = name.rsplit(".py::", 1)[1]
    return re.sub(r"\[.*\]$", "", name.strip())


def def_lines(source: str) -> dict[str, int]:
    """Each function of a test file by its pytest name (`test_x`, `TestA::test_y`) -> the
    line of its `def`; by pattern when the file does not parse."""
    out: dict[str, int] = {}
    try:
        tree = syntax.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        for n, text in enumerate(source.splitlines(), start=1):
            found = re.match(r"\s*(?:async\s+)?def\s+(\w+)", text)
            if found and not text[:1].isspace():
                out.setdefault(found.group(1), n)
        return out

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.setdefault(prefix + node.name, node.lineno)
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}::")

    walk(tree.body, "")
    return out


def _text(path: Path) -> tuple[str, bool]:
    """A file's start as text (at most TEXT_BYTES), and whether it was cut."""
    with open(path, "rb") as fh:
        data = fh.read(TEXT_BYTES + 1)
    return data[:TEXT_BYTES].decode("utf-8", errors="replace"), len(data) > TEXT_BYTES


class CaseSources:
    """Fixture sets read once each and kept (a few), for any thread: `locate` and `load`
    touch the disk, `case` never does."""

    def __init__(self, kept: int = SETS_KEPT) -> None:
        self._kept = kept
        self._sets: OrderedDict[Stamp, LoadedSet] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[Stamp, threading.Lock] = {}
        self._located: dict[tuple[str, str, str, str], Located] = {}
        self._hashes: dict[Stamp, str] = {}  # each candidate set's dataset hash
        self.loads = 0  # sets read and hashed so far (tests count them)

    def locate(
        self,
        fixtures: FixturesInfo | None,
        run_path: str | Path | None,
        cwd: Path | None = None,
        case_id: str | None = None,
        *,
        fresh: bool = True,
    ) -> Located | None:
        """Find the run's fixture set on disk (a few `stat`s, no reading). None: the run
        names no golden or coding set (another tool's log, records without a header).
        With `case_id`, a kept coding set whose files for that case changed since they
        were read is dropped, so it is read again. `fresh=False`: what the last look for
        the same set found, with no I/O at all when there was one (a thread that must
        not give up the GIL to a busy loader for a `stat`)."""
        if fixtures is None or fixtures.kind not in FIXTURE_KINDS:
            return None
        memo = (fixtures.path, fixtures.kind, str(run_path), str(cwd))
        if not fresh:
            with self._lock:
                found = self._located.get(memo)
            if found is not None:
                return found
        located = self._locate(fixtures, run_path, cwd, case_id)
        with self._lock:
            if len(self._located) >= 64:
                self._located.clear()
            self._located[memo] = located
        return located

    def _locate(
        self,
        fixtures: FixturesInfo,
        run_path: str | Path | None,
        cwd: Path | None,
        case_id: str | None,
    ) -> Located:
        given, kind = fixtures.path, fixtures.kind
        if not given or "\x00" in given:
            return Located(given, kind, given, problem=f"the run names no {kind} fixture file")
        cwd = (cwd or Path.cwd()).resolve()
        found: list[Located] = []
        for path in candidates(given, run_path, cwd):
            try:
                if not path.is_file():
                    continue
                resolved = path.resolve()
            except (OSError, ValueError, RuntimeError):
                continue
            key = _stamp(resolved)
            if key is None:
                continue
            found.append(Located(given, kind, _shown(resolved, cwd), key))
            if self._same_set(key, fixtures):
                found = found[-1:]  # the very set the run read: no other place matters
                break
        if not found:
            message = f"the fixture file {given} has moved or is gone"
            return Located(given, kind, given, problem=message)
        located = found[0]  # none is the set as read: the nearest says what changed
        if case_id is not None and located.key is not None:
            self._check_files(located.key, case_id)
        return located

    def _same_set(self, key: Stamp, fixtures: FixturesInfo) -> bool:
        """Whether the file stamped `key` is the set the run read, byte for byte (its
        dataset hash; hashed once per stamp). A `fixtures/x.jsonl` of another project
        under the working folder must not pass for the one beside the run; each case's
        fixture hash then says whether the files it references moved too."""
        if not fixtures.dataset_hash:
            return False
        with self._lock:
            digest = self._hashes.get(key)
        if digest is None:
            try:
                with open(key[0], "rb") as fh:
                    data = fh.read(MAX_FIXTURE_BYTES + 1)
            except OSError:
                return False
            digest = dataset_hash(data) if len(data) <= MAX_FIXTURE_BYTES else ""
            with self._lock:
                if len(self._hashes) >= 64:
                    self._hashes.clear()
                self._hashes[key] = digest
        return digest == fixtures.dataset_hash

    def _check_files(self, key: Stamp, case_id: str) -> None:
        with self._lock:
            loaded = self._sets.get(key)
        if loaded is None or case_id not in loaded.stamps:
            return
        for stamp in loaded.stamps[case_id]:
            if _stamp(Path(stamp[0])) != stamp:
                with self._lock:
                    if self._sets.get(key) is loaded:
                        del self._sets[key]
                return

    def loaded(self, located: Located) -> LoadedSet | None:
        """The set as read, if it was (no I/O)."""
        if located.key is None:
            return None
        with self._lock:
            found = self._sets.get(located.key)
            if found is not None:
                self._sets.move_to_end(located.key)
            return found

    def load(self, located: Located) -> LoadedSet | None:
        """Read and hash the set once for its (file, mtime, size); threads asking for the
        same set at once wait for one reading. None: there is no file to read."""
        if located.key is None:
            return None
        key = located.key
        with self._lock:
            if key in self._sets:
                return self._sets[key]
            gate = self._loading.setdefault(key, threading.Lock())
        with gate:
            with self._lock:
                if key in self._sets:
                    return self._sets[key]
            try:
                loaded = self._read(located)
            except Exception as exc:  # a set that breaks the reader is a set not shown
                loaded = LoadedSet(key, located.kind)
                loaded.problem = f"the fixture set {located.shown} cannot be read now: {exc!r}"
            with self._lock:
                self._sets[key] = loaded
                self._sets.move_to_end(key)
                while len(self._sets) > self._kept:
                    self._sets.popitem(last=False)
                self._loading.pop(key, None)
                self.loads += 1
            return loaded

    def _read(self, located: Located) -> LoadedSet:
        assert located.key is not None
        path = Path(located.key[0])
        out = LoadedSet(located.key, located.kind)
        try:
            fixture_set = load_fixtures(path)
        except InputError as exc:
            out.problem = f"the fixture set {located.shown} cannot be read now: {exc.message}"
            return out
        except (OSError, ValueError, RecursionError, MemoryError) as exc:
            out.problem = f"the fixture set {located.shown} cannot be read now: {exc}"
            return out
        if fixture_set.kind != located.kind:
            now, then = fixture_set.kind, located.kind
            out.problem = f"{located.shown} is now a {now} set; the run used a {then} set"
            return out
        base = path.parent
        for case in fixture_set.cases:
            try:
                if isinstance(case, CodingItem):
                    source, stamps = _coding(case, base, located.shown)
                    out.stamps[case.id] = stamps
                else:
                    source = CaseSource(
                        case_id=case.id,
                        kind=located.kind,
                        set_path=located.shown,
                        fixture_hash=case.fixture_hash,
                        prompt=case.user,
                        require_tools=tuple(case.require_tools),
                        forbid_tools=tuple(case.forbid_tools),
                        must_include=tuple(case.must_include),
                        must_not=tuple(case.must_not),
                    )
            except (OSError, ValueError) as exc:
                out.problem = f"the fixture set {located.shown} cannot be read now: {exc}"
                return out
            out.cases[case.id] = source
        return out

    def case(
        self, located: Located, case_id: str, fixture_hash: str | None
    ) -> CaseSource | Unavailable | None:
        """The case if its set was read and it still holds (no I/O); why not, in one line;
        or None: the set has not been read yet (`load` it, then ask again)."""
        if located.problem is not None:
            return Unavailable(f"case not shown: {located.problem}")
        loaded = self.loaded(located)
        if loaded is None:
            return None
        if loaded.problem is not None:
            return Unavailable(f"case not shown: {loaded.problem}")
        source = loaded.cases.get(case_id)
        if source is None:
            return Unavailable(
                f"case not shown: {located.shown} no longer has this case"
                " (the set changed since the run)"
            )
        if not fixture_hash:
            return Unavailable(
                "case not shown: the run recorded no fixture hash for it,"
                f" so it cannot be matched to {located.shown}"
            )
        if source.fixture_hash != fixture_hash:
            return Unavailable(
                f"case not shown: it changed since the run (fixture hash {fixture_hash} then,"
                f" {source.fixture_hash} now in {located.shown})"
            )
        return source

    def lookup(
        self,
        fixtures: FixturesInfo | None,
        run_path: str | Path | None,
        case_id: str,
        fixture_hash: str | None,
        cwd: Path | None = None,
    ) -> CaseSource | Unavailable | None:
        """`locate`, `load` and `case` in one call (off the UI thread). None: the run names
        no fixture set of its own."""
        located = self.locate(fixtures, run_path, cwd, case_id)
        if located is None:
            return None
        self.load(located)
        found = self.case(located, case_id, fixture_hash)
        assert found is not None
        return found


def _coding(item: CodingItem, base: Path, shown: str) -> tuple[CaseSource, tuple[Stamp, ...]]:
    root = base.resolve()
    prompt, cut_prompt = _text(item.prompt_file)
    test, cut_test = _text(item.test_file)
    files: Sequence[Path] = (
        item.prompt_file,
        item.test_file,
        *item.reference_files.values(),
        *item.starting_files.values(),
    )
    stamps = tuple(s for s in map(_stamp, files) if s is not None)
    source = CaseSource(
        case_id=item.id,
        kind=KIND_CODING,
        set_path=shown,
        fixture_hash=item.fixture_hash,
        prompt=prompt,
        prompt_file=item.prompt_file.relative_to(root).as_posix(),
        test_file=item.test_file.relative_to(root).as_posix(),
        test_text=test,
        tests=def_lines(test),
        cut=cut_prompt or cut_test,
    )
    return source, stamps


SOURCES = CaseSources()
"""The process's kept fixture sets (the review's detail pane reads through it)."""
