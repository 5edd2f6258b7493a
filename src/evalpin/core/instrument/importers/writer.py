"""Writing an imported benchmark as a sealed coding set: the YAML, one prompt, test and
reference file per item (and starting code), and the lock, built in a folder beside the
target and renamed into place, so a failed import leaves nothing half-written.

The set records where it came from (`source:`: the file, its sha256, its format, the
importer and its version), which the envelope hash covers like every byte of the YAML.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import (
    CANDIDATE_FILES,
    CODING_SCHEMA,
    FixtureSet,
    load_fixtures,
)
from evalpin.core.instrument.graders.coding import module_name
from evalpin.core.instrument.graders.surface import RUNTIME_MODULES
from evalpin.core.instrument.seal import write_lock

DEFAULT_TIMEOUT_S = 10.0
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class Item:
    """One problem, as the set will hold it: texts by role, not yet files."""

    id: str
    prompt: str
    test: str
    expected: str  # the file a candidate writes (`expected_files`, one)
    reference: str  # a known-good answer, in the item's `candidate:` convention
    starting: str | None  # the answer the prompt starts from (None: none to check)
    candidate: str = CANDIDATE_FILES
    test_name: str | None = None  # the test file's own name (the test imports by it)
    prompt_suffix: str = ".md"
    requires: tuple[str, ...] = ()  # modules the tests need (`requires:`)
    harness_timeout_s: float | None = None  # the benchmark harness's own limit


@dataclass(frozen=True)
class Source:
    """The file a benchmark was read from, and how."""

    path: Path
    sha256: str
    format: str
    importer: str
    skipped: list[str] = field(default_factory=list)  # items left out, each with why

    def to_yaml(self) -> dict[str, str]:
        return {
            "file": self.path.name,
            "sha256": self.sha256,
            "format": self.format,
            "importer": self.importer,
        }


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def stem(item_id: str) -> str:
    """A file name for an item id (`HumanEval/0` -> `HumanEval_0`)."""
    return _UNSAFE.sub("_", item_id).strip("._") or "item"


def _control(text: str) -> bool:
    return any(c < " " or "\x7f" <= c <= "\x9f" for c in text)


def refused_name(item: Item) -> str | None:
    """Why an item's names cannot be a set's, or None: its id holds a control character
    (a line break would make it two lines of every listing), or its candidate or test
    file would take a name the sandbox gives another file: one of evalpin's runtime
    modules (its own would shadow the candidate's), `conftest.py`, or each other's."""
    if not item.id.strip() or _control(item.id):
        return f"item id {item.id!r} is not one line of text"
    names = {"candidate file": item.expected, "test file": item.test_name or "test.py"}
    for role, name in names.items():
        top = (module_name(name) or "").split(".")[0]
        if _control(name):
            return f"item {item.id!r}: its {role} {name!r} holds a control character"
        if top in RUNTIME_MODULES or name == "conftest.py":
            return f"item {item.id!r}: its {role} {name!r} takes a name evalpin's sandbox uses"
    if item.expected == item.test_name:
        return f"item {item.id!r}: its candidate and test file are both {item.expected!r}"
    return None


def write_set(
    out: Path,
    items: list[Item],
    source: Source,
    *,
    dataset_id: str,
    dataset_version: str,
    frozen_at: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> FixtureSet:
    """Write the set into `out` (a new folder, or an empty one) and seal it; returns it
    as loaded. Refuses a non-empty `out`: an import never overwrites."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(out, "not an empty folder: an import never overwrites (choose --out)")
    if not items:
        raise InputError(source.path, "no problem to import")
    seen: dict[str, str] = {}
    for item in items:
        if why := refused_name(item):
            raise InputError(source.path, why)
        if stem(item.id) in seen:
            msg = f"items {seen[stem(item.id)]!r} and {item.id!r} would share file names"
            raise InputError(source.path, msg)
        seen[stem(item.id)] = item.id
    out.parent.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        name = f"{stem(dataset_id)}.yaml"
        doc = _document(items, source, dataset_id, dataset_version, frozen_at, timeout_s)
        for rel, text in _files(items).items():
            target = build / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8"))
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
        (build / name).write_text(text, encoding="utf-8")
        fs = load_fixtures(build / name)
        write_lock(fs)
        if out.exists():
            out.rmdir()
        os.replace(build, out)
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return load_fixtures(out / name)


_EMPTY = "starting/empty.py"


def _paths(item: Item) -> dict[str, str]:
    base = stem(item.id)
    folder = item.test_name and f"{base}/"
    paths = {
        "prompt": f"prompts/{base}{item.prompt_suffix}",
        "test": f"tests/{folder}{item.test_name}" if folder else f"tests/test_{base}.py",
        "reference": f"reference/{base}/{item.expected}",
    }
    if item.starting is not None:
        paths["starting"] = _EMPTY if item.starting == "" else f"starting/{base}/{item.expected}"
    return paths


def _files(items: list[Item]) -> dict[str, str]:
    files: dict[str, str] = {}
    for item in items:
        paths = _paths(item)
        files[paths["prompt"]] = item.prompt
        files[paths["test"]] = item.test
        files[paths["reference"]] = item.reference
        if "starting" in paths:
            files[paths["starting"]] = item.starting or ""
    return files


def _document(
    items: list[Item],
    source: Source,
    dataset_id: str,
    dataset_version: str,
    frozen_at: str | None,
    timeout_s: float,
) -> dict:
    frozen = frozen_at or dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    entries = []
    for item in items:
        paths = _paths(item)
        entry: dict = {
            "id": item.id,
            "language": "python",
            "prompt_file": paths["prompt"],
            "test_file": paths["test"],
            "timeout_s": timeout_s,
            "forbidden_imports": [],
            "expected_files": [item.expected],
        }
        if item.candidate != CANDIDATE_FILES:
            entry["candidate"] = item.candidate
        if item.requires:
            entry["requires"] = list(item.requires)
        if item.harness_timeout_s is not None:
            entry["harness_timeout_s"] = item.harness_timeout_s
        entry["reference_files"] = {item.expected: paths["reference"]}
        if "starting" in paths:
            entry["starting_files"] = {item.expected: paths["starting"]}
        entries.append(entry)
    return {
        "schema": CODING_SCHEMA,
        "dataset_id": dataset_id,
        "dataset_version": dataset_version,
        "frozen_at": frozen,
        "holdout_policy": "public",
        "source": source.to_yaml(),
        "items": entries,
    }
