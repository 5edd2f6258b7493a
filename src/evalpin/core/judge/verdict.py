"""The publish rule: may this run's score be published, and with what beside it?

Labels, first match wins: contaminated, uncontrolled, demo-note, internal,
exploratory-probe, publishable. A run on a `free` backend tier is at most internal; an
undeclared tier is allowed but noted. Every rule that fails is reported, not only the first,
so a reviewer sees all that stands between a run and publication.

The rule is decided here once, as a checklist (`Check`: rule, ok, value, why): the
label is the most severe failing check and the reasons are the failing checks' whys.
The CLI, the TUI's verdict screen and the publish card only display the checklist.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any

from evalpin.core import tiers
from evalpin.core.columns import Columns, judged, unjudged_rows
from evalpin.core.errors import InputError
from evalpin.core.instrument.fixtures import KIND_CODING
from evalpin.core.judge import stats
from evalpin.core.judge.disclosure import Disclosure, contamination, locate_fixtures
from evalpin.core.judge.limits_rule import limits_rule, witness_rule
from evalpin.core.judge.passk import PassAtK, pass_at_k, sample_counts
from evalpin.core.judge.power import Power, power
from evalpin.core.judge.published import case_seeds, publication_rule, seeds_rule
from evalpin.core.judge.unjudged import (
    Disputes,
    disputes,
    disputes_rule,
    errored_reasons,
    errors_rule,
)
from evalpin.core.read.rundata import SHAPE_EVALPIN, TRIPLE, RunFile, ToolScore
from evalpin.core.reasons import SANDBOX_ERROR
from evalpin.core.records import RunHeader

CONTAMINATED = "contaminated"
UNCONTROLLED = "uncontrolled"
DEMO_NOTE = "demo-note"
INTERNAL = "internal"
EXPLORATORY = "exploratory-probe"
PUBLISHABLE = "publishable"
LABELS = (CONTAMINATED, UNCONTROLLED, DEMO_NOTE, INTERNAL, EXPLORATORY, PUBLISHABLE)
DEFAULT_BAND = 0.05
MIN_SEEDS = 3
NOTHING_JUDGED = "nothing judged: not one case could be judged, so no pass rate, spread or interval"
NETWORK_ENFORCED = "off-enforced"
UNSUPPORTED = SANDBOX_ERROR("unsupported")


@dataclass(frozen=True)
class Pin:
    present: bool
    value: Any = None


@dataclass(frozen=True)
class Check:
    """One rule of the publish rule, applied: `label` is what the run falls to when the
    check fails, `why` says so in words (None when ok), `shown` is the value as every
    face displays it."""

    rule: str
    ok: bool
    value: Any
    shown: str
    why: str | None
    label: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "ok": self.ok, "value": self.value, "why": self.why}


@dataclass
class Verdict:
    """The label, every reason behind it, and what a published score must carry."""

    label: str
    reasons: list[str]
    pins: dict[str, Pin]
    checklist: list[Check]
    pass_rate: float | None
    pass_rate_by_seed: dict[int | None, float]
    spread: float
    band: float
    flaky_cases: list[str]
    repeat_mismatches: list[tuple[str, int | None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The same rates as counts with their 95% Wilson intervals, and how cases behaved
    # across seeds: what a published score carries beside it.
    rate_by_seed: dict[int | None, stats.Rate] = field(default_factory=dict)
    pooled_rate: stats.Rate | None = None
    stability: stats.Stability | None = None
    # What a comparison against this run could detect (Miller's power, from its variance).
    power: Power | None = None
    # Error cases (could not be judged) and disputed cases (plain pytest passed, the
    # witness did not): counted apart, never in a pass rate's denominator; `judged` is
    # that denominator, over every seed.
    errors: int = 0
    judged: int = 0
    error_reasons: dict[str, int] = field(default_factory=dict)
    # Another tool's own figure for the run, shown beside the pass rate with why the two
    # may differ (inspect's accuracy after its epochs reducer, promptfoo's counts).
    tool_score: ToolScore | None = None
    # A coding run's pass@k over its problems (each one's judged samples), with spread.
    pass_at_k: list[PassAtK] = field(default_factory=list)
    disputed: int = 0
    disputed_reasons: dict[str, int] = field(default_factory=dict)
    disputed_cases: list[str] = field(default_factory=list)

    @property
    def unstable(self) -> bool:
        return self.spread > self.band

    @property
    def label_meaning(self) -> str | None:
        """What a `publishable` label means beside an unstable spread, in one line every
        face shows under the label: the rule holds (pins, seeds), so the score may be
        published, but only with its per-seed rates and spread, and the spread says the
        task does not hold still under this prompt. None otherwise."""
        if self.label != PUBLISHABLE or not self.unstable or self.nothing_judged:
            return None
        return (
            f"publishable with its variance: the spread across seeds ({self.spread:.3f}) is"
            f" over the band ({self.band:.3f}), so the task is unstable under this prompt;"
            " publish the per-seed rates and the spread with the score"
        )

    @property
    def nothing_judged(self) -> bool:
        """Not one case could be judged: no pass rate, spread or interval exists (every
        face says `NOTHING_JUDGED` instead of a spread of 0 that reads as stable)."""
        return self.judged == 0

    @property
    def apart(self) -> str:
        """What the pass rate's denominator leaves out, in words every face shows:
        `2 error case(s), 1 disputed case(s)`; "" when every case was judged."""
        counts = ((self.errors, "error"), (self.disputed, "disputed"))
        return ", ".join(f"{n:,} {what} case(s)" for n, what in counts if n)

    @property
    def non_deterministic(self) -> bool:
        """A repeated (case, seed) did not reproduce its completion: every diff of this
        backend is suspect."""
        return bool(self.repeat_mismatches)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "reasons": self.reasons,
            "pins": {k: {"present": p.present, "value": p.value} for k, p in self.pins.items()},
            "checklist": [c.to_json() for c in self.checklist],
            "pass_rate": self.pass_rate,
            "pass_rate_by_seed": {str(s): r for s, r in self.pass_rate_by_seed.items()},
            "denominator": "judged cases (error and disputed cases counted apart)",
            "judged": self.judged,
            "errors": self.errors,
            "error_reasons": self.error_reasons,
            "disputed": self.disputed,
            "disputed_reasons": self.disputed_reasons,
            "disputed_cases": self.disputed_cases,
            "spread": None if self.nothing_judged else self.spread,
            "band": self.band,
            "unstable": self.unstable,
            "label_meaning": self.label_meaning,
            "flaky_cases": self.flaky_cases,
            "repeat_mismatches": [{"case_id": c, "seed": s} for c, s in self.repeat_mismatches],
            "non_deterministic": self.non_deterministic,
            "notes": self.notes,
            "intervals": {
                "method": "Wilson 95%",
                "pooled": self.pooled_rate.to_json() if self.pooled_rate else None,
                "by_seed": [{"seed": s, **r.to_json()} for s, r in self.rate_by_seed.items()],
            },
            "stability": self.stability.to_json() if self.stability else None,
            "power": self.power.to_json() if self.power else None,
            "tool_score": self.tool_score.to_json() if self.tool_score else None,
            "pass_at_k": [p.to_json() for p in self.pass_at_k],
        }


def judge(
    run: RunFile,
    *,
    disclosed: Disclosure | None = None,
    band: float = DEFAULT_BAND,
) -> Verdict:
    """Apply the publish rule to one run."""
    h = run.header
    dataset = run.dataset_hash
    seeds = case_seeds(run)  # the cases' own: a header that disagrees is refused
    pins = {
        "dataset_hash": Pin(bool(dataset), dataset),
        "scorer_commit": Pin(bool(h and h.scorer_commit), h.scorer_commit if h else None),
        "seeds": Pin(len(seeds) >= MIN_SEEDS, seeds),
        "env_digest": Pin(bool(h and h.env_digest), h.env_digest if h else None),
    }
    notes: list[str] = list(run.notes)  # what the reader said of another tool's log
    unjudged = unjudged_rows(run.rows)  # found once: the rules' counts and the judged rows
    error_reasons = errored_reasons(run, unjudged)
    dispute = disputes(run, unjudged)
    checks = checklist(run, pins, disclosed, notes, error_reasons, dispute)
    failed = [c for c in checks if not c.ok]
    label = min((LABELS.index(c.label) for c in failed), default=LABELS.index(PUBLISHABLE))
    rows = judged(run.rows, unjudged)  # rates, stability and power: over the judged cases
    columns = Columns(rows)  # each column built once, shared by the passes below
    by_seed = stats.rates_by_seed(rows, columns)
    rates = {s: r.rate for s, r in by_seed.items()}
    pooled = stats.pooled(by_seed.values())
    stability = stats.case_stability(rows, columns)
    return Verdict(
        label=LABELS[label],
        reasons=[c.why for c in failed if c.why],
        pins=pins,
        checklist=checks,
        pass_rate=pooled.rate if pooled else None,
        pass_rate_by_seed=rates,
        spread=stats.spread(rates),
        band=band,
        flaky_cases=list(stability.flaky_cases),
        repeat_mismatches=repeat_mismatches(run, columns if rows is run.rows else None),
        notes=notes,
        rate_by_seed=by_seed,
        pooled_rate=pooled,
        stability=stability,
        power=power(rows, columns=columns),
        errors=len(run.rows) - len(rows) - dispute.count,
        judged=len(rows),
        error_reasons=error_reasons,
        tool_score=run.tool_score,
        pass_at_k=pass_at_k(sample_counts(rows)) if coding_run(h) else [],
        disputed=dispute.count,
        disputed_reasons=dispute.reasons,
        disputed_cases=dispute.cases,
    )


def coding_run(header: RunHeader | None) -> bool:
    """An evalpin run of a coding set: pass@k is reported for it."""
    return header is not None and header.fixtures.kind == KIND_CODING


def cache_rule(run: RunFile, check: Callable[..., None]) -> None:
    """Answers another tool took from its cache (promptfoo's `cached: true`) were made by
    an earlier run, maybe of another backend: they measure nothing of the backend this
    run names, so the run is at most `internal` (as a free-tier or incomplete one), and
    the check says how to get fresh ones. Shown only when there are any."""
    if not run.cached:
        return
    why = (
        f"{run.cached} of {len(run.rows)} results answered from the tool's cache (cached: true):"
        " recorded by an earlier run, not a measurement of this run's backend; re-run"
        " without the cache (promptfoo eval --no-cache) before publishing"
    )
    check("fresh answers", False, run.cached, why, INTERNAL, shown=f"{run.cached} cached result(s)")


def probe_rules(run: RunFile, check: Callable[..., None], notes: list[str]) -> None:
    """What the slot's calibration probes said (run/probes.py), shown when it was probed:
    a backend whose probes answered otherwise after the run than before changed while
    it ran (at most `internal`); one that cannot be pinned, or that reports no
    fingerprint, is named."""
    h = run.header
    p = h.probes if h is not None else None
    if not p:
        return
    if p.get("failed"):
        notes.append(f"calibration probes not answered: {p['failed']}")
        return
    if not p.get("deterministic", True):
        notes.append(
            "the backend cannot be pinned: its slot is declared non-deterministic, so its "
            "probes are recorded, not compared"
        )
    elif not p.get("repeatable", True):
        notes.append(
            "the backend cannot be pinned: a calibration probe sent twice at temperature 0 "
            "got two answers (a prefix cache, batching), so probes are not compared"
        )
    if not p.get("fingerprint", False):
        notes.append(
            "the backend reports no fingerprint (system_fingerprint): only its probes can "
            "show that it changed under its label"
        )
    start = p.get("start")
    end = run.summary.probes_end if run.summary is not None else None
    if start and end:
        moved = end != start
        why = (
            "the backend changed while the run ran: its calibration probes answered "
            "otherwise after the last case than before the first"
        )
        check(
            "backend stable",
            not moved,
            end,
            why,
            INTERNAL,
            shown=("probes moved during the run" if moved else "probes alike before and after"),
        )


def in_process_rule(header: RunHeader | None, check: Callable[..., None]) -> None:
    """Issue 8: coding items graded in-process shared the process that decided their
    grade, so a pass is tamper-checked but not tamper-proof: at most `internal`. Shown
    only for runs that have such items."""
    items = header.graded_in_process if header is not None else []
    if items:
        shown = ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")
        why = f"in-process grading: coding items {shown} ran inside the pytest process"
        check("in-process grading", False, items, why, INTERNAL, shown=f"{len(items)} item(s)")


def envelope_rules(run: RunFile, check: Callable[..., None]) -> None:
    """The envelope (issue 25): shown when recorded; a set that no longer matches its
    lock, or that an earlier run beside this one saw under the same version with other
    files, is at most `internal`: the version string claims a set the run did not use."""
    h = run.header
    fx = h.fixtures if h is not None else None
    if fx is None or not fx.envelope_hash:
        return
    check("envelope hash", True, fx.envelope_hash, "", INTERNAL, shown=fx.envelope_hash)
    if fx.lock in ("edited", "bumped"):
        why = (
            "the set does not match its lock: edited without a dataset_version bump "
            "(evalpin seal --check names what moved)"
            if fx.lock == "edited"
            else "the dataset_version moved since the set was sealed: re-seal it (evalpin seal)"
        )
        check("sealed", False, fx.lock, why, INTERNAL, shown=f"lock {fx.lock}")
    elif fx.lock == "matched":
        check("sealed", True, fx.lock, "", INTERNAL, shown="matches its lock")
    from evalpin.core.judge.envelope import earlier_no_bump

    edits = earlier_no_bump(run.path, h)
    if edits:
        other, moved = edits[-1]
        why = f"{moved.describe()} since {Path(other).name}; {moved.flag()}"
        shown = f"{moved.describe()} under version {fx.dataset_version}"
        check("version bump", False, [o for o, _ in edits], why, INTERNAL, shown=shown)


def ungraded_cases(run: RunFile) -> list[str]:
    """Cases the grader could not judge (`sandbox_error:unsupported`). Only an evalpin
    coding run with a failed case can hold one; then one byte search of the mapped file,
    so runs without any (nearly all) decode nothing and read nothing into memory."""
    h = run.header
    failed = [i for i, row in enumerate(run.rows) if not row.passed]
    if h is None or h.fixtures.kind != KIND_CODING or not failed:
        return []
    if run.details is None:
        try:
            with (
                open(run.path, "rb") as fh,
                mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m,
            ):
                if m.find(UNSUPPORTED.encode()) < 0:
                    return []
        except (OSError, ValueError):  # unreadable, or empty (nothing to map)
            return []
    try:
        records = run.records(failed)
    except InputError:
        return []
    return sorted({rec.case_id for rec in records.values() if UNSUPPORTED in (rec.reasons or ())})


def _shown(value: Any) -> str:
    return "-" if value in (None, "", []) else str(value)


def checklist(
    run: RunFile,
    pins: dict[str, Pin],
    disclosed: Disclosure | None,
    notes: list[str],
    error_reasons: dict[str, int] | None = None,
    dispute: Disputes | None = None,
) -> list[Check]:
    """Every rule that applies to `run`, most severe label first; adds notes as found."""
    h = run.header
    controls = h.controls if h else {}
    checks: list[Check] = []

    def check(rule: str, ok: bool, value: Any, why: str, label: str, shown: str | None = None):
        shown = _shown(value) if shown is None else shown
        checks.append(Check(rule, ok, value, shown, None if ok else why, label))

    if disclosed is not None:
        fixtures, why = locate_fixtures(run)
        if why:
            notes.append(why)
        hits, more = contamination(run, fixtures, disclosed)
        notes += more
        shown = ", ".join(hits[:5]) + (f" and {len(hits) - 5} more" if len(hits) > 5 else "")
        check(
            "disclosure",
            not hits,
            hits,
            f"holdout cases disclosed in {disclosed.path}: {shown}",
            CONTAMINATED,
            shown=f"{len(hits)} holdout case(s) in {disclosed.path}",
        )

    if h is not None and h.fixtures.kind == KIND_CODING and h.fixtures.network != "allowed":
        network = controls.get("network")
        shown = "not recorded" if network is None else repr(network)
        check(
            "network",
            network == NETWORK_ENFORCED,
            network,
            f"fixtures forbid network; network control {shown}",
            UNCONTROLLED,
        )

    dataset = pins["dataset_hash"]
    check("dataset hash", dataset.present, dataset.value, "no fixture/dataset hash", DEMO_NOTE)
    envelope_rules(run, check)
    publication_rule(run, check, notes, INTERNAL)
    seeds_rule(run, check, INTERNAL)

    scorer = pins["scorer_commit"]
    dirty = str(scorer.value).endswith("-dirty")
    check(
        "scorer commit",
        scorer.present and not dirty,
        scorer.value,
        "scorer commit is dirty: fixtures had uncommitted changes"
        if scorer.present
        else "scorer commit missing",
        INTERNAL,
    )
    env = pins["env_digest"]
    check("env digest", env.present, env.value, "environment digest missing", INTERNAL)
    check(
        "complete",
        run.complete is not False,
        run.complete,
        f"run is incomplete ({run.incomplete_why})",
        INTERNAL,
        shown={True: "yes", False: f"no ({run.incomplete_why})", None: "unknown"}[run.complete],
    )
    error_reasons = errored_reasons(run) if error_reasons is None else error_reasons
    errors_rule(error_reasons, check, INTERNAL, ours=run.shape == SHAPE_EVALPIN)
    dispute = disputes(run) if dispute is None else dispute
    disputes_rule(dispute, check, INTERNAL)
    judged = len(run.rows) - sum(error_reasons.values()) - dispute.count
    if not judged:  # shown only when it fails: a run with nothing judged says so
        why = f"nothing judged: not one of the run's {len(run.rows)} case record(s) was judged"
        check("judged", False, 0, why, INTERNAL, shown=f"0 of {len(run.rows)} case(s) judged")
    ungraded = ungraded_cases(run)
    if ungraded:  # shown only when it fails: the wire could not carry what a test did
        shown = ", ".join(ungraded[:5]) + (
            f" and {len(ungraded) - 5} more" if len(ungraded) > 5 else ""
        )
        check(
            "fully graded",
            False,
            ungraded,
            f"not fully graded: {UNSUPPORTED} on {shown} (the grader's limit, not a fail)",
            INTERNAL,
            shown=f"{len(ungraded)} case(s) {UNSUPPORTED}",
        )
    settings = h.slot if h else None
    tier = tiers.tier_of(settings)
    check(
        "backend tier",
        tier != tiers.FREE,
        tier,
        tiers.NOT_FORMAL,
        INTERNAL,
        shown=f"{tier} (not declared)" if tier == tiers.UNKNOWN else tier,
    )
    if tier == tiers.UNKNOWN:
        odd = tiers.recorded_oddity(settings)
        notes.append(tiers.NOT_DECLARED + (f" (recorded {odd} is not a tier)" if odd else ""))
    in_process_rule(h, check)
    limits_rule(controls, check, INTERNAL)
    witness_rule(controls, check, INTERNAL)
    cache_rule(run, check)
    probe_rules(run, check, notes)

    seeds = pins["seeds"].value
    check(
        "seed list",
        pins["seeds"].present,
        seeds,
        f"{len(seeds)} seed(s); at least {MIN_SEEDS} needed",
        EXPLORATORY,
        shown=f"{', '.join(map(str, seeds))} (n={len(seeds)})" if seeds else "-",
    )
    temperature = controls.get("temperature")
    check(
        "temperature",
        temperature is not None,
        temperature,
        "temperature not recorded",
        EXPLORATORY,
        shown="not recorded" if temperature is None else str(temperature),
    )
    return checks


# What must match for two records to be repeats of one request: the (case, seed) and
# the triple. Controls are the run's own, so within a run they always match.
REPEAT_KEY = attrgetter("case_id", "seed", *TRIPLE)
DIGEST = attrgetter("completion_digest")


def repeat_mismatches(run: RunFile, columns: Columns | None = None) -> list[tuple[str, int | None]]:
    """(case, seed) pairs recorded more than once under the same triple whose completion
    digests differ (a run's controls are one for all its records). A record without a
    digest (no completion) is not evidence either way."""
    rows = run.rows
    if (columns or Columns(rows)).unique_keys:  # no repeats: nothing to check
        return []
    keyed = zip(map(REPEAT_KEY, rows), map(DIGEST, rows), strict=True)
    conflicts = stats.digest_conflicts(keyed)
    return list(dict.fromkeys((case_id, seed) for case_id, seed, *_ in conflicts))
