"""The worker's handle of a test's mock made with a spec (`Mock(spec=m.Gateway)`,
`create_autospec(m.Gateway, instance=True)`): in one process the mock's `__class__` is
its spec's class, so the candidate's `isinstance(gateway, Gateway)` holds; here its
handle's class presents that class (the candidate's own, or the worker's class for a
tests' class). The judge names the spec (`kinds.with_spec`); what the worker believes
of it decides nothing there."""

from __future__ import annotations

from .protocol import ProtocolError

_PRESENTED: dict = {}  # (handle class, spec class) -> the handle class presenting it


def presented(base: type, data: dict, d) -> type:
    """The handle class of a test's mock made with a spec of the candidate's class (or a
    tests' class): it presents that class to `isinstance`, as the mock's `__class__`
    does in one process (`isinstance(gateway, Gateway)` in the candidate's code)."""
    if "sc" not in data:
        return base
    spec = d(data["sc"])
    if not isinstance(spec, type):
        raise ProtocolError("malformed spec class")
    made = _PRESENTED.get((base, spec))
    if made is None:
        shown = property(lambda self: spec)
        made = type(base.__name__, (base,), {"__slots__": (), "__class__": shown})
        _PRESENTED[(base, spec)] = made
    return made
