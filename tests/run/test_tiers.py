"""Backend tiers: declared in slots.yaml or inline, recorded in the run header, applied by
the verdict (a free backend is at most internal, an undeclared one is noted), shown in
the pins, and a moved tier named as an environment change by history."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evalpin.core.judge.card import NotPublishable, export_card
from evalpin.core.judge.history import load_history
from evalpin.core.judge.series import ENV_CHANGE, Change
from evalpin.core.judge.verdict import judge
from evalpin.core.read.runfile import read_run
from evalpin.core.tiers import NOT_DECLARED, NOT_FORMAL, TIER_CHANGE
from evalpin.run.slots import inline_spec, load_slots, resolve_slot
from tests.builders import grid, header, write_run
from tests.clirun import cli
from tests.tuikit import SIZE, new_app, screen_text, settle

REPLAY = [
    {"case_id": "order-1", "text": "Order 1001 ships Monday.", "model": "orders-mini@fp_1"},
    {"case_id": "order-2", "text": "Your order is cancelled.", "model": "orders-mini@fp_1"},
]
OUTCOMES = {"a": [True] * 3, "b": [True, False, True]}


@pytest.fixture
def project(tmp_path: Path, golden_file: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder with a golden set and a replay recording, no slots file yet."""
    monkeypatch.chdir(tmp_path)
    for name in ("EVAL_DATASET", "EVAL_SEEDS", "EVAL_TEMPERATURE", "EVAL_NETWORK", "EVAL_WORKDIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "night.jsonl").write_text("".join(json.dumps(r) + "\n" for r in REPLAY))
    return tmp_path


def slots_file(folder: Path, tier_line: str) -> Path:
    path = folder / "slots.yaml"
    path.write_text(f"slots:\n  night:\n    provider: replay\n    path: night.jsonl\n{tier_line}")
    return path


def run_header(capsys, *slot_args: str) -> dict[str, Any]:
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", *slot_args, "--out", "runs/t.jsonl")
    assert r.code == 0, r.err
    return json.loads(Path("runs/t.jsonl").read_text().splitlines()[0])


def verdict_with(tmp_path: Path, slot: dict[str, Any], name: str = "run.jsonl", **head: Any):
    seeds = tuple(head.get("seeds", (11, 29, 47)))  # the cases name the header's seeds
    outcomes = {case: oks[: len(seeds)] for case, oks in OUTCOMES.items()}
    path = write_run(tmp_path / name, grid(outcomes, seeds=seeds), head=header(slot=slot, **head))
    run = read_run(path)
    return run, judge(run)


# -- declaring and recording ---------------------------------------------------------


@pytest.mark.parametrize("tier", ["free", "dedicated", "local"])
def test_a_declared_tier_is_recorded_beside_the_provider_settings(
    capsys, project: Path, tier: str
) -> None:
    slots_file(project, f"    tier: {tier}\n")
    assert load_slots(project / "slots.yaml")["night"].tier == tier
    slot = run_header(capsys, "--slot", "night")["slot"]
    assert slot["tier"] == tier
    assert slot["provider"] == "replay" and slot["path"] == "night.jsonl"


def test_an_undeclared_tier_is_not_filled_in(capsys, project: Path) -> None:
    slots_file(project, "")
    assert load_slots(project / "slots.yaml")["night"].tier == "unknown"
    assert "tier" not in run_header(capsys, "--slot", "night")["slot"]


def test_the_tier_is_not_among_the_provider_settings(project: Path) -> None:
    """Declaring a tier must not make the slot look re-pointed: what identifies the backend
    (the provider's public settings) is the same with and without it."""
    slots_file(project, "")
    plain = load_slots(project / "slots.yaml")["night"]
    slots_file(project, "    tier: free\n")
    free = load_slots(project / "slots.yaml")["night"]
    assert plain.public_settings() == free.public_settings()
    assert free.header_settings() == {**plain.public_settings(), "tier": "free"}


@pytest.mark.parametrize(
    ("tier_line", "got"),
    [
        ("    tier: paid\n", "'paid'"),
        ("    tier: Free\n", "'Free'"),
        ("    tier: unknown\n", "'unknown'"),
        ("    tier: 3\n", "3"),
        ("    tier:\n", "None"),
        ("    tier: [free]\n", "a list"),
        ("    tier: {kind: free}\n", "a dict"),
    ],
)
def test_a_bad_tier_exits_3_naming_the_slots_file(
    capsys, project: Path, tier_line: str, got: str
) -> None:
    slots_file(project, tier_line)
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", "night", "--out", "runs/x.jsonl")
    assert r.code == 3, r
    assert r.err.count("\n") == 1 and "Traceback" not in r.err
    assert re.search(r"error: slots\.yaml:\d+: slot 'night': ", r.err)  # with its line
    assert "'tier' must be one of free, dedicated, local" in r.err and f"got {got}" in r.err
    assert not (project / "runs").exists()


def test_an_inline_slot_takes_a_tier(capsys, project: Path) -> None:
    slot = run_header(capsys, "--slot", "quick=replay:night.jsonl,tier=free")["slot"]
    assert (slot["path"], slot["tier"]) == ("night.jsonl", "free")


def test_an_inline_path_may_hold_a_comma(project: Path) -> None:
    config = resolve_slot("quick=replay:rec,2.jsonl,tier=local")
    assert (config.tier, config.path_text) == ("local", "rec,2.jsonl")
    assert resolve_slot("quick=replay:rec,2.jsonl").tier == "unknown"


@pytest.mark.parametrize("spec", ["q=replay:night.jsonl,tier=paid", "q=replay:night.jsonl,tier="])
def test_a_bad_inline_tier_exits_3_naming_the_option(capsys, project: Path, spec: str) -> None:
    r = cli(capsys, "run", "--fixtures", "golden.jsonl", "--slot", spec, "--out", "runs/x.jsonl")
    assert r.code == 3, r
    assert r.err.count("\n") == 1 and "error: --slot: inline slot" in r.err
    assert "'tier' must be one of free, dedicated, local" in r.err
    assert not (project / "runs").exists()


def test_resume_reopens_an_inline_slot_with_its_tier() -> None:
    settings = {"provider": "replay", "path": "rec/a.jsonl", "sha256": "x", "tier": "free"}
    spec = inline_spec("quick", settings)
    assert spec == "quick=replay:rec/a.jsonl,tier=free"
    assert resolve_slot(spec).tier == "free"
    # A tier no version writes is not carried into a command line that would refuse it.
    assert inline_spec("quick", {**settings, "tier": "paid"}) == "quick=replay:rec/a.jsonl"


# -- the verdict -----------------------------------------------------------------------


def test_a_free_backend_is_at_most_internal_whatever_else_holds(tmp_path: Path) -> None:
    _, v = verdict_with(tmp_path, {"provider": "replay", "tier": "free"})
    assert v.label == "internal"
    assert v.reasons == [NOT_FORMAL]
    rule = next(c for c in v.checklist if c.rule == "backend tier")
    assert (rule.ok, rule.value, rule.label) == (False, "free", "internal")
    assert NOT_DECLARED not in " ".join(v.notes)


def test_a_free_backend_does_not_hide_a_more_severe_label(tmp_path: Path) -> None:
    from evalpin.core.records import FixturesInfo

    _, v = verdict_with(
        tmp_path,
        {"provider": "replay", "tier": "free"},
        fixtures=FixturesInfo(path="f", kind="golden"),
        seeds=[11],
    )
    assert v.label == "demo-note"
    assert NOT_FORMAL in v.reasons and "1 seed(s); at least 3 needed" in v.reasons


@pytest.mark.parametrize("tier", ["dedicated", "local"])
def test_a_dedicated_or_local_backend_is_publishable_when_all_else_holds(
    tmp_path: Path, tier: str
) -> None:
    run, v = verdict_with(tmp_path, {"provider": "replay", "tier": tier})
    assert (v.label, v.reasons, v.notes) == ("publishable", [], [])
    assert next(c for c in v.checklist if c.rule == "backend tier").shown == tier
    card = export_card(run, v).read_text()
    assert f"| backend tier | {tier} |" in card and NOT_DECLARED not in card


@pytest.mark.parametrize(
    "slot",
    [
        {"provider": "replay"},  # declared nothing
        {},  # a run made before tiers existed
    ],
)
def test_an_unknown_tier_is_allowed_but_noted(tmp_path: Path, slot: dict[str, Any]) -> None:
    run, v = verdict_with(tmp_path, slot)
    assert v.label == "publishable" and v.reasons == []
    assert v.notes == [NOT_DECLARED]
    rule = next(c for c in v.checklist if c.rule == "backend tier")
    assert (rule.ok, rule.value, rule.shown) == (True, "unknown", "unknown (not declared)")
    card = export_card(run, v).read_text()
    assert f"- {NOT_DECLARED}" in card


@pytest.mark.parametrize("recorded", ["FREE", "paid", 7, None])
def test_a_recorded_tier_evalpin_never_writes_reads_unknown_and_says_so(
    tmp_path: Path, recorded: Any
) -> None:
    _, v = verdict_with(tmp_path, {"provider": "replay", "tier": recorded})
    assert v.label == "publishable"
    assert v.notes == [f"{NOT_DECLARED} (recorded {recorded!r} is not a tier)"]


def test_the_card_is_refused_for_a_free_backend_with_the_reason(tmp_path: Path) -> None:
    run, v = verdict_with(tmp_path, {"provider": "replay", "tier": "free"})
    with pytest.raises(NotPublishable, match=NOT_FORMAL):
        export_card(run, v)


def test_cli_verdict_shows_the_rule_the_reason_and_the_note(capsys, tmp_path: Path) -> None:
    verdict_with(tmp_path, {"provider": "replay", "tier": "free"}, name="free.jsonl")
    verdict_with(tmp_path, {"provider": "replay"}, name="unknown.jsonl")
    r = cli(capsys, "verdict", str(tmp_path / "free.jsonl"))
    assert r.code == 1
    assert "internal" in r.out and "FAIL  backend tier   free" in r.out
    assert f"  - {NOT_FORMAL}" in r.out
    r = cli(capsys, "verdict", str(tmp_path / "unknown.jsonl"), "--json")
    data = json.loads(r.out)
    assert (r.code, data["label"], data["notes"]) == (0, "publishable", [NOT_DECLARED])
    tier = next(c for c in data["checklist"] if c["rule"] == "backend tier")
    assert tier == {"rule": "backend tier", "ok": True, "value": "unknown", "why": None}
    r = cli(capsys, "verdict", str(tmp_path / "unknown.jsonl"))
    assert f"note: {NOT_DECLARED}" in r.out


# -- history -----------------------------------------------------------------------------


def nightly(folder: Path, name: str, day: int, slot: dict[str, Any]) -> Path:
    head = header(run_id=name, started_at=f"2026-12-{day:02d}T02:00:00Z", slot=slot)
    return write_run(folder / f"{name}.jsonl", grid(OUTCOMES), head=head)


def test_history_marks_a_tier_change_inside_a_series_as_an_environment_change(
    capsys, tmp_path: Path
) -> None:
    folder = tmp_path / "runs"
    nightly(folder, "n1", 1, {"provider": "replay"})  # before tiers: unknown
    nightly(folder, "n2", 2, {"provider": "replay", "tier": "dedicated"})
    nightly(folder, "n3", 3, {"provider": "replay", "tier": "dedicated"})
    nightly(folder, "n4", 4, {"provider": "replay", "tier": "free"})
    h = load_history(folder)
    assert len(h.series) == 1 and h.breaks == []  # the instrument held: one series
    changes = [r.env_change for r in h.series[0].runs]
    assert changes == [
        None,
        [Change(TIER_CHANGE, "unknown", "dedicated")],
        None,
        [Change(TIER_CHANGE, "dedicated", "free")],
    ]
    # The same backend under another declaration: its completions are still one source.
    assert h.series[0].repeat_conflicts == []
    r = cli(capsys, "history", str(folder))
    assert r.code == 0
    assert "~ environment change: slot.tier dedicated -> free" in r.out
    assert "~ environment change: slot.tier unknown -> dedicated" in r.out
    from evalpin.tui.widgets.history_table import run_notes

    assert ("~ tier free", "history--env") in run_notes(h.series[0].runs[3])
    data = json.loads(cli(capsys, "history", str(folder), "--json").out)
    moved = data["series"][0]["runs"][3]["env_change"]
    assert moved == [{"key": TIER_CHANGE, "before": "dedicated", "after": "free"}]


def test_a_series_break_names_a_coinciding_tier_change(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    nightly(folder, "n1", 1, {"provider": "replay", "tier": "dedicated"})
    head = header(
        run_id="n2",
        started_at="2026-12-02T02:00:00Z",
        model_slot="lab_free_2",
        slot={"provider": "replay", "tier": "free"},
    )
    write_run(folder / "n2.jsonl", grid(OUTCOMES, model_slot="lab_free_2"), head=head)
    (brk,) = load_history(folder).breaks
    assert ENV_CHANGE in brk.kinds
    assert Change(f"env.{TIER_CHANGE}", "dedicated", "free") in brk.changes


# -- the pins in the TUI ------------------------------------------------------------------


async def test_the_pins_show_each_sides_tier_and_mark_a_difference(tmp_path: Path) -> None:
    left = nightly(tmp_path, "left", 1, {"provider": "replay", "tier": "dedicated"})
    right = nightly(tmp_path, "right", 2, {"provider": "replay", "tier": "free"})
    app = new_app(left, right)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app, "verdicts")
        rows = [row for row in screen_text(app).splitlines() if "backend tier" in row]
        assert len(rows) == 1
        assert "≠ dedicated" in rows[0] and "≠ free" in rows[0]
        await pilot.press("v")
        await pilot.pause()
        text = screen_text(app)
        assert "backend tier" in text and NOT_FORMAL in text
        tier_rows = [row for row in text.splitlines() if TIER_CHANGE in row]
        assert len(tier_rows) == 1 and tier_rows[0].split()[-2:] == ["dedicated", "free"]
