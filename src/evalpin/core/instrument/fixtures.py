"""Sealed fixture sets: golden JSONL and `coding-eval/v1` YAML, validated and hashed.

A case's fixture hash is what pins it: for a golden case the common recipe
`sha256(json.dumps(case, sort_keys=True, separators=(",", ":")))[:16]`, so records made by
other tools join with ours; for a coding item the same over the item plus the sha256 of
every file it references, so editing a test file moves the hash.

A golden file may open with one `{"defaults": {"tools": [..], "tool_results": {..}}}`
line: every case gets them (its own keys win), and its hash is taken over the case as it
is run, so a case the defaults do not touch keeps the common recipe byte for byte.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalpin.core.errors import InputError
from evalpin.core.files import not_utf8, read_input
from evalpin.core.instrument.pins import dataset_hash

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

    @property
    def envelope_hash(self) -> str:
        return envelope_hash(self.files)

    @property
    def network_policy(self) -> str | None:
        if self.kind != KIND_CODING:
            return None
        return "allowed" if self.network_allowed else "forbidden"


def load_fixtures(path: str | Path) -> FixtureSet:
    """Load a golden JSONL or coding YAML file; the kind is told by its suffix."""
    p = Path(path)
    data = read_input(path, folder="is a directory, not a fixture file")
    if not data.strip():
        raise InputError(path, "empty file")
    if p.suffix.lower() in (".yaml", ".yml"):
        return _load_coding(p, data)
    return _load_golden(p, data)


# -- golden JSONL -------------------------------------------------------------------

_LIST_KEYS = ("require_tools", "forbid_tools", "must_include", "must_not")
# What a set-level `{"defaults": {...}}` line (before the first case) may give every case.
_DEFAULT_KEYS = frozenset({"tools", "tool_results"})


def _load_golden(path: Path, data: bytes) -> FixtureSet:
    cases: list[GoldenCase] = []
    seen: dict[str, int] = {}
    defaults: dict[str, Any] = {}
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise InputError(path, not_utf8(raw, bad), lineno) from None
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"not JSON: {exc.msg} at column {exc.colno}", lineno) from None
        except RecursionError:
            raise InputError(path, "JSON nested too deeply", lineno) from None
        if isinstance(obj, dict) and "defaults" in obj and "id" not in obj:
            if cases or defaults:
                msg = "a 'defaults' line must come once, before the first case"
                raise InputError(path, msg, lineno)
            defaults = _defaults(path, obj, lineno)
            continue
        case = _golden_case(path, _with_defaults(obj, defaults), lineno)
        if case.id in seen:
            msg = f"duplicate case id {case.id!r} (first on line {seen[case.id]})"
            raise InputError(path, msg, lineno)
        seen[case.id] = lineno
        cases.append(case)
    return FixtureSet(
        path=path,
        kind=KIND_GOLDEN,
        dataset_id=path.stem,
        dataset_version=None,
        dataset_hash=dataset_hash(data),
        cases=cases,
        files={path.name: dataset_hash(data)},
    )


def _golden_case(path: Path, obj: Any, lineno: int) -> GoldenCase:
    if not isinstance(obj, dict):
        raise InputError(path, "case is not a JSON object", lineno)
    case_id = obj.get("id")
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


def _defaults(path: Path, obj: dict[str, Any], lineno: int) -> dict[str, Any]:
    """The set-level defaults line: `{"defaults": {"tools": [..], "tool_results": {..}}}`."""
    defaults = obj["defaults"]
    if set(obj) != {"defaults"} or not isinstance(defaults, dict):
        raise InputError(path, 'a defaults line is exactly {"defaults": {...}}', lineno)
    unknown = sorted(set(defaults) - _DEFAULT_KEYS)
    if unknown:
        msg = f"defaults may give only tools and tool_results, not {unknown[0]!r}"
        raise InputError(path, msg, lineno)
    if not isinstance(defaults.get("tools", []), list):
        raise InputError(path, "defaults: 'tools' must be a list", lineno)
    problem = _tool_results_problem(defaults.get("tool_results", {}))
    if problem:
        raise InputError(path, f"defaults: {problem}", lineno)
    return defaults


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


def yaml_document(path: Path, data: bytes, what: str = "fixture files") -> Any:
    """Parse with `yaml.safe_load`, after refusing aliases (the billion-laughs shape)."""
    import yaml  # imported here: only YAML inputs pay for it

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data[: bad.start].count(b"\n") + 1
        raise InputError(path, not_utf8(data, bad), line) from None
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                line = event.start_mark.line + 1
                raise InputError(path, f"YAML aliases are not allowed in {what}", line)
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InputError(
            path, f"invalid YAML: {problem}", mark.line + 1 if mark else None
        ) from None


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


def _load_coding(path: Path, data: bytes) -> FixtureSet:
    doc = _plain(yaml_document(path, data))
    if not isinstance(doc, dict):
        raise InputError(path, "expected a mapping at the top level")
    if doc.get("schema") != CODING_SCHEMA:
        raise InputError(path, f"schema must be {CODING_SCHEMA!r}, got {doc.get('schema')!r}")
    for key in ("dataset_id", "dataset_version"):
        if not isinstance(doc.get(key), str | int | float) or doc.get(key) == "":
            raise InputError(path, f"'{key}' is required")
    network = doc.get("network", "forbidden")
    if network not in ("allowed", "forbidden"):
        raise InputError(path, f"'network' must be 'allowed' or 'forbidden', got {network!r}")
    items = doc.get("items")
    if not isinstance(items, list) or not items:
        raise InputError(path, "'items' must be a non-empty list")
    base = path.parent
    cases: list[CodingItem] = []
    seen: set[str] = set()
    files = {path.name: dataset_hash(data)}
    for n, item in enumerate(items, start=1):
        case = _coding_item(path, base, item, n, files)
        if case.id in seen:
            raise InputError(path, f"duplicate item id {case.id!r}")
        seen.add(case.id)
        cases.append(case)
    return FixtureSet(
        path=path,
        kind=KIND_CODING,
        dataset_id=str(doc["dataset_id"]),
        dataset_version=str(doc["dataset_version"]),
        dataset_hash=dataset_hash(data),
        cases=cases,
        frozen_at=_opt_str(doc.get("frozen_at")),
        holdout_policy=_opt_str(doc.get("holdout_policy")),
        network_allowed=network == "allowed",
        files=files,
    )


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _str_list(path: Path, item_id: str, item: dict, key: str) -> list[str]:
    value = item.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InputError(path, f"item {item_id!r}: '{key}' must be a list of strings")
    return value


def _read(path: Path, file: Path, what: str) -> bytes:
    try:
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


def _coding_item(path: Path, base: Path, item: Any, n: int, envelope: dict[str, str]) -> CodingItem:
    if not isinstance(item, dict):
        raise InputError(path, f"item {n} is not a mapping")
    item_id = item.get("id")
    if not isinstance(item_id, str) or not item_id:
        raise InputError(path, f"item {n} needs a non-empty string 'id'")
    where = f"item {item_id!r}:"
    prompt = contained(base, item.get("prompt_file"), path, f"{where} prompt_file")
    test = contained(base, item.get("test_file"), path, f"{where} test_file")
    for what, file in (("prompt_file", prompt), ("test_file", test)):
        if not file.is_file():
            raise InputError(path, f"{where} {what} {item[what]!r} does not exist")
    timeout = item.get("timeout_s")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise InputError(path, f"{where} 'timeout_s' must be a positive number")
    expected = _str_list(path, item_id, item, "expected_files")
    if not expected:
        raise InputError(path, f"{where} 'expected_files' must name at least one file")
    from evalpin.core.instrument.graders.surface import reserved_name  # the grader owns the rule

    for name in expected:
        if Path(name).is_absolute() or ".." in Path(name).parts or name.startswith("~"):
            raise InputError(path, f"{where} expected file {name!r} must stay in the work folder")
        if reserved_name(name, test.name):
            raise InputError(
                path, f"{where} expected file {name!r} is reserved: a model may never write it"
            )
    language = item.get("language")
    if not isinstance(language, str) or not language:
        raise InputError(path, f"{where} 'language' is required")
    isolation = item.get("isolation", ISOLATION_PROCESS)
    if isolation not in (ISOLATION_PROCESS, ISOLATION_IN_PROCESS):
        raise InputError(path, f"{where} 'isolation' must be 'process' or 'in-process'")
    memory_mb = item.get("memory_mb", DEFAULT_MEMORY_MB)
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or memory_mb < 16:
        raise InputError(path, f"{where} 'memory_mb' must be a whole number of MiB, at least 16")
    reference = _file_map(path, base, item, "reference_files", expected)
    starting = _file_map(path, base, item, "starting_files", expected)
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
        forbidden_imports=_str_list(path, item_id, item, "forbidden_imports"),
        expected_files=expected,
        fixture_hash=case_hash({**item, "referenced_files_sha256": files}),
        isolation=isolation,
        memory_mb=memory_mb,
        reference_files=reference,
        starting_files=starting,
    )
