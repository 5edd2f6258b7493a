"""`l`: the launch panel. Pick a fixture set and a slot, start a pinned run, watch it.

The run is `python -m evalpin run --progress json` in a child process: one code path with
the command line, so what the panel starts is exactly what a script would. Its JSON
events drive the progress bar; Ctrl+X sends SIGTERM, which the runner turns into a clean
interruption (the partial file stays resumable with `evalpin run --resume --out FILE`).
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input, Label, ProgressBar, Select, Static

from evalpin.core.errors import InputError
from evalpin.core.recordings import RECORDING_KEY
from evalpin.core.records import RunHeader
from evalpin.run import events
from evalpin.run.slots import SlotConfig, inline_spec
from evalpin.tui.safe import line

if TYPE_CHECKING:
    from evalpin.tui.app import EvalpinApp

FIXTURE_SUFFIXES = (".jsonl", ".yaml", ".yml")
COMPACT_BELOW = 30  # rows
LAUNCH_FOLDER = "launches"
"""Where launched runs go unless the panel is told otherwise: a folder of their own beside
`runs/`, never in it, so a launch never changes the pair a bare `evalpin review` opens
(on a fresh clone: the demo's) nor the history it reads."""


def find_fixture_sets(folder: Path, depth: int = 2) -> list[Path]:
    """Golden JSONL and coding YAML files under `folder` (replay recordings are skipped)."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.rglob("*")):
        if len(path.relative_to(folder).parts) > depth or path.suffix not in FIXTURE_SUFFIXES:
            continue
        try:
            with open(path, "rb") as fh:
                head = fh.read(4096)
        except OSError:
            continue
        if path.suffix == ".jsonl":
            first = head.split(b"\n", 1)[0]
            try:
                obj = json.loads(first)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and "id" in obj and "user" in obj:
                found.append(path)
        elif b"coding-eval/v1" in head:
            found.append(path)
    return found


def slot_labels(slots_file: Path) -> tuple[list[str], str | None]:
    """Labels of a slots file, and a one-line problem if it cannot be read."""
    slots, problem = read_slots(slots_file)
    return sorted(slots), problem


def read_slots(slots_file: Path) -> tuple[dict[str, SlotConfig], str | None]:
    """The slots of a slots file, and a one-line problem if it cannot be read."""
    if not slots_file.exists():
        return {}, None
    try:
        from evalpin.run.slots import load_slots

        return load_slots(slots_file), None
    except InputError as exc:
        return {}, str(exc)


# A recording bigger than this is matched by its path alone (not hashed on the UI thread).
HASH_AT_MOST = 64 << 20


@dataclass(frozen=True)
class StartingSlot:
    """The slot the form starts from: a label of slots.yaml (`pick`) or an inline replay
    (`inline`), and what the status line says of it (`said`)."""

    pick: str | None = None
    inline: str = ""
    said: str = ""
    reproduces: bool = False  # the left run's own recording: a run reproduces it


def starting_slot(
    like: RunHeader | None, folder: Path, slots: dict[str, SlotConfig]
) -> StartingSlot:
    """The left run's slot, as it was. A replay slot starts from the left run's own
    recording (its label in slots.yaml when that replays the same file, else an inline
    replay of it): a first launch then reproduces the left run, said so, and never passes
    for a new result against it (the demo's `lab_free_1` in slots.yaml replays night 1,
    while the left run may be night 2). A recording that is gone or changed starts from
    no slot. A live slot starts from its label: re-running it is a new measurement."""
    if like is None or not like.model_slot:
        return StartingSlot(said="choose a slot")
    label, settings = like.model_slot, like.slot
    spec = inline_spec(label, settings)  # a slot reopened from its settings: a recording
    if spec is None:
        if label in slots:
            return StartingSlot(pick=label, said=f"the left run's slot {label}: a new measurement")
        return StartingSlot(said=f"the left run's slot {label} is not in slots.yaml: choose one")
    recorded = str(settings.get("path") or "")
    digest = settings.get(RECORDING_KEY)
    same = StartingSlot(
        said=f"replays the left run's recorded answers ({recorded}): a run reproduces the"
        " left run, it measures nothing new",
        reproduces=True,
    )
    config = slots.get(label)
    if config is not None and _same_settings(config, settings):
        return replace(same, pick=label)
    if recorded and _same_file(folder / recorded, digest):
        return replace(same, inline=spec)
    return StartingSlot(
        said=f"the left run's recording ({recorded}) is not here as it was: choose a slot"
    )


def _same_settings(config: SlotConfig, settings: dict) -> bool:
    """Whether a slots.yaml entry is the left run's slot as recorded: the same provider
    and the same recording (its sha256, which the run pinned)."""
    if RECORDING_KEY not in settings:
        return False
    try:
        now = config.public_settings()
    except (InputError, OSError):
        return False
    return all(now.get(key) == settings.get(key) for key in ("provider", RECORDING_KEY))


def _same_file(path: Path, digest: object) -> bool:
    """Whether `path` holds the recording the left run was made with (its sha256, where
    the run recorded one and the file is small enough to hash here)."""
    try:
        if isinstance(digest, str) and path.stat().st_size <= HASH_AT_MOST:
            return hashlib.sha256(path.read_bytes()).hexdigest() == digest
        return path.is_file()
    except OSError:
        return False


def launch_out(folder: Path, where: str, slot: str, reproduction: bool) -> str:
    """A new run file in `where` (relative to the project folder, or absolute), named
    for its day and slot, and `-reproduction` when it replays the left run's recording;
    numbered when taken (never overwritten)."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", slot.split("=", 1)[0]).strip("._")[:40] or "slot"
    stem = f"{datetime.date.today().isoformat()}-{label}"
    stem += "-reproduction" if reproduction else ""
    base = Path(where or LAUNCH_FOLDER)
    candidate, n = base / f"{stem}.jsonl", 2
    while (folder / candidate).exists():
        candidate, n = base / f"{stem}-{n}.jsonl", n + 1
    return str(candidate)


