#!/usr/bin/env bash
# Installs what the approval-page browser test (crates/toolgate-web/tests/browser.rs)
# needs: Debian's chromium and chromium-driver, and playwright-core (npm, pinned in
# crates/toolgate-web/tests/browser/package.json) which drives the system browser.
# Idempotent. Needs root (or sudo) for apt.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver fonts-dejavu-core >/dev/null
fi
chromium --version

BROWSER_DIR="crates/toolgate-web/tests/browser"
if [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ]; then
    (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund --loglevel=error 2>/dev/null \
        || npm install --no-audit --no-fund --loglevel=error)
fi
node -e "console.log('playwright-core', require('./$BROWSER_DIR/node_modules/playwright-core/package.json').version)"
