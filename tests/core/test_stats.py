"""The statistics against published values and exact arithmetic."""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import accumulate
from math import comb
from pathlib import Path

import pytest

from evalpin.core.judge import mcnemar, stats
from evalpin.core.judge.compare import compare
from evalpin.core.judge.paired import paired_stats
from evalpin.core.read.runfile import read_run
from tests.builders import case, grid, write_run
from tests.clirun import cli

# Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion:
# comparison of seven methods. Statistics in Medicine 17:857-872, Table I, method 3
# (Wilson score, no continuity correction), to the four places printed there.
NEWCOMBE_WILSON = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0000, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE_WILSON)
def test_wilson_matches_newcombe(k: int, n: int, low: float, high: float) -> None:
    got = stats.wilson(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_wilson_edges_and_symmetry() -> None:
    assert stats.wilson(0, 20)[0] == 0.0
    assert stats.wilson(20, 20)[1] == 1.0
    lo, hi = stats.wilson(81, 263)
    assert stats.wilson(263 - 81, 263) == pytest.approx((1 - hi, 1 - lo))
    with pytest.raises(ValueError):
        stats.wilson(0, 0)
    with pytest.raises(ValueError):
        stats.wilson(3, 2)


def _exact_cdf(k: int, n: int) -> float:
    return float(Fraction(sum(comb(n, i) for i in range(k + 1)), 2**n))


def test_binomial_cdf_matches_exact_arithmetic() -> None:
    for n in (1, 2, 7, 20, 61, 150, 399, 1000):
        cumulative = list(accumulate(comb(n, i) for i in range(n + 1)))
        assert mcnemar.binom_half_cdf(-1, n) == 0.0 and mcnemar.binom_half_cdf(n + 1, n) == 1.0
        for k in range(n + 1):
            assert mcnemar.binom_half_cdf(k, n) == float(Fraction(cumulative[k], 2**n))
    # Past 1,000 trials the sum runs in floating point: check it on either side of the
    # middle and far out in the tail.
    for n in (1001, 1999, 2500):
        for k in (0, 1, 17, n // 3, n // 2 - 1, n // 2, n // 2 + 1, n - 5):
            assert mcnemar.binom_half_cdf(k, n) == pytest.approx(_exact_cdf(k, n), rel=1e-11)


def test_mcnemar_bentur_example() -> None:
    # Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, Table 1 (Bentur et
    # al. 2009): discordant pairs 1 and 7; McNemar exact conditional p = 0.070. By hand:
    # 2 * (C(8,0) + C(8,1)) / 2^8 = 18/256 = 0.0703125.
    assert mcnemar.mcnemar_exact(1, 7) == pytest.approx(18 / 256, rel=1e-12)
    assert mcnemar.mcnemar_exact(7, 1) == mcnemar.mcnemar_exact(1, 7)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),
        (3, 0, 2 / 8),  # "3 regressions" alone: p = 0.25
        (5, 0, 2 / 32),
        (6, 0, 2 / 64),
        (4, 4, 1.0),
        (2, 10, 2 * (1 + 12 + 66) / 4096),
    ],
)
def test_mcnemar_by_hand(b: int, c: int, p: float) -> None:
    assert mcnemar.mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


# Two-sided sign test at alpha = 0.05, largest count of the rarer sign that is still
# significant, for n discordant pairs (the standard critical-value table, e.g. Siegel &
# Castellan, Nonparametric Statistics, table of the binomial test; "-" below n = 6).
SIGN_TEST_CRITICAL = {6: 0, 8: 0, 9: 1, 11: 1, 12: 2, 14: 2, 15: 3, 17: 4, 20: 5, 25: 7, 30: 9}


@pytest.mark.parametrize(("n", "r"), SIGN_TEST_CRITICAL.items())
def test_mcnemar_agrees_with_sign_test_table(n: int, r: int) -> None:
    assert mcnemar.mcnemar_exact(r, n - r) < 0.05
    assert mcnemar.mcnemar_exact(r + 1, n - r - 1) >= 0.05


def test_flips_needed_definition() -> None:
    assert mcnemar.flips_needed(0, 200) == 6  # p(6, 0) = 0.031; p(5, 0) = 0.0625
    assert mcnemar.flips_needed(0, 6) == 6
    assert mcnemar.flips_needed(0, 5) is None  # five pairs cannot show anything
    assert mcnemar.flips_needed(5, 200) == 15  # table: n = 20 allows 5 of the rarer sign
    assert mcnemar.flips_needed(5, 14) is None  # only 14 could flip this way
    # Independent of the case count above the ceiling: the test conditions on flips.
    assert mcnemar.flips_needed(3, 100) == mcnemar.flips_needed(3, 10**6) == 12
    for other in (0, 1, 4, 40, 400):
        x = mcnemar.flips_needed(other, 10**6)
        assert x is not None
        assert mcnemar.mcnemar_exact(x, other) < 0.05 <= mcnemar.mcnemar_exact(x - 1, other)


