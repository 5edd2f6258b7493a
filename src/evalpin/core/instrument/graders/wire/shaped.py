"""The worker's function standing for a test's function, shaped like it (issue 48): the
test's parameters, defaults, annotations and `async`, its body a call of the test's own
(`handles.Functions`). Only the parameters' names are spelled into code, checked as
identifiers first; nothing of the test's or the candidate's is ever evaluated."""

from __future__ import annotations

import keyword
from collections.abc import Callable

SHAPED = "<the tests' function>"
CANDIDATES = "<the candidate's function>"


def shaped(handle: Callable, signature, coroutine: bool = False, hidden: bool = False):
    """A function calling the test's: with the test's function's parameters (its code's
    names and counts, its defaults), so the candidate's introspection of `__code__`,
    `__defaults__` and `__kwdefaults__` (an argument getter, a memoizer keyed by
    argument names) sees what it would see in one process; `*args, **kwargs` when the
    signature is not plain or not known. `hidden`: the judge's function for a candidate's
    plain function (`functions`), whose frame pytest's tracebacks leave out, and whose
    trailing defaults the test left as they are are not sent (`_body`)."""
    if signature is None:
        return _forwarding(handle)
    import inspect  # (a signature crossed: loaded already)

    kinds = inspect.Parameter
    head, positional, keywords, defaults, kwdefaults = [], [], [], [], {}
    only = [p.name for p in signature.parameters.values() if p.kind is kinds.POSITIONAL_ONLY]
    last_positional_only = only[-1] if only else None
    spread = False  # a `*args`: every positional parameter goes, as given
    for p in signature.parameters.values():
        if not p.name.isidentifier() or keyword.iskeyword(p.name) or p.name in _OURS:
            return _forwarding(handle)
        if p.kind is kinds.VAR_POSITIONAL:
            head.append(f"*{p.name}")
            positional.append(f"*{p.name}")
            spread = True
            continue
        if p.kind is kinds.VAR_KEYWORD:
            head.append(f"**{p.name}")
            keywords.append(f"**{p.name}")
            continue
        if p.kind is kinds.KEYWORD_ONLY:
            if not any(h.startswith("*") for h in head):
                head.append("*")
            keywords.append(f"{p.name}={p.name}")
            if p.default is not p.empty:
                kwdefaults[p.name] = p.default
        else:
            positional.append(p.name)
            if p.default is not p.empty:
                defaults.append(p.default)
        head.append(p.name if p.default is p.empty else f"{p.name}=None")
        if p.kind is kinds.POSITIONAL_ONLY and p.name == last_positional_only:
            head.append("/")
    run = "async def" if coroutine else "def"
    hide = "__tracebackhide__ = True\n    " if hidden else ""
    omitted = len(defaults) if hidden and not spread else 0
    body = _body(positional, keywords, omitted, coroutine)
    source = f"{run} f({', '.join(head)}):\n    {hide}{body}\n"
    space: dict = {"_evalpin": handle, "_evalpin_d": tuple(defaults)}
    try:
        exec(compile(source, CANDIDATES if hidden else SHAPED, "exec"), space)
    except SyntaxError:
        return _forwarding(handle)
    made = space["f"]
    made.__defaults__ = tuple(defaults) or None
    made.__kwdefaults__ = kwdefaults or None
    notes = {p.name: p.annotation for p in signature.parameters.values()}
    notes = {k: v for k, v in notes.items() if v is not inspect.Parameter.empty}
    if signature.return_annotation is not inspect.Signature.empty:
        notes["return"] = signature.return_annotation
    made.__annotations__ = notes
    return made


def _body(positional: list, keywords: list, omitted: int, coroutine: bool) -> str:
    """The call of the other side's function: the last `omitted` positional parameters
    left out where the caller left them at their defaults (the very objects), so the
    function there runs with its own default objects, as in one process, and none
    crosses. Only for a candidate's plain function (no `*args`), which binds both calls
    alike; a test's function may be a wrapper that counts what it was given."""
    call = lambda names: f"return {'await ' if coroutine else ''}_evalpin({', '.join(names)})"  # noqa: E731
    first = len(positional) - omitted  # the first parameter with a default
    lines = [
        f"if {positional[first + j]} is not _evalpin_d[{j}]: "
        + call(positional[: first + j + 1] + keywords)
        for j in reversed(range(omitted))
    ]
    return "\n    ".join([*lines, call(positional[:first] + keywords)])


_OURS = frozenset({"_evalpin", "_evalpin_d"})  # the made function's own globals


def _forwarding(handle: Callable):
    def call(*args, **kwargs):
        return handle(*args, **kwargs)

    return call
