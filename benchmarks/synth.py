"""Large synthetic run pairs for the benchmarks (same triple, a few percent moved)."""

from __future__ import annotations

import random
from pathlib import Path

from evalpin.core.read.runfile import RunWriter
from evalpin.core.records import SCHEMA, CaseRecord, FixturesInfo, RunHeader, Summary

SEEDS = (11, 29, 47)


def _header(run_id: str) -> RunHeader:
    return RunHeader(
        schema=SCHEMA,
        run_id=run_id,
        started_at="2026-11-29T02:00:00Z",
        fixtures=FixturesInfo(
            path="fixtures/bench.jsonl", kind="golden", dataset_id="bench", dataset_hash="b" * 64
        ),
        grader_version="0123456789ab",
        model_slot="bench_slot",
        slot={"provider": "replay"},
        seeds=list(SEEDS),
        controls={"temperature": 0.0, "seeds": list(SEEDS)},
        env_digest="e" * 16,
        scorer_commit="c" * 40,
    )


def _tail(rng: random.Random) -> str:
    lines = [f"tests/test_mod_{rng.randrange(99)}.py::test_case_{i} FAILED" for i in range(12)]
    text = " | ".join(lines) + " E   AssertionError: expected 'refund' in output" * 8
    return text[-800:]


def make_run(path: Path, n: int, *, variant: int, moved: float = 0.03) -> Path:
    """Write `n` case records; `variant` 1 flips/drifts a `moved` share of them."""
    rng = random.Random(7)
    flip = random.Random(99)
    with RunWriter(path, new=True) as w:
        w.write(_header(f"bench-{variant}"))
        passed = 0
        for i in range(n):
            case_id = f"case-{i // len(SEEDS):06d}"
            seed = SEEDS[i % len(SEEDS)]
            ok = rng.random() < 0.8
            digest = f"{rng.getrandbits(48):012x}"
            if variant and flip.random() < moved:
                if flip.random() < 0.5:
                    ok = not ok
                else:
                    digest = f"{flip.getrandbits(48):012x}"
            passed += ok
            w.write(
                CaseRecord(
                    case_id,
                    ok,
                    seed=seed,
                    fixture_hash=f"{i // len(SEEDS):016x}",
                    grader_version="0123456789ab",
                    model_slot="bench_slot",
                    reasons=[] if ok else ["missing_tool:lookup_order"],
                    tool_names=["lookup_order"] if ok else [],
                    text_digest=digest,
                    completion_digest=digest,
                    seconds=round(rng.uniform(0.2, 3.0), 3),
                    loops=0,
                    reported_model="bench-m@fp_1a2b",
                    tail=_tail(rng) if i % 3 == 0 else None,
                )
            )
        w.write(Summary("2026-11-29T03:00:00Z", records=n, passed=passed))
    return path


def make_pair(folder: Path, n: int) -> tuple[Path, Path]:
    """Two runs of `n` records each in `folder`, generated once and reused."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / f"left-{n}.jsonl", folder / f"right-{n}.jsonl"
    for variant, path in enumerate(paths):
        if not _vouched(path):  # made before the trailer's CRC: read the slow way, remade
            tmp = path.with_suffix(".tmp")
            tmp.unlink(missing_ok=True)
            make_run(tmp, n, variant=variant)
            tmp.rename(path)
    return paths


def _vouched(path: Path) -> bool:
    """Whether `path` exists and its trailer carries the writer's CRC (core/read/vouch.py)."""
    from evalpin.core.read.vouch import trailer_vouch

    if not path.exists():
        return False
    with open(path, "rb") as fh:
        return trailer_vouch(fh) is not None