def test_large_counts_stay_fast_and_sane() -> None:
    p = mcnemar.mcnemar_exact(50_000, 51_000)
    assert 0 < p < 0.01
    assert mcnemar.mcnemar_exact(150, 86) < 1e-4  # Agresti's approval ratings, z = -4.17
    x = mcnemar.flips_needed(1500, 100_000)
    assert x is not None and mcnemar.mcnemar_exact(x, 1500) < 0.05


def test_stability_and_flip_rate() -> None:
    rows = [
        *grid({"sp": [True] * 3, "sf": [False] * 3, "fl": [True, False, True]}),
        case("one", True, 11),
    ]
    st = stats.case_stability(rows)
    assert (st.stable_pass, st.stable_fail, st.flaky, st.single_seed) == (1, 1, 1, 1)
    assert st.flip_rate == pytest.approx(1 / 3) and st.flaky_cases == ("fl",)
    assert stats.case_stability([case("x", True, 11)]).flip_rate is None
    # First-seen order, and a repeat that changed its grade on one seed is flaky too.
    rows = [case("z", True), case("y", False), case("z", False), case("y", True)]
    st = stats.case_stability(rows)
    assert st.flaky_cases == ("z", "y") and st.single_seed == 0


def test_rates_by_seed_carry_counts_and_intervals() -> None:
    rows = grid({"a": [True, True, False], "b": [True, False, False]})
    by_seed = stats.rates_by_seed(rows)
    assert [(r.passed, r.total) for r in by_seed.values()] == [(2, 2), (1, 2), (0, 2)]
    assert by_seed[47].low == 0.0 and by_seed[11].high == 1.0
    pooled = stats.pooled(by_seed.values())
    assert pooled is not None and (pooled.passed, pooled.total) == (3, 6)
    assert stats.pooled([]) is None


def test_paired_stats_from_a_diff(tmp_path: Path) -> None:
    left = grid({f"c{i}": [True] * 3 for i in range(10)})
    right = grid({f"c{i}": [i >= 3, True, i >= 1] for i in range(10)})
    right[0] = case("c0", False, 11, completion_digest="moved")
    lrun = read_run(write_run(tmp_path / "l.jsonl", left))
    rrun = read_run(write_run(tmp_path / "r.jsonl", right))
    paired = paired_stats(compare(lrun, rrun))
    assert paired is not None
    p = paired.pooled
    assert (p.shared, p.regressed, p.fixed) == (30, 4, 0)
    assert (p.left.passed, p.right.passed) == (30, 26)
    assert p.p_value == pytest.approx(2 / 16) and not p.significant
    # Every left pair passed: regressions need 6 (of 30 that could), no fix can happen.
    assert p.regressions_needed == 6 and p.fixes_needed is None
    assert {s: (x.regressed, x.shared) for s, x in paired.by_seed.items()} == {
        11: (3, 10),
        29: (0, 10),
        47: (1, 10),
    }
    data = paired.to_json()
    assert data["pooled"]["regressions_needed"] == 6
    assert [s["seed"] for s in data["by_seed"]] == [11, 29, 47]


def test_paired_stats_through_the_general_join(tmp_path: Path) -> None:
    left = grid({"a": [True] * 3, "b": [True] * 3})
    right = list(reversed(grid({"a": [False] * 3, "b": [True] * 3, "c": [True] * 3})))
    lrun = read_run(write_run(tmp_path / "l.jsonl", left))
    rrun = read_run(write_run(tmp_path / "r.jsonl", right))
    p = paired_stats(compare(lrun, rrun))
    assert p is not None
    assert (p.pooled.shared, p.pooled.regressed, p.pooled.right.passed) == (6, 3, 3)


def test_no_paired_stats_on_refusal(tmp_path: Path) -> None:
    lrun = read_run(write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3})))
    rrun = read_run(write_run(tmp_path / "r.jsonl", grid({"a": [True] * 3}, model_slot="x")))
    assert paired_stats(compare(lrun, rrun)) is None


def test_digest_conflicts_ignore_missing_digests() -> None:
    keyed = [("a", "d1"), ("a", None), ("b", "d2"), ("a", "d1"), ("b", "d3"), ("b", "d4")]
    assert stats.digest_conflicts(keyed) == ["b"]


# -- the numbers in the command line's output -----------------------------------------


