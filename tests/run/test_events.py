"""Progress events: one tagged union, the documented wire shape (docs/how-to/run.md), decoded
once."""

from __future__ import annotations

import json

import pytest

from evalpin.run import events

# Every kind with its fields in wire order, as `--progress json` printed them before the
# events were typed (docs/how-to/run.md: "one event per line on stdout").
WIRE = [
    {"event": "start", "out": "runs/x.jsonl", "run_id": "r1", "total": 6, "todo": 4,
     "network": "off-enforced"},
    {"event": "case", "case_id": "a", "seed": 11, "pass": False,
     "reasons": ["tests_failed"], "done": 3, "total": 6, "passed": 2, "failed": 1,
     "elapsed": 0.25},
    {"event": "case", "case_id": "b", "seed": None, "pass": True, "reasons": None,
     "done": 4, "total": 6, "passed": 3, "failed": 1, "elapsed": 0.5},
    {"event": "case", "case_id": "c", "seed": 29, "pass": True, "reasons": None,
     "done": 5, "total": 6, "passed": 4, "failed": 1, "elapsed": 0.75, "in_flight": 12,
     "limit": 8},
    {"event": "pace", "in_flight": 3, "limit": 4, "rate_limited": 7, "waited": 1.4},
    {"event": "warning", "message": "trimmed a torn last line (12 bytes)"},
    {"event": "done", "out": "runs/x.jsonl", "records": 6, "passed": 4, "failed": 2,
     "seconds": 1.5},
    {"event": "done", "out": "runs/x.jsonl", "records": 6, "passed": 4, "failed": 2,
     "seconds": 1.5, "usage": {"prompt_tokens": 60, "completion_tokens": 12,
     "total_tokens": 72}, "rate_limited": 3, "waited": 0.6, "lowest_limit": 4},
    {"event": "interrupted", "out": "runs/x.jsonl", "done": 3, "total": 6,
     "resume": "evalpin run --resume --out runs/x.jsonl"},
    {"event": "failed", "out": "runs/x.jsonl", "message": "No space left on device"},
]  # fmt: skip


@pytest.mark.parametrize("wire", WIRE, ids=lambda w: f"{w['event']}-{len(w)}")
def test_wire_shape_round_trips(wire: dict) -> None:
    line = json.dumps(wire, ensure_ascii=True)
    event = events.decode(line)
    assert event is not None and event.kind == wire["event"]
    assert events.encode(event) == line  # same keys, same order, same spacing


def test_every_kind_is_in_the_union() -> None:
    assert {w["event"] for w in WIRE} == {t.__struct_config__.tag for t in events.Event.__args__}


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        '{"no": "event"}',
        '{"event": "teleported", "out": "x"}',
        '{"event": "case", "case_id": "a"}',
        '{"event": "done", "out": 1, "records": 6, "passed": 4, "failed": 2, "seconds": 1}',
        "[1, 2]",
    ],
)
def test_what_is_not_an_event_decodes_to_none(line: str) -> None:
    assert events.decode(line) is None


def test_unknown_fields_are_ignored_so_readers_stay_compatible() -> None:
    line = '{"event": "warning", "message": "m", "added_later": 1}'
    assert events.decode(line) == events.WarningEvent("m")


def test_hostile_text_goes_out_as_ascii_escapes() -> None:
    event = events.WarningEvent("\x1b]52;c;aGk=\x07 \u202e \x9b")
    line = events.encode(event)
    assert line.isascii() and "\x1b" not in line
    assert events.decode(line.encode()) == event
