"""A candidate's plain function as the test sees it: a real function (issue 48). Code
that asks `type(f) is type(lambda: None)` or `type(f) is types.FunctionType` of the
candidate's function (an API test of a module's entry points) reads the type itself,
which no proxy can answer. So a candidate function that is only a function (a `def` or
`lambda`, not a generator or coroutine function, with no attribute of its own when it
first crosses) is, in the judge, a real function made there: the candidate's name,
qualified name, module, docstring and signature (its parameters, defaults and
annotations, crossed by value), its body one call of the candidate's function through
its proxy's request (`shaped`; the defaults the test left as they are stay the
candidate's own, never sent). Everything it does is the proxy's; it binds as a method where a
function binds, pickles by name, and comes back to the worker as the candidate's own.

What it does not carry (stated in the object model): an attribute the test sets on it
stays the test's (a function takes no hook on its attributes), and one the candidate
sets on its function later is not seen here. Why a lying worker gains nothing: the
description names values only, and the body is the judge's own call of the proxy, so
it is what any proxy of the candidate's function is, and a candidate may always hand
over a real function of its own."""

from __future__ import annotations

import types

from .describe import abstract
from .proxies import FUNCTIONS, ref_of
from .shaped import shaped
from .stdlib import function_name

_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async gen


def extras(worker, value, data: dict, e) -> dict:
    """The worker's description of an object, with what the judge needs besides its
    class: that it is marked abstract; the shape of a plain function, the first time it
    crosses on this channel."""
    if abstract(value):
        data["ia"] = 1
    if type(value) is types.FunctionType and _plain(value) and not worker.known(data["v"]):
        import inspect  # (a candidate's module that has functions loaded it)

        try:
            signature = inspect.signature(value)
        except (TypeError, ValueError):
            return data
        data["f"] = {"n": value.__name__, "q": value.__qualname__, "sg": e(signature)}
        if type(value.__module__) is str:
            data["f"]["md"] = value.__module__
        if type(value.__doc__) is str:
            data["f"]["dc"] = value.__doc__
    return data


def _plain(fn) -> bool:
    """Only a function, and not the standard library's (`os.path.exists` held by the
    candidate is `named`'s: equal to the judge's own)."""
    try:
        own = object.__getattribute__(fn, "__dict__")
    except AttributeError:
        return False
    if own or fn.__code__.co_flags & _NOT_PLAIN:
        return False
    return function_name(fn) is None


def presented(judge, proxy, ident: int, data: dict, d):
    """The stand-in of a candidate's object: a real function for a plain function whose
    shape crossed and that a made function can wear exactly, else the proxy."""
    spec = data.get("f")
    if type(spec) is not dict:
        return proxy
    import inspect  # (loaded by pytest)

    name, qualname = spec.get("n"), spec.get("q")
    module, doc = spec.get("md"), spec.get("dc")
    if not (type(name) is str and type(qualname) is str and type(module) in (str, type(None))):
        return proxy
    signature = d(spec.get("sg"))
    if not isinstance(signature, inspect.Signature) or type(doc) not in (str, type(None)):
        return proxy
    made = shaped(_calling(proxy), signature, hidden=True)
    try:
        if not _wears(inspect.signature(made), signature):  # (a name no code can spell)
            return proxy
        made.__code__ = made.__code__.replace(co_name=name, co_qualname=qualname)
    except (TypeError, ValueError):
        return proxy
    made.__name__, made.__qualname__ = name, qualname
    made.__module__, made.__doc__ = module, doc
    FUNCTIONS[made] = ref_of(proxy)
    judge._proxies[ident] = made
    return made


def _calling(proxy):
    """The made function's call of the candidate's: the request calling the proxy makes
    (`proxies.call`), without its look-ups of a tests' subclass's method, which a
    candidate's function has none of (a call per call of the test's); the proxy is kept
    with it, living as long as the made function."""
    ref = ref_of(proxy)
    peer, ident = ref.peer, ref.ident

    def call(*args, **kwargs):
        __tracebackhide__ = True
        return peer.request("call", obj=ident, args=args, kwargs=kwargs)

    call.proxy = proxy
    return call


def _wears(made, signature) -> bool:
    """Whether the made function's signature is the candidate's: the same parameters,
    kinds, and the very default and annotation objects (compared by identity: a default
    of the candidate's is a proxy, whose `==` is the candidate's to answer)."""
    mine, theirs = list(made.parameters.values()), list(signature.parameters.values())
    return len(mine) == len(theirs) and all(
        a.name == b.name
        and a.kind == b.kind
        and a.default is b.default
        and a.annotation is b.annotation
        for a, b in zip(mine, theirs, strict=True)
    )