def three_regressions(tmp_path: Path) -> tuple[Path, Path]:
    """200 shared pairs, 3 regressions and nothing else: the case the numbers are for."""
    left = grid({f"c{i:03d}": [True, True] for i in range(100)}, seeds=(11, 29))
    right = grid({f"c{i:03d}": [i >= 3, True] for i in range(100)}, seeds=(11, 29))
    return write_run(tmp_path / "l.jsonl", left), write_run(tmp_path / "r.jsonl", right)


def test_diff_prints_the_paired_test_and_the_threshold(capsys, tmp_path: Path) -> None:
    left, right = three_regressions(tmp_path)
    r = cli(capsys, "diff", str(left), str(right))
    assert r.code == 1
    # The headline counts cases: 3 cases regressed on one seed of two, X^2 = 9/3.
    assert "clustered over 100 cases: 3 regressed, 0 fixed, X^2 = 3.00, p = 0.0833: within" in (
        r.out
    )
    assert "with 0 fixed case(s), 4 whole cases regressed (on every seed) would be the fewest" in (
        r.out
    )
    assert "paired difference -1.5 points (right - left), 95% [-3.2, +0.2]" in r.out
    # The pooled pairs test is detail below it, and calls nothing.
    assert "3 regressed, 0 fixed: exact McNemar p = 0.2500 (detail" in r.out
    assert r.out.index("clustered over") < r.out.index("exact McNemar")
    assert "left 1.000 [0.981, 1.000]  right 0.985 [0.957, 0.995]  on 200 shared" in r.out
    assert "seed 11  left 1.000 [0.963, 1.000]  right 0.970 [0.915, 0.990]" in r.out
    assert "3 regressed, 0 fixed, p = 0.2500" in r.out


def test_diff_json_carries_stats(capsys, tmp_path: Path) -> None:
    left, right = three_regressions(tmp_path)
    data = json.loads(cli(capsys, "diff", str(left), str(right), "--json").out)
    assert data["compared_cases"] == 200 and len(data["silent_regressions"]) == 3
    pooled = data["stats"]["pooled"]
    assert (pooled["regressed"], pooled["fixed"], pooled["p_value"]) == (3, 0, 0.25)
    assert pooled["significant"] is False and pooled["regressions_needed"] == 6
    assert pooled["fixes_needed"] is None  # every left pair passed: nothing to fix
    assert pooled["left"]["total"] == 200 and pooled["right"]["passed"] == 197
    assert [s["seed"] for s in data["stats"]["by_seed"]] == [11, 29]


def test_diff_says_when_a_flip_count_is_signal(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({f"c{i}": [True] for i in range(8)}, seeds=(11,)))
    right = write_run(tmp_path / "r.jsonl", grid({f"c{i}": [False] for i in range(8)}, seeds=(11,)))
    r = cli(capsys, "diff", str(left), str(right))
    assert (
        "clustered over 8 cases (one seed each): 8 regressed, 0 fixed, exact McNemar "
        "p = 0.0078: signal" in r.out
    )
    assert "seed 11  left" not in r.out  # one seed: the pooled line says it all


def test_diff_on_too_few_cases_says_nothing_could_be_significant(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True], "b": [True]}, seeds=(11,)))
    right = write_run(tmp_path / "r.jsonl", grid({"a": [False], "b": [False]}, seeds=(11,)))
    r = cli(capsys, "diff", str(left), str(right))
    assert (
        "no number of regressed cases could reach p < 0.05: only 2 case(s) passed on the left"
        in (r.out)
    )


def test_refused_diff_has_no_stats(capsys, tmp_path: Path) -> None:
    left = write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3}))
    right = write_run(tmp_path / "r.jsonl", grid({"a": [False] * 3}, model_slot="other"))
    r = cli(capsys, "diff", str(left), str(right), "--json")
    assert r.code == 2 and json.loads(r.out)["stats"] is None
    assert "McNemar" not in cli(capsys, "diff", str(left), str(right)).out


def test_verdict_prints_intervals_and_stability(capsys, tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "r.jsonl",
        [
            *grid({"a": [True] * 3, "b": [True, False, True], "c": [False] * 3}),
            case("a", True, 11, completion_digest="not the same"),
        ],
    )
    r = cli(capsys, "verdict", str(run))
    assert "pass rate 0.600 [0.313, 0.832]  6/10, 95% Wilson" in r.out
    assert "seed 29  0.333 [0.061, 0.792]  1/3" in r.out
    assert "1 stable pass, 1 stable fail, 1 flaky; flip rate 0.333" in r.out
    assert "non-deterministic backend" in r.out and "e.g. a (seed 11)" in r.out
    data = json.loads(cli(capsys, "verdict", str(run), "--json").out)
    assert data["intervals"]["pooled"]["low"] == pytest.approx(0.3127, abs=1e-4)
    assert data["stability"]["flip_rate"] == pytest.approx(1 / 3)
    assert data["non_deterministic"] is True
