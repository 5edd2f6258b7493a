"""An installed library's registry that the candidate fills for its own classes, as the
judge meets it (issue 48; the object model's inherent rows): PyYAML's representer and
constructor tables (`yaml.add_representer(Munch, ...)`, `add_constructor("!munch",
...)`) filled by the candidate's module live in the worker's copy of the library, and
the test's own `yaml.dump(obj)` or `yaml.load(text)` runs the judge's, which runs no
candidate code and has no entry of the candidate's. What the judge's library then does
is what it did before (it refuses the object, or writes the stand-in's Python state);
it is now named for the running test (`inherent`), so a case failing only so is
`witness:unsupported`, the grader's limit, never `witness:failed`. Only the candidate's
own objects, and tags that name one of its modules, are named: the test's own data and
its own registrations are the test's affair."""

from __future__ import annotations

import functools
import re

from . import inherent
from .proxies import ref_of

_UNKNOWN_TAG = "could not determine a constructor for the tag"
_TAG_HEAD = re.compile(r"!+([A-Za-z_][A-Za-z0-9_]*)")


def follow_yaml_dumps(representer) -> None:
    """Name a candidate's object reaching the judge's yaml, which has no representer
    for its stand-in's class (the test registered none here)."""
    base = getattr(representer, "BaseRepresenter", None)
    represent = getattr(base, "represent_data", None)
    if not callable(represent):
        return

    @functools.wraps(represent)
    def represent_data(self, data):
        if ref_of(data) is not None and not _registered(self, type(data)):
            inherent.note(
                f"yaml asked to represent the candidate's {type(data).__name__}: a "
                "representer the candidate registered is in its own process's yaml"
            )
        return represent(self, data)

    base.represent_data = represent_data


def _registered(representer, cls: type) -> bool:
    """Whether the judge's yaml has a representer of the test's for this class."""
    own = getattr(representer, "yaml_representers", {})
    multi = getattr(representer, "yaml_multi_representers", {})
    return cls in own or any(c in multi for c in cls.__mro__ if c is not object)


def follow_yaml_loads(constructor, modules) -> None:
    """Name the judge's yaml meeting a tag it has no constructor for, when the tag names
    one of the candidate's modules (`!munch.Munch`): its constructor is the worker's."""
    base = getattr(constructor, "BaseConstructor", None)
    error = getattr(constructor, "ConstructorError", None)
    construct = getattr(base, "construct_object", None)
    if not callable(construct) or not isinstance(error, type):
        return
    heads = {m.split(".")[0] for m in modules}

    @functools.wraps(construct)
    def construct_object(self, node, *args, **kwargs):
        try:
            return construct(self, node, *args, **kwargs)
        except error as refused:
            tag = getattr(node, "tag", None)
            found = _TAG_HEAD.match(tag) if type(tag) is str else None
            problem = getattr(refused, "problem", None)
            unknown = type(problem) is str and problem.startswith(_UNKNOWN_TAG)
            if found and found[1] in heads and unknown:
                inherent.note(
                    f"yaml met the tag {tag[:80]!r} of the candidate's module: a "
                    "constructor the candidate registered is in its own process's yaml"
                )
            raise

    base.construct_object = construct_object
