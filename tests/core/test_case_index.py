"""The case table built while the runs are read (`core.case_index`): what the partial
table may say, when the refusal is known, and that the finished index is exactly the
table of the runs read whole, whatever the order, the repeats or the block sizes."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evalpin.core.judge.compare import compare
from evalpin.core.read.runfile import read_run
from evalpin.core.records import CaseRow
from evalpin.core.review.case_index import CaseIndex, build_case_table
from evalpin.core.review.cases import (
    CHANGED_STATUS,
    COMPARE,
    DELTA,
    DIFFERS,
    PENDING,
)
from tests.builders import case, grid, write_run

# What a partial table must never say: movement and one-sidedness need the whole join.
FINAL_ONLY = {"regressed", "fixed", "drift", "only left", "only right"}


def grow(index: CaseIndex, left: list[CaseRow], right: list[CaseRow] | None, steps: list):
    """Feed `index` growing prefixes, as the readers do; yield after each step."""
    for nl, nr in steps:
        index.advance(left[:nl] if nl < len(left) else left, None if right is None else right[:nr])
        yield nl, nr


def test_a_regression_read_so_far_is_only_changed_until_the_end(tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({f"c{i}": [True] * 3 for i in range(8)}))
    outcomes = {f"c{i}": [True] * 3 for i in range(8)}
    outcomes["c1"] = [True, False, True]
    right = write_run(tmp_path / "r.jsonl", grid(outcomes))
    lrun, rrun = read_run(left), read_run(right)
    index = CaseIndex(pair=True)
    lrows, rrows = lrun.rows, rrun.rows
    # Both sides hold c0 and c1 whole, the left a little more.
    index.advance(lrows[:9], rrows[:6])
    table = index.table(lrun, rrun)
    assert table.partial and table.mode == COMPARE
    by_id = {c.case_id: c.status for c in table.cases}
    assert by_id == {"c0": "unchanged", "c1": CHANGED_STATUS, "c2": PENDING}
    assert table.counts() == {CHANGED_STATUS: 1, "flaky": 0, "unchanged": 1, PENDING: 1}
    assert table.filters == ("all", "changed", "flaky")
    assert table.changed_positions(table.visible()) == [1]
    final = index.finish(lrun, rrun, compare(lrun, rrun))
    assert not final.partial
    assert final.cases[1].case_id == "c1" and final.cases[1].status == "regressed"


def test_the_first_mismatched_pair_refuses_before_the_files_end(tmp_path: Path) -> None:
    left = grid({f"c{i}": [True] * 3 for i in range(10)})
    right = grid({f"c{i}": [True] * 3 for i in range(10)})
    right[20] = case("c6", True, right[20].seed, model_slot="other")  # c6, seed 47
    lrun = read_run(write_run(tmp_path / "l.jsonl", left))
    rrun = read_run(write_run(tmp_path / "r.jsonl", right))
    index = CaseIndex(pair=True)
    index.advance(lrun.rows[:20], rrun.rows[:20])
    assert index.mismatch is None and index.mode == COMPARE
    index.advance(lrun.rows[:21], rrun.rows[:21])
    assert index.mismatch is not None
    assert (index.mismatch[0].case_id, index.mismatch[1].model_slot) == ("c6", "other")
    table = index.table(lrun, rrun)
    assert table.mode == DELTA and table.filters == ("all", DIFFERS, "flaky")
    assert {c.status for c in table.cases} <= {"same", PENDING}
    assert [c.case_id for c in table.cases if c.mismatched] == ["c6"]


def test_a_missing_pin_on_equal_rows_is_a_mismatch(tmp_path: Path) -> None:
    records = grid({"a": [True] * 3, "b": [True] * 3})
    records[4] = case("b", True, 29, fixture_hash=None)
    lrun = read_run(write_run(tmp_path / "l.jsonl", records))
    rrun = read_run(write_run(tmp_path / "r.jsonl", records))
    index = CaseIndex(pair=True)
    index.advance(lrun.rows[:3], rrun.rows[:3])
    assert index.mismatch is None
    index.advance(lrun.rows, rrun.rows)
    assert index.mismatch is not None and index.mismatch[0].case_id == "b"
    assert compare(lrun, rrun).refused  # the join agrees


def _random_runs(rng: random.Random, tmp_path: Path, name: str):
    ids = [f"k{i:03d}" for i in range(rng.randrange(5, 40))]
    seeds = (11, 29, 47)
    left = [case(c, rng.random() < 0.7, s) for c in ids for s in seeds if rng.random() < 0.95]
    if name == "seed-major":  # every case's first seed, then every case's second...
        left.sort(key=lambda c: (c.seed, c.case_id))
    if name == "pinless" and left:  # an equal row missing a triple pin, after a refusal
        at = len(left) - 1 - rng.randrange(min(3, len(left)))
        left[at] = case(left[at].case_id, left[at].passed, left[at].seed, model_slot=None)
    right = []
    for rec in left:
        roll = rng.random()
        if roll < 0.05 and name != "pinless":  # (pinless: aligned, paired row by row)
            continue  # only left
        passed = rec.passed if roll < 0.85 else not rec.passed
        over = {}
        if rng.random() < 0.05:
            over["completion_digest"] = "moved"
        if name == "refused" and rng.random() < 0.03:
            over["grader_version"] = "g2"
        if rec.model_slot is None:
            over["model_slot"] = None
        right.append(case(rec.case_id, passed, rec.seed, **over))
    if name != "pinless":
        right += [case(f"new{i}", True, 11) for i in range(rng.randrange(3))]
    if name == "pinless" and right:  # the refusal comes first; the pin values stay
        first = right[0]  # the same (rows of both files still compare equal by type)
        right[0] = case(first.case_id, first.passed, first.seed, fixture_hash="fh-other")
    if name in ("shuffled", "refused"):
        rng.shuffle(right)
    if name == "repeats" and right:
        right += [right[rng.randrange(len(right))] for _ in range(3)]
    lrun = read_run(write_run(tmp_path / f"{name}-l.jsonl", left))
    rrun = read_run(write_run(tmp_path / f"{name}-r.jsonl", right))
    return lrun, rrun


SCENARIOS = ["aligned", "shuffled", "repeats", "refused", "seed-major", "pinless"]


@pytest.mark.parametrize("name", SCENARIOS)
@pytest.mark.parametrize("seed", range(6))
def test_grown_in_any_blocks_it_ends_as_the_table_of_the_whole_runs(
    tmp_path: Path, name: str, seed: int
) -> None:
    rng = random.Random(seed * 31 + len(name))
    lrun, rrun = _random_runs(rng, tmp_path, name)
    nl = nr = 0
    steps = []
    while nl < len(lrun.rows) or nr < len(rrun.rows):
        nl = min(len(lrun.rows), nl + rng.randrange(0, 9))
        nr = min(len(rrun.rows), nr + rng.randrange(0, 9))
        steps.append((nl, nr))
    index = CaseIndex(pair=True)
    for _ in grow(index, lrun.rows, rrun.rows, steps):
        table = index.table(lrun, rrun)
        shown = {c.status for c in table.cases}
        assert not shown & FINAL_ONLY, f"a partial table said {shown & FINAL_ONLY}"
        assert sum(table.counts().values()) == len(table.cases)
        changed = set(table.changed_positions(table.visible()))
        assert changed == {i for i, c in enumerate(table.cases) if c.status in table.changed}
    diff = compare(lrun, rrun)
    if name != "repeats":  # (a repeat's last record may replace a mismatched one)
        assert index.refused == diff.refused  # the banner came iff the join refuses
    # The index's join, told what its pairing found, is the join.
    assert _diff_facts(index.join(lrun, rrun)) == _diff_facts(diff)
    final = index.finish(lrun, rrun, diff)
    whole = build_case_table(lrun, rrun, diff)
    if name != "repeats":  # every case the join finds mismatched is marked, and no other
        marked = {c.case_id for c in final.cases if c.mismatched}
        assert marked == set(diff.mismatched.case_ids())
    assert final.mode == whole.mode == (DELTA if diff.refused else COMPARE)

    # The same cases, statuses and rows; listed in the order they were met while reading.
    def facts(table):
        return sorted(
            (c.case_id, c.status, c.flaky, c.mismatched, sorted(c.left), sorted(c.right))
            for c in table.cases
        )

    assert facts(final) == facts(whole)
    assert final.counts() == whole.counts()


def test_one_run_alone_grows_with_its_final_statuses(tmp_path: Path) -> None:
    run = read_run(
        write_run(tmp_path / "one.jsonl", grid({"a": [True, False, True], "b": [False] * 3}))
    )
    index = CaseIndex(pair=False)
    index.advance(run.rows[:4])
    assert [c.status for c in index.table(run, None).cases] == ["flaky", "fail"]
    assert [c.status for c in index.finish(run, None, None).cases] == ["flaky", "fail"]


def _diff_facts(diff):
    return (
        list(diff.common_left),
        list(diff.common_right),
        list(diff.mismatched),
        [(m.pair, m.kind) for m in diff.moved],
        diff.only_left,
        diff.only_right,
        diff.duplicates,
    )


def test_one_partial_table_steps_through_what_it_knows_as_it_grows(tmp_path: Path) -> None:
    # The review keeps one partial table while the runs are read: what n/p stop at is
    # merged in as it grows, and starts again when a mismatch turns it into a delta.
    outcomes = {f"c{i}": [True] * 3 for i in range(12)}
    right = dict(outcomes, c2=[True, False, True], c7=[False] * 3)
    rrecords = grid(right)
    rrecords[9 * 3] = case("c9", True, 11, model_slot="other")  # refuses at c9
    lrun = read_run(write_run(tmp_path / "l.jsonl", grid(outcomes)))
    rrun = read_run(write_run(tmp_path / "r.jsonl", rrecords))
    index = CaseIndex(pair=True)
    index.advance(lrun.rows[:9], rrun.rows[:9])
    table = index.table(lrun, rrun)
    assert table.changed_positions(table.visible()) == [2]
    index.advance(lrun.rows[:24], rrun.rows[:24])
    assert table.changed_positions(table.visible()) == [2, 7]
    index.advance(lrun.rows, rrun.rows)
    table.mode = index.mode  # as the loader does
    assert table.mode == DELTA
    assert table.changed_positions(table.visible()) == [2, 7]  # grades differ there
    assert [c.case_id for c in table.cases if c.mismatched] == ["c9"]


def test_one_run_alone_steps_through_its_failures_while_partial(tmp_path: Path) -> None:
    run = read_run(
        write_run(
            tmp_path / "one.jsonl",
            grid({"a": [True] * 3, "b": [False] * 3, "c": [True, False, True], "d": [True] * 3}),
        )
    )
    index = CaseIndex(pair=False)
    index.advance(run.rows[:8])  # c's first two seeds: one passed, one failed
    table = index.table(run, None)
    assert [c.status for c in table.cases] == ["pass", "fail", "flaky"]
    assert table.changed_positions(table.visible()) == [1, 2]
