#!/usr/bin/env bash
# Installs @modelcontextprotocol/server-filesystem from npm into
# crates/toolgate-mcp/.node, a real upstream for the gateway's end-to-end tests
# (crates/toolgate/tests/gateway.rs). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION="${FS_SERVER_VERSION:-latest}"
DIR="crates/toolgate-mcp/.node"

if [ -x "$DIR/node_modules/.bin/mcp-server-filesystem" ] && [ "$VERSION" = latest ]; then
    echo "server-filesystem already installed in $DIR"
    exit 0
fi
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-audit --no-fund --silent "@modelcontextprotocol/server-filesystem@$VERSION"
echo "installed server-filesystem into $DIR"
