from __future__ import annotations

from pathlib import Path

import pytest

from evalpin.core.judge.compare import compare
from evalpin.core.read.runfile import read_run
from tests.builders import case, grid, write_run


def runs(tmp_path: Path, left, right):
    return read_run(write_run(tmp_path / "l.jsonl", left)), read_run(
        write_run(tmp_path / "r.jsonl", right)
    )


def test_classifies_regressed_fixed_drift_and_unmoved(tmp_path: Path) -> None:
    left = [case("a", True), case("b", False), case("c", True), case("d", True)]
    right = [
        case("a", False),
        case("b", True),
        case("c", True, completion_digest="changed"),
        case("d", True),
    ]
    diff = compare(*runs(tmp_path, left, right))
    assert not diff.refused
    assert diff.compared == 4
    assert {(m.case_id, m.kind) for m in diff.moved} == {
        ("a", "regressed"),
        ("b", "fixed"),
        ("c", "drift"),
    }
    assert diff.counts() == {
        "regressed": 1,
        "fixed": 1,
        "drift": 1,
        "errored": 0,
        "disputed": 0,
        "recovered": 0,
    }


def test_joins_on_case_and_seed(tmp_path: Path) -> None:
    left = grid({"a": [True, True, True]})
    right = [*grid({"a": [True, False, True]}), case("new", True, 11)]
    diff = compare(*runs(tmp_path, left[:2], right))
    assert [(m.case_id, m.seed, m.kind) for m in diff.moved] == [("a", 29, "regressed")]
    assert diff.only_right == [("a", 47), ("new", 11)]
    assert diff.only_left == []


def test_refuses_on_each_triple_key(tmp_path: Path) -> None:
    for key, value in (("fixture_hash", "edited"), ("grader_version", "g2"), ("model_slot", "b")):
        left = [case("a", True), case("b", True)]
        right = [case("a", False, **{key: value}), case("b", True)]
        diff = compare(*runs(tmp_path / key, left, right))
        assert diff.refused, key
        assert diff.moved == []  # no regression is labelled on a refused pair
        [mismatch] = diff.key_mismatches()
        assert mismatch.key == key and mismatch.cases == 1


def test_repointed_slot_alias_is_a_mismatch(tmp_path: Path) -> None:
    left = grid({"a": [True] * 3, "b": [True] * 3})
    right = grid({"a": [True] * 3, "b": [False] * 3}, reported_model="m-2@fp_9")
    diff = compare(*runs(tmp_path, left, right))
    assert diff.refused
    [mismatch] = diff.key_mismatches()
    assert mismatch.key == "reported_model"
    assert mismatch.pairs == [("m-1", "m-2@fp_9", 6)]


def test_one_side_without_a_reported_model_is_not_a_repoint(tmp_path: Path) -> None:
    left = [case("a", True)]
    right = [case("a", False, reported_model=None, reasons=["no_completion"])]
    diff = compare(*runs(tmp_path, left, right))
    assert not diff.refused
    assert [m.kind for m in diff.moved] == ["regressed"]


def test_missing_pins_are_never_equal(tmp_path: Path) -> None:
    left = [case("a", True, grader_version=None)]
    right = [case("a", True, grader_version=None)]
    diff = compare(*runs(tmp_path, left, right))
    assert diff.refused
    assert diff.key_mismatches()[0].pairs == [("<missing>", "<missing>", 1)]


def test_backend_delta_has_every_common_case_and_no_regression_labels(tmp_path: Path) -> None:
    left = [case("a", True), case("b", True)]
    right = [case("a", False, model_slot="other"), case("b", True, model_slot="other")]
    diff = compare(*runs(tmp_path, left, right))
    delta = diff.backend_delta()
    assert [(d["case_id"], d["label"], d["differs"]) for d in delta] == [
        ("a", "backend_delta", True),
        ("b", "backend_delta", False),
    ]
    assert all("kind" not in d for d in delta)


def _summary(diff):
    return (
        diff.compared,
        sorted((m.case_id, m.seed, m.kind) for m in diff.moved),
        sorted(p.key for p in diff.mismatched),
        sorted(diff.only_left),
        sorted(diff.only_right),
        diff.duplicates,
    )


SCENARIOS = {
    "moved": (
        grid({"a": [True] * 3, "b": [False] * 3}),
        grid({"a": [True, False, True], "b": [True] * 3}),
    ),
    "slot-change": (
        grid({"a": [True] * 3}),
        grid({"a": [True] * 3}, model_slot="other"),
    ),
    "missing-pin": (
        grid({"a": [True] * 3}, fixture_hash=None),
        grid({"a": [True] * 3}, fixture_hash=None),
    ),
    "repointed": (
        grid({"a": [True] * 3}),
        grid({"a": [True] * 3}, reported_model="m-2"),
    ),
    "repeats": (
        [*grid({"a": [True] * 3}), case("a", False, 11)],
        [*grid({"a": [True] * 3}), case("a", True, 11)],
    ),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_aligned_and_joined_paths_agree(tmp_path: Path, name: str) -> None:
    left, right = SCENARIOS[name]
    in_order = compare(*runs(tmp_path / "in-order", left, right))
    shuffled = compare(*runs(tmp_path / "shuffled", left, list(reversed(right))))
    assert _summary(in_order) == _summary(shuffled)
    assert in_order.moved or in_order.mismatched
