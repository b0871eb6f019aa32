#!/usr/bin/env bash
# Installs the real agent CLIs that the hook end-to-end tests drive offline
# against a stand-in model on loopback (crates/toolgate/tests/agents_e2e.rs):
# Claude Code, Codex, Gemini CLI and OpenCode from npm, pinned, into
# target/agents. Idempotent: does nothing when the pinned versions are there.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="target/agents"
PACKAGES=(
    "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION:-2.1.197}"
    "@openai/codex@${CODEX_VERSION:-0.171.0}"
    "@google/gemini-cli@${GEMINI_CLI_VERSION:-0.61.0}"
    "opencode-ai@${OPENCODE_VERSION:-1.18.33}"
)
STAMP="$DIR/.installed"
WANT="${PACKAGES[*]}"

if ! command -v npm >/dev/null 2>&1; then
    echo "setup-agents: npm not found; the agent end-to-end tests will say they cannot run" >&2
    exit 0
fi
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "agents already installed in $DIR"
    exit 0
fi
mkdir -p "$DIR"
[ -f "$DIR/package.json" ] || echo '{"private": true}' > "$DIR/package.json"
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "${PACKAGES[@]}"
echo "$WANT" > "$STAMP"
ls "$DIR/node_modules/.bin"
