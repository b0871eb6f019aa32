#!/usr/bin/env bash
# Installs the npm package @openai/codex (which ships its own binary and needs no
# network to run `codex execpolicy check`) under $CARGO_TARGET_DIR/codex (default
# target/codex), where benches/decide.rs looks for it. Prints the binary's path.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
prefix="$target/codex"
mkdir -p "$prefix"
if ! ls "$prefix"/node_modules/@openai/codex-linux-x64/vendor/*/bin/codex >/dev/null 2>&1; then
  npm install --silent --no-fund --no-audit --prefix "$prefix" @openai/codex >&2
fi
ls "$prefix"/node_modules/@openai/codex-linux-x64/vendor/*/bin/codex
