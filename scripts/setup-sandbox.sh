#!/usr/bin/env bash
# Installs what the sandbox and its tests need that is not a crate:
# bubblewrap (Debian `bubblewrap`, the namespaces and mounts of every confined
# command) and, for the routine-work tests, pytest in a venv under
# crates/toolgate-sandbox/.venv. Idempotent; needs root (or sudo) only to
# install bubblewrap when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v bwrap >/dev/null 2>&1; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get install -y --no-install-recommends bubblewrap \
        || { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends bubblewrap; }
fi
echo "bubblewrap: $(bwrap --version)"

PYTEST_VERSION="${PYTEST_VERSION:-8.3.5}"
VENV="crates/toolgate-sandbox/.venv"
PYTHON="${PYTHON:-python3}"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('pytest') != '$PYTEST_VERSION')" 2>/dev/null; then
    echo "pytest $PYTEST_VERSION already installed in $VENV"
else
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "pytest==$PYTEST_VERSION"
    echo "installed pytest $PYTEST_VERSION into $VENV"
fi
