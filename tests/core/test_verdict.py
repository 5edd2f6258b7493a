from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalpin.core.errors import InputError
from evalpin.core.judge.verdict import Disclosure, judge
from evalpin.core.read.runfile import read_run
from evalpin.core.records import FixturesInfo
from tests.builders import case, grid, header, write_run
from tests.conftest import GOLDEN_CASES


def verdict_of(tmp_path: Path, cases=None, finished=True, disclosed=None, band=0.05, **head):
    if cases is None:  # the cases name the header's seeds (a header is a fact of its run)
        seeds = tuple(head.get("seeds") or (11, 29, 47))
        oks = {"a": [True] * len(seeds), "b": [k != 1 for k in range(len(seeds))]}
        cases = grid(oks, seeds=seeds)
    path = write_run(tmp_path / "run.jsonl", cases, head=header(**head), finished=finished)
    return judge(read_run(path), disclosed=disclosed, band=band)


def test_publishable_reports_rates_spread_and_flaky(tmp_path: Path) -> None:
    v = verdict_of(tmp_path)
    assert v.label == "publishable" and v.reasons == []
    assert v.pass_rate_by_seed == {11: 1.0, 29: 0.5, 47: 1.0}
    assert v.spread == 0.5 and v.unstable
    assert v.flaky_cases == ["b"]
    assert all(p.present for p in v.pins.values())


@pytest.mark.parametrize(
    ("head", "label", "reason"),
    [
        ({"fixtures": FixturesInfo(path="f", kind="golden")}, "demo-note", "no fixture"),
        ({"scorer_commit": None}, "internal", "scorer commit missing"),
        ({"scorer_commit": "abc-dirty"}, "internal", "dirty"),
        ({"env_digest": None}, "internal", "environment digest missing"),
        ({"seeds": [11, 29]}, "exploratory-probe", "2 seed(s)"),
        ({"controls": {"seeds": [11, 29, 47]}}, "exploratory-probe", "temperature not recorded"),
        (
            {
                "fixtures": FixturesInfo(
                    path="f", kind="coding", dataset_hash="h", network="forbidden"
                ),
                "controls": {"temperature": 0, "network": "off-unenforced"},
            },
            "uncontrolled",
            "network control 'off-unenforced'",
        ),
    ],
)
def test_each_label(tmp_path: Path, head, label: str, reason: str) -> None:
    v = verdict_of(tmp_path, **head)
    assert v.label == label
    assert any(reason in r for r in v.reasons), v.reasons
    failed = [c for c in v.checklist if not c.ok]
    assert [c.label for c in failed] == [label]  # one rule broken, and it names the label
    assert failed[0].why is not None and reason in failed[0].why


@pytest.mark.parametrize(
    "head",
    [
        {},
        {"scorer_commit": "abc-dirty", "seeds": [1, 2]},
        {"env_digest": None, "controls": {}},
        {"fixtures": FixturesInfo(path="f", kind="golden"), "scorer_commit": None},
    ],
)
def test_the_label_and_reasons_are_the_checklist(tmp_path: Path, head) -> None:
    """The checklist decides: label = most severe failed check, reasons = their whys."""
    from evalpin.core.judge.verdict import LABELS

    v = verdict_of(tmp_path, finished=bool(head), **head)
    failed = [c for c in v.checklist if not c.ok]
    assert v.reasons == [c.why for c in failed]
    assert v.label == min((c.label for c in failed), key=LABELS.index, default="publishable")
    assert all(c.why is None for c in v.checklist if c.ok)
    assert {c.rule: c.ok for c in v.checklist}["complete"] is bool(head)


def test_first_match_wins_and_every_reason_is_listed(tmp_path: Path) -> None:
    v = verdict_of(tmp_path, scorer_commit=None, seeds=[1], controls={})
    assert v.label == "internal"
    assert len(v.reasons) == 3


def test_network_allowed_fixtures_are_not_uncontrolled(tmp_path: Path) -> None:
    fixtures = FixturesInfo(path="f", kind="coding", dataset_hash="h", network="allowed")
    v = verdict_of(tmp_path, fixtures=fixtures, controls={"temperature": 0, "network": "on"})
    assert v.label == "publishable"


def test_incomplete_run_is_not_publishable(tmp_path: Path) -> None:
    v = verdict_of(tmp_path, finished=False)
    assert v.label == "internal"
    assert any("incomplete" in r for r in v.reasons)


def test_band_decides_unstable(tmp_path: Path) -> None:
    cases = grid({f"c{i}": [True, True, i != 0] for i in range(10)})
    assert verdict_of(tmp_path / "a", cases, band=0.05).unstable
    assert not verdict_of(tmp_path / "b", cases, band=0.2).unstable


