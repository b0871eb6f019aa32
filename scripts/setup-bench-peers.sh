#!/usr/bin/env bash
# Installs the peer MCP server the benchmarks compare against, into bench-data/
# (gitignored): @modelcontextprotocol/server-filesystem from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."
peers=bench-data/peers
mkdir -p "$peers"
if [ ! -f "$peers/node_modules/@modelcontextprotocol/server-filesystem/package.json" ]; then
  npm install --prefix "$peers" --no-audit --no-fund @modelcontextprotocol/server-filesystem >&2
fi
node -e "console.log(require('./$peers/node_modules/@modelcontextprotocol/server-filesystem/package.json').version)"
