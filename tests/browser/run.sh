#!/usr/bin/env bash
# Runs the admin console's browser test: installs playwright-core (pinned by
# package-lock.json, from the npm registry) into <work-dir> once, then drives Debian's
# Chromium against a real settled.
# Usage: run.sh <settled binary> <work dir>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
settled="$1"
work="$2"
mkdir -p "$work"
cp "$here/package.json" "$here/package-lock.json" "$here/admin_console_test.mjs" "$work/"
cd "$work"
if [ ! -f node_modules/playwright-core/package.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
exec node admin_console_test.mjs "$settled"