def test_contamination_by_case_id_and_folded_prompt(tmp_path: Path, golden_file: Path) -> None:
    from evalpin.core.instrument.fixtures import load_fixtures

    fs = load_fixtures(golden_file)
    info = FixturesInfo(path=str(golden_file), kind="golden", dataset_hash=fs.dataset_hash)
    disclosed = tmp_path / "disclosed.txt"
    disclosed.write_text("# leaked last week\n\n  Cancel   order 1002\tplease.  \n")
    v = verdict_of(tmp_path, fixtures=info, disclosed=Disclosure.load(disclosed))
    assert v.label == "contaminated"
    assert "order-2" in v.reasons[0]
    disclosed.write_text("order-1\n")
    v = verdict_of(tmp_path / "b", fixtures=info, disclosed=Disclosure.load(disclosed))
    assert v.label == "contaminated" and "order-1" in v.reasons[0]
    disclosed.write_text("# nothing of ours\nsomething else\n")
    v = verdict_of(tmp_path / "c", fixtures=info, disclosed=Disclosure.load(disclosed))
    assert v.label == "publishable"
    assert GOLDEN_CASES[1]["user"] == "Cancel order 1002 please."


def test_contamination_falls_back_to_ids_when_fixtures_are_gone(tmp_path: Path) -> None:
    disclosed = tmp_path / "d.txt"
    disclosed.write_text("a\n")
    v = verdict_of(tmp_path, disclosed=Disclosure.load(disclosed))
    assert v.label == "contaminated"
    assert any("not found" in n for n in v.notes)


def test_disclosure_file_errors(tmp_path: Path) -> None:
    bad = tmp_path / "d.txt"
    bad.write_bytes(b"ok\n\xff\n")
    with pytest.raises(InputError, match="not UTF-8") as err:
        Disclosure.load(bad)
    assert err.value.line == 2
    with pytest.raises(InputError, match="no such file"):
        Disclosure.load(tmp_path / "missing.txt")


def test_repeated_pairs_must_reproduce_digests(tmp_path: Path) -> None:
    cases = [
        *grid({"a": [True] * 3}),
        case("a", True, 11),  # same digest: reproduced
        case("a", True, 29, completion_digest="other"),
    ]
    v = verdict_of(tmp_path, cases)
    assert v.repeat_mismatches == [("a", 29)]


def test_json_shape(tmp_path: Path) -> None:
    data = verdict_of(tmp_path).to_json()
    assert set(data) >= {
        "label",
        "reasons",
        "pins",
        "pass_rate",
        "pass_rate_by_seed",
        "spread",
        "unstable",
        "flaky_cases",
    }
    assert set(data["pins"]) == {"dataset_hash", "scorer_commit", "seeds", "env_digest"}
    assert [c["rule"] for c in data["checklist"]] == [
        "dataset hash",
        "scorer commit",
        "env digest",
        "complete",
        "backend tier",
        "seed list",
        "temperature",
    ]
    assert set(data["checklist"][0]) == {"rule", "ok", "value", "why"}
    assert data["pass_rate_by_seed"] == {"11": 1.0, "29": 0.5, "47": 1.0}
    json.dumps(data)


def test_intervals_and_stability_travel_with_the_verdict(tmp_path: Path) -> None:
    v = verdict_of(tmp_path)
    assert v.pooled_rate is not None and (v.pooled_rate.passed, v.pooled_rate.total) == (5, 6)
    assert v.pass_rate == v.pooled_rate.rate
    assert [(r.passed, r.total) for r in v.rate_by_seed.values()] == [(2, 2), (1, 2), (2, 2)]
    assert v.stability is not None
    assert (v.stability.stable_pass, v.stability.flaky, v.stability.flip_rate) == (1, 1, 0.5)
    data = v.to_json()
    assert data["intervals"]["pooled"]["total"] == 6
    assert [s["seed"] for s in data["intervals"]["by_seed"]] == [11, 29, 47]
    assert data["stability"]["flaky"] == 1 and data["non_deterministic"] is False


def test_repeats_without_a_digest_or_under_another_triple_are_not_mismatches(
    tmp_path: Path,
) -> None:
    cases = [
        *grid({"a": [True] * 3}),
        case("a", False, 11, completion_digest=None),  # no completion: no evidence
        case("a", True, 29, fixture_hash="edited", completion_digest="other"),
    ]
    v = verdict_of(tmp_path, cases)
    assert v.repeat_mismatches == [] and not v.non_deterministic


def test_a_case_the_wire_could_not_carry_leaves_the_run_not_fully_graded(tmp_path: Path) -> None:
    cases = grid({"a": [True] * 3, "b": [True] * 3})
    cases[1] = case("a", False, seed=29, reasons=["sandbox_error:unsupported"])
    # Only a coding run can hold the reason (a set that allows network: no network rule).
    coding = FixturesInfo(path="c.yaml", kind="coding", dataset_hash="d" * 64, network="allowed")
    v = verdict_of(tmp_path, cases=cases, fixtures=coding)
    assert v.label == "internal"
    failed = [c for c in v.checklist if not c.ok]
    assert [c.rule for c in failed] == ["fully graded"] and failed[0].value == ["a"]
    assert "sandbox_error:unsupported on a" in failed[0].why
    other = grid({"a": [True] * 3, "b": [True, False, True]})  # an ordinary fail: graded
    (tmp_path / "plain").mkdir()
    rules = [c.rule for c in verdict_of(tmp_path / "plain", cases=other).checklist]
    assert "fully graded" not in rules
