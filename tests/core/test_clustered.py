"""The clustered comparison (cases, not seeds) against hand-worked values and scipy."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sp

from evalpin.core.judge import mcnemar, stats
from evalpin.core.judge.compare import compare
from evalpin.core.judge.paired import paired_stats
from evalpin.core.read.runfile import read_run
from tests.builders import grid, issue_example, write_run
from tests.clirun import cli


def diff_of(tmp_path: Path, left: dict, right: dict, seeds=(11, 29, 47), shuffle=False):
    lrows, rrows = grid(left, seeds=seeds), grid(right, seeds=seeds)
    if shuffle:  # through the general join rather than the aligned fast path
        rrows = list(reversed(rrows))
    lrun = read_run(write_run(tmp_path / "l.jsonl", lrows))
    rrun = read_run(write_run(tmp_path / "r.jsonl", rrows))
    paired = paired_stats(compare(lrun, rrun))
    assert paired is not None
    return paired


@pytest.mark.parametrize("shuffle", [False, True])
def test_issue_example_by_hand(tmp_path: Path, shuffle: bool) -> None:
    paired = diff_of(tmp_path, *issue_example(), shuffle=shuffle)
    # Pooled over (case, seed) pairs: 40 regressed vs 9 fixed, exact p = 9.3e-6.
    assert (paired.pooled.regressed, paired.pooled.fixed) == (40, 9)
    assert paired.pooled.p_value == pytest.approx(9.3e-6, rel=0.01)
    c = paired.clustered
    assert (c.cases, c.regressed_cases, c.fixed_cases) == (200, 16, 3)
    # (12*3 - 3*3 + 4*1)^2 / (12*9 + 3*9 + 4*1) = 31^2 / 139
    assert c.statistic == pytest.approx(961 / 139, rel=1e-12)
    assert round(c.statistic, 2) == 6.91 and round(c.p_value, 4) == 0.0086
    assert not c.exact and c.significant
    # About 900 times weaker than the pooled figure.
    assert 800 < c.p_value / paired.pooled.p_value < 1000
    # d_k: -1 on 12 cases, +1 on 3, -1/3 on 4, 0 on 181: mean -31/600.
    assert c.mean_difference == pytest.approx(-31 / 600, rel=1e-12)
    d = np.array([-1.0] * 12 + [1.0] * 3 + [-1 / 3] * 4 + [0.0] * 181)
    se = d.std(ddof=1) / math.sqrt(200)
    assert c.se == pytest.approx(se, rel=1e-12)
    assert c.ci95 == pytest.approx((d.mean() - 1.959964 * se, d.mean() + 1.959964 * se), rel=1e-6)
    assert c.mde80 == pytest.approx((1.959964 + 0.841621) * se, rel=1e-6)
    # Whole cases: with 3 fixed, (x - 3)^2 / (x + 3) first passes 3.84 at x = 11.
    assert c.regressions_needed == 11


def test_one_seed_per_case_is_mcnemar(tmp_path: Path) -> None:
    left = {f"c{i}": [i < 30] for i in range(60)}
    right = {f"c{i}": [(i < 30) != (i < 9 or 40 <= i < 42)] for i in range(60)}
    paired = diff_of(tmp_path, left, right, seeds=(11,))
    c, pooled = paired.clustered, paired.pooled
    b, f = pooled.regressed, pooled.fixed
    assert (b, f) == (9, 2) and (c.regressed_cases, c.fixed_cases) == (9, 2)
    assert c.statistic == pytest.approx((b - f) ** 2 / (b + f), rel=1e-12)  # McNemar's X^2
    assert c.exact and c.p_value == pooled.p_value  # the headline stays the exact test
    assert c.p_value == pytest.approx(sp.binomtest(f, b + f, 0.5).pvalue, rel=1e-9)
    assert mcnemar.chi2_1df_sf(c.statistic) == pytest.approx(sp.chi2.sf(c.statistic, 1), rel=1e-12)
    # Whole-case thresholds follow the exact test too: 6 with none the other way.
    assert c.regressions_needed == mcnemar.flips_needed(2, 30)


def test_seeds_that_agree_count_once() -> None:
    """A case whose seeds are copies counts as one case however many seeds it has."""
    for seeds in (1, 3, 10):
        c = mcnemar.clustered(
            [(seeds, seeds, 0)] * 9 + [(seeds, 0, seeds)] * 2,
            unmoved_cases=50,
            unmoved_pairs=50 * seeds,
        )
        assert c.statistic == pytest.approx(49 / 11)
        assert (c.regressed_cases, c.fixed_cases) == (9, 2)
        assert c.mean_difference == pytest.approx(-7 / 61)
    assert mcnemar.clustered([(3, 3, 0)] * 9 + [(3, 0, 3)] * 2).p_value == pytest.approx(
        sp.chi2.sf(49 / 11, 1)
    )


def test_no_discordant_case() -> None:
    nothing = mcnemar.clustered([], unmoved_cases=40, unmoved_pairs=120)
    assert (nothing.statistic, nothing.p_value, nothing.significant) == (0.0, 1.0, False)
    assert nothing.mean_difference == 0.0 and nothing.se == 0.0
    # No spread to measure noise by: no zero-width interval, never "detectable: 0.0".
    assert nothing.ci95 is None and nothing.mde80 is None
    assert "SE 0" in nothing.difference_text() and "80% power" not in nothing.difference_text()
    # One seed regressed and one fixed in each moved case: b_k = c_k, no discordance.
    even = mcnemar.clustered([(3, 1, 1)] * 5, unmoved_cases=10, unmoved_pairs=30)
    assert (even.statistic, even.p_value) == (0.0, 1.0)
    assert (even.regressed_cases, even.fixed_cases) == (0, 0)
    # Discordant cases that cancel: X^2 = 0 / 18.
    cancel = mcnemar.clustered([(3, 3, 0), (3, 0, 3)], unmoved_cases=8, unmoved_pairs=24)
    assert (cancel.statistic, cancel.p_value) == (0.0, 1.0)
    assert cancel.mean_difference == 0.0 and cancel.se is not None and cancel.se > 0


def test_every_case_moved_alike_has_zero_spread() -> None:
    c = mcnemar.clustered([(3, 3, 0)] * 20)
    assert c.statistic == pytest.approx(20.0) and c.mean_difference == -1.0
    assert c.se == 0.0 and c.ci95 is None and c.mde80 is None and "SE 0" in c.limits


def test_single_case_has_no_standard_error() -> None:
    c = mcnemar.clustered([(3, 2, 0)])
    assert c.cases == 1 and c.regressed_cases == 1
    assert c.statistic == 1.0 and c.p_value == pytest.approx(sp.chi2.sf(1.0, 1))
    assert c.mean_difference == pytest.approx(-2 / 3)
    assert (c.se, c.ci95, c.mde80) == (None, None, None)
    data = c.to_json()
    assert data["se"] is None and data["ci95"] is None and data["mde80"] is None


def test_no_shared_case() -> None:
    c = mcnemar.clustered([])
    assert (c.cases, c.statistic, c.p_value, c.exact) == (0, 0.0, 1.0, False)
    assert (c.mean_difference, c.se, c.ci95, c.mde80) == (None, None, None, None)


def test_diff_with_no_shared_case_has_no_stats(tmp_path: Path) -> None:
    lrun = read_run(write_run(tmp_path / "l.jsonl", grid({"a": [True] * 3})))
    rrun = read_run(write_run(tmp_path / "r.jsonl", grid({"b": [False] * 3})))
    assert paired_stats(compare(lrun, rrun)) is None


@pytest.mark.parametrize("counts", [(0, 0, 0), (2, 2, 1), (3, -1, 0), (3, 0, 4)])
def test_impossible_counts_are_refused(counts: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError):
        mcnemar.clustered([counts])


def test_listing_unmoved_cases_or_counting_them_agrees() -> None:
    moved = [(3, 2, 0), (3, 0, 1), (2, 1, 1), (3, 3, 0)]
    listed = mcnemar.clustered([*moved, *[(3, 0, 0)] * 30])
    counted = mcnemar.clustered(moved, unmoved_cases=30, unmoved_pairs=90)
    assert listed.to_json() == counted.to_json()


def test_against_numpy_and_scipy() -> None:
    """An independent implementation (numpy arrays, scipy's chi-square and normal
    quantiles) on random runs with mixed seed counts."""
    rng = random.Random(10)
    z975, z80 = sp.norm.ppf(0.975), sp.norm.ppf(0.80)
    for _ in range(40):
        cases = []
        for _ in range(rng.randrange(2, 300)):
            n = rng.choice((1, 2, 3, 5))
            b = rng.randrange(n + 1) if rng.random() < 0.3 else 0
            c = rng.randrange(n - b + 1) if rng.random() < 0.3 else 0
            cases.append((n, b, c))
        got = mcnemar.clustered(cases)
        arr = np.array(cases, dtype=float)
        diff = arr[:, 1] - arr[:, 2]
        if not diff.any():
            assert (got.statistic, got.p_value) == (0.0, 1.0)
        else:
            x2 = diff.sum() ** 2 / (diff**2).sum()
            assert got.statistic == pytest.approx(x2, rel=1e-12)
            if not got.exact:
                assert got.p_value == pytest.approx(sp.chi2.sf(x2, 1), rel=1e-9, abs=1e-300)
        d = (arr[:, 2] - arr[:, 1]) / arr[:, 0]
        se = d.std(ddof=1) / math.sqrt(len(d))
        assert got.mean_difference == pytest.approx(d.mean(), rel=1e-9, abs=1e-15)
        assert got.se == pytest.approx(se, rel=1e-9, abs=1e-15)
        assert got.ci95 == pytest.approx((d.mean() - z975 * se, d.mean() + z975 * se), abs=1e-12)
        assert got.mde80 == pytest.approx((z975 + z80) * se, rel=1e-9, abs=1e-15)
        assert got.regressed_cases == int((diff > 0).sum())
        assert got.fixed_cases == int((diff < 0).sum())


def test_constants_match_scipy() -> None:
    assert sp.norm.ppf(0.975) == pytest.approx(stats.Z95, rel=1e-14)
    assert sp.norm.ppf(0.80) == pytest.approx(stats.Z80, rel=1e-14)
    for x in (0.0, 1e-9, 0.5, 3.841458820694124, 6.9, 40.0, 400.0):
        assert mcnemar.chi2_1df_sf(x) == pytest.approx(sp.chi2.sf(x, 1), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("other", [0, 1, 3, 12, 150])
def test_cases_needed_is_the_threshold(other: int) -> None:
    """Whole-case flips: `needed` cases regressing on every seed reach p < 0.05 with the
    clustered test, one fewer does not (3 seeds or 10: the answer does not move)."""
    needed = mcnemar.cases_needed(other, 10**5, exact=False)
    assert needed is not None
    for seeds in (3, 10):

        def p_with(x: int, s: int = seeds) -> float:
            return mcnemar.clustered([(s, s, 0)] * x + [(s, 0, s)] * other).p_value

        assert p_with(needed) < 0.05 <= p_with(needed - 1)
    assert mcnemar.cases_needed(other, needed - 1, exact=False) is None
    assert mcnemar.cases_needed(other, needed, exact=False) == needed


# -- through the command line ----------------------------------------------------------


def write_pair(tmp_path: Path, left: dict, right: dict, seeds=(11, 29, 47)) -> tuple[str, str]:
    lpath = write_run(tmp_path / "l.jsonl", grid(left, seeds=seeds))
    rpath = write_run(tmp_path / "r.jsonl", grid(right, seeds=seeds))
    return str(lpath), str(rpath)


def test_diff_json_carries_the_clustered_stats(capsys, tmp_path: Path) -> None:
    left, right = write_pair(tmp_path, *issue_example())
    r = cli(capsys, "diff", left, right, "--json")
    assert r.code == 1
    c = json.loads(r.out)["stats"]["clustered"]
    keys = {"cases", "regressed_cases", "fixed_cases", "statistic", "p_value"}
    keys |= {"mean_difference", "se", "ci95", "mde80"}
    assert keys <= set(c)
    assert (c["cases"], c["regressed_cases"], c["fixed_cases"]) == (200, 16, 3)
    assert c["statistic"] == pytest.approx(961 / 139) and round(c["p_value"], 4) == 0.0086
    assert c["significant"] is True and len(c["ci95"]) == 2
    assert c["ci95"][0] < c["mean_difference"] < c["ci95"][1] < 0


def test_diff_text_leads_with_the_cases(capsys, tmp_path: Path) -> None:
    left, right = write_pair(tmp_path, *issue_example())
    out = cli(capsys, "diff", left, right).out
    assert "clustered over 200 cases: 16 regressed, 3 fixed, X^2 = 6.91, p = 0.0086: signal" in out
    assert "paired difference -5.2 points (right - left), 95% [-9.0, -1.4]" in out
    assert "40 regressed, 9 fixed: exact McNemar p < 0.0001 (detail" in out
    assert out.index("clustered over") < out.index("exact McNemar")


def test_seeds_that_copy_each_other_are_not_signal(capsys, tmp_path: Path) -> None:
    """Three cases regressed on all three seeds: nine flipped pairs (pooled exact p =
    0.004) but three cases, which X^2 = 3 calls noise."""
    left = {f"c{i}": [True] * 3 for i in range(50)}
    right = {f"c{i}": [i >= 3] * 3 for i in range(50)}
    out = cli(capsys, "diff", *write_pair(tmp_path, left, right)).out
    assert (
        "clustered over 50 cases: 3 regressed, 0 fixed, X^2 = 3.00, p = 0.0833: within noise"
        in (out)
    )
    assert "9 regressed, 0 fixed: exact McNemar p = 0.0039" in out
    assert "signal" not in out.replace("within noise", "")


def test_clustered_of_a_diff_matches_counting_by_hand(tmp_path: Path) -> None:
    """Random small runs (where the ceilings decide the thresholds): the Diff's clustered
    comparison equals the one counted case by case here, thresholds included."""
    rng = random.Random(3)
    for trial in range(12):
        n, seeds = rng.randrange(2, 12), rng.choice(((11,), (11, 29), (11, 29, 47)))
        left = {f"c{i}": [rng.random() < 0.3 for _ in seeds] for i in range(n)}
        right = {c: [ok != (rng.random() < 0.4) for ok in oks] for c, oks in left.items()}
        folder = tmp_path / str(trial)
        paired = diff_of(folder, left, right, seeds=seeds, shuffle=trial % 2 == 1)
        per_case = [
            (
                len(seeds),
                sum(a and not b for a, b in zip(lo, ro, strict=True)),
                sum(b and not a for a, b in zip(lo, ro, strict=True)),
            )
            for lo, ro in zip(left.values(), right.values(), strict=True)
        ]
        expect = mcnemar.clustered(
            per_case,
            can_regress=sum(any(lo) for lo in left.values()),
            can_fix=sum(not all(lo) for lo in left.values()),
        )
        got = paired.clustered
        assert got.to_json() == expect.to_json()
        assert got.needed_text() == expect.needed_text()
