"""DataFrameBench (BigCodeBench's tasks with a verified pandas and a verified polars
solution each, from the `dataframebench` wheel on the package index) as coding items:
the library-heavy corpus the issue measured (frames, figures, mocks).

The candidate is one file, `solution.py`: the task's verified solution for the chosen
library. The test is the task's own `unittest` code as BigCodeBench's harness runs it (in
the solution's namespace), written the way evalpin's own importers write a benchmark's
checks: the solution imported as a module and every name the test code uses but does not
bind taken from it (`testcode.free_names`), then the test code as written. A task whose
`libs` the running interpreter cannot import is left out (named, with the library).

The wheel is pinned (`WHEEL`, `SHA256`) and fetched by pip like the sdists
(`scripts/fetch_conformance.py --dataframebench`); its data files are read from the zip.
"""

from __future__ import annotations

import importlib.util
import json
import zipfile
from pathlib import Path

from conformance_items import Item

VERSION = "0.1.1"
SHA256 = "27e493ecd609cf0b947d83296ffba6c4b9e416f38f56fae455858a3e77b27390"
SPLITS = ("test", "val", "train")


def tasks(wheel: Path) -> list[dict]:
    with zipfile.ZipFile(wheel) as archive:
        return [
            json.loads(line)
            for split in SPLITS
            for line in archive.read(f"dataframebench/data/{split}.jsonl").splitlines()
            if line.strip()
        ]


def _missing(libs: list[str], library: str) -> list[str]:
    wanted = [library, *libs]
    return [lib for lib in wanted if importlib.util.find_spec(lib) is None]


def test_file(task: dict) -> str:
    """The task's tests as `evalpin import dataframebench` writes them (by name, with the
    harness's preset), so the corpus grades what a user's import would."""
    from evalpin.core.instrument.importers.testcode import PRESET, unittest_test

    return unittest_test(
        task["task_id"], "solution", task["test_code"], "benchmarks/conformance_dfb.py",
        PRESET["dataframebench"], "",
    )  # fmt: skip


def items(wheel: Path, library: str) -> list[Item]:
    out = []
    for task in tasks(wheel):
        item = Item(
            id=f"dfb-{library}:{task['task_id']}",
            project=f"dataframebench-{library}",
            test_name="test_task.py",
        )
        missing = _missing(task["libs"], library)
        if missing:
            item.dropped = f"needs {', '.join(missing)}"
        else:
            item.files = {"solution.py": task["ground_truth"][library]}
            item.test_source = test_file(task)
        out.append(item)
    return out
