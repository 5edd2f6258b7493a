"""Run files for tests, written through the real writer (not hand-typed JSON)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

from evalpin.core.read.runfile import RunWriter
from evalpin.core.records import SCHEMA, CaseRecord, FixturesInfo, RunHeader, Summary


def header(**over: Any) -> RunHeader:
    base: dict[str, Any] = {
        "schema": SCHEMA,
        "run_id": "r1",
        "started_at": "2026-11-29T02:00:00Z",
        "fixtures": FixturesInfo(
            path="fixtures/golden.jsonl",
            kind="golden",
            dataset_id="golden",
            dataset_hash="d" * 64,
        ),
        "grader_version": "g1",
        "model_slot": "night",
        "slot": {"provider": "replay"},
        "seeds": [11, 29, 47],
        "controls": {"temperature": 0.0, "seeds": [11, 29, 47]},
        "env_digest": "e" * 16,
        "env": {"python": "CPython 3.11"},
        "scorer_commit": "c" * 40,
    }
    if "seeds" in over and "controls" not in over:  # the header's two seed lists agree
        base["controls"] = {**base["controls"], "seeds": list(over["seeds"])}
    base.update(over)
    return RunHeader(**base)


def case(case_id: str, passed: bool, seed: int | None = 11, **over: Any) -> CaseRecord:
    base: dict[str, Any] = {
        "seed": seed,
        "fixture_hash": f"fh-{case_id}",
        "grader_version": "g1",
        "model_slot": "night",
        "reasons": [] if passed else ["missing_tool:lookup"],
        "tool_names": ["lookup"] if passed else [],
        "text_digest": "t" * 12,
        "completion_digest": f"cd-{case_id}-{seed}-{passed}",
        "seconds": 0.01,
        "loops": 0,
        "reported_model": "m-1",
    }
    base.update(over)
    return CaseRecord(case_id, passed, **base)


def write_run(
    path: Path,
    cases: list[CaseRecord],
    *,
    head: RunHeader | None = None,
    finished: bool = True,
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with RunWriter(path, new=True) as w:
        w.write(head or header())
        for c in cases:
            w.write(c)
        if finished:
            passed = sum(c.passed for c in cases)
            w.write(Summary("2026-11-29T02:05:00Z", records=len(cases), passed=passed))
    return path


def grid(outcomes: dict[str, list[bool]], seeds=(11, 29, 47), **over: Any) -> list[CaseRecord]:
    """One record per (case, seed) from a case -> per-seed pass list table."""
    return [
        case(cid, ok, seed, **over)
        for cid, oks in outcomes.items()
        for seed, ok in zip(seeds, oks, strict=True)
    ]


def vouched_whole(run: Path) -> bool:
    """Whether the run's trailer carries the CRC of every byte before it."""
    data = run.read_bytes()
    trailer = data.rstrip(b"\n").rsplit(b"\n", 1)[1]
    return json.loads(trailer).get("crc32") == zlib.crc32(data[: -len(trailer) - 1])


def coding_header(**over):
    fixtures = FixturesInfo(
        path="sets/repairs.yaml", kind="coding", dataset_id="repairs", dataset_hash="f" * 64
    )
    return header(fixtures=fixtures, model_slot="coder", grader_version="g1", **over)


def issue_example() -> tuple[dict[str, list[bool]], dict[str, list[bool]]]:
    """Issue 10: 200 cases x 3 seeds; 12 cases regress on every seed, 3 are fixed on
    every seed, 4 regress on one seed only; the rest keep their grades."""
    left: dict[str, list[bool]] = {}
    right: dict[str, list[bool]] = {}
    for i in range(200):
        cid = f"c{i:03d}"
        if i < 12:
            left[cid], right[cid] = [True] * 3, [False] * 3
        elif i < 15:
            left[cid], right[cid] = [False] * 3, [True] * 3
        elif i < 19:
            left[cid], right[cid] = [True] * 3, [False, True, True]
        else:
            left[cid] = right[cid] = [i % 3 != 0] * 3
    return left, right
