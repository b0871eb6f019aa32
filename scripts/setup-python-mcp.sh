#!/usr/bin/env bash
# Installs the Python MCP SDK (PyPI `mcp`) into crates/toolgate-mcp/.venv, the
# real client the toolgate-mcp integration tests drive over stdio and HTTP.
# Idempotent: does nothing when the pinned version is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

MCP_VERSION="${MCP_VERSION:-2.3.0}"
VENV="crates/toolgate-mcp/.venv"
PYTHON="${PYTHON:-python3}"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
    echo "python mcp $MCP_VERSION already installed in $VENV"
    exit 0
fi

"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
"$VENV/bin/python" -c "import mcp, importlib.metadata as m; print('installed python mcp', m.version('mcp'), 'into $VENV')"
