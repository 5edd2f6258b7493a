"""The launch panel as a first-time user meets it (issue 43, point 6), at 160 x 48 and
80 x 24, on a copy of the bundled demo:

- the form starts from the left run's own recording, so a first launch reproduces the
  left run (said so) and opened against it shows no movement, not "2 regressed";
- the seeds field shows its whole list, apart from the next label;
- the progress bar is empty before anything starts.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from textual.widgets import Input, ProgressBar, Select

from evalpin.core.judge.history import load_history
from evalpin.core.read.discovery import pair_to_review, peek_header
from evalpin.run.slots import load_slots
from evalpin.tui.screens.launch import LaunchScreen, starting_slot
from tests.tuikit import demo_copy, history_shown, new_app, screen_text, settle, wait_for

SIZES = [(160, 48), (80, 24)]


def size_id(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """The bundled demo's runs, fixtures and slots, in a project folder of its own."""
    return demo_copy(tmp_path)


async def open_panel(pilot, app) -> LaunchScreen:
    await settle(pilot, app, "banner")
    await pilot.press("b")
    await settle(pilot, app, "verdicts")
    await pilot.press("l")
    await wait_for(pilot, lambda: isinstance(app.screen, LaunchScreen), "the launch panel")
    await pilot.pause()
    return app.screen


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_a_first_launch_replays_the_left_night_and_says_so(demo: Path, size) -> None:
    runs = demo / "runs"
    # What `evalpin review` opens on the demo: night 2 beside the rotated slot.
    app = new_app(runs / "demo-night-2.jsonl", runs / "demo-night-2-lab_free_2.jsonl", cwd=demo)
    async with app.run_test(size=size) as pilot:
        panel = await open_panel(pilot, app)
        inline = panel.query_one("#slot-inline", Input).value
        # slots.yaml's lab_free_1 replays night 1: the form replays night 2, the left run's.
        assert inline == "lab_free_1=replay:fixtures/completions/lab_free_1-night-2.jsonl,tier=free"
        assert panel.query_one("#slot-pick", Select).value is Select.NULL
        text = " ".join(screen_text(app).split())
        assert "replays the left run's recorded answers" in text
        assert "it measures nothing new" in text
        # The whole seed list, apart from the next label; an empty bar before a start.
        assert "11,29,47 " in screen_text(app) and "47temperature" not in text
        seeds = panel.query_one("#seeds", Input)
        assert seeds.content_region.width >= len("11,29,47") + 1
        bar = panel.query_one("#launch-bar", ProgressBar)
        assert bar.total is not None and bar.percentage == 0
        assert "--%" not in text and "0%" in text
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: panel.finished is not None and panel.process is None, "the run", 120
        )
        await pilot.press("ctrl+o")
        await settle(pilot, app, "verdicts")
        review = app.review
        counts = review.cases.counts()
        assert review.cases.mode == "compare"
        assert counts["regressed"] == counts["fixed"] == counts["drift"] == 0, counts


async def test_a_recording_changed_since_the_left_run_starts_from_no_slot(demo: Path) -> None:
    recording = demo / "fixtures/completions/lab_free_1-night-2.jsonl"
    recording.write_text(recording.read_text().replace("Thursday", "Friday"))
    runs = demo / "runs"
    app = new_app(runs / "demo-night-1.jsonl", runs / "demo-night-2.jsonl", cwd=demo)
    async with app.run_test(size=SIZES[1]) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LaunchScreen), "the panel")
        panel = app.screen
        # Left is night 1: slots.yaml's lab_free_1 holds that very recording.
        assert panel.query_one("#slot-pick", Select).value == "lab_free_1"
        assert panel.query_one("#slot-inline", Input).value == ""
    app = new_app(runs / "demo-night-2.jsonl", runs / "demo-night-1.jsonl", cwd=demo)
    async with app.run_test(size=SIZES[1]) as pilot:
        await settle(pilot, app, "verdicts")
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LaunchScreen), "the panel")
        panel = app.screen
        # Left is night 2, whose recording changed since: no slot is chosen for the user.
        assert panel.query_one("#slot-pick", Select).value is Select.NULL
        assert panel.query_one("#slot-inline", Input).value == ""
        assert "is not here as it was" in " ".join(screen_text(app).split())


def test_a_live_slot_starts_from_its_label(demo: Path) -> None:
    (demo / "slots.yaml").write_text(
        "slots:\n  live: {provider: openai, model: m, base_url_env: U, api_key_env: K}\n"
    )
    like = msgspec.structs.replace(
        peek_header(demo / "runs" / "demo-night-1.jsonl"),
        model_slot="live",
        slot={"provider": "openai"},
    )
    chosen = starting_slot(like, demo, load_slots(demo / "slots.yaml"))
    assert chosen.pick == "live" and chosen.inline == "" and "new measurement" in chosen.said
    assert starting_slot(None, demo, {}).pick is None


@pytest.mark.parametrize("size", SIZES, ids=size_id)
async def test_a_launch_leaves_the_demo_as_the_readme_opens_it(demo: Path, size) -> None:
    """The README's first command (`evalpin review` in the clone) opens the same pair
    after a launch as before: the run goes to a folder of its own, named in the panel,
    and its name says it reproduces the left run."""
    runs = demo / "runs"
    before = pair_to_review(runs)
    listed = sorted(p.name for p in runs.iterdir())
    app = new_app(*before[:2], cwd=demo)
    async with app.run_test(size=size) as pilot:
        panel = await open_panel(pilot, app)
        assert panel.query_one("#out-folder", Input).value == "launches"
        assert "runs go to launches/" in " ".join(screen_text(app).split())
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: panel.finished is not None and panel.process is None, "the run", 120
        )
        # the panel says so once it has drawn the finished run (under load, a frame later)
        said = lambda: "a reproduction of the left run:" in " ".join(screen_text(app).split())  # noqa: E731
        await wait_for(pilot, said, "the reproduction said", 20)
        assert "-reproduction.jsonl" in " ".join(screen_text(app).split())
    out = Path(panel.finished)
    assert out.parent == demo / "launches" and out.name.endswith("-reproduction.jsonl")
    assert sorted(p.name for p in runs.iterdir()) == listed
    assert pair_to_review(runs) == before


async def test_a_launch_into_runs_is_marked_a_reproduction_in_history(demo: Path) -> None:
    """Told to write into runs/, the launch is a third run of night 2's series, marked as
    the reproduction of night 2 it is (the same recording), in `history` and on `h`."""
    runs = demo / "runs"
    app = new_app(runs / "demo-night-2.jsonl", runs / "demo-night-2-lab_free_2.jsonl", cwd=demo)
    async with app.run_test(size=(160, 48)) as pilot:
        panel = await open_panel(pilot, app)
        field = panel.query_one("#out-folder", Input)
        field.value = "runs"
        await pilot.press("ctrl+s")
        await wait_for(
            pilot, lambda: panel.finished is not None and panel.process is None, "the run", 120
        )
        await pilot.press("escape", "h")
        await history_shown(pilot, app)
        rows = [r for r in screen_text(app).splitlines() if "-reproduction.jsonl" in r]
        assert len(rows) == 1 and "reproduction " in rows[0].split("internal")[1], rows
    out = Path(panel.finished)
    assert out.parent == runs
    series = next(s for s in load_history(runs).series if s.runs[0].path.endswith("night-1.jsonl"))
    marks = {Path(r.path).name: r.reproduces for r in series.runs}
    assert marks == {
        "demo-night-1.jsonl": None,
        "demo-night-2.jsonl": None,
        out.name: str(runs / "demo-night-2.jsonl"),
    }
