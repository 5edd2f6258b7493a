"""Power for planning (Miller's formula) from one run's variance components."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sp

from evalpin.core.judge import power as pw
from tests.builders import case, grid, header, write_run
from tests.clirun import cli

FACTOR = (sp.norm.ppf(0.975) + sp.norm.ppf(0.80)) ** 2


def four_cases():
    """a TTT (p=1), b TTF (2/3), c FFF (0), d TFF (1/3)."""
    return grid(
        {
            "a": [True] * 3,
            "b": [True, True, False],
            "c": [False] * 3,
            "d": [True, False, False],
        }
    )


def test_variance_components_by_hand() -> None:
    p = pw.power(four_cases())
    # Within: b and d have 3/2 * (2/3)(1/3) = 1/3, a and c 0: sigma^2 = 1/6.
    assert p.sigma2 == pytest.approx(1 / 6)
    # Case rates 1, 2/3, 0, 1/3: s^2 = 5/27; omega^2 = 5/27 - (1/6)/3 = 7/54.
    assert p.omega2 == pytest.approx(7 / 54)
    assert (p.cases, p.seeds, p.plan_seeds) == (4, 3, 3)
    # n = 7.85 (7/54 + 1/18) / 0.02^2 = 3633.9 -> 3634 cases at 3 seeds.
    assert p.cases_needed == math.ceil(FACTOR * (7 / 54 + 1 / 18) / 0.02**2) == 3634
    assert p.needed[1] == math.ceil(FACTOR * (7 / 54 + 1 / 6) / 0.0004)
    # More seeds help only the within-case part: never below omega^2's share.
    assert p.needed[1] > p.needed[3] > p.needed[5] > p.needed[10]
    assert p.needed[10] > FACTOR * (7 / 54) / 0.0004
    # As it is: 2.80 * sqrt((5/27) / 4).
    assert p.mde80 == pytest.approx(math.sqrt(FACTOR * 5 / 27 / 4), rel=1e-9)


def test_against_one_way_anova() -> None:
    """Balanced runs: the components are the random-effects ANOVA's, by numpy."""
    rng = random.Random(7)
    for _ in range(20):
        k, n = rng.choice((2, 3, 5)), rng.randrange(5, 200)
        levels = [rng.random() for _ in range(n)]
        table = {f"c{i}": [rng.random() < q for _ in range(k)] for i, q in enumerate(levels)}
        p = pw.power(grid(table, seeds=tuple(range(k))))
        x = np.array(list(table.values()), dtype=float)
        msw = x.var(axis=1, ddof=1).mean()
        msb = k * x.mean(axis=1).var(ddof=1)
        assert p.sigma2 == pytest.approx(msw, abs=1e-12)
        assert p.omega2 == pytest.approx(max(0.0, (msb - msw) / k), abs=1e-12)
        assert p.mde80 == pytest.approx(
            math.sqrt(FACTOR * x.mean(axis=1).var(ddof=1) / n), rel=1e-9
        )


def test_planned_cases_detect_the_drop() -> None:
    """Run as many cases as planned and the smallest detectable drop is the drop asked."""
    p = pw.power(four_cases(), drop=0.05, seeds=3)
    v = p.omega2 + p.sigma2 / 3
    n = p.cases_needed
    assert math.sqrt(FACTOR * v / n) <= 0.05 < math.sqrt(FACTOR * v / (n - 1))


def test_identical_seeds_leave_only_the_between_case_part() -> None:
    rows = grid({f"c{i}": [i % 4 == 0] * 3 for i in range(100)})
    p = pw.power(rows)
    assert p.sigma2 == 0.0
    assert p.omega2 == pytest.approx(np.var([i % 4 == 0 for i in range(100)], ddof=1))
    assert len(set(p.needed.values())) == 1  # seeds cannot help when they agree


def test_one_seed_cannot_separate_the_components() -> None:
    rows = grid({f"c{i}": [i % 3 == 0] for i in range(30)}, seeds=(11,))
    p = pw.power(rows)
    assert p.sigma2 is None and p.seeds == 1
    assert p.omega2 == pytest.approx(np.var([i % 3 == 0 for i in range(30)], ddof=1))


@pytest.mark.parametrize(
    "rows",
    [
        [],
        grid({"only": [True, False, True]}),
        grid({f"c{i}": [True] * 3 for i in range(10)}),
    ],
    ids=["no-cases", "single-case", "no-variance"],
)
def test_nothing_to_plan_from(rows) -> None:
    p = pw.power(rows)
    assert p.mde80 is None and p.cases_needed is None
    data = p.to_json()
    assert data["mde80"] is None and data["cases_needed"] is None


