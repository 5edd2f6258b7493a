#!/usr/bin/env bash
# Make tests/data/inspect and tests/data/lm_eval (and their shapes/) with the real
# tools, in a venv of their own (never evalpin's): both are development-time only. No
# network beyond the installs.
set -euo pipefail
venv="${FOREIGN_VENV:-/tmp/foreign-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "inspect-ai==0.3.285" "lm-eval==0.4.13"
fi
"$venv/bin/python" "$(dirname "$0")/make_foreign_logs.py" "$@"
# Issue 51's instruments: a grader model role changed, no grader role, a message limit.
"$venv/bin/python" "$(dirname "$0")/make_instrument_logs.py" "$@"
# The shapes of issue 41 (solver steps, reducers, eval sets, few-shot, chat templates,
# system instructions, --limit/--samples) in tests/data/*/shapes.
exec "$venv/bin/python" "$(dirname "$0")/make_foreign_shapes.py" "$@"
