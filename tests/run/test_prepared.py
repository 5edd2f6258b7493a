"""pytest's configuration prepared in a warm process before the fork (issue 52): each
forked session is still `pytest.main` with its own arguments and folder, on a config of
its own; anything that does not match what was prepared gets pytest's own. And the bare
fork server preloads only what the witness's worker imports anyway."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

from evalpin.core.instrument.fixtures import load_fixtures
from evalpin.run.isolation import _wire
from evalpin.run.sandbox import probe_isolation, run_item
from evalpin.run.sandbox import zygote as fork_server
from evalpin.run.sandbox.box import write_tree
from evalpin.run.sandbox.prepared import PREPARED_PYTEST
from tests.capabilities import need, need_root

# Forks sessions from a process that prepared the config, as the fork server does;
# prints what each session saw, one JSON line per session.
FORKER = PREPARED_PYTEST + textwrap.dedent(
    """
        import json, os, sys
        import pytest
        import _pytest.config as config_module

        prepare_pytest()
        one_shot = config_module.get_config
        cells = dict(zip(one_shot.__code__.co_freevars, one_shot.__closure__))
        ready = cells["ready"].cell_contents

        class Seen:
            def __init__(self):
                self.said = {}

            def pytest_configure(self, config):
                self.said = {
                    "prepared": config is ready,
                    "dir": str(config.invocation_params.dir),
                    "args": list(config.invocation_params.args),
                    "cacheprovider": config.pluginmanager.has_plugin("cacheprovider"),
                    "get_config": config_module.get_config.__qualname__,
                }

        def session(folder, args, nested=False):
            pid = os.fork()
            if pid == 0:
                os.chdir(folder)
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # pytest's own lines
                seen, again = Seen(), Seen()
                code = pytest.main(args, plugins=[seen])
                said = [seen.said]
                if nested:  # a second session in the same process
                    pytest.main(args, plugins=[again])
                    said.append(again.said)
                with open(os.path.join(folder, "said.json"), "w") as out:
                    json.dump({"code": int(code), "said": said}, out)
                os._exit(0)
            os.waitpid(pid, 0)
            with open(os.path.join(folder, "said.json")) as got:
                print(json.dumps(json.load(got)), flush=True)

        first, second = sys.argv[1], sys.argv[2]
        quiet = ["-q", "-p", "no:cacheprovider", "--noconftest"]
        session(first, [*quiet, "test_a.py"], nested=True)
        session(second, [*quiet, "test_b.py"])
        session(second, ["-q", "--noconftest", "test_b.py"])  # other exclusions: its own
        """
)


def _forked_sessions(tmp_path: Path) -> list[dict]:
    first, second = tmp_path / "one", tmp_path / "two"
    for folder, name in ((first, "test_a.py"), (second, "test_b.py")):
        folder.mkdir()
        (folder / name).write_text("def test_it():\n    assert 1 + 1 == 2\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(
        [sys.executable, "-I", "-B", "-c", FORKER, str(first), str(second)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_a_forked_session_starts_from_the_prepared_config_with_its_own_paths(
    tmp_path: Path,
) -> None:
    nested, other, unmatched = _forked_sessions(tmp_path)
    for run, folder, test in ((nested, "one", "test_a.py"), (other, "two", "test_b.py")):
        said = run["said"][0]
        assert run["code"] == 0
        assert said["prepared"], said
        assert said["dir"] == str(tmp_path / folder)
        assert said["args"][-1] == test
        assert not said["cacheprovider"]  # evalpin's exclusion, made before the fork
        assert said["get_config"] == "get_config"  # pytest's own again before any test
    # A second session in the same process makes its own config, as pytest always did.
    again = nested["said"][1]
    assert not again["prepared"] and again["dir"] == str(tmp_path / "one")
    # Other `-p no:` exclusions than the prepared ones: pytest's own config, untouched.
    said = unmatched["said"][0]
    assert unmatched["code"] == 0
    assert not said["prepared"] and said["cacheprovider"]


def test_a_keyword_pytest_passes_is_prepared_for_or_left_to_pytest(monkeypatch) -> None:
    """pytest 9.2's `get_config(args, plugins, *, prog=...)`: the prepared config is made
    with the name `pytest.main` passes, and a call with any other keyword gets pytest's
    own function (before, any keyword was a TypeError and every session failed)."""
    import _pytest.config as config_module

    made = []

    def real(args=None, plugins=None, *, prog=None):
        made.append((list(args or ()), prog))
        return types.SimpleNamespace()

    monkeypatch.setattr(config_module, "get_config", real)
    space: dict = {}
    exec(PREPARED_PYTEST, space)
    space["prepare_pytest"]()
    ours = ["-q", "-p", "no:cacheprovider", "test_a.py"]
    prepared = config_module.get_config(ours, None, prog="pytest.main()")
    assert made == [(["-p", "no:cacheprovider"], "pytest.main()")]
    assert config_module.get_config is real and list(prepared.invocation_params.args) == ours
    space["prepare_pytest"]()
    config_module.get_config(ours, None, prog="py.test")
    assert made[-1] == (ours, "py.test") and config_module.get_config is real


# One session on the prepared config; with "plugin", a plugin that adds an option the
# session's arguments use (pytest's parser must then know it).
PARSER_SESSION = PREPARED_PYTEST + textwrap.dedent(
    """
        import json, os, sys
        import pytest

        prepare_pytest()

        class Said:
            def pytest_configure(self, config):
                parser = config._parser
                said = {"same": parser._getparser() is parser._getparser()}
                if flavoured:
                    said["flavour"] = config.getoption("flavour")
                print(json.dumps(said), flush=True)

        class Flavour(Said):
            def pytest_addoption(self, parser):
                parser.addoption("--flavour")

        flavoured = sys.argv[1] == "plugin"
        args = ["-q", "-p", "no:cacheprovider", "--noconftest"]
        plugins = [Flavour()] if flavoured else [Said()]
        args += ["--flavour=lime"] if flavoured else []
        sys.exit(pytest.main([*args, "test_a.py"], plugins=plugins))
        """
)


def test_the_parser_built_before_the_fork_serves_while_the_options_are_the_same(
    tmp_path: Path,
) -> None:
    """pytest's argument parser is built once with the prepared config and given back
    to each of the session's parses; a plugin that adds an option in the session gets
    a parser that knows it."""
    (tmp_path / "test_a.py").write_text("def test_it():\n    assert 1 + 1 == 2\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    said = {}
    for how in ("plain", "plugin"):
        done = subprocess.run(
            [sys.executable, "-I", "-B", "-c", PARSER_SESSION, how],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        said[how] = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("{")))
    assert said["plain"] == {"same": True}
    assert said["plugin"] == {"same": False, "flavour": "lime"}


def _modules_after(tmp_path: Path, first: str, imports: str) -> set[str]:
    """The modules a fresh `python -I -S` holds after `first`, then importing `imports`
    from the wire's tree written into `tmp_path`."""
    write_tree(tmp_path, _wire())
    code = (
        f"import json, sys\n{first}\nsys.path.insert(0, sys.argv[1])\n"
        f"import {imports}\nprint(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def test_the_bare_fork_server_preloads_only_what_the_worker_imports(tmp_path: Path) -> None:
    loaded = _modules_after(tmp_path, "import site\nsite.main()", "evalpin_wire.worker")
    preloaded = fork_server._PRELOADED[fork_server.BARE]
    assert preloaded and set(preloaded) <= loaded, set(preloaded) - loaded
    assert "pytest" not in loaded and not any(m.startswith("_pytest") for m in preloaded)


def test_a_worker_starts_without_what_only_a_relayed_program_needs(tmp_path: Path) -> None:
    """Every worker serves the tests' child processes (`wire/relay.py`), few are asked to
    run a program: `subprocess` (with `locale` and `fcntl`, about 3.5 ms of each case's
    start) is imported when one is, so a worker's start costs what it did before."""
    loaded = _modules_after(tmp_path, "", "evalpin_wire.worker, evalpin_wire.relay")
    assert "evalpin_wire.relay" in loaded
    assert "subprocess" not in loaded


SEEN_TEST = textwrap.dedent(
    """\
    import os
    from pathlib import Path

    import _pytest.config

    from solution import answer


    def test_its_own_session(request):
        params = request.config.invocation_params
        assert answer() == 42
        assert params.dir == Path.cwd() == Path(os.getcwd())
        assert params.args[-1] == "test_seen.py"
        assert _pytest.config.get_config.__qualname__ == "get_config"
        assert not request.config.pluginmanager.has_plugin("cacheprovider")
        # the argument parser the fork server built, given back to each parse
        assert request.config._parser._getparser() is request.config._parser._getparser()
    """
)


def test_a_sandboxed_session_sees_its_own_folder_and_arguments(tmp_path: Path) -> None:
    """Plain pytest and the witness, from the fork server: both pass, so each session's
    config carries its own case's folder and arguments."""
    need_root()
    iso = probe_isolation()
    if iso.kind != "unshare":
        need("unshare", iso.why)
    (tmp_path / "tests").mkdir()
    (tmp_path / "prompt.md").write_text("Answer.\n")
    (tmp_path / "tests" / "test_seen.py").write_text(SEEN_TEST)
    (tmp_path / "set.yaml").write_text(
        "schema: coding-eval/v1\ndataset_id: seen\ndataset_version: '1'\nitems:\n"
        "  - {id: seen, language: python, prompt_file: prompt.md,"
        " test_file: tests/test_seen.py, timeout_s: 30, expected_files: [solution.py]}\n"
    )
    item = load_fixtures(tmp_path / "set.yaml").cases[0]
    try:
        for _ in range(2):  # the second from a zygote that already served a case
            outcome = run_item(item, {"solution.py": "def answer():\n    return 42\n"})
            assert outcome.passed, outcome.tail
            assert outcome.reasons == []
        assert fork_server._ZYGOTES, "not forked from a zygote"
    finally:
        fork_server.close()
