"""Header-less case-record JSONL made by other tools (the seed's `pin_eval.py` shape):
`case_id, pass, reasons, tool_names, text_digest, fixture_hash, grader_version,
model_slot` a line, with no header and no trailer, so completeness is unknown."""

from __future__ import annotations

from evalpin.core.files import open_input
from evalpin.core.read.formats.probe import Probe, ReadOptions
from evalpin.core.read.rundata import SHAPE_CASES, RunFile, Scan

NAME = SHAPE_CASES


def sniff(probe: Probe) -> bool:
    first = probe.first
    return isinstance(first, dict) and "case_id" in first and first.get("record") != "run"


def read(probe: Probe, options: ReadOptions) -> RunFile:
    with open_input(probe.path) as fh:
        return Scan(probe.path, SHAPE_CASES).read(fh)


def scan(probe: Probe) -> Scan:
    return Scan(probe.path, SHAPE_CASES)
