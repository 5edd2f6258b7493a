"""Sealed fixture sets: golden JSONL and `coding-eval/v1` YAML, validated and hashed.

A case's fixture hash is what pins it: for a golden case the common recipe
`sha256(json.dumps(case, sort_keys=True, separators=(",", ":")))[:16]`, so records made by
other tools join with ours; for a coding item the same over the item plus the sha256 of
every file it references, so editing a test file moves the hash.

A golden file may open with one `{"defaults": {"tools": [..], "tool_results": {..}}}`
line: every case gets them (its own keys win), and its hash is taken over the case as it
is run, so a case the defaults do not touch keeps the common recipe byte for byte.

Both formats are closed (`core/schema.py`): a key the format does not list is refused
with its line and the nearest valid key; keys of one's own start with `x-` and are
hashed with the rest. Reading is bounded (`core/bounded.py`): size, nesting depth. A
`Problems` that collects (`evalpin check`) gets every problem of the set instead of the
first: a case or item with a problem is then left out of the set returned.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalpin.core.bounded import (
    MAX_CONFIG_BYTES,
    MAX_FIXTURE_BYTES,
    YamlDoc,
    loads,
    read_bounded,
    too_big,
    yaml_document,
)
from evalpin.core.errors import InputError
from evalpin.core.instrument.harness_keys import (  # noqa: F401 - the item's words, said here too
    CANDIDATE_COMPLETION,
    CANDIDATE_FILES,
    CANDIDATE_PROMPT_COMPLETION,
    CANDIDATE_STARTING_COMPLETION,
    CANDIDATES,
    HARNESS_KEYS,
    harness_keys,
)
from evalpin.core.instrument.pins import dataset_hash
from evalpin.core.instrument.provenance import source_of
from evalpin.core.instrument.tool_schema import (
    ToolSchemaError,
    check_results,
    check_tools,
    tool_name,
)
from evalpin.core.schema import Problems

KIND_GOLDEN = "golden"
KIND_CODING = "coding"
FIXTURE_KINDS = (KIND_GOLDEN, KIND_CODING)
CODING_SCHEMA = "coding-eval/v1"
# How a coding item's candidate runs: in a worker the tests reach only through plain data
# (the default), or inside the pytest process, graded with tamper checks.
ISOLATION_PROCESS = "process"
ISOLATION_IN_PROCESS = "in-process"
DEFAULT_MEMORY_MB = 1024


def envelope_hash(files: dict[str, str]) -> str:
    """sha256 over (relative path, sha256) of every file of the envelope, sorted."""
    text = json.dumps(sorted(files.items()), separators=(",", ":"))
    return hashlib.sha256(b"evalpin-envelope/v1\n" + text.encode()).hexdigest()


def case_hash(payload: dict[str, Any]) -> str:
    """The common per-case recipe (do not change: other tools' records join on it)."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class GoldenCase:
    """A tool-using assistant case: what the model must and must not do."""

    id: str
    user: str
    require_tools: list[str]
    forbid_tools: list[str]
    must_include: list[str]
    must_not: list[str]
    tools: list[Any]
    fixture_hash: str
    line: int
    tool_results: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        return self.user


@dataclass(frozen=True)
class CodingItem:
    """A coding repair item; paths are resolved and proven to stay in the set's folder."""

    id: str
    language: str
    prompt_file: Path
    test_file: Path
    timeout_s: float
    forbidden_imports: list[str]
    expected_files: list[str]
    fixture_hash: str
    isolation: str = ISOLATION_PROCESS
    memory_mb: int = DEFAULT_MEMORY_MB
    # `evalpin check`'s own: a known-good solution and the code the prompt starts from
    # (expected file name -> file in the set's folder). Never shown to a model.
    reference_files: dict[str, Path] = field(default_factory=dict)
    starting_files: dict[str, Path] = field(default_factory=dict)
    candidate: str = CANDIDATE_FILES
    requires: tuple[str, ...] = ()  # modules the tests need (`harness_keys.py`)
    harness_timeout_s: float | None = None  # the benchmark harness's own limit

    @property
    def prompt(self) -> str:
        return self.prompt_file.read_text(encoding="utf-8")


@dataclass(frozen=True)
class FixtureSet:
    """A loaded envelope: its identity, its hashes and its cases in file order.

    `dataset_hash` is the fixture file's bytes alone (the seed's own pin);
    `envelope_hash` covers the fixture file and every file its cases reference
    (`files`: path relative to the set's folder -> sha256), so an edit to a test file
    with the YAML untouched still moves it. The envelope is what a score is published
    with."""

    path: Path
    kind: str
    dataset_id: str
    dataset_version: str | None
    dataset_hash: str
    cases: list[GoldenCase] | list[CodingItem]
    frozen_at: str | None = None
    holdout_policy: str | None = None
    network_allowed: bool = False
    files: dict[str, str] = field(default_factory=dict)
    # Where the set came from (`source:`), as written: file, sha256, format, importer.
    source: dict[str, str] | None = None
    # Golden cases left out for repeating an id, kept when problems are collected so
    # `evalpin check` says what else is wrong with them (an empty must_include).
    shadowed: list[GoldenCase] = field(default_factory=list)

    @property
    def envelope_hash(self) -> str:
        return envelope_hash(self.files)

    @property
    def network_policy(self) -> str | None:
        if self.kind != KIND_CODING:
            return None
        return "allowed" if self.network_allowed else "forbidden"


def load_fixtures(path: str | Path, problems: Problems | None = None) -> FixtureSet:
    """Load a golden JSONL or coding YAML file; the kind is told by its suffix.

    InputError at the first problem; with a collecting `problems`, only for the file
    as a whole (unreadable, too large, not the format), the rest kept in `problems`."""
    p = Path(path)
    coding = p.suffix.lower() in (".yaml", ".yml")
    limit = MAX_CONFIG_BYTES if coding else MAX_FIXTURE_BYTES
    data = read_bounded(path, limit, folder="is a directory, not a fixture file")
    if not data.strip():
        raise InputError(path, "empty file")
    problems = problems if problems is not None else Problems(p)
    if coding:
        return _load_coding(p, data, problems)
    return _load_golden(p, data, problems)


# -- golden JSONL -------------------------------------------------------------------

_LIST_KEYS = ("require_tools", "forbid_tools", "must_include", "must_not")
# Every key a golden case may hold (beside `x-` keys of one's own: core/schema.py).
GOLDEN_KEYS = frozenset({"id", "user", *_LIST_KEYS, "tools", "tool_results"})
# What a set-level `{"defaults": {...}}` line (before the first case) may give every case.
_DEFAULT_KEYS = frozenset({"tools", "tool_results"})


def _golden_line(path: Path, raw: bytes, lineno: int) -> Any:
    """One line of a golden file as JSON, exactly (`bounded.loads`): UTF-8, within the
    depth limit, text, no key twice, no number JSON does not have."""
    return loads(raw, path, lineno)


def _load_golden(path: Path, data: bytes, problems: Problems) -> FixtureSet:
    cases: list[GoldenCase] = []
    shadowed: list[GoldenCase] = []
    seen: dict[str, int] = {}
    defaults: dict[str, Any] = {}
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = _golden_line(path, raw, lineno)
            if isinstance(obj, dict) and "defaults" in obj and "id" not in obj:
                if cases or defaults or seen:
                    msg = "a 'defaults' line must come once, before the first case"
                    raise InputError(path, msg, lineno)
                defaults = _defaults(path, obj, lineno, problems)
                continue
            case = _golden_case(path, _with_defaults(obj, defaults), lineno, problems)
            _tools_offered(path, case, obj, lineno, problems)
        except InputError as exc:
            problems.error(exc)
            continue
        if case.id in seen:
            msg = f"duplicate case id {case.id!r} (first on line {seen[case.id]})"
            problems.add(msg, lineno)
            shadowed.append(case)
            continue
        seen[case.id] = lineno
        cases.append(case)
    if not cases:  # not a set at all (a run file, say): unreadable as one, even for check
        if problems.found:
            first = problems.found[0]
            msg = f"not a golden set: no line is a case (the first problem: {first.message})"
            raise InputError(path, msg, first.line)
        raise InputError(path, "not a golden set: no line is a case")
    return FixtureSet(
        path=path,
        kind=KIND_GOLDEN,
        dataset_id=path.stem,
        dataset_version=None,
        dataset_hash=dataset_hash(data),
        cases=cases,
        files={path.name: dataset_hash(data)},
        shadowed=shadowed,
    )


def _golden_case(path: Path, obj: Any, lineno: int, problems: Problems) -> GoldenCase:
    if not isinstance(obj, dict):
        raise InputError(path, "case is not a JSON object", lineno)
    case_id = obj.get("id")
    shown = f"case {case_id!r}: " if isinstance(case_id, str) and case_id else ""
    problems.keys(obj, GOLDEN_KEYS, lineno, shown)
    if not isinstance(case_id, str) or not case_id:
        raise InputError(path, "case needs a non-empty string 'id'", lineno)
    if not isinstance(obj.get("user"), str):
        raise InputError(path, f"case {case_id!r}: 'user' must be a string", lineno)
    lists = {}
    for key in _LIST_KEYS:
        value = obj.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError(path, f"case {case_id!r}: '{key}' must be a list of strings", lineno)
        lists[key] = value
    tools = obj.get("tools", [])
    if not isinstance(tools, list):
        raise InputError(path, f"case {case_id!r}: 'tools' must be a list", lineno)
    tool_results = obj.get("tool_results", {})
    problem = _tool_results_problem(tool_results)
    if problem:
        raise InputError(path, f"case {case_id!r}: {problem}", lineno)
    return GoldenCase(
        id=case_id,
        user=obj["user"],
        tools=tools,
        tool_results=tool_results,
        fixture_hash=case_hash(obj),
        line=lineno,
        **lists,
    )


def _defaults(path: Path, obj: dict[str, Any], lineno: int, problems: Problems) -> dict[str, Any]:
    """The set-level defaults line: `{"defaults": {"tools": [..], "tool_results": {..}}}`."""
    defaults = obj["defaults"]
    problems.keys(obj, {"defaults"}, lineno, "a defaults line: ")
    if not isinstance(defaults, dict):
        raise InputError(path, 'a defaults line is exactly {"defaults": {...}}', lineno)
    problems.keys(defaults, _DEFAULT_KEYS, lineno, "defaults (tools, tool_results): ")
    tools = defaults.get("tools", [])
    if not isinstance(tools, list):
        raise InputError(path, "defaults: 'tools' must be a list", lineno)
    problem = _tool_results_problem(defaults.get("tool_results", {}))
    if problem:
        raise InputError(path, f"defaults: {problem}", lineno)
    try:
        check_tools(tools, "defaults: tools")
        names = (tool_name(t) for t in tools)
        check_results(defaults.get("tool_results", {}), filter(None, names), "defaults")
    except ToolSchemaError as exc:
        problems.unknown += exc.unknown
        raise InputError(path, str(exc), lineno) from None
    return defaults


def _tools_offered(
    path: Path, case: GoldenCase, own: dict[str, Any], lineno: int, problems: Problems
) -> None:
    """The case's tools as the function-calling schema defines them, and its own
    `tool_results` (not the defaults') each for a tool it offers (`tool_schema.py`)."""
    try:
        check_tools(case.tools, f"case {case.id!r}: tools")
        offered = filter(None, map(tool_name, case.tools))
        check_results(own.get("tool_results", {}), offered, f"case {case.id!r}: tool_results")
    except ToolSchemaError as exc:
        problems.unknown += exc.unknown  # a key the format lacks: not in its format (exit 3)
        raise InputError(path, str(exc), lineno) from None


def _with_defaults(obj: Any, defaults: dict[str, Any]) -> Any:
    """The case as it is run: the set's defaults filled in (a case's own tools replace
    the default list; its own tool_results win per tool). The fixture hash is taken over
    this, so a case with no defaults to apply hashes exactly as written."""
    if not defaults or not isinstance(obj, dict):
        return obj
    case = dict(obj)
    if defaults.get("tools") and "tools" not in case:
        case["tools"] = defaults["tools"]
    if defaults.get("tool_results"):
        own = case.get("tool_results", {})
        if not isinstance(own, dict):
            return case  # reported by the case's own check
        case["tool_results"] = {**defaults["tool_results"], **own}
    return case


def _tool_results_problem(value: Any) -> str | None:
    """Why `tool_results` is not a map from tool name to a result (or a non-empty list)."""
    if not isinstance(value, dict):
        return "'tool_results' must be an object mapping tool names to results"
    for name, result in value.items():
        if not name:
            return "'tool_results' has an empty tool name"
        if isinstance(result, list) and not result:
            return f"'tool_results' for {name!r} is an empty list (wrap a list result: [[]])"
    return None


# -- coding YAML --------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """YAML timestamps become ISO strings so the document hashes like JSON."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def contained(base: Path, rel: Any, path: Path, what: str) -> Path:
    """Resolve `rel` against `base` and refuse anything that leaves `base`."""
    if not isinstance(rel, str) or not rel:
        raise InputError(path, f"{what} must be a non-empty relative path")
    if Path(rel).is_absolute():
        raise InputError(path, f"{what} {rel!r} is absolute; paths must be relative")
    root = base.resolve()
    target = (base / rel).resolve()
    if not target.is_relative_to(root):
        raise InputError(path, f"{what} {rel!r} escapes the fixture folder")
    return target


# Every key a coding set may hold at its top level, and in each item (beside `x-` keys).
CODING_KEYS = frozenset(
    {"schema", "dataset_id", "dataset_version", "frozen_at", "holdout_policy", "network"}
    | {"items", "source"}
)
ITEM_KEYS = frozenset(
    {"id", "language", "prompt_file", "test_file", "timeout_s", "forbidden_imports"}
    | {"expected_files", "isolation", "memory_mb", "reference_files", "starting_files"}
    | HARNESS_KEYS
)


def _load_coding(path: Path, data: bytes, problems: Problems) -> FixtureSet:
    parsed = yaml_document(path, data, "fixture files")
    doc = _plain(parsed.value)
    if not isinstance(doc, dict):
        raise InputError(path, "expected a mapping at the top level", parsed.line())
    if doc.get("schema") != CODING_SCHEMA:
        msg = f"schema must be {CODING_SCHEMA!r}, got {doc.get('schema')!r}"
        raise InputError(path, msg, parsed.line("schema"))
    problems.keys(doc, CODING_KEYS, lines={k: parsed.line(k) for k in doc})
    for key in ("dataset_id", "dataset_version"):
        if not isinstance(doc.get(key), str | int | float) or doc.get(key) == "":
            problems.add(f"'{key}' is required", parsed.line(key))
    network = doc.get("network", "forbidden")
    if network not in ("allowed", "forbidden"):
        msg = f"'network' must be 'allowed' or 'forbidden', got {network!r}"
        problems.add(msg, parsed.line("network"))
    source = source_of(doc.get("source"), parsed, problems)
    items = doc.get("items")
    if not isinstance(items, list) or not items:
        problems.add("'items' must be a non-empty list", parsed.line("items"))
        items = items if isinstance(items, list) else []
    base = path.parent
    cases: list[CodingItem] = []
    seen: dict[str, int | None] = {}
    files = {path.name: dataset_hash(data)}
    for n, item in enumerate(items, start=1):
        at = _ItemLines(parsed, n - 1)
        try:
            case = _coding_item(path, base, item, n, files, at, problems)
        except InputError as exc:
            problems.error(exc if exc.line is not None else InputError(path, exc.message, at()))
            continue
        if case.id in seen:
            first = seen[case.id]
            msg = f"duplicate item id {case.id!r}" + (f" (first on line {first})" if first else "")
            problems.add(msg, at("id"))
            continue
        seen[case.id] = at("id")
        cases.append(case)
    return FixtureSet(
        path=path,
        kind=KIND_CODING,
        dataset_id=str(doc.get("dataset_id")),
        dataset_version=str(doc.get("dataset_version")),
        dataset_hash=dataset_hash(data),
        cases=cases,
        frozen_at=_opt_str(doc.get("frozen_at")),
        holdout_policy=_opt_str(doc.get("holdout_policy")),
        network_allowed=network == "allowed",
        files=files,
        source=source,
    )


@dataclass(frozen=True)
class _ItemLines:
    """The lines of one item of `items`: its own (no key), or one of its keys'."""

    doc: YamlDoc
    index: int

    def __call__(self, *keys: str) -> int | None:
        return self.doc.line("items", self.index, *keys)


@contextmanager
def _line(line: int | None) -> Iterator[None]:
    """An InputError raised inside, without a line of its own, gets `line`."""
    try:
        yield
    except InputError as exc:
        if exc.line is not None or line is None:
            raise
        raise InputError(exc.path, exc.message, line) from None


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _str_list(path: Path, item_id: str, item: dict, key: str) -> list[str]:
    value = item.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InputError(path, f"item {item_id!r}: '{key}' must be a list of strings")
    return value


def _read(path: Path, file: Path, what: str) -> bytes:
    """A file an item references, whole (it is hashed), within the fixture size cap."""
    try:
        size = file.stat().st_size
        if size > MAX_FIXTURE_BYTES:
            raise InputError(path, f"{what}: {too_big(size, MAX_FIXTURE_BYTES)}")
        return file.read_bytes()
    except OSError as exc:
        raise InputError(path, f"{what} cannot be read: {exc.strerror or exc}") from None


def _file_map(path: Path, base: Path, item: dict, key: str, expected: list[str]) -> dict:
    """`reference_files:` / `starting_files:`: expected file name -> file in the folder."""
    value = item.get(key, {})
    where = f"item {item['id']!r}:"
    if not isinstance(value, dict):
        raise InputError(path, f"{where} '{key}' must map expected file names to files")
    files = {}
    for name, rel in value.items():
        if name not in expected:
            raise InputError(path, f"{where} {key} names {name!r}, not one of expected_files")
        target = contained(base, rel, path, f"{where} {key} {name!r}")
        if not target.is_file():
            raise InputError(path, f"{where} {key} file {rel!r} does not exist")
        files[name] = target
    return files


def _coding_item(
    path: Path,
    base: Path,
    item: Any,
    n: int,
    envelope: dict[str, str],
    at: _ItemLines,
    problems: Problems,
) -> CodingItem:
    if not isinstance(item, dict):
        raise InputError(path, f"item {n} is not a mapping", at())
    item_id = item.get("id")
    shown = f"item {item_id!r}: " if isinstance(item_id, str) and item_id else f"item {n}: "
    problems.keys(item, ITEM_KEYS, at(), shown, {k: at(k) for k in item if isinstance(k, str)})
    if not isinstance(item_id, str) or not item_id:
        raise InputError(path, f"item {n} needs a non-empty string 'id'", at())
    where = f"item {item_id!r}:"
    with _line(at("prompt_file")):
        prompt = contained(base, item.get("prompt_file"), path, f"{where} prompt_file")
    with _line(at("test_file")):
        test = contained(base, item.get("test_file"), path, f"{where} test_file")
    for what, file in (("prompt_file", prompt), ("test_file", test)):
        if not file.is_file():
            raise InputError(path, f"{where} {what} {item[what]!r} does not exist", at(what))
    timeout = item.get("timeout_s")
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise InputError(path, f"{where} 'timeout_s' must be a positive number", at("timeout_s"))
    with _line(at("expected_files")):
        expected = _str_list(path, item_id, item, "expected_files")
    if not expected:
        msg = f"{where} 'expected_files' must name at least one file"
        raise InputError(path, msg, at("expected_files"))
    from evalpin.core.instrument.graders.surface import reserved_name  # the grader owns the rule

    for k, name in enumerate(expected):
        line = at("expected_files", k)
        if Path(name).is_absolute() or ".." in Path(name).parts or name.startswith("~"):
            msg = f"{where} expected file {name!r} must stay in the work folder"
            raise InputError(path, msg, line)
        if reserved_name(name, test.name):
            msg = f"{where} expected file {name!r} is reserved: a model may never write it"
            raise InputError(path, msg, line)
    language = item.get("language")
    if not isinstance(language, str) or not language:
        raise InputError(path, f"{where} 'language' is required", at("language"))
    isolation = item.get("isolation", ISOLATION_PROCESS)
    if isolation not in (ISOLATION_PROCESS, ISOLATION_IN_PROCESS):
        msg = f"{where} 'isolation' must be 'process' or 'in-process'"
        raise InputError(path, msg, at("isolation"))
    memory_mb = item.get("memory_mb", DEFAULT_MEMORY_MB)
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or memory_mb < 16:
        msg = f"{where} 'memory_mb' must be a whole number of MiB, at least 16"
        raise InputError(path, msg, at("memory_mb"))
    with _line(at("reference_files")):
        reference = _file_map(path, base, item, "reference_files", expected)
    with _line(at("starting_files")):
        starting = _file_map(path, base, item, "starting_files", expected)
    with _line(at("forbidden_imports")):
        forbidden = _str_list(path, item_id, item, "forbidden_imports")
    harness = harness_keys(path, item, where, at, expected, starting)
    referenced = {item["prompt_file"]: prompt, item["test_file"]: test}
    referenced |= {str(item["reference_files"][n]): f for n, f in reference.items()}
    referenced |= {str(item["starting_files"][n]): f for n, f in starting.items()}
    files = {
        rel: hashlib.sha256(_read(path, file, f"{where} {rel!r}")).hexdigest()
        for rel, file in referenced.items()
    }
    root = base.resolve()
    envelope.update({f.relative_to(root).as_posix(): files[rel] for rel, f in referenced.items()})
    return CodingItem(
        id=item_id,
        language=language,
        prompt_file=prompt,
        test_file=test,
        timeout_s=float(timeout),
        forbidden_imports=forbidden,
        expected_files=expected,
        fixture_hash=case_hash({**item, "referenced_files_sha256": files}),
        isolation=isolation,
        memory_mb=memory_mb,
        reference_files=reference,
        starting_files=starting,
        candidate=harness.candidate,
        requires=harness.requires,
        harness_timeout_s=harness.harness_timeout_s,
    )
