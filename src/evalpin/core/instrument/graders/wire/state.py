"""The test's process state that the code under test reads in-process: the global
random generator once the test seeds it, the decimal context, `sys.argv` as the test
sets it. The judge sends them with a message when they changed; the worker applies
them before the call."""

from __future__ import annotations

import sys


class TestState:
    """What of the test's process state changed since it was last sent."""

    def __init__(self) -> None:
        self._seeded = False
        self._decimal: tuple | None = None  # the context last sent
        self._quick: tuple | None = None  # its identity and main fields, checked each time
        self._getcontext = None
        self._argv = sys.argv  # pytest's own, until the test sets it
        self._argv_sent = list(sys.argv)

    def follow_random(self, random) -> None:
        """Wrap `random.seed` and `random.setstate`: after either, the generator's state
        goes to the worker (the test and the candidate share one generator in-process)."""
        state = self

        def wrap(original):
            def call(*args, **kwargs):
                result = original(*args, **kwargs)
                state._seeded = True
                return result

            call.__name__ = original.__name__
            call.__doc__ = original.__doc__
            return call

        random.seed = wrap(random.seed)
        random.setstate = wrap(random.setstate)

    def followed_argv(self) -> None:
        """`sys.argv` was patched through monkeypatch or mock (sent as a patch)."""
        self._argv, self._argv_sent = sys.argv, list(sys.argv)

    def changes(self) -> dict | None:
        found = {}
        argv = sys.argv
        if argv is not self._argv or argv != self._argv_sent:
            self._argv, self._argv_sent = argv, list(argv)
            if type(argv) is list and all(type(a) is str for a in argv):
                found["argv"] = list(argv)
        if self._seeded:
            self._seeded = False
            version, values, gauss = sys.modules["random"].getstate()
            found["rnd"] = [version, list(values), gauss]
        getcontext = self._getcontext
        if getcontext is None and "decimal" in sys.modules:
            getcontext = self._getcontext = sys.modules["decimal"].getcontext
        if getcontext is not None:
            ctx = getcontext()
            quick = (id(ctx), ctx.prec, ctx.rounding, ctx.Emin, ctx.Emax)
            if quick != self._quick:
                self._quick = quick
                now = (ctx.prec, ctx.rounding, ctx.Emin, ctx.Emax, ctx.capitals, ctx.clamp)
                traps = [s.__name__ for s, on in ctx.traps.items() if on]
                if (*now, traps) != self._decimal:
                    if self._decimal is not None or (*now, traps) != _DEFAULT:
                        found["dec"] = [*now, traps]
                    self._decimal = (*now, traps)
        return found or None


_DEFAULT = (
    28,
    "ROUND_HALF_EVEN",
    -999999,
    999999,
    1,
    0,
    ["InvalidOperation", "DivisionByZero", "Overflow"],
)
