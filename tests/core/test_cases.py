"""The headless case table behind the review screen, and run discovery (`core.discovery`):
the default pair of `review`, headers and start times."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.judge.compare import compare
from evalpin.core.read.discovery import default_pair, peek_header
from evalpin.core.read.runfile import read_run
from evalpin.core.review.case_index import build_case_table
from evalpin.core.review.cases import ALL, COMPARE, DELTA, SINGLE, step
from tests.builders import grid, header, write_run
from tests.tuikit import pair


def table_of(left: Path, right: Path | None = None):
    lrun = read_run(left)
    if right is None:
        return build_case_table(lrun)
    rrun = read_run(right)
    return build_case_table(lrun, rrun, compare(lrun, rrun))


def statuses(table) -> dict[str, str]:
    return {c.case_id: c.status for c in table.cases}


def test_pair_statuses_counts_and_seed_summaries(tmp_path: Path) -> None:
    table = table_of(*pair(tmp_path))
    assert table.mode == COMPARE
    assert statuses(table) == {
        "a-steady": "unchanged",
        "b-breaks": "regressed",
        "c-mends": "fixed",
        "d-drifts": "drift",
        "e-flaky": "flaky",
        "f-gone": "only left",
        "g-new": "only right",
    }
    b = table.cases[1]
    assert (b.left_passed, len(b.left), b.right_passed, len(b.right)) == (3, 3, 2, 3)
    assert b.flaky  # right passes on some seeds only
    assert table.counts() == {
        "regressed": 1,
        "fixed": 1,
        "drift": 1,
        "errored": 0,
        "disputed": 0,
        "recovered": 0,
        "flaky": 1,  # e-flaky (b-breaks is flaky on the right too, counted as regressed)
        "unchanged": 1,
        "only left": 1,
        "only right": 1,
    }
    seeds = table.seeds(b)
    assert [s for s, _, _ in seeds] == [11, 29, 47]
    assert all(li is not None and ri is not None for _, li, ri in seeds)


def test_filters_search_and_stepping(tmp_path: Path) -> None:
    table = table_of(*pair(tmp_path))
    ids = lambda rows: [table.cases[i].case_id for i in rows]  # noqa: E731
    assert table.filters == (
        ALL,
        "changed",
        "regressed",
        "fixed",
        "drift",
        "errored",
        "flaky",
        "disputed",
    )
    assert ids(table.visible("changed")) == ["b-breaks", "c-mends", "d-drifts", "f-gone", "g-new"]
    assert ids(table.visible("regressed")) == ["b-breaks"]
    assert ids(table.visible("fixed")) == ["c-mends"]
    assert ids(table.visible("drift")) == ["d-drifts"]
    assert ids(table.visible("flaky")) == ["b-breaks", "e-flaky"]
    assert ids(table.visible(ALL, "MEND")) == ["c-mends"]
    assert ids(table.visible("regressed", "mend")) == []
    rows = table.visible(ALL)
    changed = table.changed_positions(rows)
    assert changed == [1, 2, 3, 5, 6]
    assert table.first_position(rows) == 1
    assert step(changed, 1, True) == 2
    assert step(changed, 3, True) == 5
    assert step(changed, 6, True) is None
    assert step(changed, 5, False) == 3
    assert step(changed, 1, False) is None
    with pytest.raises(ValueError):
        table.visible("differs")


def test_refused_pair_is_a_backend_delta_without_regression_labels(tmp_path: Path) -> None:
    table = table_of(*pair(tmp_path, right_over={"model_slot": "other"}))
    assert table.mode == DELTA
    found = set(statuses(table).values())
    assert not found & {"regressed", "fixed", "drift", "unchanged"}
    assert statuses(table)["b-breaks"] == "differs"
    assert statuses(table)["a-steady"] == "same"
    assert table.filters == (ALL, "differs", "flaky")
    assert all(c.mismatched for c in table.cases if c.left and c.right)


def test_single_run(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r.jsonl",
        grid({"ok": [True] * 3, "bad": [False] * 3, "wobbly": [True, False, True]}),
    )
    table = table_of(run)
    assert table.mode == SINGLE
    assert statuses(table) == {"ok": "pass", "bad": "fail", "wobbly": "flaky"}
    assert table.first_position(table.visible()) == 1


def test_default_pair_is_newest_beside_newest_earlier_on_same_fixtures(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cases = grid({"a": [True] * 3})
    old = write_run(runs / "a-old.jsonl", cases, head=header(started_at="2026-11-27T02:00:00Z"))
    mid = write_run(runs / "b-mid.jsonl", cases, head=header(started_at="2026-11-28T02:00:00Z"))
    other = write_run(
        runs / "c-other.jsonl",
        cases,
        head=header(
            started_at="2026-11-29T01:00:00Z",
            fixtures=header().fixtures.__class__(path="x", kind="golden", dataset_hash="f" * 64),
        ),
    )
    new = write_run(runs / "d-new.jsonl", cases, head=header(started_at="2026-11-29T02:00:00Z"))
    (runs / "notes.md").write_text("not a run")
    assert default_pair(runs) == (mid, new)
    # Newest by started_at, not by name or mtime.
    os.utime(old, (4_000_000_000, 4_000_000_000))
    assert default_pair(runs) == (mid, new)
    assert peek_header(other) is not None and peek_header(runs / "notes.md") is None


def test_default_pair_alone_and_mtime_fallback(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    only = write_run(runs / "only.jsonl", grid({"a": [True] * 3}))
    assert default_pair(runs) == (only, None)
    # Header-less case records: ordered by modification time, no fixture set to match.
    plain = runs / "plain.jsonl"
    plain.write_text('{"case_id": "a", "pass": true}\n')
    os.utime(plain, (4_000_000_000, 4_000_000_000))
    assert default_pair(runs) == (plain, None)


def test_default_pair_without_runs_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no runs folder"):
        default_pair(tmp_path / "runs")
    (tmp_path / "runs").mkdir()
    with pytest.raises(InputError, match="no runs"):
        default_pair(tmp_path / "runs")


def test_review_falls_back_to_the_bundled_demo(tmp_path: Path, monkeypatch) -> None:
    from evalpin.core.read import discovery

    runs = tmp_path / "runs"
    left, right, note = discovery.pair_to_review(runs)  # no ./runs: the demo that ships
    demo = discovery.bundled_demo()
    assert demo is not None and left.parent == demo and right is not None
    assert note is not None and "bundled demo" in note
    runs.mkdir()
    mine = write_run(runs / "mine.jsonl", grid({"a": [True] * 3}))
    assert discovery.pair_to_review(runs) == (mine, None, None)  # a run of one's own wins
    monkeypatch.setattr(discovery, "bundled_demo", lambda: None)
    with pytest.raises(InputError, match="no runs folder"):
        discovery.pair_to_review(tmp_path / "nothing")


def test_start_times_are_read_as_utc_everywhere() -> None:
    # One rule for the default pair and the history: no offset means UTC, never local.
    from datetime import UTC, datetime

    from evalpin.core.read.discovery import started_at

    noon = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert started_at("2026-11-29T12:00:00Z") == noon
    assert started_at("2026-11-29T12:00:00") == noon
    assert started_at("2026-11-29T14:00:00+02:00") == noon
    assert started_at("2026-11-29T14:00:00+02:00").tzinfo is UTC
    assert started_at("yesterday") is None and started_at(None) is None and started_at("") is None


def test_default_pair_orders_naive_and_offset_times_alike(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    cases = grid({"a": [True] * 3})
    # 01:30 UTC (written with +02:00) is earlier than 02:00 without an offset (UTC).
    early = write_run(
        runs / "z-early.jsonl", cases, head=header(started_at="2026-11-29T03:30+02:00")
    )
    late = write_run(runs / "a-late.jsonl", cases, head=header(started_at="2026-11-29T02:00:00"))
    assert default_pair(runs) == (early, late)


@pytest.mark.parametrize("refused", [False, True])
def test_a_prepared_table_answers_as_it_would_have_worked_out(
    tmp_path: Path, refused: bool
) -> None:
    paths = pair(tmp_path, {"model_slot": "other"} if refused else None)
    left, right = (read_run(p) for p in paths)
    worked_out = build_case_table(left, right, compare(left, right))
    prepared = build_case_table(left, right, compare(left, right))
    prepared.prepare()
    rows = prepared.visible()
    assert rows == worked_out.visible()
    assert prepared.counts() == worked_out.counts()
    assert prepared.changed_positions(rows) == worked_out.changed_positions(rows)
    assert prepared.first_position(rows) == worked_out.first_position(rows)
    assert prepared.visible("flaky") == worked_out.visible("flaky")
    assert prepared.mode == (DELTA if refused else COMPARE)