@dataclass
class LaunchRequest:
    fixtures: str
    slot: str
    out: str = ""
    reproduction: bool = False  # replays the left run's recording (the file name says so)
    seeds: str = ""
    temperature: str = ""
    jobs: str = ""
    slots_file: str | None = None
    cluster: str = ""  # a Dask scheduler (tcp://HOST:PORT) or local:N, instead of jobs
    concurrency: str = ""

    def argv(self) -> list[str]:
        argv = [sys.executable, "-m", "evalpin", "run", "--progress", "json"]
        argv += ["--fixtures", self.fixtures, "--slot", self.slot]
        for flag, value in (
            ("--out", self.out),
            ("--seeds", self.seeds),
            ("--temperature", self.temperature),
            ("--jobs", self.jobs),
            ("--cluster", self.cluster),
            ("--concurrency", self.concurrency),
            ("--slots", self.slots_file),
        ):
            if value:
                argv += [flag, value]
        return argv


class LaunchScreen(ModalScreen[str | None]):
    """The form, then the run's progress; dismisses with the new run's path to open it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "start", "start", priority=True),
        Binding("ctrl+x", "cancel_run", "cancel run", priority=True),
        Binding("ctrl+o", "open_run", "open vs left", priority=True),
        Binding("escape", "close", "close"),
    ]

    def __init__(self, cwd: Path | None = None, like: RunHeader | None = None) -> None:
        """`like`: the left run's header; the form starts from its fixtures, slot,
        seeds and temperature, so re-running last night's instrument is one key."""
        super().__init__()
        self.cwd = cwd
        self.like = like
        self.process: asyncio.subprocess.Process | None = None
        self.out: str | None = None
        self.out_label = ""  # the run file as the child names it (relative to its folder)
        self.finished: str | None = None  # a run file that completed, ready to open
        self.started_at: float | None = None
        self.elapsed = 0.0
        self.tally = {"done": 0, "total": 0, "passed": 0, "failed": 0}
        self.pace_shown = ""  # requests in flight and rate-limit waits (pace events)
        self.events: list[events.Event] = []
        self.final: Text | None = None  # how the last run ended, kept under the progress
        self.starting = StartingSlot()  # the slot the form starts from (`starting_slot`)
        self.reproduction = False  # the run going (or last run) reproduces the left run

    @property
    def app(self) -> EvalpinApp:  # type: ignore[override]
        """The app, typed: this screen runs only inside `EvalpinApp`."""
        return cast("EvalpinApp", super().app)

    @property
    def folder(self) -> Path:
        return self.cwd or self.app.cwd

    def compose(self) -> ComposeResult:
        folder = self.folder
        fixture_sets = find_fixture_sets(folder / "fixtures")
        slots, problem = read_slots(folder / "slots.yaml")
        labels = sorted(slots)
        choices = [str(p.relative_to(folder)) for p in fixture_sets]
        like = self.like
        fixture_default = choices[0] if choices else Select.NULL
        self.starting = starting_slot(like, folder, slots)
        slot_default = self.starting.pick or Select.NULL
        seeds, temperature = "11,29,47", "0"
        if like is not None:
            if like.fixtures.path in choices:
                fixture_default = like.fixtures.path
            if like.seeds:
                seeds = ",".join(map(str, like.seeds))
            if like.controls.get("temperature") is not None:
                temperature = f"{like.controls['temperature']:g}"
        with VerticalScroll(id="launch"):
            yield Static(Text("Launch a pinned run", style="bold"), markup=False)
            yield _pick(
                "fixture set", choices, "pick from fixtures/", "fixture-pick", fixture_default
            )
            yield _row("or path", Input(placeholder="path to a fixture set", id="fixture-path"))
            yield _pick("slot", labels, "pick from slots.yaml", "slot-pick", slot_default)
            yield _row(
                "or inline",
                Input(
                    self.starting.inline,
                    placeholder="LABEL=replay:PATH[,tier=free]",
                    id="slot-inline",
                ),
            )
            with Horizontal(classes="launch-row"):
                yield Label("seeds", classes="launch-label")
                yield Input(seeds, id="seeds")
                yield Label("temperature", classes="launch-label-short")
                yield Input(temperature, id="temperature")
            with Horizontal(classes="launch-row"):
                # The executor: a number of local jobs, or a cluster address.
                yield Label("executor", classes="launch-label")
                yield Input("", placeholder="cores, local:N or tcp://HOST:PORT", id="jobs")
                yield Label("in flight", classes="launch-label-short")
                yield Input("", placeholder="16", id="concurrency")
            out = Input(LAUNCH_FOLDER, placeholder=LAUNCH_FOLDER, id="out-folder")
            yield _row("runs go to", out)
            if problem:
                yield Static(line("slots.yaml: " + problem), markup=False, classes="launch-problem")
            with Horizontal(id="launch-buttons"):
                yield Button("Start  ^S", id="launch-start", variant="primary")
                yield Button("Cancel run  ^X", id="launch-cancel", variant="error", disabled=True)
                yield Button("Open vs left  ^O", id="launch-open", variant="success", disabled=True)
                yield Button("Close  Esc", id="launch-close")
            with Vertical(id="launch-progress"):
                # Empty until a run starts (no total yet would draw a pulse: half full).
                yield ProgressBar(total=1, show_eta=False, id="launch-bar")
                yield Static(markup=False, id="launch-status")
                yield Static(markup=False, id="launch-log")
        yield Footer()

    def on_mount(self) -> None:
        blink = self.app.cursor_blink
        for box in self.query(Input):
            box.cursor_blink = blink
        said = self.starting.said or "choose a fixture set and a slot"
        where = f"runs go to {LAUNCH_FOLDER}/, not runs/: the review's own pair stays as it is"
        self._show_status(
            Text.assemble("ready: ", line(f"{said}; {where}; Start (Ctrl+S)", width=400))
        )
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """In a short terminal (under `COMPACT_BELOW` rows) the fields and buttons lose
        their borders, one row each, so the whole form and its buttons fit at 80 x 24."""
        compact = self.app.size.height < COMPACT_BELOW
        self.set_class(compact, "-compact")
        for widget in self.query("#launch Input, #launch Select, #launch Button"):
            widget.compact = compact  # type: ignore[attr-defined]

    # -- the request -----------------------------------------------------------------

    def request(self) -> LaunchRequest | str:
        """The run to start, or why not."""
        fixtures = self.query_one("#fixture-path", Input).value.strip()
        if not fixtures:
            picked = self.query_one("#fixture-pick", Select).value
            fixtures = "" if picked is Select.NULL else str(picked)
        slot = self.query_one("#slot-inline", Input).value.strip()
        if not slot:
            picked = self.query_one("#slot-pick", Select).value
            slot = "" if picked is Select.NULL else str(picked)
        if not fixtures:
            return "choose a fixture set (or type its path)"
        if not slot:
            return "choose a slot (or type LABEL=replay:PATH)"
        executor = self.query_one("#jobs", Input).value.strip()
        local = executor.isdigit() or not executor
        start = self.starting
        reproduction = start.reproduces and slot in (start.pick, start.inline)
        where = self.query_one("#out-folder", Input).value.strip()
        return LaunchRequest(
            fixtures=fixtures,
            slot=slot,
            out=launch_out(self.folder, where, slot, reproduction),
            reproduction=reproduction,
            seeds=self.query_one("#seeds", Input).value.strip(),
            temperature=self.query_one("#temperature", Input).value.strip(),
            jobs=executor if local else "",
            cluster="" if local else executor,
            concurrency=self.query_one("#concurrency", Input).value.strip(),
        )

    # -- actions ---------------------------------------------------------------------

    @on(Button.Pressed, "#launch-start")
    def action_start(self) -> None:
        if self.process is not None:
            return
        request = self.request()
        if isinstance(request, str):
            self._show_status(Text(request, style="bold"))
            return
        self.finished = None
        self.query_one("#launch-open", Button).disabled = True
        self.run_child(request)

    @on(Button.Pressed, "#launch-cancel")
    def action_cancel_run(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            self._show_status(Text("cancelling: the cases under way finish first…"))

    @on(Button.Pressed, "#launch-open")
    def action_open_run(self) -> None:
        if self.finished:
            self.dismiss(self.finished)

    @on(Button.Pressed, "#launch-close")
    def action_close(self) -> None:
        if self.process is not None:
            self.notify("a run is going: Ctrl+X cancels it", timeout=2)
            return
        self.dismiss(None)

    # -- the child process -----------------------------------------------------------

    @work(exclusive=True, exit_on_error=False, group="launch")
    async def run_child(self, request: LaunchRequest) -> None:
        """Run `evalpin run --progress json` and follow its events."""
        self.events = []
        self.reproduction = request.reproduction
        self.final = None
        self.tally = {"done": 0, "total": 0, "passed": 0, "failed": 0}
        self.pace_shown = ""  # requests in flight and rate-limit waits (pace events)
        self.started_at = time.monotonic()
        self.elapsed = 0.0
        self._set_running(True)
        self._show_status(Text("starting: " + " ".join(request.argv()[2:])))
        ticker = self.set_interval(0.5, self._tick)
        try:
            self.process = await asyncio.create_subprocess_exec(
                *request.argv(),
                cwd=self.folder,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                start_new_session=True,
            )
            assert self.process.stdout is not None and self.process.stderr is not None
            stderr_task = asyncio.create_task(self.process.stderr.read())
            async for raw in self.process.stdout:
                event = events.decode(raw)
                if event is not None:
                    self.handle_event(event)
            code = await self.process.wait()
            stderr = (await stderr_task).decode("utf-8", "replace").strip()
        finally:
            ticker.stop()
            self.process = None
            self._set_running(False)
        if code not in (0, 1, 130) and stderr:
            self._show_status(
                Text.assemble(("run refused: ", "bold"), line(stderr.splitlines()[-1], width=300))
            )
        elif code == 1 and stderr and not any(e.kind == "failed" for e in self.events):
            self._show_status(
                Text.assemble(("run failed: ", "bold"), line(stderr.splitlines()[-1]))
            )

    def _tick(self) -> None:
        if self.started_at is not None and self.process is not None:
            self.elapsed = max(self.elapsed, time.monotonic() - self.started_at)
            self._show_progress()

    def handle_event(self, event: events.Event) -> None:
        """One progress event of `evalpin run --progress json`."""
        self.events.append(event)
        bar = self.query_one("#launch-bar", ProgressBar)
        if isinstance(event, events.StartEvent):
            self.out = self._resolve(event.out)
            self.out_label = event.out
            self.tally["total"] = event.total
            self.tally["done"] = event.total - event.todo
            bar.update(total=event.total, progress=self.tally["done"])
            self._show_progress()
        elif isinstance(event, events.CaseEvent):
            self.tally.update(
                done=event.done, total=event.total, passed=event.passed, failed=event.failed
            )
            self.elapsed = max(self.elapsed, event.elapsed)
            bar.update(total=self.tally["total"], progress=self.tally["done"])
            self._show_progress()
        elif isinstance(event, events.PaceEvent):
            self.pace_shown = event.shown
            self._show_progress()
        elif isinstance(event, events.WarningEvent):
            self._log(Text.assemble(("warning: ", "bold"), line(event.message)))
        elif isinstance(event, events.DoneEvent):
            self.finished = self._resolve(event.out)
            what = "a reproduction of the left run" if self.reproduction else "done"
            self.tally["passed"] = event.passed
            self.tally["failed"] = event.failed
            self.elapsed = event.seconds
            bar.update(total=self.tally["total"] or 1, progress=self.tally["total"] or 1)
            self._show_progress(
                Text.assemble(
                    (f"{what}: ", "bold"),
                    line(event.out),
                    "  — Ctrl+O opens it against the left run",
                )
            )
            self.query_one("#launch-open", Button).disabled = False
        elif isinstance(event, events.InterruptedEvent):
            self._show_progress(
                Text.assemble(
                    ("cancelled ", "bold"),
                    f"after {event.done} of {event.total} cases; the file is whole and resumable: ",
                    line(event.resume),
                )
            )
        elif isinstance(event, events.FailedEvent):
            self._show_progress(Text.assemble(("run failed: ", "bold"), line(event.message)))

    def _resolve(self, out: str) -> str:
        """The child writes paths relative to its folder; the review opens them from here."""
        path = Path(out)
        return str(path if path.is_absolute() else self.folder / path)

    # -- display ---------------------------------------------------------------------

    def _set_running(self, running: bool) -> None:
        self.query_one("#launch-start", Button).disabled = running
        self.query_one("#launch-cancel", Button).disabled = not running

    def _show_status(self, text: Text) -> None:
        self.query_one("#launch-status", Static).update(text)

    def _log(self, text: Text) -> None:
        self.query_one("#launch-log", Static).update(text)

    def _show_progress(self, final: Text | None = None) -> None:
        t = self.tally
        text = Text.assemble(
            (f"{t['done']}/{t['total']} cases", "bold"),
            "  ·  ",
            (f"{t['passed']} pass", "green"),
            "  ·  ",
            (f"{t['failed']} fail", "red"),
            f"  ·  {self.elapsed:.1f} s",
        )
        if self.pace_shown:
            text.append(f"  ·  {self.pace_shown}")
        if self.out_label:
            text.append("  ·  ")
            text.append_text(line(self.out_label, width=80))
        if final is not None:
            self.final = final
        if self.final is not None:
            text = Text.assemble(text, "\n", self.final)
        self._show_status(text)


def _row(label: str, field: Widget) -> Horizontal:
    """One labelled field of the panel."""
    return Horizontal(Label(label, classes="launch-label"), field, classes="launch-row")


def _pick(label: str, names: list[str], prompt: str, id: str, value: object) -> Horizontal:
    """A labelled choice among names read from disk (shown as plain text, never markup)."""
    return _row(
        label, Select([(Text(name), name) for name in names], prompt=prompt, id=id, value=value)
    )
