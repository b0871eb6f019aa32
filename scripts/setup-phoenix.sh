#!/usr/bin/env bash
# Installs Arize Phoenix (PyPI `arize-phoenix`, pinned) into
# crates/toolgate/.phoenix-venv: a real OTLP backend that the telemetry test
# (crates/toolgate/tests/telemetry.rs) starts, sends spans to over OTLP/HTTP,
# and queries back through Phoenix's REST API. Idempotent: does nothing when
# the pinned version is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PHOENIX_VERSION="${PHOENIX_VERSION:-20.26.1}"
VENV="crates/toolgate/.phoenix-venv"
PYTHON="${PYTHON:-python3}"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('arize-phoenix') != '$PHOENIX_VERSION')" 2>/dev/null; then
    echo "arize-phoenix $PHOENIX_VERSION already installed in $VENV"
    exit 0
fi

"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "arize-phoenix==$PHOENIX_VERSION"
"$VENV/bin/python" -c "import importlib.metadata as m; print('installed arize-phoenix', m.version('arize-phoenix'), 'into $VENV')"
