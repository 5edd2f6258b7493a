"""What the candidate reads of the test's process through the interpreter's own
introspection, watched in the worker (issue 48): `gc.get_referrers` of a test's object
(`handles.watch_referrers`), and its callers' frames. In one process `sys._getframe(2)`
in a candidate's function the test called is the test's own frame (boltons'
`Callpoint.from_current(level=2)` names the test's function); here, past the caller
the candidate is called from (`namesakes.caller`), it is the wire's machinery. The
worker tells the judge, which notes it for the running test (`tests_own.frames`):
should that test fail, the case says why (a test's frames live in the test's
process), and a worker that says so falsely only names its own failing test's
dispute. Frames reached through `f_back` are not watched (*not yet named*)."""

from __future__ import annotations

import os
import sys

from .handles import watch_referrers

_WIRE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def watch(peer) -> None:
    """Watch `gc`'s referrers and `sys._getframe` in the worker, for `peer` to tell."""
    watch_referrers(peer)
    original = sys._getframe

    def _getframe(depth: int = 0, /):
        frame = original(depth + 1)  # (this function's own frame is not the caller's)
        mine = original(1).f_code.co_filename.startswith(_WIRE)  # the wire's own look
        if not mine and frame.f_code.co_filename.startswith(_WIRE):
            peer.request("frames")
        return frame

    sys._getframe = _getframe
