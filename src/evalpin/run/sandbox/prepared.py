"""pytest's configuration up to the point where a case's paths matter, made once in a
warm process (the fork server, or the floor's benchmark) instead of once per session.

`pytest.main(args)` first calls `_pytest.config.get_config(args)`: a plugin manager,
a `Config`, and every default plugin registered (its hooks parsed, its options added),
about a quarter of a warm session's CPU. Nothing of it depends on the case: `args` is
read only for its `-p no:NAME` exclusions (evalpin's are always the same) and kept, with
the working folder, as the config's `invocation_params`. So `prepare()` builds one
config with evalpin's exclusions and puts a one-shot `get_config` in its place in
`_pytest.config`: the first call (the session's own, in a fork of this process) puts the
real function back before anything else runs, and returns the prepared config with the
call's own invocation parameters, or, when the call's exclusions or keywords (pytest
9.2's `prog`) differ from the prepared ones, whatever the real function returns. So a
fork's session is `pytest.main`'s own path, with its own arguments and folder; only who
made the config object changed. Any later session in the same process (a test running
pytest inside pytest) builds its own, as before. Each fork gets its own copy of the
config (a fork of a process that ran no case's code); a process that is not a fork never
calls it twice.

Kept as source, run by the fork server's own interpreter (`zygote.ZYGOTE`), and by the
benchmark that measures the floor (`benchmarks/pytest_floor.py`), so both prepare the
same thing.
"""

from __future__ import annotations

# The `-p no:NAME` arguments of every pytest session evalpin runs (`coding.pytest_args`).
EXCLUDED = ("no:cacheprovider",)

PREPARED_PYTEST = (
    f"EXCLUDED = {list(EXCLUDED)!r}\n"
    + r'''
def prepare_pytest():
    """The prepared config and its one-shot `get_config`; see prepared.py."""
    import inspect
    import pathlib
    import _pytest.config as config_module
    from _pytest.config import Config, PytestPluginManager

    real = config_module.get_config
    template = []
    for name in EXCLUDED:
        template += ["-p", name]
    # pytest >= 9.2 also passes the program's name (`pytest.main()` from pytest.main)
    known = {"prog": "pytest.main()"} if "prog" in inspect.signature(real).parameters else {}
    ready = real(template, **known)

    def excluded(args):
        # pytest's own reading of `-p` (PytestPluginManager.consider_preparse)
        seen = []
        class Recorder:
            consider_pluginarg = seen.append
        PytestPluginManager.consider_preparse(Recorder(), args, exclude_only=True)
        return seen

    def get_config(args=None, plugins=None, **kwargs):
        config_module.get_config = real  # one use: a later session makes its own
        if kwargs != known or args is None or excluded(args) != EXCLUDED:
            return real(args, plugins, **kwargs)
        ready.invocation_params = Config.InvocationParams(
            args=args or (), plugins=plugins, dir=pathlib.Path.cwd()
        )
        return ready

    config_module.get_config = get_config
'''
)