@pytest.mark.parametrize(("drop", "seeds"), [(0.0, None), (-0.1, None), (1.5, None), (0.02, 0)])
def test_bad_plans_are_refused(drop: float, seeds: int | None) -> None:
    with pytest.raises(ValueError):
        pw.power(four_cases(), drop=drop, seeds=seeds)


# -- the command ---------------------------------------------------------------------


def planning_run(tmp_path: Path) -> Path:
    rows = [
        case(f"c{i:03d}", ok, seed)
        for i in range(200)
        for seed, ok in zip((11, 29, 47), [i % 5 != 0, i % 5 != 0, i % 7 != 0], strict=True)
    ]
    return write_run(tmp_path / "r.jsonl", rows, head=header())


def test_power_command(capsys, tmp_path: Path) -> None:
    run = planning_run(tmp_path)
    expect = pw.power(read_rows(run), drop=0.02)
    r = cli(capsys, "power", str(run))
    assert r.code == 0, r.err
    assert f"can detect drops of {expect.mde80 * 100:.1f} points or more" in r.out
    assert f"{expect.cases_needed:,} cases at 3 seeds" in r.out
    data = json.loads(cli(capsys, "power", str(run), "--json", "--drop", "0.05").out)
    assert data["drop"] == 0.05 and data["plan_seeds"] == 3 and data["cases"] == 200
    assert data["cases_needed"] == pw.power(read_rows(run), drop=0.05).cases_needed
    seeds5 = json.loads(cli(capsys, "power", str(run), "--json", "--seeds", "5").out)
    assert seeds5["plan_seeds"] == 5
    assert seeds5["cases_needed"] < data["cases_needed"] * (0.05 / 0.02) ** 2


def read_rows(path: Path):
    from evalpin.core.read.runfile import read_run

    return read_run(path).rows


@pytest.mark.parametrize(
    "args",
    [["--drop", "0"], ["--drop", "-1"], ["--drop", "2"], ["--drop", "x"], ["--seeds", "0"]],
)
def test_power_command_bad_input_exits_3(capsys, tmp_path: Path, args: list[str]) -> None:
    r = cli(capsys, "power", str(planning_run(tmp_path)), *args)
    assert r.code == 3 and r.out == "" and args[0] in r.err


def test_power_command_unreadable_run_exits_3(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record": "case", "case_id": \n')
    r = cli(capsys, "power", str(bad))
    assert r.code == 3 and "bad.jsonl" in r.err and r.out == ""
    r = cli(capsys, "power", str(tmp_path / "missing.jsonl"))
    assert r.code == 3 and "missing.jsonl" in r.err


def test_a_tiny_run_says_it_cannot_detect_any_drop() -> None:
    p = pw.power(grid({"a": [True] * 3, "b": [False] * 3}))
    assert p.mde80 is not None and p.mde80 > 1
    assert (
        p.mde_text()
        == "this run cannot estimate its noise: too few cases to say: 2 cases, fewer than 10"
    )
    assert p.to_json()["mde80"] is None and p.to_json()["too_few_cases"]
    # At the floor the widest a 0/1 grade can vary is still within the scale.
    wide = pw.power(grid({f"c{i}": [i % 2 == 0] * 3 for i in range(10)}))
    assert not wide.too_few and wide.mde80 is not None and wide.mde80 < 0.5
    assert wide.mde_text().startswith("this run can detect drops of 46.7 points")


def test_power_leaves_error_cases_out_and_says_so(capsys, tmp_path) -> None:
    """A run whose every case is an error has no grade to plan from (issue 51): it says
    nothing was judged, never that every case gave the same grade; errors beside judged
    cases are left out of the variance, not counted as fails."""
    errors = [
        case(c, False, s, status="error", reasons=["no_completion"])
        for c in "abcdefghijkl"
        for s in (11, 29, 47)
    ]
    run = write_run(tmp_path / "all-errors.jsonl", errors, head=header())
    r = cli(capsys, "power", str(run))
    assert r.code == 0 and "same grade" not in r.out, r.out
    assert "nothing judged: all 36 case record(s)" in " ".join(r.out.split()), r.out
    mixed = [case(c, True, s) for c in "abcdefghijkl" for s in (11, 29, 47)] + errors[:6]
    run = write_run(tmp_path / "mixed.jsonl", mixed, head=header())
    r = cli(capsys, "power", str(run), "--json")
    plan = json.loads(r.out)
    assert plan["unjudged"] == 6 and plan["cases"] == 12
