"""`evalpin import`: a public benchmark's problem file (or folder) as a sealed coding set.

Shapes (`SHAPES`): `humaneval` (HumanEval, HumanEval+, MultiPL-E's Python half), `mbpp`
(MBPP, sanitized MBPP), `bigcodebench` and `dataframebench` (unittest modules run in one
namespace with the solution, their libraries recorded) and `exercises` (a folder per
exercise: Exercism's Python track, Aider's polyglot set). Each reads the user's own
file, never the network; the set it writes holds its provenance (`source:` file,
sha256, format, importer and version) and is sealed, and `evalpin check` passes it (each
reference passes, each starting code fails on a test).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evalpin._version import __version__
from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import FixtureSet
from evalpin.core.instrument.importers.benchmarks import humaneval_items, mbpp_items
from evalpin.core.instrument.importers.bigcodebench import (
    FREE,
    bigcodebench_items,
    dataframebench_items,
)
from evalpin.core.instrument.importers.exercises import exercise_items
from evalpin.core.instrument.importers.writer import (
    DEFAULT_TIMEOUT_S,
    Source,
    sha256_of,
    write_set,
)

# Each shape's importer version: moves when what it writes for the same input moves.
SHAPES = {"humaneval": 2, "mbpp": 2, "exercises": 1, "bigcodebench": 1, "dataframebench": 1}
# Their tasks fit models, plot and read files: the harnesses allow 30 s (DataFrameBench)
# and 240 s (BigCodeBench) where HumanEval's and MBPP's allow 3 s.
_TIMEOUTS = {"bigcodebench": 60.0, "dataframebench": 60.0}


def default_timeout(shape: str) -> float:
    return _TIMEOUTS.get(shape, DEFAULT_TIMEOUT_S)


@dataclass(frozen=True)
class Imported:
    """The set written, and the problems left out (each with why)."""

    fixtures: FixtureSet
    skipped: list[str]


def importer_name(shape: str) -> str:
    return f"evalpin {__version__} import {shape}/{SHAPES[shape]}"


def import_set(
    shape: str,
    source: Path,
    out: Path,
    *,
    dataset_id: str | None = None,
    dataset_version: str | None = None,
    frozen_at: str | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    library: str = FREE,
) -> Imported:
    """Read `source` as `shape` and write the set into the new folder `out`
    (`library`: DataFrameBench's condition, whose prompts are filled for it)."""
    if shape not in SHAPES:
        raise InputError(source, f"unknown shape {shape!r} (one of {', '.join(SHAPES)})")
    source = Path(source)
    importer = importer_name(shape)
    skipped: list[str] = []
    if shape == "exercises":
        items, digest, skipped = exercise_items(source)
    else:
        if shape == "dataframebench":
            items, raw = dataframebench_items(source, importer, library)
        else:
            read = {"humaneval": humaneval_items, "mbpp": mbpp_items}
            items, raw = read.get(shape, bigcodebench_items)(source, importer)
        digest = sha256_of(raw)
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise InputError(source, f"problem ids repeat: {', '.join(twice[:5])}")
    fs = write_set(
        out,
        items,
        Source(source, digest, shape, importer),
        dataset_id=dataset_id or _default_id(source),
        dataset_version=dataset_version or f"sha256-{digest[:12]}",
        frozen_at=frozen_at,
        timeout_s=timeout_s,
    )
    return Imported(fs, skipped)


def _default_id(source: Path) -> str:
    """`HumanEval.jsonl.gz` -> `HumanEval`; a folder by its name."""
    name = source.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name or "benchmark"
