"""evalpin's own run files: a `run` header line, case lines, a `summary` trailer."""

from __future__ import annotations

from evalpin.core.files import open_input
from evalpin.core.read.formats.probe import Probe, ReadOptions
from evalpin.core.read.rundata import SHAPE_EVALPIN, RunFile, Scan

NAME = SHAPE_EVALPIN


def sniff(probe: Probe) -> bool:
    first = probe.first
    return isinstance(first, dict) and first.get("record") == "run"


def read(probe: Probe, options: ReadOptions) -> RunFile:
    """The streaming block-decoding scan (the fast path `diff` is measured on)."""
    with open_input(probe.path) as fh:
        return Scan(probe.path, SHAPE_EVALPIN).read(fh)


def scan(probe: Probe) -> Scan:
    return Scan(probe.path, SHAPE_EVALPIN)
