"""A one-item coding set on disk, as a user's would be, loaded by evalpin's own reader:
the harness every sandbox, witness and corpus test grades through."""

from __future__ import annotations

import json
from pathlib import Path

from evalpin.core.instrument.fixtures import CodingItem, load_fixtures


def one_item(
    folder: Path,
    test_file: str,
    test_source: str,
    expected: str,
    *,
    item_id: str,
    dataset: str,
    files: dict[str, str] | None = None,
    **entry: object,
) -> CodingItem:
    """`folder` (made, if it is not there) holds a `coding-eval/v1` set of one item:
    its prompt, `test_file`, any other `files`, and `set.yaml` (JSON, which is YAML) with
    the item's `entry` keys over the defaults."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prompt.md").write_text(f"Write {expected}.\n")
    (folder / test_file).write_text(test_source)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    item = {
        "id": item_id,
        "language": "python",
        "prompt_file": "prompt.md",
        "test_file": test_file,
        "expected_files": [expected],
        **entry,
    }
    doc = {"schema": "coding-eval/v1", "dataset_id": dataset, "dataset_version": "1"}
    (folder / "set.yaml").write_text(json.dumps({**doc, "items": [item]}))
    case = load_fixtures(folder / "set.yaml").cases[0]
    assert isinstance(case, CodingItem)
    return case
