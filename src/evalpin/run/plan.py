"""A run's plan: everything it needs, resolved and validated before anything is written
(`Plan`: the fixture set, the slot, the controls, where to write and grade), the header
that pins its instrument, and where its file goes by default.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalpin.core.instrument.fixtures import ISOLATION_IN_PROCESS, KIND_CODING, FixtureSet
from evalpin.core.instrument.pins import env_components, env_digest, grader_version, scorer_commit
from evalpin.core.instrument.publication import published
from evalpin.core.records import SCHEMA, FixturesInfo, RunHeader
from evalpin.run.controls import Controls
from evalpin.run.executors import GradingExecutor, LocalExecutor
from evalpin.run.pace import DEFAULT_CONCURRENCY
from evalpin.run.slots import SlotConfig

Pair = tuple[str, int]


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Plan:
    """Everything a run needs, resolved and validated before anything is written."""

    fixtures: FixtureSet
    fixtures_arg: str  # the fixture path as the user gave it (recorded, relative)
    slot_config: SlotConfig
    controls: Controls
    out: Path
    jobs: int
    workdir: Path | None = None
    isolation: Any = None  # sandbox.Isolation for coding sets
    concurrency: int = DEFAULT_CONCURRENCY
    # No --concurrency given: the limit is found, up to `concurrency` (run/pace.py).
    adaptive: bool = False
    grading: GradingExecutor | None = None  # None: graded in the runner's own threads
    lock: str | None = None  # the set against its lock: matched, edited, bumped, unsealed
    default_name: bool = False  # `out` was picked here: another free name if it is taken

    def grader(self) -> GradingExecutor:
        """Where coding items are graded (executors.py); local unless one was given."""
        if self.grading is None:
            self.grading = LocalExecutor(
                self.jobs,
                workdir=self.workdir,
                secret_names=self.slot_config.secret_env_names(),
                isolation=self.isolation,
            )
        return self.grading

    @property
    def workers(self) -> int:
        """Threads, each carrying one case: enough for `concurrency` completions in
        flight, and for `jobs` graders on a coding set. Threads help only when a case
        waits (a sandbox, a network or a program): golden cases on a provider that
        answers from memory run faster in one thread."""
        coding = self.fixtures.kind == KIND_CODING
        if not self.slot_config.threads_help:
            return self.jobs if coding else 1
        return max(self.jobs, self.concurrency) if coding else self.concurrency

    def execution(self) -> dict[str, Any]:
        """How the run is executed; recorded, never compared (not in the env digest)."""
        executor = self.grader().describe(self.controls.values())
        concurrency = f"auto (up to {self.concurrency})" if self.adaptive else self.concurrency
        return {"jobs": self.jobs, "concurrency": concurrency, "executor": executor}

    @property
    def pairs(self) -> list[Pair]:
        return [(case.id, seed) for case in self.fixtures.cases for seed in self.controls.seeds]

    def header(self) -> RunHeader:
        fs = self.fixtures
        values = self.controls.values()
        packages = ["pytest"] if fs.kind == KIND_CODING else []
        components = env_components(packages, values)
        if self.isolation is not None:
            components["sandbox"] = self.isolation.kind
        seal = published(fs.path, fs.envelope_hash)  # looked up before the run starts
        return RunHeader(
            schema=SCHEMA,
            run_id=uuid.uuid4().hex[:12],
            started_at=utc_now(),
            fixtures=FixturesInfo(
                path=self.fixtures_arg,
                kind=fs.kind,
                dataset_id=fs.dataset_id,
                dataset_version=fs.dataset_version,
                dataset_hash=fs.dataset_hash,
                network=fs.network_policy,
                holdout_policy=fs.holdout_policy,
                envelope_hash=fs.envelope_hash,
                files={name: sha[:16] for name, sha in sorted(fs.files.items())},
                lock=self.lock,
                source=fs.source,
            ),
            grader_version=grader_version(),
            model_slot=self.slot_config.label,
            slot=self._slot_settings(),
            seeds=list(self.controls.seeds),
            controls=values,
            env_digest=env_digest(components),
            env=components,
            scorer_commit=scorer_commit(fs.path.parent),
            control_sources=dict(self.controls.sources),
            graded_in_process=[
                c.id for c in fs.cases if getattr(c, "isolation", None) == ISOLATION_IN_PROCESS
            ],
            execution=self.execution(),
            seal=seal,
        )

    def _slot_settings(self) -> dict[str, Any]:
        """The slot's public settings and its settings digest (null for a slot that has
        none by design, which a reader tells from a run made before digests existed)."""
        digest = self.slot_config.settings_digest()
        return self.slot_config.header_settings() | {"settings_digest": digest}


def default_out(fixtures: FixtureSet, slot_label: str, runs_dir: Path = Path("runs")) -> Path:
    """runs/DATE-SLOT-HASH8.jsonl, numbered when taken (never overwritten)."""
    stem = f"{dt.date.today().isoformat()}-{slot_label}-{fixtures.dataset_hash[:8]}"
    candidate = runs_dir / f"{stem}.jsonl"
    n = 2
    while candidate.exists():
        candidate = runs_dir / f"{stem}-{n}.jsonl"
        n += 1
    return candidate


def default_jobs() -> int:
    return os.cpu_count() or 1
