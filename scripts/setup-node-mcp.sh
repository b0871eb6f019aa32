#!/usr/bin/env bash
# Installs @modelcontextprotocol/server-filesystem and
# @modelcontextprotocol/server-everything from npm into crates/toolgate-mcp/.node:
# real upstreams for the gateway's end-to-end tests
# (crates/toolgate/tests/gateway.rs) and its benchmark client
# (crates/toolgate/benches/mcp_gateway_client.py). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

FS_VERSION="${FS_SERVER_VERSION:-latest}"
EVERYTHING_VERSION="${EVERYTHING_SERVER_VERSION:-latest}"
DIR="crates/toolgate-mcp/.node"

if [ -x "$DIR/node_modules/.bin/mcp-server-filesystem" ] \
    && [ -x "$DIR/node_modules/.bin/mcp-server-everything" ] \
    && [ "$FS_VERSION" = latest ] && [ "$EVERYTHING_VERSION" = latest ]; then
    echo "server-filesystem and server-everything already installed in $DIR"
    exit 0
fi
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-filesystem@$FS_VERSION" \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
echo "installed server-filesystem and server-everything into $DIR"
