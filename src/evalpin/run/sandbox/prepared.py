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

The prepared config's argument parser is built then too (`reuse_parser`): pytest builds
one anew from its options for each of a session's parses, and gives the session the
same one while its options are the ones it was built from.

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
def load_pytest():
    """pytest and what every session loads or compiles before a candidate's code runs
    (its default plugins, the debugging and faulthandler plugins' modules at configure,
    the JUnit report's pattern of what XML cannot hold), once instead of once per case.
    ImportError when pytest is not there."""
    import contextlib, importlib
    import pytest
    from _pytest.config import default_plugins
    for name in (*("_pytest." + p for p in default_plugins), "pdb", "faulthandler"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(Exception):
        importlib.import_module("_pytest._argcomplete")
        from _pytest.junitxml import bin_xml_escape
        bin_xml_escape("")

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
    reuse_parser(ready)

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


def reuse_parser(config):
    """pytest builds its argument parser anew from its options for each of a session's
    six parses (`Parser._getparser`: a quarter of a warm session's CPU); the parser
    built here from the prepared options is given back while they are the same options
    (a plugin registered in the session adds some: then pytest's own build)."""
    parser = getattr(config, "_parser", None)
    build = getattr(type(parser), "_getparser", None)
    if build is None:
        return
    def shape():
        groups = (*parser._groups, parser._anonymous)
        return [id(o) for g in groups for o in g.options], parser.prog
    built, made = build(parser), shape()
    built.extra_info = parser.extra_info  # the dict pytest fills in later, not a copy
    def getparser():
        return built if shape() == made else build(parser)
    parser._getparser = getparser
'''
)
