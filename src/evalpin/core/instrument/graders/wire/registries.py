"""An installed library's registry that the candidate fills for its own classes, as the
judge meets it (issue 48; the object model's inherent rows): PyYAML's representer
tables (`yaml.add_representer(Munch, ...)`, `SafeDumper.add_representer`) filled by the
candidate's module live in the worker's copy of the library, and the test's own
`yaml.dump(obj)` runs the judge's, which runs no candidate code and has no entry for the
stand-in's class. The judge's library then refuses the object, as before; that refusal
is now named for the running test (`inherent`), so a case failing only so is
`witness:unsupported`, the grader's limit, never `witness:failed`. Only a refusal of
one of the candidate's objects is named: the test's own data is the test's affair."""

from __future__ import annotations

import functools

from . import inherent
from .proxies import ref_of


def follow_yaml(representer) -> None:
    """Name the judge's yaml refusing a candidate's object (its module, once imported)."""
    base = getattr(representer, "BaseRepresenter", None)
    error = getattr(representer, "RepresenterError", None)
    represent = getattr(base, "represent_data", None)
    if not callable(represent) or not isinstance(error, type):
        return

    @functools.wraps(represent)
    def represent_data(self, data):
        try:
            return represent(self, data)
        except error as refused:
            if any(ref_of(x) is not None for x in (data, *refused.args)):
                name = type(data).__name__
                inherent.note(
                    f"yaml asked to represent the candidate's {name}: a representer the "
                    "candidate registered is in its own process's yaml"
                )
            raise

    base.represent_data = represent_data
